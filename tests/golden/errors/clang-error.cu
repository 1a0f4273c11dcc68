// Errors in the input are printed as clang prints them; nothing is written.
// RUN: rm -f %t.out
// RUN: %expect 1 %coconet %s -o %t.out 2>&1 | %FileCheck %s
// RUN: test ! -e %t.out
#include <nccl.h>

void f(float *g, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region split
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s)
    undeclared_function(g);
  }
}

// CHECK: clang-error.cu:10:56: error: expected ';' after expression
// CHECK: clang-error.cu:11:5: error: use of undeclared identifier 'undeclared_function'
// CHECK-NEXT: {{^    undeclared_function\(g\);$}}
// CHECK-NEXT: {{^    \^$}}
