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
// CHECK-NOT: note: the region is the statement after the pragma

// A pragma above a declaration instead of the block: the region is that
// declaration, and the note says so.
// RUN: %expect 1 %coconet --check %s -- -DABOVE_DECL 2>&1 | %FileCheck --check-prefix=DECL %s
#if defined(ABOVE_DECL)
void g(float *w, float *g, float lr, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region split reorder scratch(g) replicated(w)
  const int blocks = (n + 255) / 256;
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<blocks, 256, 0, s>>>(w, g, lr, n);
  }
}
#endif
// DECL: error: 'scratch(g)': the region never uses 'g'
// DECL-NEXT: #pragma
// DECL-NEXT: ^
// DECL-NEXT: unused-buffer.cu:[[@LINE-10]]:3: note: the region is the statement after the pragma, 'const int blocks = (n + 255) / 256;', not the block below it: put the pragma right above the '{' of the block
