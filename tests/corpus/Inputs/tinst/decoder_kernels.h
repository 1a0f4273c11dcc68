// The engine's kernels: templates on the element type, each launched by an
// invoke wrapper template that computes its grid.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

template <typename T>
__global__ void addBiasResidual(T *out, const T *residual, const T *bias, int m, int n) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < m * n) {
    const float v = (float)out[idx] + (float)residual[idx] + (float)bias[idx % n];
    out[idx] = (T)v;
  }
}

template <typename T>
void invokeAddBiasResidual(T *out, const T *residual, const T *bias, int m, int n, cudaStream_t stream) {
  const int block = 256;
  const int grid = (m * n + block - 1) / block;
  addBiasResidual<T><<<grid, block, 0, stream>>>(out, residual, bias, m, n);
}

template <typename T>
__global__ void scaleGrads(T *grad, float scale, size_t count) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (size_t)blockDim.x * gridDim.x)
    grad[i] = (T)((float)grad[i] * scale);
}

template <typename T>
__global__ void gelu(T *x, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) {
    const float v = (float)x[i];
    x[i] = (T)(0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v))));
  }
}
