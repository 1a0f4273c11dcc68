// grad_scaler.cuh: mixed-precision loss scaling (tests/corpus/amp-scaler.cu):
// the half-precision gradient unscaled into fp32 master gradients, the count of
// non-finite values summed into a device scalar; the step skipped when it is not 0.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define DIV_UP(a, b) (((a) + (b) - 1) / (b))

namespace amp {

template <typename T>
__global__ void unscale_grads_kernel(float *master_grads, const T *grads, const float *inv_scale, float *found_inf,
                                     size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
    const float g = (float)grads[i] * *inv_scale;
    master_grads[i] = g;
    atomicAdd(found_inf, isfinite(g) ? 0.0f : 1.0f);
  }
}

__global__ void sgd_if_finite_kernel(float *params, const float *master_grads, const float *found_inf, float lr,
                                     size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (*found_inf == 0.0f) params[i] -= lr * master_grads[i];
}

template <typename T>
void unscale_grads(float *master_grads, const T *grads, const float *inv_scale, float *found_inf, size_t n,
                   cudaStream_t stream) {
  unscale_grads_kernel<T><<<80, 256, 0, stream>>>(master_grads, grads, inv_scale, found_inf, n);
}

inline void sgd_if_finite(float *params, const float *master_grads, const float *found_inf, float lr, size_t n,
                          cudaStream_t stream) {
  const unsigned threads = 256;
  sgd_if_finite_kernel<<<DIV_UP(n, threads), threads, 0, stream>>>(params, master_grads, found_inf, lr, n);
}

}  // namespace amp
