// fused_kernels.cuh: bias + dropout + residual add after a row-parallel linear
// (tests/corpus/megatron-mlp.cu): a counter-based hash for the mask, the bias
// broadcast over rows, launched through a template invoke function.
#pragma once
#include <cstdint>
#include <cuda_runtime.h>

#define CEIL_DIV(M, N) (((M) + (N)-1) / (N))

namespace megatron {

__device__ inline uint32_t hash_mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

template <typename T>
__global__ void bias_dropout_add_kernel(T *out, const T *x, const T *bias, const T *residual, float prob,
                                        uint32_t seed, int rows, int hidden) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * hidden) return;
  const float u = (float)(hash_mix((uint32_t)i ^ (seed * 0x9E3779B9U)) >> 8) * (1.0f / 16777216.0f);
  const float keep = u >= prob ? 1.0f / (1.0f - prob) : 0.0f;
  out[i] = (T)((float)residual[i] + ((float)x[i] + (float)bias[i % hidden]) * keep);
}

template <typename T>
void invokeBiasDropoutAdd(T *out, const T *x, const T *bias, const T *residual, float prob, uint32_t seed, int rows,
                          int hidden, cudaStream_t stream) {
  const int block_size = 256;
  const int grid_size = CEIL_DIV(rows * hidden, block_size);
  bias_dropout_add_kernel<T><<<grid_size, block_size, 0, stream>>>(out, x, bias, residual, prob, seed, rows, hidden);
}

}  // namespace megatron
