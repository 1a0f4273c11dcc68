// A value computed on a slice and then all-gathered may depend only on reduced
// values, buffers declared replicated(...) or shard(...), the element index and
// scalars; anything else is refused, naming the buffer to declare replicated.
// RUN: %expect 1 %coconet %s -o %t.cu -- -DCASE_NOISE 2>&1 | %FileCheck --check-prefix=NOISE %s
// RUN: test ! -e %t.cu
// RUN: %expect 1 %coconet %s -o %t.cu -- -DCASE_W2 2>&1 | %FileCheck --check-prefix=W2 %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_WEIGHTS 2>&1 | %FileCheck --check-prefix=WEIGHTS %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_BIAS 2>&1 | %FileCheck --check-prefix=BIAS %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_CHAIN 2>&1 | %FileCheck --check-prefix=CHAIN %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_SEVERAL 2>&1 | %FileCheck --check-prefix=SEVERAL %s
// A buffer passed as an expression cannot be named in a clause: the message says how to name it.
// RUN: %expect 1 %coconet --check %s -- -DCASE_EXPRESSION 2>&1 | %FileCheck --check-prefix=EXPRESSION %s
// A kernel that writes an output and then updates it reads back its own store, not the output's
// value at region entry: no replicated(out) is needed (it was asked for).
// RUN: %coconet --verify=3 %s -- -DCASE_REWRITE | %FileCheck --check-prefix=REWRITE %s
// The same after an early return: where the update does not happen, the element keeps its first store.
// RUN: %coconet --verify=3 %s -- -DCASE_REWRITE -DEARLY_RETURN | %FileCheck --check-prefix=REWRITE %s
// Declared, the same kernels are translated, and the programs agree when run:
// RUN: %coconet --verify=3 %s -- -DCASE_NOISE -DDECLARED | %FileCheck --check-prefix=NOISE-OK %s
// RUN: %coconet --verify=3 %s -- -DCASE_WEIGHTS -DDECLARED | %FileCheck --check-prefix=WEIGHTS-OK %s
// RUN: %coconet --verify=3 %s -- -DCASE_BIAS -DDECLARED | %FileCheck --check-prefix=BIAS-OK %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void add_noise(float *g, const float *noise, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) g[i] = g[i] + noise[i];
}

__global__ void sgd(float *w, const float *g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i];
}

__global__ void bias_add(float *out, const float *y, const float *bias, int n, int hidden) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = y[i] + bias[i % hidden];
}

__global__ void residual_norm(float *out, const float *res, const float *bias, const float *gamma, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (out[i] + res[i] + bias[i]) * gamma[i];
}

__global__ void copy_add(float *out, const float *y, const float *bias, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = y[i];
#ifdef EARLY_RETURN
    if (y[i] < 0.0f) return;
#endif
    out[i] += bias[i];
    out[i] *= 0.5f;
  }
}

__global__ void scale(float *t, const float *g, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) t[i] = g[i] * x[i];
}

void step(float *w, float *w2, float *g, float *noise, float *y, float *out, float *bias, float *t, float lr,
          int n, int hidden, ncclComm_t comm, cudaStream_t s) {
#if defined(CASE_NOISE) && !defined(DECLARED)
#pragma coconet region name(noise) split reorder
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    add_noise<<<(n + 255) / 256, 256, 0, s>>>(g, noise, n);
  }
#elif defined(CASE_NOISE)
#pragma coconet region name(noise) split reorder replicated(noise)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    add_noise<<<(n + 255) / 256, 256, 0, s>>>(g, noise, n);
  }
#elif defined(CASE_W2)
#pragma coconet region name(w2) split reorder
  {
    ncclAllReduce(w2, w2, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w2, g, lr, n);
  }
#elif defined(CASE_WEIGHTS) && !defined(DECLARED)
#pragma coconet region name(weights) split reorder scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr, n);
  }
#elif defined(CASE_WEIGHTS)
#pragma coconet region name(weights) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr, n);
  }
#elif defined(CASE_BIAS) && !defined(DECLARED)
#pragma coconet region name(bias) split reorder
  {
    ncclAllReduce(y, y, n, ncclFloat, ncclSum, comm, s);
    bias_add<<<64, 256, 0, s>>>(out, y, bias, n, hidden);
  }
#elif defined(CASE_BIAS)
#pragma coconet region name(bias) split reorder replicated(bias)
  {
    ncclAllReduce(y, y, n, ncclFloat, ncclSum, comm, s);
    bias_add<<<64, 256, 0, s>>>(out, y, bias, n, hidden);
  }
#elif defined(CASE_SEVERAL)
#pragma coconet region name(several) split reorder
  {
    ncclAllReduce(y, y, n, ncclFloat, ncclSum, comm, s);
    residual_norm<<<(n + 255) / 256, 256, 0, s>>>(y, out, bias, t, n);
  }
#elif defined(CASE_EXPRESSION)
#pragma coconet region name(expression) split reorder
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    add_noise<<<(n + 255) / 256, 256, 0, s>>>(g, lr > 0 ? noise : bias, n);
  }
#elif defined(CASE_REWRITE)
#pragma coconet region name(rewrite) split reorder replicated(bias)
  {
    ncclAllReduce(y, y, n, ncclFloat, ncclSum, comm, s);
    copy_add<<<(n + 255) / 256, 256, 0, s>>>(out, y, bias, n);
  }
#elif defined(CASE_CHAIN)
#pragma coconet region name(chain) split reorder scratch(t)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(t, g, noise, n);
    add_noise<<<(n + 255) / 256, 256, 0, s>>>(g, t, n);
  }
#endif
}

// NOISE: per-rank.cu:68:5: error: reorder: 'g' differs per rank (kernel 'add_noise' computes it from local 'noise'), so gathering its slices after the region would change it; declare it shard(g) or scratch(g), or 'noise' replicated(noise)
// NOISE: per-rank.cu:27:28: note: 'noise' is local (may differ per rank) from here: nothing in the region makes it identical on every rank
// W2: error: reorder: 'w2' differs per rank (kernel 'sgd' computes it from local 'g'), so gathering its slices after the region would change it; declare it shard(w2) or scratch(w2), or 'g' replicated(g)
// WEIGHTS: error: reorder: kernel 'sgd' updates 'w' on this rank's slice and its slices are then gathered, but 'w' at region entry is not known to be identical on every rank; declare replicated(w) if it is (data-parallel weights are), or shard(w) or scratch(w)
// WEIGHTS: note: 'w' at region entry is read here
// BIAS: error: reorder: 'out' differs per rank (kernel 'bias_add' computes it from local 'bias'), so gathering its slices after the region would change it; declare it shard(out) or scratch(out), or 'bias' replicated(bias)
// The local value reaches g through t, which scale computes from noise:
// CHAIN: error: reorder: 'g' differs per rank (kernel 'add_noise' computes it from local 'noise'), so gathering its slices after the region would change it; declare it shard(g) or scratch(g), or 'noise' replicated(noise)
// CHAIN: note: 'noise' is local (may differ per rank) from here
// NOISE-OK: verify noise: output 'g' (f32): max 0 ULP apart over 1..3 ranks x 3 inputs
// NOISE-OK: verify noise: ok
// WEIGHTS-OK: verify weights: scratch 'g' (f32): not compared
// WEIGHTS-OK: verify weights: output 'w' (f32): max 0 ULP apart over 1..3 ranks x 3 inputs
// WEIGHTS-OK: verify weights: ok
// BIAS-OK: verify bias: output 'out' (f32): max 0 ULP apart over 1..3 ranks x 3 inputs
// BIAS-OK: verify bias: ok
// Every buffer the kernel reads as local is named in one clause (they were asked for one per run).
// SEVERAL: error: reorder: 'y' differs per rank (kernel 'residual_norm' computes it from local 'out'), so gathering its slices after the region would change it; declare it shard(y) or scratch(y), or 'out', 'bias', 't' replicated(out, bias, t)
// REWRITE: verify rewrite: ok
// EXPRESSION: error: reorder: 'g' differs per rank (kernel 'add_noise' computes it from local 'lr>0?noise:bias'), so gathering its slices after the region would change it; declare it shard(g) or scratch(g), or compute 'lr>0?noise:bias' into a local before the region and declare it replicated
