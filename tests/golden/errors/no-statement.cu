// A region pragma with nothing after it in its block.
// RUN: rm -f %t.out
// RUN: %expect 1 %coconet %s -o %t.out 2>&1 | %FileCheck %s
// RUN: test ! -e %t.out
#include <nccl.h>

void f(float *g, int n, ncclComm_t comm, cudaStream_t s) {
  ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
#pragma coconet region split
}

// CHECK: no-statement.cu:9:1: error: '#pragma coconet region' must be followed by a statement (normally a { ... } block)
// CHECK-NEXT: {{^}}#pragma coconet region split{{$}}
// CHECK-NEXT: {{^}}^{{$}}
