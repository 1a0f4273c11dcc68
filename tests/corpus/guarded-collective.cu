// Style: tensor-parallel code runs its AllReduce only when there is more than
// one rank (FasterTransformer: `if (tensor_para_.world_size_ > 1) {
// ftNcclAllReduceSum(...); }`; trainers: `if (world_size > 1)`). The collective
// under an `if` without an else, whose condition has no effects, is read as the
// collective; the schedule is for the condition holding, tested at the top of
// the region, and the region runs as written otherwise (the kernel on the
// buffer as it is); COCONET_CHECK=clauses checks the clauses only where the
// condition holds (with one rank, the communicator may not exist). The condition may read a member of a struct (the harness's
// path search sets it); an if around such an if adds its condition (nested), written on one line or several. Before the guarded collective may come launches,
// collectives and declarations without effects (`const size_t count = ...;`);
// refused: any other statement before it, which could change what the guard
// reads through any alias (CHANGED; CONSTRUCTED, a declaration whose constructor
// does), also before a second collective under the same guard (BETWEEN); an
// argument with effects of the guarded collective (EFFECT_ARG; the schedule would
// evaluate it before the test); an `if` with an else is a statement coconet does not see
// into, with a note saying what it reads (ELSE; ELSE_WRAPPER, the collective in a wrapper).
// RUN: %coconet --verify=2 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %expect 1 %coconet --check %s -- -DCHANGED 2>&1 | %FileCheck --check-prefix=CHANGED %s
// RUN: %expect 1 %coconet --check %s -- -DBETWEEN 2>&1 | %FileCheck --check-prefix=BETWEEN %s
// RUN: %expect 1 %coconet --check %s -- -DCONSTRUCTED 2>&1 | %FileCheck --check-prefix=CONSTRUCTED %s
// RUN: %expect 1 %coconet --check %s -- -DEFFECT_ARG 2>&1 | %FileCheck --check-prefix=EFFECT_ARG %s
// RUN: %expect 1 %coconet --check %s -- -DELSE 2>&1 | %FileCheck --check-prefix=ELSE %s
// RUN: %expect 1 %coconet --check %s -- -DELSE_WRAPPER 2>&1 | %FileCheck --check-prefix=ELSE_WRAPPER %s
#include <cuda_runtime.h>
#include <nccl.h>

struct TensorParallel {
  int world_size;
  int rank;
  ncclComm_t comm;
};

__global__ void add_bias_gelu(float *x, const float *bias, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols) {
    float v = x[i] + bias[i % cols];
    x[i] = v / (1.0f + __expf(-1.702f * v));
  }
}

static void all_reduce_sum(float *buf, size_t n, const TensorParallel &tp, cudaStream_t stream) {
  ncclAllReduce((const void *)buf, (void *)buf, n, ncclFloat, ncclSum, tp.comm, stream);
}

#if defined(CONSTRUCTED)
struct Halver {
  explicit Halver(int &n) { n /= 2; }
};
#elif defined(EFFECT_ARG)
ncclComm_t comm_of(int world_size, ncclComm_t comm);  // (aborts with one rank, say)
#endif

void mlp_out(float *x, const float *bias, int rows, int cols, int world_size, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(plain) split reorder replicated(bias)
  {
    const size_t count = (size_t)rows * cols;
#if defined(CHANGED)
    world_size = world_size / 2;
#elif defined(CONSTRUCTED)
    Halver halve(world_size);
#endif
#if defined(EFFECT_ARG)
    if (world_size > 1) ncclAllReduce(x, x, count, ncclFloat, ncclSum, comm_of(world_size, comm), stream);
#else
    if (world_size > 1) {
      ncclAllReduce(x, x, count, ncclFloat, ncclSum, comm, stream);
    }
#endif
    add_bias_gelu<<<(rows * cols + 255) / 256, 256, 0, stream>>>(x, bias, rows, cols);
#if defined(BETWEEN)
    world_size = 1;
    if (world_size > 1) ncclAllReduce(x, x, count, ncclFloat, ncclSum, comm, stream);
#endif
  }
}

void attn_out(float *x, const float *bias, int rows, int cols, const TensorParallel &tp, cudaStream_t stream) {
#pragma coconet region name(member) split reorder replicated(bias)
  {
#if defined(ELSE)
    if (tp.world_size > 1)
      ncclAllReduce(x, x, (size_t)rows * cols, ncclFloat, ncclSum, tp.comm, stream);
    else
      cudaStreamSynchronize(stream);
#elif defined(ELSE_WRAPPER)
    if (tp.world_size > 1)
      all_reduce_sum(x, (size_t)rows * cols, tp, stream);
    else
      cudaStreamSynchronize(stream);
#else
    if (tp.world_size > 1)
      all_reduce_sum(x, (size_t)rows * cols, tp, stream);
#endif
    add_bias_gelu<<<(rows * cols + 255) / 256, 256, 0, stream>>>(x, bias, rows, cols);
  }
}

// An if around a guarded collective (an engine's `if (do_all_reduce_) { if (world_size_ > 1) ... }`): the collective
// under both conditions.
void attn_out_nested(float *x, const float *bias, int rows, int cols, int all_reduce, const TensorParallel &tp,
                     cudaStream_t stream) {
#pragma coconet region name(nested) split reorder replicated(bias)
  {
    if (all_reduce != 0 &&
        rows > 0) {
      if (tp.world_size > 1) all_reduce_sum(x, (size_t)rows * cols, tp, stream);
    }
    add_bias_gelu<<<(rows * cols + 255) / 256, 256, 0, stream>>>(x, bias, rows, cols);
  }
}

// A member of a member (`layer.tp.world_size`) under a condition whose char literals hold
// parentheses, and an enum class: the path search sets members at any depth, tried with the
// characters the conditions compare with and the enumerators too.
enum class Kind { kReplicated = 3, kParallel = 7 };
struct Layer {
  TensorParallel tp;
  char mode;
  Kind kind;
};
void layer_out(float *x, const float *bias, int rows, int cols, const Layer &layer, cudaStream_t stream) {
#pragma coconet region name(deep) split reorder replicated(bias)
  {
    if ((layer.mode == '(') || (layer.mode == ')')) {
      if (layer.tp.world_size > 1 && layer.kind == Kind::kParallel)
        all_reduce_sum(x, (size_t)rows * cols, layer.tp, stream);
    }
    add_bias_gelu<<<(rows * cols + 255) / 256, 256, 0, stream>>>(x, bias, rows, cols);
  }
}

// EXEC: verify plain: run with (world_size > 1) (the region runs ncclAllReduce only then: the schedule's branch, taken in {{[1-9][0-9]*}} of 6 runs; the others run the region as written)
// EXEC: verify plain: ok
// EXEC: verify member: run with (tp.world_size > 1) (the region runs ncclAllReduce only then: the schedule's branch, taken in {{[1-9][0-9]*}} of 6 runs; the others run the region as written)
// EXEC: verify member: ok
// EXEC: verify nested: run with ((all_reduce != 0 && rows > 0) && (tp.world_size > 1)) (the region runs ncclAllReduce only then: the schedule's branch, taken in {{[1-9][0-9]*}} of 6 runs; the others run the region as written)
// EXEC: verify nested: ok
// EXEC: verify deep: run with (((layer.mode == '(') || (layer.mode == ')')) && (layer.tp.world_size > 1 && layer.kind == Kind::kParallel)) (the region runs ncclAllReduce only then: the schedule's branch, taken in {{[1-9][0-9]*}} of 6 runs; the others run the region as written)
// EXEC: verify deep: ok

// CODE-LABEL: void mlp_out(
// CODE: if ((world_size > 1) && coconet_check_clauses())
// CODE-NEXT: coconet_check_replicated(bias,
// CODE: // coconet: the region runs ncclAllReduce only when (world_size > 1)
// CODE-NEXT: // (guarded-collective.cu:{{[0-9]+}}:5): the schedule is for it running; the region runs as written
// CODE: if ((world_size > 1) && coconet_disjoint(
// CODE: ncclReduceScatter(x, x + coconet_p.slice_lo
// CODE: } else {
// CODE-NEXT: if (world_size > 1) {
// CODE-NEXT: ncclAllReduce(x, x, count, ncclFloat, ncclSum, comm, stream);
// CODE-NEXT: }
// CODE-NEXT: add_bias_gelu<<<
// CODE-LABEL: void attn_out(
// CODE: if ((tp.world_size > 1) && coconet_disjoint(
// CODE: ncclReduceScatter(x, x + coconet_p.slice_lo
// CODE: tp.comm
// CODE: } else {
// CODE-NEXT: if (tp.world_size > 1)
// CODE-NEXT: all_reduce_sum(x, (size_t)rows * cols, tp, stream);
// CODE-LABEL: void attn_out_nested(
// CODE: // coconet: the region runs ncclAllReduce only when ((all_reduce != 0 && rows > 0) &&
// CODE-NEXT: // (tp.world_size > 1))
// CODE: if (((all_reduce != 0 && rows > 0) && (tp.world_size > 1)) && coconet_disjoint(

// CHANGED: guarded-collective.cu:{{[0-9]+}}:5: error: region 'plain' runs ncclAllReduce only when (world_size > 1), so the schedule, which is for it running, runs when that holds at the top of the region; this statement comes before it, and coconet does not follow what it may change (through a reference, a pointer or a call): move the statement out of the region, or after the guarded ncclAllReduce
// CHANGED: note: the ncclAllReduce is here

// BETWEEN: guarded-collective.cu:{{[0-9]+}}:5: error: region 'plain' runs ncclAllReduce only when (world_size > 1), so the schedule, which is for it running, runs when that holds at the top of the region; this statement comes before it, and coconet does not follow what it may change (through a reference, a pointer or a call): move the statement out of the region, or after the guarded ncclAllReduce
// BETWEEN-NEXT: world_size = 1;

// ELSE: error: split: region 'member' has no ncclAllReduce to split
// ELSE: note: it is an 'if' around a collective, which coconet reads as the collective under a run-time test only written `if (C) collective;` (or a call of a wrapper it sees through): no else, a condition without effects, macros or comments, the collective alone in its body

// ELSE_WRAPPER: error: split: region 'member' has no ncclAllReduce to split
// ELSE_WRAPPER: note: the call of 'all_reduce_sum' ({{.*}}guarded-collective.cu:{{[0-9]+}}:13) is not seen through as the kernel launch or collective inside it: it is an 'if' around a collective, which coconet reads as the collective under a run-time test only written `if (C) collective;`

// CONSTRUCTED: guarded-collective.cu:{{[0-9]+}}:5: error: region 'plain' runs ncclAllReduce only when (world_size > 1), so the schedule, which is for it running, runs when that holds at the top of the region; this statement comes before it, and coconet does not follow what it may change (through a reference, a pointer or a call)
// CONSTRUCTED-NEXT: Halver halve(world_size);

// EFFECT_ARG: guarded-collective.cu:{{[0-9]+}}:{{[0-9]+}}: error: 'comm_of(world_size, comm)' has side effects; the schedule evaluates it once at the top of region 'plain', before it tests whether (world_size > 1) holds, and the region runs ncclAllReduce only then: compute it into a local before the region
