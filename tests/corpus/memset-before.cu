// Style: a region that also zeroes and copies buffers around the collective,
// as a step that resets an accumulator and keeps a copy of the gradients:
// cudaMemsetAsync and cudaMemcpyAsync kept in place, the kernel moved.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void momentum(float *w, float *mom, const float *g, float lr, float mu, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float m = mu * mom[i] + g[i];
    mom[i] = m;
    w[i] -= lr * m;
  }
}

void step(float *w, float *mom, float *g, float *g_copy, float *acc, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(with_copies) split reorder shard(mom) replicated(w)
  {
    cudaMemsetAsync(acc, 0, sizeof(float) * n, s);
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    momentum<<<(n + 255) / 256, 256, 0, s>>>(w, mom, g, 0.01f, 0.9f, n);
    cudaMemcpyAsync(g_copy, g, sizeof(float) * n, cudaMemcpyDeviceToDevice, s);
  }
}

// IR: verify=ir with_copies: ok
// EXEC: verify with_copies: ok (the region as written and as scheduled agree within 0 ULP)
