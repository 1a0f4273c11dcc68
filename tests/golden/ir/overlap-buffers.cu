// Two buffer expressions that offset the same pointer may overlap: no schedule.
// RUN: %expect 1 %coconet --dump=ir %s 2>&1 | %FileCheck %s
// RUN: %coconet --check %s | %FileCheck --check-prefix=CHECKONLY %s
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
// CHECK: overlap-buffers.cu:12:5: note: 'buf+n' is used here
// CHECKONLY: region step_10
