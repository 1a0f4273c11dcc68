// scale.cuh: a gradient scale launched with CEIL_DIV in the launch itself
// (tests/corpus/ceil-div-launchers.cu).
#pragma once
#include "cuda_common.h"

__global__ void scale_kernel(floatX *x, float factor, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = (floatX)((float)x[i] * factor);
}

inline void scale_grads(floatX *x, float factor, size_t n, cudaStream_t stream) {
  const int block_size = 256;
  scale_kernel<<<CEIL_DIV(n, block_size), block_size, 0, stream>>>(x, factor, n);
  cudaCheck(cudaGetLastError());
}
