// What used to crash or fail late is a located error at translation time, or
// now translates: two region pragmas on one statement, more overlap chunks
// than the runtime pipelines, a block comment that starts on the pragma line.
// RUN: %expect 1 %coconet %s -o %t.cu -- -DCASE_TWO_PRAGMAS 2>&1 | %FileCheck --check-prefix=TWO %s
// RUN: test ! -e %t.cu
// RUN: %expect 1 %coconet --check %s -- -DCASE_CHUNKS_65 2>&1 | %FileCheck --check-prefix=CHUNKS %s
// RUN: %coconet --check %s -- -DCASE_CHUNKS_64 | %FileCheck --check-prefix=CHUNKS-OK %s
// RUN: grep -q 'define COCONET_MAX_CHUNKS 64 ' %root/runtime/include/coconet.h
// RUN: grep -q 'IR_MAX_CHUNKS = 64 ' %root/translator/ir/ir.h
// RUN: %coconet %s -- -DCASE_COMMENT | %FileCheck --check-prefix=COMMENT %s
// RUN: %coconet --verify=2 %s -- -DCASE_COMMENT | %FileCheck --check-prefix=COMMENT-EXEC %s
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void sgd(float *w, const float *g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i];
}

void step(cublasHandle_t h, const float *a, const float *b, float *c, float *w, float *g, float lr, int m, int n,
          int k, ncclComm_t comm, cudaStream_t s) {
  const float one = 1.0f, zero = 0.0f;
#if defined(CASE_TWO_PRAGMAS)
#pragma coconet region name(first) split
#pragma coconet region name(second) split
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
  }
#elif defined(CASE_CHUNKS_65)
#pragma coconet region name(chunks) overlap(chunks=65)
  {
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, m, b, k, &zero, c, m);
    ncclAllReduce(c, c, (size_t)m * n, ncclFloat, ncclSum, comm, s);
  }
#elif defined(CASE_CHUNKS_64)
#pragma coconet region name(chunks) overlap(chunks=64)
  {
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, m, b, k, &zero, c, m);
    ncclAllReduce(c, c, (size_t)m * n, ncclFloat, ncclSum, comm, s);
  }
#elif defined(CASE_COMMENT)
#pragma coconet region name(commented) split reorder scratch(g) replicated(w) /* the optimizer
   step: this comment goes on after the pragma's line */
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr, n);
  }
#endif
  (void)one, (void)zero;
}

// TWO: late-failures.cu:26:1: error: a second '#pragma coconet region' for the same statement; write one region pragma with all the clauses
// TWO: late-failures.cu:25:1: note: region 'first' already applies to it
// CHUNKS: error: overlap: chunks=65; the runtime pipelines at most 64 chunks (COCONET_MAX_CHUNKS)
// CHUNKS-OK: region chunks
// COMMENT: {{^}}// #pragma coconet region name(commented) split reorder scratch(g) replicated(w) (translated by coconet){{$}}
// COMMENT-NEXT: {{^}}/* the optimizer{{$}}
// COMMENT-NEXT: {{^}}   step: this comment goes on after the pragma's line */{{$}}
// COMMENT-EXEC: verify commented: ok
