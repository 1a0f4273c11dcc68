// Style: a chain of kernels after the AllReduce (gradient unscale with a
// device scalar, clipping by value, then SGD with momentum and nesterov),
// each its own kernel as a trainer's optimizer step launches them.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void unscale(float *g, const float *inv_scale, int n) {
  int idx = threadIdx.x + blockIdx.x * blockDim.x;
  if (idx < n) g[idx] *= inv_scale[0];
}

__global__ void clip_value(float *g, float clip, int n) {
  int idx = threadIdx.x + blockIdx.x * blockDim.x;
  if (idx < n) g[idx] = g[idx] > clip ? clip : (g[idx] < -clip ? -clip : g[idx]);
}

__global__ void sgd_nesterov(float *w, float *buf, const float *g, float lr, float momentum, float wd, int n) {
  int idx = threadIdx.x + blockIdx.x * blockDim.x;
  if (idx < n) {
    float d = g[idx] + wd * w[idx];
    float b = momentum * buf[idx] + d;
    buf[idx] = b;
    w[idx] -= lr * (d + momentum * b);
  }
}

void step(float *w, float *buf, float *g, const float *inv_scale, float lr, int n, ncclComm_t comm, cudaStream_t s) {
  const int threads = 256;
  const int blocks = (n + threads - 1) / threads;
#pragma coconet region name(sgd_chain) split reorder shard(buf) scratch(g) replicated(w, inv_scale)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    unscale<<<blocks, threads, 0, s>>>(g, inv_scale, n);
    clip_value<<<blocks, threads, 0, s>>>(g, 1.0f, n);
    sgd_nesterov<<<blocks, threads, 0, s>>>(w, buf, g, lr, 0.9f, 1e-4f, n);
  }
}

// IR: verify=ir sgd_chain: ok
// EXEC: verify sgd_chain: ok (the region as written and as scheduled agree within 0 ULP)
