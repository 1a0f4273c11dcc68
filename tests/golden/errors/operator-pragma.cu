// _Pragma("coconet ...") cannot be rewritten in place: it is refused where it is written.
// RUN: %expect 1 %coconet --check %s 2>&1 | %FileCheck %s
#include <nccl.h>

#define REGION _Pragma("coconet region split")

void f(float *g, int n, ncclComm_t comm, cudaStream_t s) {
  REGION
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
  }
}

// CHECK: operator-pragma.cu:5:16: error: '_Pragma("coconet ...")' is not supported: a coconet directive must be written as '#pragma coconet' on its own line, outside macros
// CHECK-NEXT: #define REGION _Pragma("coconet region split")
// CHECK-NEXT: {{^               \^$}}
