// A pragma whose namespace is one or two letters from coconet's is a typo the
// compiler would ignore in silence: coconet warns, names what was meant, and
// copies the file as it is (the region is not translated). Other pragmas
// (once, unroll, omp) are not warned about.
// RUN: %coconet --check %s 2>&1 | %FileCheck %s
// RUN: %coconet %s -o %t.out 2>/dev/null && cmp %s %t.out
#include <nccl.h>
#pragma once

void f(float *g, int n, ncclComm_t c, cudaStream_t s) {
#pragma cocnet region split
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, c, s);
  }
#pragma unroll
  for (int i = 0; i < 4; i++) g[i] = 0.0f;
#pragma coconett region split
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, c, s);
  }
}

// CHECK: pragma-typo.cu:[[@LINE-12]]:9: warning: '#pragma cocnet' is not a coconet directive and is ignored; did you mean '#pragma coconet'?
// CHECK: pragma-typo.cu:[[@LINE-7]]:9: warning: '#pragma coconett' is not a coconet directive and is ignored; did you mean '#pragma coconet'?
// CHECK: pragma-typo.cu: 0 regions
// CHECK-NOT: warning
