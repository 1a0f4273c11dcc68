// Style: CUDA and library functions coconet's IR does not model (erfcf, cbrtf,
// __hfma), in kernels coconet proves pointwise by their access patterns, also
// a kernel template. The generated code runs the kernel's own text, which
// makes the calls; --verify=ir models each call as a fixed function of its
// arguments (the data flow is checked), --verify runs it. Where there is no
// text to run (a kernel that sums with atomicAdd) the kernel is refused,
// naming the call and why.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=4 %s -- -DTEMPLATE | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet %s -- -DTEMPLATE | %FileCheck --check-prefix=TEMPLATE %s
// RUN: %expect 1 %coconet --check %s -- -DSUM 2>&1 | %FileCheck --check-prefix=SUM %s
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#if defined(TEMPLATE)
template <typename T>
__global__ void gelu_erfc(T *y, const T *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = T(0.5f) * x[i] * erfcf(-x[i] * T(0.70710678f)) + cbrtf(x[i]);
}
#elif defined(SUM)
__global__ void gelu_erfc(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(y, erfcf(x[i]));
}
#else
__global__ void gelu_erfc(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5f * x[i] * erfcf(-x[i] * 0.70710678f) + cbrtf(x[i]);
}
#endif

__global__ void half_fma(__half *y, const __half *x, __half a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __hfma(a, x[i], y[i]);
}

void step(float *y, float *x, __half *hy, __half *hx, __half a, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(act) split reorder scratch(x)
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    gelu_erfc<<<(n + 255) / 256, 256, 0, s>>>(y, x, n);
  }
#pragma coconet region name(hf) split reorder scratch(hx) replicated(hy)
  {
    ncclAllReduce(hx, hx, n, ncclHalf, ncclSum, comm, s);
    half_fma<<<(n + 255) / 256, 256, 0, s>>>(hy, hx, a, n);
  }
}

// IR: verify=ir act: kernel 'gelu_erfc' calls erfcf(-x[i] * 0.70710678f), which the IR models as a fixed function of its arguments (the data flow is checked, not its value); --verify runs its code
// IR: verify=ir act: ok
// IR: verify=ir hf: kernel 'half_fma' calls __hfma(a, x[i], y[i]), which the IR models
// IR: verify=ir hf: ok
// EXEC: verify act: output 'y' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify act: ok
// EXEC: verify hf: output 'hy' (f16): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify hf: ok
// CODE: {{^[^/]*}}y = 0.5f * x * erfcf(-x * 0.70710678f) + cbrtf(x);
// CODE: {{^[^/]*}}y = __hfma(a, x, y);
// The template's text under its argument (deduced: T is float):
// TEMPLATE: {{^[^/]*}}namespace coconet_act_slice_gelu_erfc {
// TEMPLATE-NEXT: typedef float T;
// TEMPLATE-NEXT: __device__ __forceinline__ void element(T &y, const T &x)
// TEMPLATE: {{^[^/]*}}y = T(0.5f) * x * erfcf(-x * T(0.70710678f)) + cbrtf(x);
// TEMPLATE: {{^[^/]*}}coconet_act_slice_gelu_erfc::element(y, x);
// SUM: unmodeled-calls.cu:27:27: error: kernel 'gelu_erfc' calls 'erfcf' (erfcf(x[i])), which coconet's IR does not model: the generated code can run such a call only in the kernel's own text, and has none for 'gelu_erfc' (the kernel sums with atomicAdd)
