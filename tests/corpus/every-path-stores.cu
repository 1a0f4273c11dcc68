// Style: activations and clips that store their outputs on every path, in the
// shapes people write them: two early returns before the last store (a clip),
// an if / else-if / else chain, nested if/else with a store in every leaf. The
// element stores every output on every path, so it reads none of their old
// values (no replicated(...) needed for them) and none may be NULL (no run-time
// test). A store on all paths but one (-DPARTIAL; the saved pre-activation is
// left on one path) keeps both: declared replicated, the schedule runs where it
// is not NULL.
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --verify=3 %s -- -DPARTIAL | %FileCheck --check-prefix=PARTIAL %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void clip(float *out, const float *g, float lo, float hi, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = g[i];
  if (v > hi) { out[i] = hi; return; }
  if (v < lo) { out[i] = lo; return; }
  out[i] = v;
}

__global__ void piecewise(float *out, float *pre, const float *x, const float *bias, int n, int h, int mode) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i] + bias[i % h];
  if (v > 1.0f) {
    out[i] = 1.0f;
    pre[i] = v;
  } else if (v > 0.0f) {
    out[i] = v;
    pre[i] = v;
  } else {
    out[i] = 0.01f * v;
#ifndef PARTIAL
    pre[i] = 0.0f;
#endif
  }
  if (mode) {
    if (v > 0.5f) out[i] += 1.0f;
    else out[i] -= 1.0f;
  }
}

__global__ void nested(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    if (v > 0.0f) {
      if (v > 1.0f) y[i] = 1.0f;
      else y[i] = v;
    } else {
      if (v < -1.0f) y[i] = -1.0f;
      else y[i] = 0.5f * v;
    }
  }
}

void clip_step(float *out, float *g, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(clip) split reorder scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    clip<<<(n + 255) / 256, 256, 0, s>>>(out, g, -0.5f, 0.5f, n);
  }
}

void act_step(float *out, float *pre, float *x, const float *bias, int n, int h, int mode, ncclComm_t comm,
              cudaStream_t s) {
#ifdef PARTIAL  // pre keeps its old value on one path: it must be the same on every rank
#pragma coconet region name(piecewise) split reorder replicated(bias, pre) scratch(x)
#else
#pragma coconet region name(piecewise) split reorder replicated(bias) scratch(x)
#endif
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    piecewise<<<(n + 255) / 256, 256, 0, s>>>(out, pre, x, bias, n, h, mode);
  }
}

void nested_step(float *y, float *x, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(nested) split reorder scratch(x)
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    nested<<<(n + 255) / 256, 256, 0, s>>>(y, x, n);
  }
}

// EXEC: verify clip: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify piecewise: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify nested: ok (the region as written and as scheduled agree within 0 ULP)
// IR: verify=ir clip: ok
// IR: verify=ir piecewise: ok
// IR: verify=ir nested: ok
// CODE-NOT: {{out|pre|y}} != {{nullptr}}
// PARTIAL: verify piecewise: run with pre {{!=}} nullptr (the schedule's branch; the other runs the region as written)
// PARTIAL: verify piecewise: ok
