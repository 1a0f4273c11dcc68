// A project whose NCCL helpers and kernel launchers return their result for
// the caller to check (Inputs/checked): `return ncclAllReduce(...)` with the
// reduction a default argument, a template logging a failure and returning `r`,
// a helper keeping another helper's result in a local (-DIF), launchers
// returning cudaGetLastError() after the launch. The region checks them as projects do, with a macro
// (NCCLCHECK, CUDA_CHECK) or an `if` whose branch fails (-DIF). Pragma lines
// only; what the helpers return (the result, checked by the macro) is replaced
// by coconet's check of what it runs. A helper returning something else than
// the collective's result is not seen through (-DOTHER_RETURN). One whose
// local's initializer counts its calls (-DCOUNTED) or that counts after the
// helper it calls (-DCOUNTED_AFTER) is: the schedule runs the count in a copy of
// its own (what the helper runs besides its collective). One whose default
// argument counts is not (-DDEFAULT_EFFECTS); a launcher given an
// argument with side effects is not either, and the note says so (-DCALL_ARG); one
// calling a function without side effects is (`inverse(nranks)`).
// RUN: %coconet --verify=3 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -I%S/Inputs | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --verify=3 %s -- -I%S/Inputs -DIF | %FileCheck --check-prefix=EXEC-IF %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DOTHER_RETURN 2>&1 | %FileCheck --check-prefix=OTHER %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DDEFAULT_EFFECTS 2>&1 | %FileCheck --check-prefix=DEFAULT %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DCALL_ARG 2>&1 | %FileCheck --check-prefix=CALL_ARG %s
// RUN: %coconet --verify=3 %s -- -I%S/Inputs -DCOUNTED_AFTER | %FileCheck --check-prefix=NOTED %s
// RUN: %coconet --verify=3 %s -- -I%S/Inputs -DCOUNTED | %FileCheck --check-prefix=COUNTED %s
// RUN: %coconet %s -- -I%S/Inputs -DCOUNTED | %FileCheck --check-prefix=COUNTED-CODE %s
#include <cstdio>
#include <cstdlib>

#include "checked/comm.h"
#include "checked/ops.h"

#define NCCLCHECK(cmd)                                                                   \
  do {                                                                                   \
    ncclResult_t r_ = (cmd);                                                             \
    if (r_ != ncclSuccess) {                                                             \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, ncclGetErrorString(r_));       \
      exit(EXIT_FAILURE);                                                                \
    }                                                                                    \
  } while (0)
#define CUDA_CHECK(cmd)                                                                  \
  do {                                                                                   \
    cudaError_t e_ = (cmd);                                                              \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));        \
      exit(EXIT_FAILURE);                                                                \
    }                                                                                    \
  } while (0)

inline float inverse(int k) { return 1.0f / (float)k; }

#if defined(CALL_ARG)
static int g_steps = 0;
static float next_lr(float lr) { return lr / float(1 + g_steps++); }
#endif

// A macro alone as a launcher's argument inside the check (-DIF).
#define LR (0.5f * lr)

void train_step(float *w, float *g, float lr, int n, int nranks, ncclComm_t comm, cudaStream_t stream) {
#if defined(IF)
#pragma coconet region name(step_if) split reorder replicated(w)
  {
    if (comm::all_reduce_logged(g, n, comm, stream) != ncclSuccess) {
      fprintf(stderr, "gradient all-reduce failed\n");
      exit(EXIT_FAILURE);
    }
    CUDA_CHECK(launch_scale(g, inverse(nranks), n, stream));
    CUDA_CHECK(launch_sgd(w, g, LR, n, stream));
  }
#elif defined(COUNTED)
#pragma coconet region name(step_counted) split reorder replicated(w)
  {
    NCCLCHECK(comm::all_reduce_counted(g, n, comm, stream));
    CUDA_CHECK(launch_sgd(w, g, lr, n, stream));
  }
#elif defined(COUNTED_AFTER)
#pragma coconet region name(step_noted) split reorder replicated(w)
  {
    NCCLCHECK(comm::all_reduce_noted(g, n, comm, stream));
    CUDA_CHECK(launch_sgd(w, g, lr, n, stream));
  }
#elif defined(DEFAULT_EFFECTS)
#pragma coconet region name(step_default) split reorder replicated(w)
  {
    NCCLCHECK(comm::all_reduce_counted_op(g, n, comm, stream));
    CUDA_CHECK(launch_sgd(w, g, lr, n, stream));
  }
#elif defined(CALL_ARG)
#pragma coconet region name(step_call_arg) split reorder replicated(w)
  {
    NCCLCHECK(comm::all_reduce(g, n, comm, stream));
    CUDA_CHECK(launch_sgd(w, g, next_lr(lr), n, stream));
  }
#elif defined(OTHER_RETURN)
#pragma coconet region name(step_folded) split reorder replicated(w)
  {
    NCCLCHECK(comm::all_reduce_folded(g, n, comm, stream));
    CUDA_CHECK(launch_sgd(w, g, lr, n, stream));
  }
#else
#pragma coconet region name(step) split reorder replicated(w)
  {
    NCCLCHECK(comm::all_reduce(g, n, comm, stream));
    CUDA_CHECK(launch_scale(g, inverse(nranks), n, stream));
    CUDA_CHECK(launch_sgd(w, g, lr, n, stream));
  }
#endif
}

// EXEC: verify step: ok (the region as written and as scheduled agree within 0 ULP)
// CODE: split reorder replicated(w): ReduceScatter(g) -> scale_kernel + sgd_kernel on this rank's slice
// CODE: NCCLCHECK(ncclReduceScatter(g, g + coconet_p.slice_lo,
// CODE: NCCLCHECK(ncclAllGather(
// EXEC-IF: verify step_if: ok (the region as written and as scheduled agree within 0 ULP)
// OTHER: error: split: region 'step_folded' has no ncclAllReduce to split
// OTHER: note: the call of 'all_reduce_folded' ({{.*}}comm.h:{{[0-9]+}}:{{[0-9]+}}) is not seen through as the kernel launch or collective inside it: its body has a statement that is not an initialized local, a launch, an NCCL collective or group call, a call of such a function, or one coconet can run beside its collective ('return ncclAllReduce(buf, buf, count, {{.*}}' at comm.h:{{[0-9]+}}: it leaves the function (a return or a goto))
// DEFAULT: error: split: region 'step_default' has no ncclAllReduce to split
// DEFAULT: note: the call of 'all_reduce_counted_op' ({{.*}}comm.h:{{[0-9]+}}:{{[0-9]+}}) is not seen through as the kernel launch or collective inside it: the call leaves an argument to a default with side effects (a call, ++, an assignment)
// CALL_ARG: error: reorder: no pointwise kernel consumes the result of a split AllReduce
// CALL_ARG: note: the call of 'launch_sgd' ({{.*}}ops.h:{{[0-9]+}}:{{[0-9]+}}) is not seen through as the kernel launch or collective inside it: an argument of the call has side effects (a call, ++, an assignment)
// The statement in the way is the outer helper's, after the inner one's call:
// NOTED: verify step_noted: ok
// NOTED-NOT: (in 'all_reduce_op')
// COUNTED: verify step_counted: ok
// COUNTED-CODE: namespace comm {
// COUNTED-CODE-NEXT: namespace coconet_step_counted_1 {
// COUNTED-CODE-NEXT: static void all_reduce_counted()
// COUNTED-CODE-NEXT: {
// COUNTED-CODE-NEXT:   {{\[\[}}maybe_unused]] const int call = ++g_all_reduces;
// COUNTED-CODE-NEXT:   (void)call;
// COUNTED-CODE-NEXT: }
// COUNTED-CODE: ::comm::coconet_step_counted_1::all_reduce_counted();
// COUNTED-CODE-NEXT: int coconet_rank, coconet_nranks;
