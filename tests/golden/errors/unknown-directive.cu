// An unknown directive, with a suggestion.
// RUN: %expect 1 %coconet --check %s 2>&1 | %FileCheck %s
#include <nccl.h>

void f(float *g, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet regoin split
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
  }
}

// CHECK: unknown-directive.cu:6:17: error: unknown directive 'regoin'; did you mean 'region'?
// CHECK-NEXT: #pragma coconet regoin split
// CHECK-NEXT: {{^                \^$}}
