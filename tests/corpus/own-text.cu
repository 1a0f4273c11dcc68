// Style: what the generated code takes from the kernel's own text. Each element
// of a rank's slice runs the element loop's statements as written, so float
// overloads (fma, sqrt on floats), __half operators and macros resolve as nvcc
// resolves them in the program as written; the loop's `continue` ends the
// element; a local declared before the loop comes along; an index named and
// typed otherwise (`int k`), a while loop, a count read in the body, a buffer
// whose element's address goes to a helper (passed as a pointer). Run equal as
// written and as scheduled; the text is in the output. Refused: an element passed
// to a helper by non-const reference (BY_REFERENCE).
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --target=host %s -o %t.cu
// RUN: %expect 1 %coconet --check %s -- -DBY_REFERENCE 2>&1 | %FileCheck --check-prefix=BY_REFERENCE %s
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#define CLAMP(x) fminf(fmaxf((x), 0.0f), 4.0f)

__device__ __forceinline__ void add_to(float *p, float v) { *p += v; }

#ifdef BY_REFERENCE
// The element by non-const reference: what the helper stores there is not
// followed (it was lost: refused).
__device__ bool clamp_to(float &x, float hi) {
  if (x > hi) x = hi;
  return true;
}

__global__ void clamped(float *w, float *g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && clamp_to(g[i], 0.5f)) w[i] -= lr * g[i];
}

void step_clamped(float *w, float *g, float lr, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(clamped) split reorder replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    clamped<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr, n);
  }
}
// BY_REFERENCE: own-text.cu:[[@LINE-10]]:{{[0-9]+}}: error: kernel 'clamped' passes 'g[i]' to helper 'clamp_to' by non-const reference (parameter 'x'): coconet does not follow what the helper stores through it; pass a pointer (&t[i] or t + i) or return the value
#endif

__global__ void lerp_fma(float *w, const float *g, float t, size_t n) {
  const float keep = 1.0f - t;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    if (g[i] == 0.0f) continue;
    w[i] = fma(t, g[i], keep * w[i]);
    w[i] = sqrt(CLAMP(w[i]) + 1.0f);
  }
}

__global__ void half_axpy(__half *y, const __half *x, __half a, int n) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  while (k < n) {
    y[k] = a * x[k] + y[k];
    k += blockDim.x * gridDim.x;
  }
}

__global__ void edge_scale(float *v, const float *g, int n) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  float s = g[k];
  if (k + 1 == n) s *= 2.0f;
  add_to(&v[k], s);
}

void step(float *w, float *g, float *v, __half *y, __half *x, size_t n, int m, float t, __half a,
          ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(own) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream);
    lerp_fma<<<64, 256, 0, stream>>>(w, g, t, n);
  }
#pragma coconet region name(half) split reorder scratch(x) replicated(y)
  {
    ncclAllReduce(x, x, m, ncclHalf, ncclSum, comm, stream);
    half_axpy<<<32, 128, 0, stream>>>(y, x, a, m);
  }
#pragma coconet region name(edge) split reorder scratch(g) replicated(v)
  {
    ncclAllReduce(g, g, m, ncclFloat, ncclSum, comm, stream);
    edge_scale<<<(m + 255) / 256, 256, 0, stream>>>(v, g, m);
  }
}

// EXEC: verify own: output 'w' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify own: ok
// EXEC: verify half: output 'y' (f16): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify half: ok
// EXEC: verify edge: output 'v' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify edge: ok
// The loop's statements as written, with the local before the loop and `continue` as `return`:
// CODE: {{^[^/]*}}void coconet_own_slice_lerp_fma(float &w, const float &g, float t)
// CODE-NEXT: {
// CODE-NEXT: {{^[^/]*}}const float keep = 1.0f - t;
// CODE-NEXT: {{^[^/]*}}{
// CODE-NEXT: {{^[^/]*}}if (g == 0.0f) return;
// CODE-NEXT: {{^[^/]*}}w = fma(t, g, keep * w);
// CODE-NEXT: {{^[^/]*}}w = sqrt(CLAMP(w) + 1.0f);
// CODE-NEXT: {{^[^/]*}}}
// CODE-NEXT: }
// CODE: {{^[^/]*}}void coconet_half_slice_half_axpy(__half &y, const __half &x, __half a)
// CODE-NEXT: {
// CODE-NEXT: {{^[^/]*}}y = a * x + y;
// CODE-NEXT: }
// v's element goes to a helper by address: v is a pointer, indexed by the element's index k:
// CODE: {{^[^/]*}}void coconet_edge_slice_edge_scale(const int k, float *v,
// CODE-NEXT: {{^[^/]*}}const float &g, int n)
// CODE-NEXT: {
// CODE-NEXT: {{^[^/]*}}float s = g;
// CODE-NEXT: {{^[^/]*}}if (k + 1 == n) s *= 2.0f;
// CODE-NEXT: {{^[^/]*}}add_to(&v[k], s);
// CODE-NEXT: }
