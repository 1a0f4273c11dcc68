// Regions cannot nest.
// RUN: %expect 1 %coconet --check %s 2>&1 | %FileCheck %s
#include <nccl.h>

void f(float *g, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(outer) split
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
#pragma coconet region name(inner)
    {
      ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    }
  }
}

// CHECK: nested.cu:9:1: error: nested '#pragma coconet region': regions cannot contain regions
// CHECK: nested.cu:6:1: note: the enclosing region 'outer' starts here
