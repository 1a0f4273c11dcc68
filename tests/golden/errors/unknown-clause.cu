// An unknown clause, with a suggestion; a continuation line keeps columns right.
// RUN: %expect 1 %coconet --check %s 2>&1 | %FileCheck %s
#include <nccl.h>

void f(float *g, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(step) \
    splitt reorder
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
  }
}

// CHECK: unknown-clause.cu:7:5: error: unknown clause 'splitt'; did you mean 'split'?
// CHECK-NEXT: {{^    splitt reorder$}}
// CHECK-NEXT: {{^    \^$}}
