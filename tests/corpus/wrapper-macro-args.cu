// Style: a project's wrapper called with an argument spelled through a macro
// (`#define CTX *ctx`, so `CTX.tp` is `*(ctx.tp)`), and a guard on an enum class
// parameter (`if (mode == Mode::kTrain)`). The wrapper's text in the caller's terms keeps
// the macro's argument in parentheses (`(CTX.tp).comm`: `CTX.tp.comm` would be
// `*ctx.tp.comm`, which does not compile); a member chain without a macro has none
// (`layer.tp.comm`). --verify sets the enum parameter with a cast and tries its
// enumerators on the path to the schedule; a pointer member the region reads through `->`
// (`ctx.tp->comm`, `ctx.tp->world_size`) points at an object of the harness's. (It runs
// without the macro's region, NO_MACRO: the harness cannot set `(CTX.tp).comm`, whose text
// is not a chain of members, and the run would stop there.)
// RUN: %coconet --verify=2 %s -- -DNO_MACRO | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
#include <cuda_runtime.h>
#include <nccl.h>

struct TP {
  int world_size;
  ncclComm_t comm;
};
struct Ctx {
  TP *tp;
};
struct Layer {
  TP tp;
};
enum class Mode { kEval = 2, kTrain = 5 };

__global__ void scale(float *x, float by, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= by;
}

static void all_reduce_sum(float *buf, size_t n, const TP &tp, cudaStream_t stream) {
  ncclAllReduce((const void *)buf, (void *)buf, n, ncclFloat, ncclSum, tp.comm, stream);
}

#if !defined(NO_MACRO)
#define CTX *ctx
void through_macro(float *x, float by, int n, Ctx ctx, cudaStream_t s) {
#pragma coconet region name(through_macro) split reorder
  {
    all_reduce_sum(x, n, CTX.tp, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(x, by, n);
  }
}
#endif

void train_only(float *x, float by, int n, const Layer &layer, Mode mode, cudaStream_t s) {
#pragma coconet region name(train_only) split reorder
  {
    if (mode == Mode::kTrain) all_reduce_sum(x, n, layer.tp, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(x, by, n);
  }
}

void pointer_member(float *x, float by, int n, const Ctx &ctx, cudaStream_t s) {
#pragma coconet region name(pointer_member) split reorder
  {
    if (ctx.tp->world_size > 1) ncclAllReduce(x, x, n, ncclFloat, ncclSum, ctx.tp->comm, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(x, by, n);
  }
}

// EXEC: verify train_only: run with (mode == Mode::kTrain) (the region runs ncclAllReduce only then: the schedule's branch, taken in {{[1-9][0-9]*}} of 6 runs; the others run the region as written)
// EXEC: verify train_only: ok
// EXEC: verify pointer_member: run with (ctx.tp->world_size > 1) (the region runs ncclAllReduce only then: the schedule's branch, taken in {{[1-9][0-9]*}} of 6 runs; the others run the region as written)
// EXEC: verify pointer_member: ok
// CODE: coconet_comm_info((CTX.tp).comm, &coconet_rank, &coconet_nranks);
// CODE: coconet_comm_info(layer.tp.comm, &coconet_rank, &coconet_nranks);
