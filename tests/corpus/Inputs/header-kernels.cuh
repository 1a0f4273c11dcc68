// header-kernels.cuh: kernels and helpers as projects keep them, in a header
// the translated file includes (tests/corpus/header-kernels.cu). coconet
// reads them where they are and never rewrites this file.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

__device__ __forceinline__ float clip(float v, float c) { return fminf(fmaxf(v, -c), c); }

// SGD with a clipped gradient.
__global__ void sgd_clip(float *__restrict__ w, const float *__restrict__ g, float lr, float c, int n) {
  int total = n;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += blockDim.x * gridDim.x)
    w[i] -= lr * clip(g[i], c);
}

// RMSNorm, one block per row, reduced in shared memory.
__global__ void rmsnorm_rows(float *out, const float *x, const float *gamma, int rows, int hidden) {
  __shared__ float partial[256];
  int row = blockIdx.x;
  if (row >= rows) return;
  float s = 0.0f;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) s += x[row * hidden + j] * x[row * hidden + j];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) partial[threadIdx.x] += partial[threadIdx.x + k];
    __syncthreads();
  }
  float r = rsqrtf(partial[0] / hidden + 1e-6f);
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) out[row * hidden + j] = x[row * hidden + j] * r * gamma[j];
}

// w += neg_lr * g on __half2 pairs, the step passed as a __half2 by value.
__global__ void axpy_half2(__half2 *w, const __half2 *g, __half2 neg_lr, int pairs) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < pairs) w[i] = __hadd2(w[i], __hmul2(neg_lr, g[i]));
}

// A kernel template: coconet reads its instance for the launch's arguments.
template <typename T>
__global__ void scale_t(T *x, T by, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * by;
}

// A bound that is an expression of parameters, read from the header's own bytes
// by the coverage proof.
__global__ void scale_grid(float *x, float a, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols) x[i] *= a;
}
