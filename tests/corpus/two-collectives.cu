// Style: one region with two AllReduces, each followed by its own kernel
// (two parameter groups updated in one step), both split and reordered.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void sgd(float *w, const float *g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i];
}

void step(float *w1, float *g1, int n1, float *w2, float *g2, int n2, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(two_groups) split reorder scratch(g1, g2) replicated(w1, w2)
  {
    ncclAllReduce(g1, g1, n1, ncclFloat, ncclSum, comm, s);
    sgd<<<(n1 + 255) / 256, 256, 0, s>>>(w1, g1, 0.1f, n1);
    ncclAllReduce(g2, g2, n2, ncclFloat, ncclSum, comm, s);
    sgd<<<(n2 + 255) / 256, 256, 0, s>>>(w2, g2, 0.05f, n2);
  }
}

// IR: verify=ir two_groups: ok
// EXEC: verify two_groups: ok (the region as written and as scheduled agree within 0 ULP)
