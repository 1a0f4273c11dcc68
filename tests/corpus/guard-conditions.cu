// Element guards of several conditions, 'i < n' first: `if (i < n && A && B) BODY` and
// `if (i >= n || A) return; BODY`, as trainers write gradient accumulation, a mask or
// a frozen parameter. The element runs the guard's statement as written (its bound
// holds for every element coconet computes), so A and B are evaluated as the
// program evaluates them: after the bound, in order, short-circuited. (The
// buffers the element reads are loaded for every element of the slice, as for
// any kernel: a buffer read only behind a flag must hold n elements.) The masked
// region is fused too (the fused kernel runs the same text).
// RUN: rm -rf %t && mkdir -p %t
// RUN: env COCONET_VERIFY_KEEP=1 TMPDIR=%t %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// The harness's second input has skip = 0 (a flag the kernel only tests), never every = 0 (a divisor).
// RUN: grep -q '^ *skip = 0;' %t/coconet-verify-*/harness.cpp
// RUN: not grep -q '^ *every = 0;' %t/coconet-verify-*/harness.cpp
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %expect 1 %coconet --check %s -- -DBOUND_LAST 2>&1 | %FileCheck --check-prefix=BOUND_LAST %s
// RUN: %expect 1 %coconet --check %s -- -DELSE 2>&1 | %FileCheck --check-prefix=ELSE %s
#include <cuda_runtime.h>
#include <nccl.h>

// Gradients accumulated over two micro-batches: the update runs on every second step,
// a scalar condition of a launch argument (--verify's inputs take both branches).
__global__ void sgd_accum(float *w, const float *g, float lr, int n, int step) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && step % 2 == 0) w[i] -= lr * g[i];
}

// A step skipped as a whole (a non-finite loss) and a thinned update (every k-th element).
__global__ void sgd_skip(float *w, const float *g, float lr, int n, int skip, int every) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && !skip && i % every == 0) w[i] -= lr * g[i];
}

// A mask per element and a second condition on the reduced gradient, in order:
// g[i] is read only where mask[i] is set.
__global__ void masked(float *w, const float *g, const int *mask, float lr, float clip, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n && mask[i] && fabsf(g[i]) < clip) {
    w[i] -= lr * g[i];
  }
}

// Frozen elements return early; the rest update momentum and weight.
__global__ void frozen(float *w, float *m, const float *g, const int *frozen_at, float lr, float beta, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || frozen_at[i] != 0) return;
  m[i] = beta * m[i] + g[i];
  w[i] -= lr * m[i];
}

#ifdef BOUND_LAST
// The bound last: mask[i] is read for threads past n (as written), so it is not the guard.
__global__ void bound_last(float *w, const float *g, const int *mask, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (mask[i] && i < n) w[i] -= lr * g[i];
}
#endif

#ifdef ELSE
// An else branch runs for threads past n too: not an element guard.
__global__ void with_else(float *w, const float *g, float lr, int n, int skip) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && !skip) w[i] -= lr * g[i];
  else if (i < n) w[i] *= 0.5f;
}
#endif

void step_accum(float *w, float *g, float lr, int n, int step, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(accum) split reorder shard(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd_accum<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr, n, step);
  }
}

void step_skip(float *w, float *g, float lr, int n, int skip, int every, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(skip) split reorder shard(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd_skip<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr, n, skip, every);
  }
}

void step_masked(float *w, float *g, const int *mask, float lr, float clip, long n, ncclComm_t comm,
                 cudaStream_t s) {
#pragma coconet region name(masked) split reorder fuse replicated(w, mask)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    masked<<<(n + 127) / 128, 128, 0, s>>>(w, g, mask, lr, clip, n);
  }
}

void step_frozen(float *w, float *m, float *g, const int *frozen_at, float lr, float beta, int n, ncclComm_t comm,
                 cudaStream_t s) {
#pragma coconet region name(frozen) split reorder shard(w, m) replicated(frozen_at)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    frozen<<<(n + 255) / 256, 256, 0, s>>>(w, m, g, frozen_at, lr, beta, n);
  }
}

#ifdef BOUND_LAST
void step_bound_last(float *w, float *g, const int *mask, float lr, int n, ncclComm_t comm,
                     cudaStream_t s) {
#pragma coconet region name(bound_last) split reorder replicated(w, mask)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    bound_last<<<(n + 255) / 256, 256, 0, s>>>(w, g, mask, lr, n);
  }
}
#endif

#ifdef ELSE
void step_else(float *w, float *g, float lr, int n, int skip, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(with_else) split reorder
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    with_else<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr, n, skip);
  }
}
#endif

// EXEC: verify accum: ok
// EXEC: verify skip: ok
// EXEC: verify masked: ok
// EXEC: verify frozen: ok

// CODE: // coconet: element i of sgd_accum ({{.*}}), the kernel's own text
// CODE: if (i < n && step % 2 == 0) w -= lr * g;
// CODE: // coconet: element i of masked ({{.*}}), the kernel's own text
// CODE: if (i < n && mask && fabsf(g) < clip) {
// CODE-NEXT: w -= lr * g;
// CODE: // coconet: element i of frozen ({{.*}}), the kernel's own text
// CODE: if (i >= n || frozen_at != 0) return;
// CODE-NEXT: m = beta * m + g;
// CODE-NEXT: w -= lr * m;

// BOUND_LAST: guard-conditions.cu:[[@LINE-83]]:3: error: kernel 'bound_last': cannot find the element loop (blockIdx.x * blockDim.x + threadIdx.x with a grid-stride loop or an 'if (i < n)' guard, 'i < n' in a guard of several conditions, after only ones that read no memory) at 'if (mask[i] && i < n) w[i] -= lr * g[i]'
// ELSE: guard-conditions.cu:[[@LINE-76]]:3: error: kernel 'with_else': cannot find the element loop {{.*}} at 'if (i < n && !skip) w[i] -= lr * g[i]; ...'
