// fuse of row-wise kernels: after split reorder, the AllReduce and the row-wise
// kernels that follow it become one kernel that runs the blocks of their grid
// (a copy of each kernel's body) between the reduction of the block's rows from
// the peers and the write of its output rows to them. Two kernels launched
// alike, and an extern "C" kernel, run equal to the region as written (the
// harness's buffers are symmetric, so the fused kernel runs); what the fused
// kernel cannot take is refused, with the reason.
// RUN: %coconet --verify=4 %s -- -DCASE_TWO | %FileCheck --check-prefix=TWO %s
// RUN: %coconet %s -o - -- -DCASE_TWO | %FileCheck --check-prefix=TWO-CODE %s
// RUN: %coconet --explain %s -- -DCASE_TWO | %FileCheck --check-prefix=TWO-EXPLAIN %s
// RUN: %coconet --verify=3 %s -- -DCASE_EXTERN_C | %FileCheck --check-prefix=EXTERN-C %s
// RUN: %expect 1 %coconet %s -o %t.cu -- -DCASE_UNLIKE 2>&1 | %FileCheck --check-prefix=UNLIKE %s
// RUN: test ! -e %t.cu
// RUN: %expect 1 %coconet --check %s -- -DCASE_AFTER 2>&1 | %FileCheck --check-prefix=AFTER %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_ONESHOT 2>&1 | %FileCheck --check-prefix=ONESHOT %s
// RUN: %expect 1 %coconet %s -o %t-macro.cu -- -DCASE_MACRO_PARAMS 2>&1 | %FileCheck --check-prefix=MACRO-PARAMS %s
// RUN: test ! -e %t-macro.cu
// RUN: %expect 1 %coconet --check %s -- -DCASE_SPLIT_IF 2>&1 | %FileCheck --check-prefix=SPLIT-IF %s
// RUN: %coconet --verify=3 %s -- -DCASE_TWO_GROUPS | %FileCheck --check-prefix=GROUPS %s
// RUN: %coconet %s -o - -- -DCASE_TWO_GROUPS | %FileCheck --check-prefix=GROUPS-CODE %s
#include <cuda_runtime.h>
#include <nccl.h>

#if defined(CASE_EXTERN_C)
extern "C" {
#endif

// h = x + residual, per row (written back to the residual stream).
__global__ void add_rows(float *h, const float *x, const float *residual, int rows, int cols) {
  const int row = blockIdx.x;
  if (row >= rows) return;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) h[row * cols + j] = x[row * cols + j] + residual[row * cols + j];
}

#if defined(CASE_EXTERN_C)
}
#endif

#if defined(CASE_AFTER)
__global__ void scale_rows(float *out, const float *h, int rows, int cols);
#elif defined(CASE_MACRO_PARAMS)
#define SCALE_PARAMS float *out, const float *h, int rows, int cols
__global__ void scale_rows(SCALE_PARAMS) {
  const int row = blockIdx.x;
  if (row >= rows) return;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) out[row * cols + j] = h[row * cols + j] * 0.5f;
}
#elif defined(CASE_SPLIT_IF)
// A head chosen by #if whose #endif is inside the body.
#if defined(CASE_SPLIT_IF)
__global__ void scale_rows(float *out, const float *h, int rows, int cols) {
#else
__global__ void scale_rows(float *out, const float *h, int rows, int cols, int unused) {
#endif
  const int row = blockIdx.x;
  if (row >= rows) return;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) out[row * cols + j] = h[row * cols + j] * 0.5f;
}
#else
// out = h / max |h| of the row.
__global__ void scale_rows(float *out, const float *h, int rows, int cols) {
  __shared__ float peak[128];
  const int row = blockIdx.x;
  if (row >= rows) return;
  float m = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, fabsf(h[row * cols + j]));
  peak[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) peak[threadIdx.x] = fmaxf(peak[threadIdx.x], peak[threadIdx.x + s]);
    __syncthreads();
  }
  for (int j = threadIdx.x; j < cols; j += blockDim.x) out[row * cols + j] = h[row * cols + j] / (peak[0] + 1.0f);
}
#endif

void block_out(float *x, float *residual, float *h, float *out, int rows, int cols, ncclComm_t comm, cudaStream_t s) {
#if defined(CASE_ONESHOT)
#pragma coconet region name(rows2) replicated(residual) scratch(x) fuse
#else
#pragma coconet region name(rows2) split reorder replicated(residual) scratch(x) fuse
#endif
  {
    ncclAllReduce(x, x, rows * cols, ncclFloat, ncclSum, comm, s);
    add_rows<<<rows, 128, 0, s>>>(h, x, residual, rows, cols);
#if defined(CASE_UNLIKE)
    scale_rows<<<rows, 64, 0, s>>>(out, h, rows, cols);
#elif !defined(CASE_EXTERN_C)
    scale_rows<<<rows, 128, 0, s>>>(out, h, rows, cols);
#endif
  }
}

#if defined(CASE_AFTER)
__global__ void scale_rows(float *out, const float *h, int rows, int cols) {
  const int row = blockIdx.x;
  if (row >= rows) return;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) out[row * cols + j] = h[row * cols + j] * 0.5f;
}
#endif

#if defined(CASE_TWO_GROUPS)
// Two AllReduces, each with the same row-wise kernel after it: two fused kernels, each with its own copy.
void two_groups(float *x, float *y, float *h, float *out, const float *residual, int rows, int cols, ncclComm_t comm,
                cudaStream_t s) {
#pragma coconet region name(groups) split reorder replicated(residual) scratch(x, y) fuse
  {
    ncclAllReduce(x, x, rows * cols, ncclFloat, ncclSum, comm, s);
    add_rows<<<rows, 128, 0, s>>>(h, x, residual, rows, cols);
    ncclAllReduce(y, y, rows * cols, ncclFloat, ncclSum, comm, s);
    add_rows<<<rows, 128, 0, s>>>(out, y, residual, rows, cols);
  }
}
#endif

// TWO: verify rows2: ok (the region as written and as scheduled agree within 0 ULP)
// Both kernels copied; the fused kernel runs them in order on a block's rows, then gathers what they write.
// TWO-CODE: __device__ __forceinline__ void coconet_rows2_add_rows(float *h, const float *x,
// TWO-CODE-NEXT:     const float *residual, int rows, int cols, {{\[\[}}maybe_unused{{\]\]}} const uint3 blockIdx,
// TWO-CODE-NEXT:     {{\[\[}}maybe_unused{{\]\]}} const dim3 gridDim)
// TWO-CODE: __device__ __forceinline__ void coconet_rows2_scale_rows(float *out, const float *h, int rows,
// TWO-CODE-NEXT:     int cols, {{\[\[}}maybe_unused{{\]\]}} const uint3 blockIdx, {{\[\[}}maybe_unused{{\]\]}} const dim3 gridDim)
// TWO-CODE: __global__ void coconet_rows2_fused(ncclDevComm coconet_dev, ncclWindow_t coconet_x_win, size_t coconet_x_off, ncclWindow_t coconet_h_win, size_t coconet_h_off, ncclWindow_t coconet_out_win, size_t coconet_out_off, float *h, float *x, const float *residual, int cols, float *out, float *h_2, int cols_2, size_t coconet_h, size_t coconet_lo, size_t coconet_hi, size_t coconet_tail_lo, size_t coconet_tail_hi)
// TWO-CODE:    coconet_reduce_span<COCONET_SUM>(coconet_x_win, coconet_x_off, coconet_dev.lsaSize, x,
// TWO-CODE-NEXT:                                     coconet_e0, coconet_e1);
// TWO-CODE-NEXT: __syncthreads();
// TWO-CODE-NEXT: coconet_rows2_add_rows(h + coconet_lo, x + coconet_lo, residual + coconet_lo, (int)coconet_rows, cols, make_uint3((unsigned)coconet_v, 0, 0), dim3((unsigned)coconet_rows));
// TWO-CODE-NEXT: __syncthreads();
// TWO-CODE-NEXT: coconet_rows2_scale_rows(out + coconet_lo, h_2 + coconet_lo, (int)coconet_rows, cols_2, make_uint3((unsigned)coconet_v, 0, 0), dim3((unsigned)coconet_rows));
// TWO-CODE-NEXT: __syncthreads();
// TWO-CODE-NEXT: coconet_gather_span(coconet_dev, coconet_h_win, coconet_h_off, h, coconet_e0, coconet_e1);
// TWO-CODE-NEXT: coconet_gather_span(coconet_dev, coconet_out_win, coconet_out_off, out, coconet_e0, coconet_e1);
// TWO-EXPLAIN: fuse: ReduceScatter of 'x' + 4 slice kernel launch(es) (row-wise ones among them) + AllGather(s) become one kernel (group 1): for each block of the row-wise kernels' grid it sums the block's rows from the peers, runs the kernels on them (a row-wise kernel's block with its body as written) and writes the gathered rows to the peers

// EXTERN-C: verify rows2: ok (the region as written and as scheduled agree within 0 ULP)

// UNLIKE: fuse-rows.cu:87:5: error: fuse: kernels 'add_rows' and 'scale_rows' are launched differently (a block per row, block 128, shared memory 0; a block per row, block 64, shared memory 0); the fused kernel runs the blocks of one grid with one block size: drop fuse, or launch them alike

// AFTER: fuse-rows.cu:95:1: error: fuse: kernel 'scale_rows' is defined after the function that launches it; the fused kernel, which copies the kernel's body, goes above that function: define the kernel before it, or drop fuse

// ONESHOT: fuse-rows.cu:85:5: error: fuse: kernel 'add_rows' is row-wise (each block reduces a row of cols elements); fuse without split does not take row-wise kernels: use split reorder fuse, which runs it on this rank's rows

// MACRO-PARAMS: error: fuse: kernel 'scale_rows' has its parameters or its body written through a macro, or a #if that its body does not close; the fused kernel copies them as written: write them out in the kernel, or drop fuse
// SPLIT-IF: error: fuse: kernel 'scale_rows' has its parameters or its body written through a macro, or a #if that its body does not close

// GROUPS: verify groups: ok
// GROUPS-CODE: __device__ __forceinline__ void coconet_groups_add_rows(
// GROUPS-CODE: __global__ void coconet_groups_fused(
// GROUPS-CODE: __device__ __forceinline__ void coconet_groups_add_rows_2(
// GROUPS-CODE: __global__ void coconet_groups_fused2(
