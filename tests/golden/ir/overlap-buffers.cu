// Two buffer expressions that offset the same pointer may overlap: no schedule
// (and --check fails the same way).
// RUN: %expect 1 %coconet --dump=ir %s 2>&1 | %FileCheck %s
// RUN: %expect 1 %coconet --check %s 2>&1 | %FileCheck %s
#include <nccl.h>
__global__ void sgd(float *w, const float *g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i];
}
void step(float *buf, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region split reorder
  {
    ncclAllReduce(buf + n, buf + n, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(buf, buf + n, 0.1f, n);
  }
}

// CHECK: error: 'buf+n' and 'buf' may overlap (both offset 'buf'); coconet cannot schedule work on buffers it cannot tell apart
// CHECK: overlap-buffers.cu:13:5: note: 'buf+n' is used here
