// Style: elementwise epilogues launched on a 2-D grid, one grid row per
// activation row: `dim3 grid((cols + 255) / 256, rows)`, the row named as a
// local of blockIdx.y (`const int row = blockIdx.y;`), the column the element
// index along x, the guard testing the row before the column
// (`row < rows && col < cols`), a per-row scale read at [row] and the row used
// as a value; in half, a grid-stride loop over the columns with the element's
// index in a local (`size_t idx = (size_t)row * cols + col;`). Each is a slice
// of cols elements per grid row: split, reordered onto this rank's slice of the
// rows x cols buffer, fused too. A 2-D launch writing a separate output
// (its `row < rows` holds for every row the grid has: no test of it, no read
// of the output's old value), followed by a one-dimensional launch over the
// same elements (one element function runs both: the second's t[i] through a
// pointer takes the element's index). The row's local may follow a return
// guard testing blockIdx.y itself (ROW_AFTER_GUARD), the element's index local
// precede the guard (INDEX_BEFORE). The nearest refusals: an index local off
// by one (after or before the guard), a row local reassigned, a two-dimensional
// block.
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=3 %s -- -DFUSE | %FileCheck --check-prefix=FUSED %s
// RUN: %coconet --verify=3 %s -- -DRETURN_GUARD | %FileCheck --check-prefix=FUSED %s
// RUN: %coconet --verify=3 %s -- -DROW_AFTER_GUARD -DFUSE | %FileCheck --check-prefix=FUSED %s
// RUN: %coconet --verify=3 %s -- -DINDEX_BEFORE | %FileCheck --check-prefix=FUSED %s
// RUN: %expect 1 %coconet --check %s -- -DINDEX_BEFORE_SHIFTED 2>&1 | %FileCheck --check-prefix=INDEX_BEFORE_SHIFTED %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet %s | %FileCheck --check-prefix=SEPARATE %s
// RUN: %expect 1 %coconet --check %s -- -DSHIFTED 2>&1 | %FileCheck --check-prefix=SHIFTED %s
// RUN: %expect 1 %coconet --check %s -- -DROW_CHANGED 2>&1 | %FileCheck --check-prefix=ROW_CHANGED %s
// RUN: %expect 1 %coconet --check %s -- -DBLOCK2D 2>&1 | %FileCheck --check-prefix=BLOCK2D %s
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void bias_rows(float *out, const float *bias, const float *row_scale, int rows, int cols) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
#if defined(ROW_AFTER_GUARD)
  if (blockIdx.y >= rows || col >= cols) return;
  const int row = blockIdx.y;
  out[row * cols + col] = out[row * cols + col] * row_scale[row] + bias[col] + 0.001f * row;
#else
#ifdef ROW_CHANGED
  int row = blockIdx.y;
  if (cols > 64) row = 0;
#else
  const int row = blockIdx.y;
#endif
#if defined(RETURN_GUARD)
  if (row >= rows || col >= cols) return;
  out[row * cols + col] = out[row * cols + col] * row_scale[row] + bias[col] + 0.001f * row;
#elif defined(INDEX_BEFORE)
  const size_t idx = (size_t)row * cols + col;
  if (row < rows && col < cols) out[idx] = out[idx] * row_scale[row] + bias[col] + 0.001f * row;
#elif defined(INDEX_BEFORE_SHIFTED)
  const size_t idx = (size_t)row * cols + col + 1;
  if (row < rows && col < cols) out[idx] = out[idx] * row_scale[row] + bias[col] + 0.001f * row;
#else
  if (row < rows && col < cols) out[row * cols + col] = out[row * cols + col] * row_scale[row] + bias[col] + 0.001f * row;
#endif
#endif
}

__global__ void bias_relu_rows(__half *out, const __half *x, const __half *bias, int cols) {
  const unsigned row = blockIdx.y;
  for (int col = blockIdx.x * blockDim.x + threadIdx.x; col < cols; col += blockDim.x * gridDim.x) {
#ifdef SHIFTED
    const size_t idx = (size_t)row * cols + col + 1;
#else
    const size_t idx = (size_t)row * cols + col;
#endif
    const float v = __half2float(x[idx]) + __half2float(bias[col]);
    out[idx] = __float2half(v > 0.0f ? v : 0.0f);
  }
}

__global__ void scale_tiles(float *out, int rows, int cols) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows && col < cols) out[row * cols + col] *= 0.5f;
}

__global__ void bias_relu_out(float *out, const float *x, const float *bias, int rows, int cols) {
  const int row = blockIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows && col < cols) out[row * cols + col] = fmaxf(x[row * cols + col] + bias[col], 0.0f);
}

__global__ void scale_all(float *y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= a;
}

void epilogue(float *out, const float *bias, const float *row_scale, int rows, int cols, ncclComm_t comm,
              cudaStream_t s) {
#ifdef FUSE
#pragma coconet region name(bias_rows) split reorder fuse replicated(bias, row_scale)
#else
#pragma coconet region name(bias_rows) split reorder replicated(bias, row_scale)
#endif
  {
    ncclAllReduce(out, out, rows * cols, ncclFloat, ncclSum, comm, s);
#ifdef BLOCK2D
    scale_tiles<<<dim3((cols + 31) / 32, (rows + 7) / 8), dim3(32, 8), 0, s>>>(out, rows, cols);
#else
    bias_rows<<<dim3((cols + 255) / 256, rows), 256, 0, s>>>(out, bias, row_scale, rows, cols);
#endif
  }
}

void mlp_out(__half *out, __half *x, const __half *bias, int rows, int cols, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(bias_relu_rows) split reorder replicated(bias) scratch(x)
  {
    ncclAllReduce(x, x, rows * cols, ncclHalf, ncclSum, comm, s);
    bias_relu_rows<<<dim3(4, rows), 128, 0, s>>>(out, x, bias, cols);
  }
}

void separate_out(float *out, float *x, const float *bias, int rows, int cols, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(separate) split reorder replicated(bias) scratch(x)
  {
    ncclAllReduce(x, x, rows * cols, ncclFloat, ncclSum, comm, s);
    bias_relu_out<<<dim3((cols + 255) / 256, rows), 256, 0, s>>>(out, x, bias, rows, cols);
    scale_all<<<(rows * cols + 255) / 256, 256, 0, s>>>(out, 0.5f, rows * cols);
  }
}

// EXEC: verify bias_rows: output 'out' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify bias_rows: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify bias_relu_rows: output 'out' (f16): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify bias_relu_rows: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify separate: ok (the region as written and as scheduled agree within 0 ULP)
// IR: verify=ir bias_rows: ok
// IR: verify=ir bias_relu_rows: ok
// IR: verify=ir separate: ok
// FUSED: verify bias_rows: ok (the region as written and as scheduled agree within 0 ULP)
// CODE: // coconet: element e of the flat buffer is col of slice e {{/}} cols
// CODE-NEXT: const int col = (int)(coconet_e {{%}} (size_t)cols);
// CODE: const uint3 blockIdx = make_uint3((unsigned)(coconet_t {{/}} 256u),
// CODE-NEXT: (unsigned)(coconet_e {{/}} (size_t)cols), 0);
// CODE-NEXT: {{^ *}}const int row = blockIdx.y;
// SHIFTED: grid-rows.cu:[[@LINE-70]]:{{[0-9]+}}: error: kernel 'bias_relu_rows' reads x[idx], and its grid's y selects a slice (rows of them)
// ROW_CHANGED: grid-rows.cu:[[@LINE-99]]:3: error: kernel 'bias_rows' declares 'int row = blockIdx.y;' before its element loop
// BLOCK2D: error: kernel 'scale_tiles' is launched with '<<<dim3((cols + 31) / 32, (rows + 7) / 8), dim3(32, 8)>>>', whose grid or block has more than one dimension
// SEPARATE: __device__ __forceinline__ void coconet_separate_slice_scale_all(int i, float *y, float a)
// SEPARATE: coconet_separate_slice_scale_all(i, out, 0.5f);
// SEPARATE-NOT: out != {{nullptr}}
// INDEX_BEFORE_SHIFTED: grid-rows.cu:{{[0-9]+}}:3: error: kernel 'bias_rows' declares 'const size_t idx = (size_t)row * cols + col + 1;' before its element loop
