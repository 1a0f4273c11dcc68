// launch.cuh: a project's launch helpers, kernels launched in a header, and a
// block reduction through dynamic shared memory (headers.test).
#pragma once
#include "kernels.cuh"

__global__ void block_sum(const float *x, float *out, int n) {
  extern __shared__ float partial[];
  float s = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += x[i];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = partial[0];
}

inline void launch_fill(float *x, float value, int n, cudaStream_t s) {
  fill<<<(n + THREADS - 1) / THREADS, THREADS, 0, s>>>(x, value, n);
}

inline void launch_sum(const float *x, float *out, int n, cudaStream_t s) {
  block_sum<<<1, THREADS, THREADS * sizeof(float), s>>>(x, out, n);
}
