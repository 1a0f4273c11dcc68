// Style: C++ math on floats as trainers write it (a lerp through fma, sqrt, exp,
// tanh, log of float values): nvcc resolves fma, sqrt, ... to their float
// overloads, so the schedule computes them in float too (fmaf, sqrtf, ...). They
// were printed as C's double functions with casts around them: 768 ULP from the
// program as written.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
#include <cuda_runtime.h>
#include <nccl.h>
#include <cmath>

__global__ void lerp_update(float *w, const float *g, double *wd, float t, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float m = fma(t, g[i], fma(-t, w[i], w[i]));
    w[i] = m - lr * sqrt(fabs(m)) * exp(-m * m) + tanh(m) * log(1.0f + fabs(m));
    wd[i] = sqrt((double)fabs(m));  // a double argument keeps the double overload
  }
}

void step(float *w, float *g, double *wd, float t, float lr, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(overloads) split reorder replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    lerp_update<<<(n + 255) / 256, 256, 0, s>>>(w, g, wd, t, lr, n);
  }
}

// IR: verify=ir overloads: ok
// EXEC: verify overloads: output 'w' (f32): max 0 ULP apart
// EXEC: verify overloads: output 'wd' (f64): max 0 ULP apart
// EXEC: verify overloads: ok
// CODE: const float m = fmaf(t, g, fmaf(-t, w, w));
// CODE-NEXT: w = m - lr * sqrtf(fabsf(m)) * expf(-m * m) + tanhf(m) * logf(1.0f + fabsf(m));
// CODE-NEXT: wd = sqrt((double)fabsf(m));
