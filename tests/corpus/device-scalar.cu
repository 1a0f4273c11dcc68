// Style: the loss scale (or learning rate) lives in a one-element device
// buffer that the kernel reads as scale[0], as mixed-precision trainers keep
// it, so that the host never synchronizes to read it.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void unscale_sgd(float *w, const __half *g, const float *scale, float lr, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
    float grad = __half2float(g[i]) / scale[0];
    w[i] -= lr * grad;
  }
}

void step(float *w, __half *g, const float *scale, float lr, size_t n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(unscale_sgd) split reorder scratch(g) replicated(w, scale)
  {
    ncclAllReduce(g, g, n, ncclHalf, ncclSum, comm, s);
    unscale_sgd<<<120, 256, 0, s>>>(w, g, scale, lr, n);
  }
}

// IR: verify=ir unscale_sgd: output 'w' (f32): max relative error 0 over 1..4 ranks x 3 inputs
// IR: verify=ir unscale_sgd: ok
// EXEC: verify unscale_sgd: input 'scale' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify unscale_sgd: output 'w' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify unscale_sgd: ok
