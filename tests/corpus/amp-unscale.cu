// Style: mixed-precision gradient handling after the AllReduce: the loss
// scale read through a pointer to a one-element device buffer (`*scale`),
// file-scope constants, a clamp helper with early returns, and the fp16
// gradient unscaled into an fp32 copy, all in one grid-stride loop.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>

const float kMaxGrad = 1000.0f;
constexpr float kTiny = 1e-30f;

__device__ float clamp_abs(float g, float limit) {
  if (g > limit) return limit;
  if (g < -limit) return -limit;
  return g;
}

__global__ void unscale(float *grad32, const __half *grad16, const float *scale, size_t n) {
  const float inv = 1.0f / fmaxf(*scale, kTiny);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
    grad32[i] = clamp_abs(__half2float(grad16[i]) * inv, kMaxGrad);
  }
}

void reduce_grads(float *grad32, __half *grad16, const float *scale, size_t n, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(unscale) split reorder replicated(scale) scratch(grad16)
  {
    ncclAllReduce(grad16, grad16, n, ncclHalf, ncclSum, comm, stream);
    unscale<<<120, 512, 0, stream>>>(grad32, grad16, scale, n);
  }
}

// IR: verify=ir unscale: ok
// EXEC: verify unscale: ok (the region as written and as scheduled agree within 0 ULP)
