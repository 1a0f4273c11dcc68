// Style: a project's kernels in a header (Inputs/header-kernels.cuh), the
// call site here with pragma lines only: a grid-stride SGD calling a
// __device__ helper, a shared-memory RMSNorm row kernel, a __half2 kernel whose
// step is a __half2 passed by value, and the AllReduce inside
// ncclGroupStart()/ncclGroupEnd() with (const void *) casts and a datatype
// from a trait; a kernel template (TEMPLATE), read in its instance for <__half>.
// The header is read, never rewritten: `fuse` of the row kernel (FUSE) copies
// its text from there into the fused kernel (header-fuse.cu runs such copies).
// RUN: %coconet --verify=ir:4 %s -- -I%S/Inputs | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --explain %s -- -I%S/Inputs | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %coconet %s -o %t.cu -- -I%S/Inputs && grep -c "coconet: begin generated code" %t.cu | grep -qx 4
// RUN: %coconet %s -- -I%S/Inputs -DFUSE | %FileCheck --check-prefix=FUSE %s
// RUN: %coconet --verify=4 %s -- -I%S/Inputs -DTEMPLATE | %FileCheck --check-prefix=TEMPLATE %s
// RUN: %coconet %s -- -I%S/Inputs -DTEMPLATE | %FileCheck --check-prefix=TEMPLATE_CODE %s
// A host wrapper in a header is seen through where it is:
// RUN: %coconet --verify=4 %s -- -I%S/Inputs -DHEADER_WRAPPER 2>&1 | %FileCheck --check-prefix=WRAPPER %s
// RUN: %coconet --explain %s -- -I%S/Inputs -DHEADER_WRAPPER 2>&1 | %FileCheck --check-prefix=WRAPPER_EXPLAIN %s
// A launch in a header: the harness holds the header lowered in place of its #include.
// RUN: %coconet --verify=4 %s -- -I%S/Inputs -DHEADER_LAUNCHER 2>&1 | %FileCheck --check-prefix=HARNESS %s
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include "header-kernels.cuh"
#if defined(HEADER_WRAPPER) || defined(HEADER_LAUNCHER)
#include "header-launcher.cuh"
#endif

template <typename T> struct NcclType;
template <> struct NcclType<float> { static constexpr ncclDataType_t value = ncclFloat; };

void sgd_step(float *w, float *g, float lr, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(sgd) split reorder scratch(g) replicated(w)
  {
    ncclGroupStart();
    ncclAllReduce((const void *)g, (void *)g, n, NcclType<float>::value, ncclSum, comm, s);
    ncclGroupEnd();
    sgd_clip<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr, 1.0f, n);
  }
}

void norm_step(float *out, float *y, const float *gamma, int rows, int hidden, ncclComm_t comm, cudaStream_t s) {
#if defined(FUSE)
#pragma coconet region name(norm) split reorder scratch(y) replicated(gamma) fuse
#else
#pragma coconet region name(norm) split reorder scratch(y) replicated(gamma)
#endif
  {
    ncclAllReduce(y, y, (size_t)rows * hidden, ncclFloat, ncclSum, comm, s);
    rmsnorm_rows<<<rows, 256, 0, s>>>(out, y, gamma, rows, hidden);
  }
}

void half_step(__half *w, __half *g, __half2 neg_lr, int n, ncclComm_t comm, cudaStream_t s) {
#if defined(TEMPLATE)
  (void)w;
#pragma coconet region name(half2) split reorder
#else
#pragma coconet region name(half2) split reorder scratch(g) replicated(w)
#endif
  {
    ncclAllReduce(g, g, n, ncclHalf, ncclSum, comm, s);
#if defined(TEMPLATE)
    scale_t<__half><<<(n + 255) / 256, 256, 0, s>>>(g, __low2half(neg_lr), n);
#else
    axpy_half2<<<(n / 2 + 255) / 256, 256, 0, s>>>(reinterpret_cast<__half2 *>(w),
                                                   reinterpret_cast<const __half2 *>(g), neg_lr, n / 2);
#endif
  }
}

void grid_step(float *x, int rows, int cols, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(product) split reorder
  {
    ncclAllReduce(x, x, rows * cols, ncclFloat, ncclSum, comm, s);
#if defined(HEADER_WRAPPER)
    launch_scale_grid(x, 0.5f, rows, cols, s);
#else
    scale_grid<<<(rows * cols + 255) / 256, 256, 0, s>>>(x, 0.5f, rows, cols);
#endif
  }
}

// IR: verify=ir sgd: ok
// IR: verify=ir norm: ok
// IR: verify=ir half2: ok
// EXEC: verify sgd: output 'w' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify sgd: ok
// EXEC: verify norm: output 'out' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify norm: ok
// EXEC: verify half2: output 'w' (f16): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify half2: ok
// EXEC: verify product: ok
// EXPLAIN: explain sgd
// EXPLAIN: ncclGroupStart()/ncclGroupEnd() at {{.*}}header-kernels.cu:{{[0-9]+}}:5 hold one collective, which they do not group with anything: the schedule leaves them out
// EXPLAIN: reorder: kernel 'sgd_clip'
// EXPLAIN: explain norm
// EXPLAIN: reorder: kernel 'rmsnorm_rows'{{.*}} is row-wise
// EXPLAIN: explain half2
// EXPLAIN: reorder: kernel 'axpy_half2'
// FUSE: // coconet: rmsnorm_rows (header-kernels.cuh:[[#]]) as one block of the grid it is launched with
// FUSE: __device__ __forceinline__ void coconet_norm_rmsnorm_rows(float *out, const float *x,
// FUSE-NEXT: const float *gamma, int rows, int hidden, {{.*}} const uint3 blockIdx,
// FUSE-NEXT: {{.*}} const dim3 gridDim)
// FUSE-NEXT: {
// FUSE-NEXT: __shared__ float partial[256];
// TEMPLATE: verify half2: ok (the region as written and as scheduled agree within 0 ULP)
// The template's own text, from the header, under its argument:
// TEMPLATE_CODE: // coconet: element i of scale_t<__half> (header-kernels.cu:56), the kernel's own text
// TEMPLATE_CODE-NEXT: // (header-kernels.cuh:44) under its template's arguments
// TEMPLATE_CODE-NEXT: namespace coconet_half2_slice_scale_t {
// TEMPLATE_CODE-NEXT: typedef __half T;
// TEMPLATE_CODE-NEXT: __device__ __forceinline__ void element(T &x, T by)
// WRAPPER: verify product: output 'x' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// WRAPPER: verify product: ok
// WRAPPER_EXPLAIN: the call of 'launch_scale_grid' ({{.*}}header-launcher.cuh:{{[0-9]+}}:20) is the launch of kernel 'scale_grid' inside it, seen through
// HARNESS: verify sgd: ok
// HARNESS: verify norm: ok
// HARNESS: verify half2: ok
// HARNESS: verify product: ok
