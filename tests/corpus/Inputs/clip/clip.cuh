// clip.cuh: the clipped SGD step (tests/corpus/clip-grads.cu): the scale read from
// the norm on the device, every thread of a CEIL_DIV grid one parameter.
#pragma once
#include "common.cuh"

__global__ void clipped_sgd_kernel(float *params, const float *grads, const float *norm_squared, float lr,
                                   float max_norm, size_t count) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  float norm = sqrtf(*norm_squared);
  float scale = norm > max_norm ? max_norm / norm : 1.0f;
  params[i] -= lr * scale * grads[i];
}

inline void clipped_sgd(float *params, const float *grads, const float *norm_squared, float lr, float max_norm,
                        size_t count, cudaStream_t stream) {
  const int block_size = 256;
  clipped_sgd_kernel<<<CEIL_DIV(count, block_size), block_size, 0, stream>>>(params, grads, norm_squared, lr,
                                                                             max_norm, count);
  cudaCheck(cudaGetLastError());
}
