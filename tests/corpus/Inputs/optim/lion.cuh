// optim/lion.cuh: the Lion optimizer (tests/corpus/lion-ddp.cu): parameters in
// their training type, the moment in fp32, decoupled weight decay; a grid-stride
// kernel template launched on a grid capped with std::min.
#pragma once
#include <algorithm>
#include <cuda_runtime.h>

#include "math.cuh"

namespace optim {

template <typename P>
__global__ void lion_kernel(P *param, const P *grad, float *exp_avg, float lr, float beta1, float beta2,
                            float weight_decay, size_t n) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float p = to_float(param[i]);
    const float m = exp_avg[i];
    const float g = to_float(grad[i]);
    p *= 1.0f - lr * weight_decay;
    const float update = m * beta1 + g * (1.0f - beta1);
    store(&param[i], p - lr * sign_of(update));
    exp_avg[i] = m * beta2 + g * (1.0f - beta2);
  }
}

template <typename P>
void lion_step(P *param, const P *grad, float *exp_avg, float lr, float beta1, float beta2, float weight_decay,
               size_t n, cudaStream_t stream) {
  const int threads = 256;
  const int blocks = std::min<size_t>((n + threads - 1) / threads, 1024);
  lion_kernel<P><<<blocks, threads, 0, stream>>>(param, grad, exp_avg, lr, beta1, beta2, weight_decay, n);
}

}  // namespace optim
