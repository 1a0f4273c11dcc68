// A statement coconet does not see into may change any buffer: a buffer
// declared replicated is no longer known to be the same on every rank after it.
// RUN: %expect 1 %coconet --check %s 2>&1 | %FileCheck %s
#include <cuda_runtime.h>
#include <nccl.h>

void perturb(float *w, int n, int rank);  // defined elsewhere: per-rank noise

__global__ void sgd(float *w, const float *g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i];
}

void step(float *w, float *g, float lr, int n, int rank, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(after_opaque) split reorder scratch(g) replicated(w)
  {
    perturb(w, n, rank);
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr, n);
  }
}

// CHECK: opaque-writer.cu:19:5: error: reorder: kernel 'sgd' computes 'w' from 'w', which is replicated at region entry, but a statement coconet does not see into comes first in the region and may change it; gathering the slices of 'w' would then be wrong: move that statement out of the region, or declare shard(w) or scratch(w)
// CHECK: opaque-writer.cu:17:5: note: this statement may change 'w'
