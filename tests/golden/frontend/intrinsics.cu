// Kernels using device intrinsics parse in the host pass (the prelude covers what clang lacks).
// RUN: %coconet --check %s | %FileCheck %s
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <curand_kernel.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(float *a, const float *b, __half *h, __nv_bfloat16 *bf, int n, unsigned long long seed) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __shared__ float s[256];
  float x = __ldg(&b[i]) + __ldcs(&b[i]);
  __stcs(&a[i], x);
  x += __shfl_down_sync(0xffffffff, x, 1);
  unsigned m = __ballot_sync(0xffffffff, x > 0);
  atomicAdd(&a[0], x);
  s[threadIdx.x] = x; __syncthreads();
  h[i] = __float2half(x) ; bf[i] = __float2bfloat16(__bfloat162float(bf[i]) + __half2float(h[i]));
  curandStatePhilox4_32_10_t st; curand_init(seed, i, 0, &st); float u = curand_uniform(&st);
  cg::thread_block tb = cg::this_thread_block(); tb.sync();
  a[i] = __expf(u) + rsqrtf(x) + __fdividef(x, 2.f) + (float)m + __ldlu(&b[i]) + __ldcg(&b[i]);
}
void f() {
#pragma coconet region
  {}
}
// CHECK: region f_{{[0-9]+}} ({{.*}}intrinsics.cu:{{[0-9]+}}) in f:{{$}}
