// A clause naming a buffer the region never uses.
// RUN: %expect 1 %coconet --check %s 2>&1 | %FileCheck %s
#include <nccl.h>

__global__ void sgd(float *w, const float *g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i];
}

void f(float *w, float *g, float *mom, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region split reorder shard(mom) scratch(grad)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, 0.1f, n);
  }
}

// CHECK: unused-buffer.cu:11:44: error: 'shard(mom)': the region never uses 'mom'
// CHECK: unused-buffer.cu:11:57: error: 'scratch(grad)': the region never uses 'grad'
