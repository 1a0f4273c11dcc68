// Lexical corner cases: a comment inside the directive, a continuation with
// blanks after the backslash, and a call that comes whole out of a macro body
// (no text of its own to rewrite: opaque).
// RUN: %coconet --check %s 2>/dev/null | %FileCheck %s
#include <nccl.h>

#define ALLREDUCE(b) ncclAllReduce(b, b, n, ncclFloat, ncclSum, comm, s)

void f(float *g, int n, ncclComm_t comm, cudaStream_t s) {
#pragma /* commented */ coconet region name(commented) split \  
    scratch(g)
  {
    ALLREDUCE(g);
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
  }
}

// CHECK: region commented ({{.*}}lexical-forms.cu:10) in f: opaque nccl:ncclAllReduce{{$}}
