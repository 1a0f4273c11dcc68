// Style: macros a file #undefs or #defines again, and functions named like the
// C library's math. A kernel's text copied to the generated code must mean
// what it meant at the kernel: a kernel using FACT, which expands INNER, which
// is #defined again after the kernel, is printed from the IR (LATER); a
// kernel template, read in a copy at the end of the file, is refused
// (TEMPLATE). A launcher's constant macro moves as its value only when that
// cannot change its meaning: `1.0f + 1.0f` does not (EXPR). A function of the
// user's named fabsf (taking a pointer) is not the C library's (USER_FABSF). A
// kernel calling adj(double) with a float, when the file declares adj(float)
// after the kernel, is printed from the IR (OVERLOAD_AFTER; the copy would call
// the later one).
// RUN: %coconet --verify=4 %s -- -DLATER | %FileCheck --check-prefix=LATER %s
// RUN: %coconet %s -- -DLATER | %FileCheck --check-prefix=LATER_CODE %s
// RUN: %expect 1 %coconet --check %s -- -DTEMPLATE 2>&1 | %FileCheck --check-prefix=TEMPLATE %s
// The same without the cache of precompiled headers (the template's copy was read
// without its macro expansions then, and FACT taken for a name defined twice):
// RUN: %expect 1 env COCONET_CACHE=off %coconet --check %s -- -DTEMPLATE 2>&1 | %FileCheck --check-prefix=TEMPLATE %s
// RUN: %expect 1 %coconet --check %s -- -DEXPR 2>&1 | %FileCheck --check-prefix=EXPR %s
// RUN: %coconet --verify=2 %s -- -DOVERLOAD_AFTER | %FileCheck --check-prefix=OVERLOAD %s
// RUN: %coconet %s -- -DOVERLOAD_AFTER | %FileCheck --check-prefix=OVERLOAD_CODE %s
// RUN: %expect 1 %coconet --check %s -- -DUSER_FABSF 2>&1 | %FileCheck --check-prefix=USER_FABSF %s
// The launcher does not pass `st` to its launch: only its call named it.
// RUN: %coconet %s | %FileCheck --check-prefix=UNUSED %s
#include <cuda_runtime.h>
#include <nccl.h>

#define INNER 2.0f
#define FACT INNER

#if defined(TEMPLATE)
template <typename T> __global__ void k(T *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * (T)FACT + 1.0f;
}
#elif defined(OVERLOAD_AFTER)
__device__ __forceinline__ float adj(double v) { return (float)(v * 2.0); }
__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = adj(x[i]) + 1.0f;
}
__device__ __forceinline__ float adj(float v) { return v * 3.0f; }
#else
__global__ void k(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * FACT + 1.0f;
}
#endif

#define TWO 1.0f + 1.0f
#if defined(USER_FABSF)
inline float fabsf(int *c) { return (float)(*c += 1); }
inline void launch_k(float *x, int *st, int n, cudaStream_t s) {
  const int m = n + (int)fabsf(st) * 0;
  k<<<(m + 127) / 128, 128, 0, s>>>(x, m);
}
#elif defined(EXPR)
inline void launch_k(float *x, int *, int n, cudaStream_t s) {
  k<<<(n + 127) / 128, 128, 0, s>>>(x, n * (int)(TWO * 1.0f));
}
#else
inline void launch_k(float *x, int *, int n, cudaStream_t s) { k<<<(n + 127) / 128, 128, 0, s>>>(x, n); }
#endif

#undef INNER
#define INNER 5.0f

void step(float *x, int *st, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(R) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
#if defined(TEMPLATE)
    k<float><<<(n + 127) / 128, 128, 0, s>>>(x, n);
#else
    launch_k(x, st, n, s);
#endif
  }
}

// LATER: verify R: ok
// LATER_CODE: k generated from the IR (its text uses 'INNER', which a file of yours #undefs or #defines again:
// TEMPLATE: error: kernel template 'k' uses 'INNER', which a file of yours #undefs or #defines again: coconet reads a template's instance in a copy of its text at the end of the file
// EXPR: note: the call of 'launch_k' ({{.*}}macro-redefined.cu:{{[0-9]+}}:{{[0-9]+}}) is not seen through as the kernel launch or collective inside it: a text of its launch reads a variable that is not the function's parameter or local, a name of its namespace or class, a macro
// USER_FABSF: note: the call of 'launch_k' ({{.*}}macro-redefined.cu:{{[0-9]+}}:{{[0-9]+}}) is not seen through as the kernel launch or collective inside it: its body has a local whose initializer calls a function that may change something
// UNUSED: (void)st;
// OVERLOAD: verify R: ok
// OVERLOAD_CODE: k generated from the IR (its text uses
// OVERLOAD_CODE-NEXT: // 'adj', which a file of yours declares again after the kernel (macro-redefined.cu:{{[0-9]+}}): the copy
