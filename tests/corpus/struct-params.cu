// Style: hyperparameters passed as one struct by value (AdamParams), read as
// p.lr, p.beta1, ... and the count as p.n, the way parameter packs are passed
// to fused optimizer kernels.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_runtime.h>
#include <nccl.h>

struct AdamParams {
  float lr, beta1, beta2, eps, weight_decay;
  int n;
};

__global__ void adam_struct(float *w, const float *g, float *m, float *v, AdamParams p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) {
    float mi = p.beta1 * m[i] + (1.0f - p.beta1) * g[i];
    float vi = p.beta2 * v[i] + (1.0f - p.beta2) * g[i] * g[i];
    m[i] = mi;
    v[i] = vi;
    w[i] -= p.lr * (mi / (sqrtf(vi) + p.eps) + p.weight_decay * w[i]);
  }
}

void step(float *w, float *g, float *m, float *v, int n, ncclComm_t comm, cudaStream_t s) {
  AdamParams p{1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, n};
#pragma coconet region name(adam_struct) split reorder shard(m, v) scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, p.n, ncclFloat, ncclSum, comm, s);
    adam_struct<<<(p.n + 255) / 256, 256, 0, s>>>(w, g, m, v, p);
  }
}

// IR: verify=ir adam_struct: ok
// EXEC: verify adam_struct: ok (the region as written and as scheduled agree within 0 ULP)
