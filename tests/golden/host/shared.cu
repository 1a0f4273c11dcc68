// --target=host: each `extern __shared__` array becomes a pointer to the
// block's dynamic shared memory (coconet_host_dynamic_shared()); a
// namespace-scope one becomes a macro, since every later use means it.
// RUN: %coconet --target=host %s | %FileCheck %s

extern __shared__ double global_smem[];
// CHECK: {{^}}#define global_smem ((double *)coconet_host_dynamic_shared()){{$}}

template <typename T>
__global__ void aligned(T *x) {
  extern __shared__ __align__(16) unsigned char raw[];
  // CHECK: {{^}}  unsigned char *raw = (unsigned char *)coconet_host_dynamic_shared();{{$}}
  T *s = reinterpret_cast<T *>(raw);
  s[threadIdx.x] = x[threadIdx.x];
}

template <typename T>
__device__ void typed(T *x) {
  extern __shared__ T buf[];
  // CHECK: {{^}}  T *buf = (T *)coconet_host_dynamic_shared();{{$}}
  buf[0] = x[0];
}

__global__ void tile2d(float *x) {
  extern __shared__ float tile[][33];
  // CHECK: {{^}}  float (*tile)[33] = (float (*)[33])coconet_host_dynamic_shared();{{$}}
  extern volatile __shared__ int a[], b[];
  // CHECK: {{^}}  volatile int *a = (volatile int *)coconet_host_dynamic_shared(); volatile int *b = (volatile int *)coconet_host_dynamic_shared();{{$}}
  __shared__ float fixed[4];
  // CHECK: {{^}}  __shared__ float fixed[4];{{$}}
  tile[threadIdx.y][threadIdx.x] = x[0] + a[0] + b[0] + fixed[0] + global_smem[0];
  typed(x);
}
