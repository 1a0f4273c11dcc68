// Style: the launch inside a small host function, as trainers write their
// optimizer steps: the function computes the grid and launches; the region
// calls it. coconet sees through one such function defined in this file
// (initialized locals, then one launch), and says why not when it cannot.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --explain %s | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --target=host %s | %FileCheck --check-prefix=HOST %s
// RUN: %expect 1 %coconet --check %s -- -DEXTRA_STATEMENT 2>&1 | %FileCheck --check-prefix=EXTRA %s
// RUN: %expect 1 %coconet --check %s -- -DEFFECT_ARG 2>&1 | %FileCheck --check-prefix=EFFECT %s
// RUN: %expect 1 %coconet --check %s -- -DGLOBAL_STREAM 2>&1 | %FileCheck --check-prefix=GLOBAL %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void adamw(float *p, const float *g, float *m, float *v, float lr, float b1, float b2, float eps, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float mi = b1 * m[i] + (1.0f - b1) * g[i];
    float vi = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
    m[i] = mi;
    v[i] = vi;
    p[i] -= lr * mi / (sqrtf(vi) + eps);
  }
}

static void adamw_update(float *params, const float *grads, float *m, float *v, int n, float lr, cudaStream_t stream) {
  const int block = 256;
  const int grid = (n + block - 1) / block;
#ifdef EXTRA_STATEMENT
  cudaGetLastError();
#endif
  adamw<<<grid, block, 0, stream>>>(params, grads, m, v, lr, 0.9f, 0.999f, 1e-8f, n);
}

#ifdef GLOBAL_STREAM
// Its launch reads a global: in the caller, 's' is another variable of that name.
cudaStream_t s;
static void adamw_update_global(float *params, const float *grads, float *m, float *v, int n, float lr) {
  adamw<<<(n + 255) / 256, 256, 0, s>>>(params, grads, m, v, lr, 0.9f, 0.999f, 1e-8f, n);
}
#endif

#ifdef EFFECT_ARG
static float next_lr(int &calls) { return 1e-3f / (float)(++calls); }
#endif

void step(float *w, float *g, float *m, float *v, int count, float lr, ncclComm_t comm, cudaStream_t s) {
#ifdef EFFECT_ARG
  int calls = 0;
#endif
#pragma coconet region name(wrapped) split reorder shard(m, v) scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, count, ncclFloat, ncclSum, comm, s);
#ifdef EFFECT_ARG
    adamw_update(w, g, m, v, count, next_lr(calls), s);
#elif defined(GLOBAL_STREAM)
    adamw_update_global(w, g, m, v, count, lr);
#else
    adamw_update(w, g, m, v, count, lr * 0.5f, s);
#endif
  }
}

// IR: verify=ir wrapped: output 'w' (f32): max relative error 0 over 1..4 ranks x 3 inputs
// IR: verify=ir wrapped: ok
// EXEC: verify wrapped: shard 'm' (f32): max 0 ULP apart
// EXEC: verify wrapped: output 'w' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify wrapped: ok
// EXPLAIN: explain wrapped
// EXPLAIN-NEXT: - analysis: the call of 'adamw_update' ({{.*}}host-wrapper.cu:27:13) is the launch of kernel 'adamw' inside it, seen through (its parameters stand for the call's arguments)
// The scheduled block replaces the call; the static function it no longer calls is kept used:
// CODE: ReduceScatter(g) -> adamw on this rank's slice -> AllGather(w)
// CODE: (void)adamw_update;
// CODE: coconet_wrapped_slice<<<coconet_grid_size(coconet_p.s), COCONET_BLOCK_SIZE, 0, s>>>(m, g, v, w, 0.9f, 0.999f, (lr * 0.5f), 1e-8f, coconet_p.slice_lo, coconet_p.slice_hi);
// The host backend lowers the launch inside the function:
// HOST: coconet_host_launch(COCONET_HOST_SIMPLE, adamw, grid, block, 0, stream, params, grads, m, v, lr, 0.9f, 0.999f, 1e-8f, n);
// EXTRA: host-wrapper.cu:52:44: error: reorder: no pointwise kernel consumes the result of a split AllReduce
// EXTRA: host-wrapper.cu:60:5: note: the AllReduce is followed by 'adamw_update(w, g, m, v, count, lr * 0.5f, s);', a statement coconet does not see into
// EXTRA: host-wrapper.cu:60:5: note: the call of 'adamw_update' ({{.*}}host-wrapper.cu:27:13) is not seen through as the kernel launch or collective inside it: its body has a statement that is not an initialized local, a launch, an NCCL collective or group call, a call of such a function, or one coconet can run beside its collective ('cudaGetLastError()' at host-wrapper.cu:31: it calls 'cudaGetLastError', which may touch the device); coconet sees through a host function whose body is initialized locals and then one launch, one NCCL collective (in a group of its own or none), or one call of another such function, and beside a collective, statements that read none of its parameters or locals and reach no kernel, CUDA or NCCL call
// EFFECT: note: the call of 'adamw_update' ({{.*}}host-wrapper.cu:27:13) is not seen through as the kernel launch or collective inside it: an argument of the call has side effects (a call, ++, an assignment)
// GLOBAL: note: the call of 'adamw_update_global' ({{.*}}host-wrapper.cu:{{[0-9]+}}:13) is not seen through as the kernel launch or collective inside it: a text of its launch reads a variable that is not the function's parameter or local, a name of its namespace or class, a macro, or a local whose initializer has side effects
// The clauses name buffers only the unseen call uses: the first error is the schedule's, not theirs;
// --schedule=none writes the program as written:
// RUN: %coconet --schedule=none %s -o %t.cu -- -DEXTRA_STATEMENT && cmp %s %t.cu
