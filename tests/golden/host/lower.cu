// --target=host lowers every launch of the file, outside coconet regions too,
// and picks COCONET_HOST_SIMPLE only for kernels that provably reach no
// barrier or warp collective (through every function they call).
// RUN: %coconet --target=host --schedule=none %s -o %t.out
// RUN: %FileCheck %s < %t.out
// RUN: %FileCheck --check-prefix=SHARED %s < %t.out
// The lowered file is otherwise the input: only launches and extern __shared__ change.
// RUN: grep -v -e '^//' -e '<<<' -e 'extern __shared__' %s > %t.rest.want
// RUN: grep -v -e '^//' -e coconet_host_launch -e coconet_host_dynamic_shared %t.out > %t.rest.got
// RUN: cmp %t.rest.want %t.rest.got
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda/barrier>
#include <cuda_fp16.h>
namespace cg = cooperative_groups;

struct Params { float a; int n; };

__device__ float helper(float x);
__device__ float defined_nowhere(float x);
template <typename T> __device__ T twice(T x) { return x + x; }
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
  return v;
}
__device__ float two_levels(float v) { return warp_sum(v) + 1.0f; }
__device__ int even(int n);
__device__ int odd(int n) { return n == 0 ? 0 : even(n - 1); }
__device__ int even(int n) { return n == 0 ? 1 : odd(n - 1); }
template <typename G> __device__ void group_sync(G g) { g.sync(); }

__global__ void pointwise(float *x, Params p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  Params q = p;
  auto scale = [&](float v) { return v * q.a; };
  if (i < q.n) x[i] = scale(helper(x[i])) + expf(x[i]) + sqrtf(fabsf(x[i])) + __ldg(&x[0]);
  atomicAdd(&x[0], 1.0f);
  __threadfence_block();
  __threadfence();
}
__device__ float helper(float x) { return twice(x) + (float)odd(3); }

__global__ void half_math(__half *h, int n) {
  int i = threadIdx.x;
  if (i < n) h[i] = h[i] * __float2half(2.0f) + h[i];
}

__global__ void static_shared(float *x) {
  __shared__ float tile[32];
  tile[threadIdx.x] = x[threadIdx.x];
  x[threadIdx.x] = tile[threadIdx.x] * cg::this_thread_block().thread_rank();
}

template <typename T, int N>
__global__ void templated(T *x) { x[threadIdx.x] = twice(x[threadIdx.x]) * T(N); }

__global__ void syncthreads(float *x) {
  extern __shared__ float smem[];
  smem[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = smem[0];
}
__global__ void syncthreads_count(int *x) { x[0] = __syncthreads_count(x[threadIdx.x]); }
__global__ void syncwarp(int *x) { __syncwarp(); x[0] = 1; }
__global__ void shuffle_two_levels(float *x) { x[0] = two_levels(x[threadIdx.x]); }
__global__ void ballot(int *x) { x[0] = __ballot_sync(0xffffffff, x[threadIdx.x]); }
__global__ void any_all(int *x) { x[0] = __any_sync(~0u, x[1]) + __all_sync(~0u, x[2]); }
__global__ void active_mask(unsigned *x) { x[0] = __activemask(); }
__global__ void cg_block_sync(float *x) {
  cg::thread_block b = cg::this_thread_block();
  x[b.thread_rank()] = 1;
  b.sync();
}
__global__ void cg_tiles(float *x) {
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  x[0] = cg::reduce(tile, x[tile.thread_rank()], cg::plus<float>());
}
template <typename T> __global__ void cg_dependent(T *x) {
  group_sync(cg::this_thread_block());
  x[0] = 0;
}
__global__ void cuda_barrier(cuda::barrier<cuda::thread_scope_block> *bar) { bar->arrive_and_wait(); }
__global__ void named_barrier(float *x) {
  asm volatile("bar.sync 1, 64;");
  x[0] = 0;
}
__global__ void unknown_callee(float *x) { x[0] = defined_nowhere(x[0]); }
__global__ void through_pointer(float *x, float (*f)(float)) { x[0] = f(x[0]); }
__global__ void declared_only(float *x);

#define FORWARD(...) __VA_ARGS__

template <typename T>
void run_templated(T *x, cudaStream_t s) {
  templated<T, 2><<<1, 32, 0, s>>>(x);
  cg_dependent<T><<<1, 32>>>(x);
}

void launches(float *x, int *ix, unsigned *ux, __half *h, Params p, cudaStream_t s,
              cuda::barrier<cuda::thread_scope_block> *bar) {
  pointwise<<<dim3(4, 1), 256>>>(x, p);
  pointwise<<<4, 256, 0>>>(x, p);
  pointwise<<< 4, 256, 0, s >>>(
      x, p);
  half_math<<<1, 32>>>(h, 32);
  static_shared<<<1, 32>>>(x);
  templated<float, 4><<<1, 32, 0, s>>>(x);
  run_templated(x, s);
  syncthreads<<<1, 32, 32 * sizeof(float), s>>>(x);
  syncthreads_count<<<1, 32>>>(ix);
  syncwarp<<<1, 32>>>(ix);
  shuffle_two_levels<<<1, 32>>>(x);
  ballot<<<1, 32>>>(ix);
  any_all<<<1, 32>>>(ix);
  active_mask<<<1, 32>>>(ux);
  cg_block_sync<<<1, 32>>>(x);
  cg_tiles<<<1, 32>>>(x);
  cuda_barrier<<<1, 32>>>(bar);
  named_barrier<<<1, 64>>>(x);
  unknown_callee<<<1, 32>>>(x);
  through_pointer<<<1, 32>>>(x, nullptr);
  declared_only<<<1, 32>>>(x);
  FORWARD(pointwise<<<1, 1>>>(x, p));
  auto in_lambda = [&] { static_shared<<<2, 32>>>(x); };
  in_lambda();
}

// CHECK:      {{^}}  coconet_host_launch(COCONET_HOST_SIMPLE, templated<T, 2>, 1, 32, 0, s, x);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SYNC, cg_dependent<T>, 1, 32, 0, 0, x);
// CHECK:      {{^}}  coconet_host_launch(COCONET_HOST_SIMPLE, pointwise, dim3(4, 1), 256, 0, 0, x, p);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SIMPLE, pointwise, 4, 256, 0, 0, x, p);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SIMPLE, pointwise, 4, 256, 0, s,{{$}}
// CHECK-NEXT: {{^}}      x, p);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SIMPLE, half_math, 1, 32, 0, 0, h, 32);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SIMPLE, static_shared, 1, 32, 0, 0, x);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SIMPLE, templated<float, 4>, 1, 32, 0, s, x);
// CHECK-NEXT: {{^}}  run_templated(x, s);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SYNC, syncthreads, 1, 32, 32 * sizeof(float), s, x);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SYNC, static_cast<void (*)(int *)>(syncthreads_count), 1, 32, 0, 0, ix);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SYNC, syncwarp, 1, 32, 0, 0, ix);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SYNC, shuffle_two_levels, 1, 32, 0, 0, x);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SYNC, static_cast<void (*)(int *)>(ballot), 1, 32, 0, 0, ix);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SYNC, any_all, 1, 32, 0, 0, ix);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SYNC, active_mask, 1, 32, 0, 0, ux);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SYNC, cg_block_sync, 1, 32, 0, 0, x);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SYNC, cg_tiles, 1, 32, 0, 0, x);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SYNC, cuda_barrier, 1, 32, 0, 0, bar);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SYNC, named_barrier, 1, 64, 0, 0, x);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SYNC, unknown_callee, 1, 32, 0, 0, x);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SYNC, through_pointer, 1, 32, 0, 0, x, nullptr);
// CHECK-NEXT: {{^}}  coconet_host_launch(COCONET_HOST_SYNC, declared_only, 1, 32, 0, 0, x);
// CHECK-NEXT: {{^}}  FORWARD(coconet_host_launch(COCONET_HOST_SIMPLE, pointwise, 1, 1, 0, 0, x, p));
// CHECK-NEXT: {{^}}  auto in_lambda = [&] { coconet_host_launch(COCONET_HOST_SIMPLE, static_shared, 2, 32, 0, 0, x); };

// SHARED: {{^}}  float *smem = (float *)coconet_host_dynamic_shared();
