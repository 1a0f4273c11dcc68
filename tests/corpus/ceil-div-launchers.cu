// Style: a GPT-2 trainer as files (Inputs/gpt2/, after a public C/CUDA trainer):
// cuda_common.h defines CEIL_DIV, the precision (floatX: bf16, or fp32 with
// -DENABLE_FP32) and the check macros; adamw.cuh holds the multi-tensor AdamW
// (strides as parameters of their own, lerp with fma, optional fp32 master
// weights tested against NULL: the schedule runs when the caller's pointer is not
// null, the region as written when it is) and its launcher, which
// sizes the grid with CEIL_DIV and computes the bias corrections with powf;
// scale.cuh a gradient scale launched with CEIL_DIV (-DELEMENT_HELPER: the kernel's
// body is one call of a __device__ helper holding the loop, as llm.c writes it). The call site has pragma
// lines only; llm.c's own call (its shard's size as the count, the tensor's as the
// strides: region slices) runs the schedule when they are equal, tested at run
// time. The nearest refusals: a CEIL_DIV that is not ((M) + (N) - 1) / (N)
// (ROUNDED_UP: it covers the elements too, but coconet reads only that form); a
// slice stride that is an expression other than the count (PADDED_STRIDE:
// `n + 64`); a statement in the region that may change the stride before the launch
// (SLICE_CHANGED: the run-time test is at the region's top); a master pointer chosen at the call (MASTER_CHOSEN: `step > 0 ?
// master : nullptr`, neither NULL nor a variable).
// RUN: %coconet --verify=4 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=2 %s -- -I%S/Inputs -DENABLE_FP32 | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -I%S/Inputs | %FileCheck --check-prefix=CODE %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DROUNDED_UP 2>&1 | %FileCheck --check-prefix=ROUNDED %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DPADDED_STRIDE 2>&1 | %FileCheck --check-prefix=PADDED %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DMASTER_CHOSEN 2>&1 | %FileCheck --check-prefix=CHOSEN %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DSLICE_CHANGED 2>&1 | %FileCheck --check-prefix=CHANGED %s
// RUN: %coconet --explain %s -- -I%S/Inputs | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %coconet --explain %s -- -I%S/Inputs -DELEMENT_HELPER | %FileCheck --check-prefix=HELPER %s
// RUN: %coconet --check %s -- -I%S/Inputs -DGLOBAL_SLICE
// RUN: %expect 1 %coconet --verify=2 %s -- -I%S/Inputs -DGLOBAL_SLICE 2>&1 | %FileCheck --check-prefix=GLOBAL %s
// RUN: %coconet --verify=ir:3 %s -- -I%S/Inputs | %FileCheck --check-prefix=IR %s
#include "gpt2/adamw.cuh"
#include "gpt2/scale.cuh"

void gpt2_update(floatX *params, float *master, floatX *grads, float *m, float *v, size_t n, int layers,
                 float lr, int step, float grad_scale, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(zero1) split reorder scratch(grads) shard(m, v, master) replicated(params)
  {
    ncclCheck(ncclAllReduce(grads, grads, layers * n, ncclFloatX, ncclAvg, comm, stream));
#if defined(PADDED_STRIDE)
    adamw_update(params, master, grads, m, v, n, n + 64, n, n, layers, lr, 0.9f, 0.95f, step, 1e-8f, 0.1f,
                 grad_scale, stream);
#elif defined(MASTER_CHOSEN)
    adamw_update(params, step > 0 ? master : nullptr, grads, m, v, n, n, n, n, layers, lr, 0.9f, 0.95f, step,
                 1e-8f, 0.1f, grad_scale, stream);
#else
    adamw_update(params, master, grads, m, v, n, n, n, n, layers, lr, 0.9f, 0.95f, step, 1e-8f, 0.1f,
                 grad_scale, stream);
#endif
  }
}

// llm.c's call: its shard's size as the count and the tensor's as the strides (equal
// with its own ZeRO off), the AllReduce over the tensor's gradients: the schedule runs
// when they are equal, the region as written otherwise (the counts compare equal under
// that test).
struct Slice {
  ptrdiff_t offset;
  size_t size;
};
void next_slice(Slice *s);

void gpt2_update_slices(floatX *params, float *master, floatX *grads, float *m, float *v, Slice tensor, Slice shard,
                        int layers, float lr, int step, float grad_scale, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(slices) split reorder scratch(grads) shard(m, v, master) replicated(params)
  {
    ncclCheck(ncclAllReduce(grads, grads, layers * tensor.size, ncclFloatX, ncclAvg, comm, stream));
#ifdef SLICE_CHANGED
    next_slice(&tensor);
#endif
    adamw_update(params, master, grads, m, v, shard.size, tensor.size, tensor.size, shard.size, layers, lr, 0.9f,
                 0.95f, step, 1e-8f, 0.1f, grad_scale, stream);
  }
}

#ifdef GLOBAL_SLICE
// The strides from a global the harness does not set: translated, but --verify cannot run it.
Slice g_tensor;

void gpt2_update_global(floatX *params, float *master, floatX *grads, float *m, float *v, Slice shard, int layers,
                        float lr, int step, float grad_scale, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(global) split reorder scratch(grads) shard(m, v, master) replicated(params)
  {
    ncclCheck(ncclAllReduce(grads, grads, layers * shard.size, ncclFloatX, ncclAvg, comm, stream));
    adamw_update(params, master, grads, m, v, shard.size, g_tensor.size, g_tensor.size, shard.size, layers, lr,
                 0.9f, 0.95f, step, 1e-8f, 0.1f, grad_scale, stream);
  }
}
#endif

void reduce_scaled(floatX *grads, size_t n, float factor, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(scaled) split reorder
  {
    ncclCheck(ncclAllReduce(grads, grads, n, ncclFloatX, ncclSum, comm, stream));
    scale_grads(grads, factor, n, stream);
  }
}

void reduce_scaled_here(floatX *grads, size_t n, float factor, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(here) split reorder
  {
    ncclCheck(ncclAllReduce(grads, grads, n, ncclFloatX, ncclSum, comm, stream));
    scale_kernel<<<CEIL_DIV(n, 128), 128, 0, stream>>>(grads, factor, n);
  }
}

// EXEC: verify zero1: run with master != nullptr
// EXEC: verify zero1: ok
// EXEC: verify slices: run with (size_t)(tensor.size) == (size_t)(shard.size)
// EXEC: verify slices: run with master != nullptr
// EXEC: verify slices: ok
// EXEC: verify scaled: ok
// EXEC: verify here: ok
// CODE: adamw_kernel3
// CODE: if (master != nullptr) {
// CODE: // coconet: kernel 'adamw_kernel3' steps from slice to slice by 'g_stride' (passed
// CODE-NEXT: // 'tensor.size') and its count is 'shard.size' (adamw.cuh:{{[0-9]+}}:{{[0-9]+}}): the schedule is for
// CODE-NEXT: // tensor.size == shard.size; the region runs as written otherwise
// CODE: if ((size_t)(tensor.size) == (size_t)(shard.size) && master != nullptr) {
// ROUNDED: error: kernel 'adamw_kernel3' computes only the elements that have a thread
// PADDED: adamw.cuh:{{[0-9]+}}:{{[0-9]+}}: error: kernel 'adamw_kernel3' steps from slice to slice by 'w_stride' (the launch passes '(long)(n + 64)'), and coconet reads its grid's y as slices of one flat buffer only when that step is the element loop's count 'num_parameters' (n)
// CHANGED: ceil-div-launchers.cu:{{[0-9]+}}:5: error: region 'slices': kernel 'adamw_kernel3' steps from slice to slice by 'tensor.size' and its count is 'shard.size', so the schedule runs when they are equal at the top of the region; this statement also uses 'tensor' and could change it first: move the statement out
// CHANGED: adamw.cuh:{{[0-9]+}}:{{[0-9]+}}: note: kernel 'adamw_kernel3' uses the stride here
// IR: verify=ir slices: the schedule checked is for (size_t)(tensor.size) == (size_t)(shard.size) (the region runs as written otherwise)
// IR: verify=ir slices: ok
// GLOBAL: error: --verify: region 'global' cannot be run by the harness: its schedule is for g_tensor.size == shard.size, and 'g_tensor.size' is not a variable of the enclosing function, so the harness cannot make them equal
// The kernel's body one call of a __device__ helper holding the loop (llm.c's shape): where
// the header tests and steps is named by its file:
// HELPER: - analysis: kernel 'adamw_kernel3' steps from slice to slice by 'g_stride' ({{.*}}adamw.cuh:{{[0-9]+}}:{{[0-9]+}}),
// HELPER: - analysis: kernel 'adamw_kernel3' tests 'master' against NULL ({{.*}}adamw.cuh:{{[0-9]+}}:{{[0-9]+}})
// HELPER-NOT: (?:
// EXPLAIN: explain slices
// EXPLAIN: - analysis: kernel 'adamw_kernel3' steps from slice to slice by 'g_stride' ({{.*}}adamw.cuh:{{[0-9]+}}:{{[0-9]+}}), passed 'tensor.size', and its count is passed 'shard.size': the schedule is for tensor.size == shard.size, tested at the top of the region; the region runs as written otherwise
// CHOSEN: adamw.cuh:{{[0-9]+}}:{{[0-9]+}}: error: kernel 'adamw_kernel3' tests 'master_params_memory' against NULL, and the launch passes 'step > 0 ? master : nullptr', which coconet cannot tell is NULL or not
