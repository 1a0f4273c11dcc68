// A collective tested against ncclSuccess (or 0, or alone: true when it
// failed) by an `if` whose branch fails (one
// statement, or a block whose last statement is the C or C++ library's
// abort(), exit(...), std::terminate(), or a throw, and that has no other way
// out, with no else) is read as the bare call: the calls the schedule
// generates get coconet's own check. A branch that goes on (a message only),
// one with an else, an `if` or a `return` inside, or a call of the user's named
// abort stays opaque, and a refused region's note says why (-DLOGGED).
// RUN: %coconet --check %s | %FileCheck %s
// RUN: %coconet --verify=2 %s -- -DSPLIT | %FileCheck --check-prefix=SPLIT %s
// RUN: %expect 1 %coconet --check %s -- -DLOGGED 2>&1 | %FileCheck --check-prefix=LOGGED %s
#include <cuda_runtime.h>
#include <nccl.h>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

#if defined(SPLIT)
void average(float *g, int n, int nranks, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(average) split reorder
  {
    if (ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s) != ncclSuccess) {
      fprintf(stderr, "allreduce of %d floats failed\n", n);
      exit(1);
    }
    scale<<<(n + 255) / 256, 256, 0, s>>>(g, 1.0f / nranks, n);
  }
}
#elif defined(LOGGED)
void logged(float *g, int n, int nranks, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(logged) split reorder
  {
    if (ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s) != ncclSuccess) fprintf(stderr, "failed\n");
    scale<<<(n + 255) / 256, 256, 0, s>>>(g, 1.0f / nranks, n);
  }
}
#else
void step(float *g, int n, bool verbose, ncclComm_t comm, cudaStream_t s) {
  auto abort = [&] { n = 0; };
#pragma coconet region name(kinds)
  {
    if (ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s) != ncclSuccess) {
      fprintf(stderr, "allreduce failed\n");
      exit(1);
    }
    if (ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s) != ncclSuccess) {
      std::abort();
    }
    if (ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s) != ncclSuccess) {
      fprintf(stderr, "allreduce failed\n");
    }
    if (ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s) != ncclSuccess) {
      exit(1);
    } else {
      puts("ok");
    }
    if (ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s) != ncclSuccess) {
      if (n) exit(1);
    }
    if (ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s) != ncclSuccess) {
      { puts("x"); }
      throw std::runtime_error("nccl");
    }
    if (ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s) != ncclSuccess) {
      fprintf(stderr, "allreduce failed\n");
      if (!verbose) return;
      exit(1);
    }
    if (ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s) != ncclSuccess) {
      abort();
    }
    if (ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s)) exit(1);
    if (ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s) != 0) {
      exit(1);
    }
    if (ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s) == 0) exit(1);
  }
}
#endif

// CHECK: region kinds ({{.*}}if-checks.cu:[[@LINE-41]]) in step: nccl:ncclAllReduce nccl:ncclAllReduce opaque opaque opaque nccl:ncclAllReduce opaque opaque nccl:ncclAllReduce nccl:ncclAllReduce opaque{{$}}
// SPLIT: verify average: ok
// A refused region says why its `if` is not the call:
// LOGGED: error: split: region 'logged' has no ncclAllReduce to split
// LOGGED: if-checks.cu:[[@LINE-52]]:5: note: the 'if' around the call is not a check coconet reads: its branch does not end in abort(), exit(...), std::terminate() or a throw; coconet reads 'if (CALL != ncclSuccess)' (or cudaSuccess, 0, or the call alone) without else
