// Style: epilogue and optimizer code with its control flow left in: helpers
// with early returns (a clip, a piecewise activation), if/else choosing a
// local, a local declared under a condition (an integer division guarded by
// a test of its divisor), `continue` in a grid-stride loop for masked
// elements, a fixed-length loop over per-tap weights, and an `if` whose
// condition reads the buffer its branch writes.
// -DDRAW_UNDER_IF draws a random number only on one path (refused: which
// number each later draw gets would depend on the path); -DRUNTIME_LOOP loops
// to a kernel parameter (refused: not unrolled).
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %expect 1 %coconet --check %s -- -DDRAW_UNDER_IF 2>&1 | %FileCheck --check-prefix=DRAW %s
// RUN: %expect 1 %coconet --check %s -- -DRUNTIME_LOOP 2>&1 | %FileCheck --check-prefix=LOOP %s
#include <cuda_runtime.h>
#include <curand_kernel.h>
#include <nccl.h>

__device__ float clip(float x, float lo, float hi) {
  if (x < lo) return lo;
  if (x > hi) return hi;
  return x;
}

__device__ float piecewise(float x) {
  if (x > 4.0f) {
    return x;
  } else if (x < -4.0f) {
    return 0.0f;
  }
  float t = tanhf(0.7978845608f * (x + 0.044715f * x * x * x));
  return 0.5f * x * (1.0f + t);
}

__global__ void epilogue(float *out, const float *y, const float *bias, const float *taps, const int *mask,
                         float *aux, int n, int hidden, float lo, float hi, int taps_n, unsigned long long seed) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    if (mask[i] == 0) {
      out[i] = 0.0f;
      aux[i] = 0.0f;
      continue;
    }
    float x = y[i] + bias[i % hidden];
    float scale = 1.0f;
    if (x > 0.0f) {
      scale = 0.5f;
    } else {
      scale = 2.0f;
      x = -x;
    }
    float acc = 0.0f;
#ifdef RUNTIME_LOOP
    for (int k = 0; k < taps_n; k++) acc += taps[k] * x;
#else
    for (int k = 0; k < 3; k++) acc += taps[k] * x;
#endif
    int level = (int)(x * 4.0f);
    float extra = 0.0f;
    if (level != 0) {
      int q = 8 / level;
      extra = (float)q;
    }
#ifdef DRAW_UNDER_IF
    curandStatePhilox4_32_10_t state;
    curand_init(seed, i, 0, &state);
    if (x > 1.0f) extra += curand_uniform(&state);
#endif
    out[i] = clip(piecewise(acc * scale), lo, hi) + extra;
    aux[i] = x;
  }
}

// The condition reads what its branch writes: evaluated once, before the branch.
__global__ void clamp_flag(float *w, float *hit, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    if (w[i] > 1.0f) {
      w[i] = 1.0f;
      hit[i] = 1.0f;
    }
  }
}

void clamp(float *w, float *hit, int n, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(clamp) split reorder replicated(hit)
  {
    ncclAllReduce(w, w, n, ncclFloat, ncclSum, comm, stream);
    clamp_flag<<<(n + 127) / 128, 128, 0, stream>>>(w, hit, n);
  }
}

void run(float *out, float *y, const float *bias, const float *taps, const int *mask, float *aux, int n, int hidden,
         unsigned long long seed, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(epilogue) split reorder replicated(bias, taps, mask) scratch(y)
  {
    ncclAllReduce(y, y, n, ncclFloat, ncclSum, comm, stream);
    epilogue<<<(n + 255) / 256, 256, 0, stream>>>(out, y, bias, taps, mask, aux, n, hidden, -3.0f, 3.0f, 3, seed);
  }
}

// IR: verify=ir clamp: ok
// IR: verify=ir epilogue: ok
// EXEC: verify clamp: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify epilogue: ok (the region as written and as scheduled agree within 0 ULP)
// CODE: const int cond = w > 1.0f;
// CODE-NEXT: w = cond ? 1.0f : w;
// CODE-NEXT: hit = cond ? 1.0f : hit;
// CODE: mask[i] == 0
// CODE: taps[2]
// DRAW: control-flow.cu:66:28: error: kernel 'epilogue': curand_uniform under a condition
// LOOP: control-flow.cu:53:5: error: kernel 'epilogue': a loop in the element body must have constant bounds to be unrolled
