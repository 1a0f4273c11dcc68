// Style: macros in and around kernels, as trainers write them: constants
// (#define EPS, a block size), function-like macros that call functions
// (CLAMP to fminf/fmaxf), error-check wrappers around the calls. Accepted
// and verified. libclang 16 reports code from a macro's body where the macro
// is used, so coconet cannot read an operator written in a macro's body
// (SQR(x) ((x) * (x))): refused, naming the macro. A grid macro whose body is
// ((a) + (b) - 1) / (b) (CEIL_DIV) is read from its definition (GRID_MACRO
// verifies); another form is refused, naming the macro (GRID_ROUNDED).
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=2 %s -- -DGRID_MACRO | %FileCheck --check-prefix=GRID-OK %s
// RUN: %expect 1 %coconet --check %s -- -DOPERATOR_MACRO 2>&1 | %FileCheck --check-prefix=OPERATOR %s
// RUN: %expect 1 %coconet --check %s -- -DGRID_ROUNDED 2>&1 | %FileCheck --check-prefix=GRID %s
#include <cuda_runtime.h>
#include <nccl.h>
#include <cstdio>
#include <cstdlib>

#define EPS 1e-8f
#define BLOCK_SIZE 256
#define CLAMP(x, lo, hi) fminf(fmaxf((x), (lo)), (hi))
#define SQR(x) ((x) * (x))
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
#define ROUNDED_BLOCKS(a, b) ((a) / (b) + 1)
#define NCCL_CHECK(cmd)                                                        \
  do {                                                                         \
    ncclResult_t r_ = (cmd);                                                   \
    if (r_ != ncclSuccess) {                                                   \
      fprintf(stderr, "NCCL error %s at %s:%d\n", ncclGetErrorString(r_), __FILE__, __LINE__); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

__global__ void rms_update(float *p, const float *g, float *v, float lr, float decay, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
#ifdef OPERATOR_MACRO
    float vi = decay * v[i] + (1.0f - decay) * SQR(g[i]);
#else
    float vi = decay * v[i] + (1.0f - decay) * g[i] * g[i];
#endif
    v[i] = vi;
    p[i] = p[i] - lr * CLAMP(g[i] / (sqrtf(vi) + EPS), -1.0f, 1.0f);
  }
}

void step(float *p, float *g, float *v, float lr, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(rmsprop) split reorder scratch(g) replicated(p) shard(v)
  {
    NCCL_CHECK(ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s));
#if defined(GRID_MACRO)
    rms_update<<<CEIL_DIV(n, BLOCK_SIZE), BLOCK_SIZE, 0, s>>>(p, g, v, lr, 0.99f, n);
#elif defined(GRID_ROUNDED)
    rms_update<<<ROUNDED_BLOCKS(n, BLOCK_SIZE), BLOCK_SIZE, 0, s>>>(p, g, v, lr, 0.99f, n);
#else
    rms_update<<<(n + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE, 0, s>>>(p, g, v, lr, 0.99f, n);
#endif
  }
}

// IR: verify=ir rmsprop: output 'p' (f32): max relative error 0 over 1..4 ranks x 3 inputs
// IR: verify=ir rmsprop: ok
// EXEC: verify rmsprop: shard 'v' (f32): max 0 ULP apart
// EXEC: verify rmsprop: output 'p' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify rmsprop: ok
// GRID-OK: verify rmsprop: ok
// OPERATOR: macros.cu:38:48: error: kernel 'rms_update': 'SQR(g[i])' comes from macro 'SQR', whose body coconet cannot read (libclang 16 reports code from a macro's body where the macro is used); write the expression out, or make the macro a __device__ function
// GRID: macros.cu:54:5: error: kernel 'rms_update' computes only the elements that have a thread (its guard against 'n'), and coconet cannot prove that '<<<ROUNDED_BLOCKS(n, BLOCK_SIZE), BLOCK_SIZE>>>' gives every one of the n elements a thread; the grid is written with macro 'ROUNDED_BLOCKS', and coconet reads a grid macro's body only in the form ((M) + (N) - 1) / (N): write the division out, or define it so
