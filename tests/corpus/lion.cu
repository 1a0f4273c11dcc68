// Style: the Lion optimizer as written in training code: a sign helper with
// early returns, the update's interpolation in a local, decoupled weight
// decay under an `if` on a scalar parameter, and the moment written last.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_runtime.h>
#include <nccl.h>

__device__ __forceinline__ float sign_of(float x) {
  if (x > 0.0f) return 1.0f;
  if (x < 0.0f) return -1.0f;
  return 0.0f;
}

__global__ void lion_step(float *param, const float *grad, float *exp_avg, float lr, float beta1, float beta2,
                          float weight_decay, long n) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float p = param[i];
    float m = exp_avg[i];
    float g = grad[i];
    if (weight_decay != 0.0f) {
      p *= 1.0f - lr * weight_decay;
    }
    float update = m * beta1 + g * (1.0f - beta1);
    param[i] = p - lr * sign_of(update);
    exp_avg[i] = m * beta2 + g * (1.0f - beta2);
  }
}

void lion(float *param, float *grad, float *exp_avg, long n, float lr, ncclComm_t comm, cudaStream_t stream) {
  const int threads = 256;
  const long blocks = (n + threads - 1) / threads;
#pragma coconet region name(lion) split reorder replicated(param) shard(exp_avg) scratch(grad)
  {
    ncclAllReduce(grad, grad, n, ncclFloat, ncclAvg, comm, stream);
    lion_step<<<blocks, threads, 0, stream>>>(param, grad, exp_avg, lr, 0.9f, 0.99f, 0.01f, n);
  }
}

// IR: verify=ir lion: ok
// EXEC: verify lion: ok (the region as written and as scheduled agree within 0 ULP)
