// kernels.h: the engine's elementwise kernels (tests/corpus/header-wrappers.cu).
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

template <typename T>
__global__ void addBiasResidual(T *out, const T *bias, const T *residual, int n, int hidden) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (T)((float)out[i] + (float)bias[i % hidden] + (float)residual[i]);
}

__device__ __forceinline__ float gelu(float x) {
  return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

template <typename T> __global__ void addBiasGelu(T *out, const T *bias, int n, int hidden) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = (T)gelu((float)out[i] + (float)bias[i % hidden]);
}
