// A project's kernels and their launchers; a launcher returns the launch's error.
#pragma once
#include <cuda_runtime.h>

__global__ void scale_kernel(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

__global__ void sgd_kernel(float *w, const float *g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i];
}

inline cudaError_t launch_scale(float *x, float a, int n, cudaStream_t stream) {
  scale_kernel<<<(n + 255) / 256, 256, 0, stream>>>(x, a, n);
  return cudaGetLastError();
}

inline cudaError_t launch_sgd(float *w, const float *g, float lr, int n, cudaStream_t stream) {
  const int blocks = (n + 255) / 256;
  sgd_kernel<<<blocks, 256, 0, stream>>>(w, g, lr, n);
  return cudaPeekAtLastError();
}
