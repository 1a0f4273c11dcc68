// kernels.cuh: kernels only, no launch (headers.test). launch.cuh includes it
// by a quoted name relative to itself.
#ifndef HEADERS_KERNELS_CUH
#define HEADERS_KERNELS_CUH
#include <cuda_runtime.h>

#include "sizes.cuh"

__global__ void fill(float *x, float value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = value;
}

__global__ void scale(float *x, float a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) x[i] *= a;
}
#endif
