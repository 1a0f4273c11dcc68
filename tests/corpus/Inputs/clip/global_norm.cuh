// global_norm.cuh: the squared norm of the gradient (tests/corpus/clip-grads.cu):
// each thread's grid-stride sum, a warp's sum, one atomicAdd per warp; its launcher
// sizes a fixed grid.
#pragma once
#include "common.cuh"

__global__ void global_norm_squared_kernel(float *out, const float *data, size_t count) {
  size_t index = blockIdx.x * blockDim.x + threadIdx.x;
  size_t grid_width = blockDim.x * gridDim.x;
  float accumulator = 0.f;
  for (size_t i = index; i < count; i += grid_width) accumulator += data[i] * data[i];
  float warp_sum = warpReduceSum(accumulator);
  if (threadIdx.x % WARP_SIZE == 0) atomicAdd(out, warp_sum);
}

inline void global_norm_squared(float *out, const float *values, size_t count, cudaStream_t stream) {
  const int block_size = 512;
  const int grid_size = 64;
  global_norm_squared_kernel<<<grid_size, block_size, 0, stream>>>(out, values, count);
  cudaCheck(cudaGetLastError());
}
