// Generated symbols are named after regions: two regions cannot share a name.
// RUN: %expect 1 %coconet --check %s 2>&1 | %FileCheck %s
#include <nccl.h>

void f(float *g, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(step)
  { ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s); }
}

void h(float *g, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(step)
  { ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s); }
}

// CHECK: duplicate-name.cu:11:1: error: duplicate region name 'step'
// CHECK: duplicate-name.cu:6:1: note: the first region named 'step' is here
