// Style: row-wise kernels after a tensor-parallel AllReduce, written the way
// inference engines and trainers write them: one block per token, the row
// reduced in shared memory (a tree, or warp shuffles through __device__
// helpers), residual + RMSNorm writing the residual sum back in place,
// LayerNorm with a size_t row offset and a per-row scale, LayerNorm saving
// each row's mean and rstd (thread 0 writes them) read back by an elementwise
// kernel at [i / h], softmax through pointers to the row, a bf16 RMSNorm
// template with __ldg, and an elementwise bias kernel before a row-wise one
// (RMSNorm reduced with cub::BlockReduce is rowwise-cub.cu's). `split reorder` runs each kernel, as
// written, on this rank's whole rows (ReduceScatter and AllGather in rows; the
// rows that do not divide by the rank count are all-reduced and computed by
// every rank; per-row outputs are gathered in rows of one element). Each -D variant below is a kernel coconet must refuse, with
// its reason, except ADDRESS (row pointers as `&x[row * h]`), STEP_LOCAL (the
// column step in a local), HALVING (the tree's stride a local that starts at
// the block size), SHARED_FILL (a loop from threadIdx.x over shared memory), BLOCK_PARAM (the step a parameter passed the block
// size, extern __shared__ memory), GRID_STRIDE (rows from a grid-stride loop,
// launched with fewer blocks than rows) and PARTIAL_REPLICATED, which it must
// translate so that the program computes the same. Each variant's RUN line
// also passes ONLY=N, the bit of the one region it changes (add_norm 1, softmax
// 2, layernorm 4, ln_stats 8, rmsnorm_bf16 16, variant 64): the others are left
// out of its runs (the plain RUN lines check them). The includes come first, so
// that coconet's parse precompiles them.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --explain %s | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %expect 1 %coconet --check %s -- -DCROSS -DONLY=64 2>&1 | %FileCheck --check-prefix=CROSS %s
// RUN: %expect 1 %coconet --check %s -- -DROW_VALUE -DONLY=64 2>&1 | %FileCheck --check-prefix=ROW_VALUE %s
// RUN: %coconet --verify=4 %s -- -DGRID_STRIDE -DONLY=64 | %FileCheck --check-prefix=GRID_STRIDE %s
// RUN: %coconet %s -- -DGRID_STRIDE -DONLY=64 | grep -v '^// ' | %FileCheck --check-prefix=GRID_STRIDE_CODE %s
// RUN: %expect 1 %coconet --check %s -- -DGRID_STRIDE_VALUE -DONLY=64 2>&1 | %FileCheck --check-prefix=GRID_STRIDE_VALUE %s
// RUN: %expect 1 %coconet --check %s -- -DGRID_STRIDE_OUTSIDE -DONLY=64 2>&1 | %FileCheck --check-prefix=GRID_STRIDE_OUTSIDE %s
// RUN: %expect 1 %coconet --check %s -- -DGRID_STRIDE_STEP -DONLY=64 2>&1 | %FileCheck --check-prefix=GRID_STRIDE_STEP %s
// RUN: %expect 1 %coconet --check %s -- -DGRID_STRIDE_NESTED -DONLY=64 2>&1 | %FileCheck --check-prefix=GRID_STRIDE_NESTED %s
// RUN: %expect 1 %coconet --check %s -- -DGRID_STRIDE_CARRY -DONLY=64 2>&1 | %FileCheck --check-prefix=GRID_STRIDE_CARRY %s
// RUN: %expect 1 %coconet --check %s -- -DGRID_STRIDE_SHARED_CARRY -DONLY=64 2>&1 | %FileCheck --check-prefix=GRID_STRIDE_SHARED_CARRY %s
// RUN: %expect 1 %coconet --check %s -- -DPER_ROW_OUT -DONLY=64 2>&1 | %FileCheck --check-prefix=PER_ROW_OUT %s
// RUN: %expect 1 %coconet --check %s -- -DSTATS_THREAD1 -DONLY=8 2>&1 | %FileCheck --check-prefix=STATS_THREAD1 %s
// RUN: %expect 1 %coconet --check %s -- -DSTATS_ELEMENT -DONLY=8 2>&1 | %FileCheck --check-prefix=STATS_ELEMENT %s
// RUN: %coconet --verify=4 %s -- -DSTATS_ALL_THREADS -DONLY=8 | %FileCheck --check-prefix=STATS_OK %s
// RUN: %expect 1 %coconet --check %s -- -DATOMIC -DONLY=64 2>&1 | %FileCheck --check-prefix=ATOMIC %s
// RUN: %expect 1 %coconet --check %s -- -DHALF_GRID -DONLY=64 2>&1 | %FileCheck --check-prefix=HALF_GRID %s
// RUN: %expect 1 %coconet --check %s -- -DCOLUMN_WRITE -DONLY=64 2>&1 | %FileCheck --check-prefix=COLUMN_WRITE %s
// RUN: %expect 1 %coconet --check %s -- -DCOLUMN_BOUND -DONLY=1 2>&1 | %FileCheck --check-prefix=COLUMN_BOUND %s
// RUN: %coconet --verify=4 %s -- -DFUSE -DONLY=64 | %FileCheck --check-prefix=FUSE %s
// RUN: %expect 1 %coconet --check %s -- -DSQUARE -DONLY=64 2>&1 | %FileCheck --check-prefix=SQUARE %s
// RUN: %expect 1 %coconet --check %s -- -DMEMBER -DONLY=64 2>&1 | %FileCheck --check-prefix=MEMBER %s
// RUN: %expect 1 %coconet --check %s -- -DSTRIDE2 -DONLY=64 2>&1 | %FileCheck --check-prefix=STRIDE2 %s
// RUN: %expect 1 %coconet --check %s -- -DHELPER_ROW -DONLY=64 2>&1 | %FileCheck --check-prefix=HELPER_ROW %s
// RUN: %coconet --verify=4 %s -- -DNARROW -DONLY=64 | %FileCheck --check-prefix=NARROW %s
// RUN: %expect 1 %coconet --check %s -- -DLAZY -DONLY=64 2>&1 | %FileCheck --check-prefix=LAZY %s
// RUN: %expect 1 %coconet --check %s -- -DPARTIAL -DONLY=64 2>&1 | %FileCheck --check-prefix=PARTIAL %s
// RUN: %coconet --verify=4 %s -- -DPARTIAL -DPARTIAL_REPLICATED -DONLY=64 | %FileCheck --check-prefix=PARTIAL_OK %s
// RUN: %coconet --verify=4 %s -- -DADDRESS -DONLY=64 | %FileCheck --check-prefix=ACCEPTED %s
// RUN: %coconet --verify=4 %s -- -DSTEP_LOCAL -DONLY=64 | %FileCheck --check-prefix=ACCEPTED %s
// RUN: %coconet --verify=4 %s -- -DBLOCK_PARAM -DONLY=64 | %FileCheck --check-prefix=ACCEPTED %s
// RUN: %coconet --verify=4 %s -- -DHALVING -DONLY=1 | %FileCheck --check-prefix=HALVING %s
// RUN: %coconet --verify=4 %s -- -DSHARED_FILL -DONLY=1 | %FileCheck --check-prefix=SHARED_FILL %s
// RUN: %expect 1 %coconet --check %s -- -DSHARED_FILL_GLOBAL -DONLY=1 2>&1 | %FileCheck --check-prefix=SHARED_FILL_GLOBAL %s
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#ifndef ONLY
#define ONLY 127
#endif

// Residual add + RMSNorm: a shared-memory tree, the sum written back to the residual.
__global__ void add_rmsnorm(float *out, float *residual, const float *x, const float *gamma, int tokens, int hidden,
                            float eps) {
  __shared__ float partial[256];
  const int row = blockIdx.x;
  if (row >= tokens) return;
#if defined(SHARED_FILL)
  for (int k = threadIdx.x; k < 256; k += blockDim.x) partial[k] = 0.0f;  // a loop over shared memory, not the row
  __syncthreads();
#elif defined(SHARED_FILL_GLOBAL)
  for (int k = threadIdx.x; k < 256; k += blockDim.x) partial[k] = x[row * hidden + k];
  __syncthreads();
#endif
  float sum = 0.0f;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    float h = x[row * hidden + j] + residual[row * hidden + j];
    residual[row * hidden + j] = h;
    sum += h * h;
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
#if defined(HALVING)
  int s = 256;  // the launch's block, halved: a local equal to the block size, then assigned
  while (s > 1) {
    s /= 2;
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
#else
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
#endif
  const float scale = rsqrtf(partial[0] / hidden + eps);
#if defined(COLUMN_BOUND)
  for (int j = threadIdx.x; j < hidden - 1; j += blockDim.x)  // the last column left out
#else
  for (int j = threadIdx.x; j < hidden; j += blockDim.x)
#endif
    out[row * hidden + j] = residual[row * hidden + j] * scale * gamma[j];
}

__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  return v;
}

__device__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
  return v;
}

// A block reduction through a warp's shuffles and 32 shared slots.
__device__ float block_sum(float v) {
  __shared__ float warps[32];
  __syncthreads();
  v = warp_sum(v);
  if ((threadIdx.x & 31) == 0) warps[threadIdx.x >> 5] = v;
  __syncthreads();
  v = threadIdx.x < (blockDim.x >> 5) ? warps[threadIdx.x] : 0.0f;
  if (threadIdx.x < 32) v = warp_sum(v);
  if (threadIdx.x == 0) warps[0] = v;
  __syncthreads();
  return warps[0];
}

__device__ float block_max(float v) {
  __shared__ float warps[32];
  __syncthreads();
  v = warp_max(v);
  if ((threadIdx.x & 31) == 0) warps[threadIdx.x >> 5] = v;
  __syncthreads();
  v = threadIdx.x < (blockDim.x >> 5) ? warps[threadIdx.x] : -INFINITY;
  if (threadIdx.x < 32) v = warp_max(v);
  if (threadIdx.x == 0) warps[0] = v;
  __syncthreads();
  return warps[0];
}

// Softmax over a row through pointers to it (no row count: the grid is the rows).
__global__ void softmax_rows(float *out, const float *in, int cols) {
  const float *x = in + blockIdx.x * cols;
  float *y = out + blockIdx.x * cols;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, x[c]);
  m = block_max(m);
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += __expf(x[c] - m);
  s = block_sum(s);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) y[c] = __expf(x[c] - m) / s;
}

__global__ void bias_add(float *y, const float *bias, int n, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += bias[i % cols];
}

// LayerNorm: a size_t row offset, the body inside the row test, a per-row scale.
__global__ void layernorm(float *out, const float *x, const float *w, const float *b, const float *row_scale,
                          int rows, int h) {
  int r = blockIdx.x;
  if (r < rows) {
    size_t off = (size_t)r * h;
    float s = 0, ss = 0;
    for (int j = threadIdx.x; j < h; j += blockDim.x) {
      float v = x[off + j];
      s += v;
      ss += v * v;
    }
    s = block_sum(s);
    ss = block_sum(ss);
    float mean = s / h, var = fmaxf(ss / h - mean * mean, 0.0f);
    float inv = rsqrtf(var + 1e-5f) * row_scale[r];
    for (int j = threadIdx.x; j < h; j += blockDim.x) out[off + j] = (x[off + j] - mean) * inv * w[j] + b[j];
  }
}

// LayerNorm that saves each row's mean and rstd for the backward pass.
__global__ void layernorm_stats(float *out, float *mean, float *rstd, const float *x, const float *w, const float *b,
                                int rows, int h) {
  int row = blockIdx.x;
  if (row >= rows) return;
  float s = 0.0f;
  for (int j = threadIdx.x; j < h; j += blockDim.x) s += x[row * h + j];
  const float m = block_sum(s) / h;
  float v = 0.0f;
  for (int j = threadIdx.x; j < h; j += blockDim.x) {
    const float d = x[row * h + j] - m;
    v += d * d;
  }
  const float r = rsqrtf(block_sum(v) / h + 1e-5f);
#if defined(STATS_THREAD1)
  if (threadIdx.x == 1) {  // not every block has a thread 1: rows may keep old stats
#elif defined(STATS_ALL_THREADS)
  {  // every thread stores the same value: the row is covered
#else
  if (threadIdx.x == 0) {
#endif
    mean[row] = m;
    rstd[row] = r;
  }
  for (int j = threadIdx.x; j < h; j += blockDim.x) out[row * h + j] = (x[row * h + j] - m) * r * w[j] + b[j];
}

// Elementwise after it, reading the row's rstd.
__global__ void rescale_rows(float *out, const float *rstd, const float *mean, int n, int h) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if defined(STATS_ELEMENT)
  if (i < n) out[i] = out[i] * rstd[i / h] + mean[i];  // mean is per row: [i] is another row's
#else
  if (i < n) out[i] = out[i] * rstd[i / h] + 0.5f * mean[i / h];
#endif
}


// A bf16 RMSNorm template, the block size a template argument, reads through __ldg.
template <typename T, int BLOCK>
__global__ void rmsnorm_t(T *out, const T *x, const T *weight, int n_rows, int dim, float eps) {
  __shared__ float red[BLOCK];
  int row = blockIdx.x;
  if (row >= n_rows) return;
  float acc = 0.0f;
  for (int k = threadIdx.x; k < dim; k += BLOCK) {
    float v = (float)__ldg(&x[row * dim + k]);
    acc += v * v;
  }
  red[threadIdx.x] = acc;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  float inv = rsqrtf(red[0] / dim + eps);
  for (int k = threadIdx.x; k < dim; k += BLOCK)
    out[row * dim + k] = (T)((float)x[row * dim + k] * inv * (float)weight[k]);
}

#if defined(CROSS)
// Reads the next row: rows depend on each other.
__global__ void smooth(float *out, const float *x, int rows, int h) {
  int row = blockIdx.x;
  if (row >= rows) return;
  for (int j = threadIdx.x; j < h; j += blockDim.x) out[row * h + j] = x[row * h + j] + x[(row + 1) % rows * h + j];
}
#elif defined(ROW_VALUE)
// A per-row seed: the row index is a value, which the slice launch renumbers.
__global__ void smooth(float *out, const float *x, int rows, int h) {
  int row = blockIdx.x;
  if (row >= rows) return;
  for (int j = threadIdx.x; j < h; j += blockDim.x) out[row * h + j] = x[row * h + j] * (float)(row % 7);
}
#elif defined(GRID_STRIDE)
// Rows in a grid-stride loop, launched with fewer blocks than rows: the schedule
// launches a block per row of the slice, so each block runs the loop once.
__global__ void smooth(float *out, const float *x, int rows, int h) {
  for (int row = blockIdx.x; row < rows; row += gridDim.x) {
    __shared__ float total;
    if (threadIdx.x == 0) total = 0.0f;
    __syncthreads();
    for (int j = threadIdx.x; j < h; j += blockDim.x) atomicAdd(&total, x[row * h + j]);
    __syncthreads();
    for (int j = threadIdx.x; j < h; j += blockDim.x) out[row * h + j] = x[row * h + j] - total / h;
    __syncthreads();
  }
}
#elif defined(GRID_STRIDE_VALUE)
// The block's place used inside a grid-stride loop: not the row there.
__global__ void smooth(float *out, const float *x, int rows, int h) {
  for (int row = blockIdx.x; row < rows; row += gridDim.x)
    for (int j = threadIdx.x; j < h; j += blockDim.x) out[row * h + j] = x[row * h + j] + (float)blockIdx.x;
}
#elif defined(GRID_STRIDE_OUTSIDE)
// A row touched outside the grid-stride loop.
__global__ void smooth(float *out, const float *x, int rows, int h) {
  out[blockIdx.x * h + threadIdx.x] = 0.0f;
  for (int row = blockIdx.x; row < rows; row += gridDim.x)
    for (int j = threadIdx.x; j < h; j += blockDim.x) out[row * h + j] = 2.0f * x[row * h + j];
}
#elif defined(GRID_STRIDE_STEP)
// Every other row per block: not a grid-stride loop over the rows.
__global__ void smooth(float *out, const float *x, int rows, int h) {
  for (int row = blockIdx.x; row < rows; row += 2 * gridDim.x)
    for (int j = threadIdx.x; j < h; j += blockDim.x) out[row * h + j] = 2.0f * x[row * h + j];
}
#elif defined(GRID_STRIDE_CARRY)
// A local carried from one row to the block's next (it was accepted, and each
// row of the schedule's one-block-per-row launch started it at 0 again).
__global__ void smooth(float *out, const float *x, int rows, int h) {
  float carry = 0.0f;
  for (int row = blockIdx.x; row < rows; row += gridDim.x) {
    for (int j = threadIdx.x; j < h; j += blockDim.x) out[row * h + j] = x[row * h + j] + carry;
    carry += 1.0f;
  }
}
#elif defined(GRID_STRIDE_SHARED_CARRY)
// Shared memory carried from one row to the block's next.
__global__ void smooth(float *out, const float *x, int rows, int h) {
  for (int row = blockIdx.x; row < rows; row += gridDim.x) {
    __shared__ float acc;
    for (int j = threadIdx.x; j < h; j += blockDim.x) out[row * h + j] = x[row * h + j] + acc;
    __syncthreads();
    if (threadIdx.x == 0) acc = acc * 0.5f + 1.0f;
    __syncthreads();
  }
}
#elif defined(GRID_STRIDE_NESTED)
// The grid-stride loop inside a condition: not at the kernel's top level.
__global__ void smooth(float *out, const float *x, int rows, int h) {
  if (h > 0)
    for (int row = blockIdx.x; row < rows; row += gridDim.x)
      for (int j = threadIdx.x; j < h; j += blockDim.x) out[row * h + j] = 2.0f * x[row * h + j];
}
#elif defined(PER_ROW_OUT)
// Saves one value per row (LayerNorm's rstd for the backward pass).
__global__ void smooth(float *out, const float *x, int rows, int h) {
  int row = blockIdx.x;
  if (row >= rows) return;
  for (int j = threadIdx.x; j < h; j += blockDim.x) out[row * h + j] = 2.0f * x[row * h + j];
  if (threadIdx.x == 0) out[row] = 0.0f;
}
#elif defined(ATOMIC)
__global__ void smooth(float *out, const float *x, int rows, int h) {
  int row = blockIdx.x;
  if (row >= rows) return;
  for (int j = threadIdx.x; j < h; j += blockDim.x) atomicAdd(&out[row * h + j], x[row * h + j]);
}
#elif defined(COLUMN_WRITE)
__global__ void smooth(float *out, const float *x, int rows, int h) {
  int row = blockIdx.x;
  if (row >= rows) return;
  for (int j = threadIdx.x; j < h; j += blockDim.x) {
    out[row * h + j] = x[row * h + j] + out[j];
  }
}
#elif defined(SQUARE)
// One parameter for the row count and the row length.
__global__ void smooth(float *out, const float *x, int n, int unused) {
  int row = blockIdx.x;
  if (row >= n) return;
  for (int j = threadIdx.x; j < n; j += blockDim.x) out[row * n + j] = 2.0f * x[row * n + j] + unused;
}
#elif defined(MEMBER)
// Buffers in a struct: their accesses are not the kernel's pointer parameters'.
struct Rows {
  float *out;
  const float *x;
};
__global__ void smooth_rows(Rows p, int rows, int h) {
  int row = blockIdx.x;
  if (row >= rows) return;
  for (int j = threadIdx.x; j < h; j += blockDim.x) p.out[row * h + j] = 2.0f * p.x[row * h + j];
}
#elif defined(STRIDE2)
// Steps by 2 * blockDim.x: which columns it reaches depends on the block size.
__global__ void smooth(float *out, const float *x, int rows, int h) {
  int row = blockIdx.x;
  if (row >= rows) return;
  for (int j = threadIdx.x; j < h; j += 2 * blockDim.x) out[row * h + j] = 2.0f * x[row * h + j];
}
#elif defined(HELPER_ROW)
// A helper that reads blockIdx.x: there it can only be a value.
__device__ float row_jitter() { return (float)(blockIdx.x % 3); }
__global__ void smooth(float *out, const float *x, int rows, int h) {
  int row = blockIdx.x;
  if (row >= rows) return;
  for (int j = threadIdx.x; j < h; j += blockDim.x) out[row * h + j] = x[row * h + j] * row_jitter();
}
#elif defined(NARROW)
// A byte mask per element (an 8-bit buffer, gathered as ncclUint8).
#define OUT_T unsigned char
__global__ void smooth_mask(unsigned char *mask, const float *x, int rows, int h) {
  int row = blockIdx.x;
  if (row >= rows) return;
  for (int j = threadIdx.x; j < h; j += blockDim.x) mask[row * h + j] = x[row * h + j] > 0.0f;
}
#elif defined(LAZY)
// A store on the right of &&: it runs only for positive inputs.
__global__ void smooth(float *out, const float *x, int rows, int h) {
  int row = blockIdx.x;
  if (row >= rows) return;
  for (int j = threadIdx.x; j < h; j += blockDim.x) (void)(x[row * h + j] > 0.0f && (out[row * h + j] = 1.0f));
}
#elif defined(PARTIAL)
// Writes only the even columns: the odd ones keep what `out` held.
__global__ void smooth(float *out, const float *x, int rows, int h) {
  int row = blockIdx.x;
  if (row >= rows) return;
  for (int j = threadIdx.x; j < h; j += blockDim.x)
    if (j % 2 == 0) out[row * h + j] = 2.0f * x[row * h + j];
}
#elif defined(ADDRESS)
// Row pointers taken as the address of the row's first element.
__global__ void smooth(float *out, const float *x, int rows, int h) {
  int row = blockIdx.x;
  if (row >= rows) return;
  const float *xr = &x[row * h];
  float *outr = &out[row * h];
  for (int j = threadIdx.x; j < h; j += blockDim.x) outr[j] = 0.5f * xr[j] + 1.0f;
}
#elif defined(BLOCK_PARAM)
// The column step a parameter the launch passes its block size, the row
// summed in dynamic shared memory.
__global__ void smooth_blocks(float *out, const float *x, int rows, int h, int block) {
  extern __shared__ float partial[];
  int row = blockIdx.x;
  if (row >= rows) return;
  float s = 0.0f;
  for (int j = threadIdx.x; j < h; j += block) s += x[row * h + j];
  partial[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.0f;
    for (int k = 0; k < block; k++) t += partial[k];
    partial[0] = t;
  }
  __syncthreads();
  for (int j = threadIdx.x; j < h; j += block) out[row * h + j] = x[row * h + j] - partial[0] / h;
}
#elif defined(STEP_LOCAL)
// The column step held in a local.
__global__ void smooth(float *out, const float *x, int rows, int h) {
  int row = blockIdx.x;
  const int step = blockDim.x;
  if (row >= rows) return;
  for (int j = threadIdx.x; j < h; j += step) out[row * h + j] = 3.0f * x[row * h + j];
}
#else
__global__ void smooth(float *out, const float *x, int rows, int h) {
  int row = blockIdx.x;
  if (row >= rows) return;
  for (int j = threadIdx.x; j < h; j += blockDim.x) out[row * h + j] = 0.5f * x[row * h + j];
}
#endif

#if ONLY & 1
void block_output(float *y, float *residual, float *out, const float *gamma, int tokens, int hidden, float eps,
                  ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(add_norm) split reorder replicated(residual, gamma)
  {
    ncclAllReduce(y, y, (size_t)tokens * hidden, ncclFloat, ncclSum, comm, stream);
    add_rmsnorm<<<tokens, 256, 0, stream>>>(out, residual, y, gamma, tokens, hidden, eps);
  }
}
#endif

#if ONLY & 2
void attention_scores(float *scores, float *probs, const float *bias, int rows, int cols, ncclComm_t comm,
                      cudaStream_t stream) {
#pragma coconet region name(softmax) split reorder replicated(bias) scratch(scores)
  {
    ncclAllReduce(scores, scores, (size_t)rows * cols, ncclFloat, ncclSum, comm, stream);
    bias_add<<<(rows * cols + 255) / 256, 256, 0, stream>>>(scores, bias, rows * cols, cols);
    softmax_rows<<<rows, 128, 0, stream>>>(probs, scores, cols);
  }
}
#endif

#if ONLY & 4
void mlp_output(float *y, float *out, const float *w, const float *b, const float *row_scale, int rows, int h,
                ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(layernorm) split reorder replicated(w, b, row_scale) scratch(y)
  {
    ncclAllReduce(y, y, rows * h, ncclFloat, ncclSum, comm, stream);
    layernorm<<<rows, 64, 0, stream>>>(out, y, w, b, row_scale, rows, h);
  }
}
#endif

#if ONLY & 8
void layernorm_forward(float *y, float *out, float *mean, float *rstd, const float *w, const float *b, int rows, int h,
                       ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(ln_stats) split reorder replicated(w, b) scratch(y)
  {
    ncclAllReduce(y, y, rows * h, ncclFloat, ncclSum, comm, stream);
    layernorm_stats<<<rows, 128, 0, stream>>>(out, mean, rstd, y, w, b, rows, h);
    rescale_rows<<<(rows * h + 255) / 256, 256, 0, stream>>>(out, rstd, mean, rows * h, h);
  }
}
#endif

#if ONLY & 16
void bf16_output(__nv_bfloat16 *y, __nv_bfloat16 *out, const __nv_bfloat16 *weight, int rows, int dim,
                 ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(rmsnorm_bf16) split reorder replicated(weight) scratch(y)
  {
    ncclAllReduce(y, y, rows * dim, ncclBfloat16, ncclSum, comm, stream);
    rmsnorm_t<__nv_bfloat16, 128><<<rows, 128, 0, stream>>>(out, y, weight, rows, dim, 1e-6f);
  }
}
#endif


#if ONLY & 64
#ifndef OUT_T
#define OUT_T float
#endif
void variant(float *y, OUT_T *out, int rows, int h, ncclComm_t comm, cudaStream_t stream) {
#if defined(BLOCK_PARAM)
  const int block = 96;
#endif
#if defined(FUSE)
#pragma coconet region name(variant) split reorder fuse scratch(y)
#elif defined(PARTIAL_REPLICATED)
#pragma coconet region name(variant) split reorder scratch(y) replicated(out)
#else
#pragma coconet region name(variant) split reorder scratch(y)
#endif
  {
    ncclAllReduce(y, y, rows * h, ncclFloat, ncclSum, comm, stream);
#if defined(HALF_GRID)
    smooth<<<rows / 2, 256, 0, stream>>>(out, y, rows, h);
#elif defined(SQUARE)
    smooth<<<rows, 256, 0, stream>>>(out, y, rows, 0);
#elif defined(GRID_STRIDE)
    smooth<<<3, 256, 0, stream>>>(out, y, rows, h);
#elif defined(MEMBER)
    smooth_rows<<<rows, 256, 0, stream>>>(Rows{out, y}, rows, h);
#elif defined(NARROW)
    smooth_mask<<<rows, 256, 0, stream>>>(out, y, rows, h);
#elif defined(BLOCK_PARAM)
    smooth_blocks<<<rows, block, block * sizeof(float), stream>>>(out, y, rows, h, block);
#else
    smooth<<<rows, 256, 0, stream>>>(out, y, rows, h);
#endif
  }
}
#endif

// IR: verify=ir add_norm: output 'residual' (f32): max relative error 0 over 1..4 ranks x 3 inputs
// IR: verify=ir add_norm: output 'out' (f32): max relative error 0 over 1..4 ranks x 3 inputs
// IR: verify=ir add_norm: row-wise kernel 'add_rmsnorm' is modelled (each output row a fixed function of the rows and columns it reads); --verify runs its code
// IR: verify=ir add_norm: ok
// IR: verify=ir softmax: ok
// IR: verify=ir layernorm: ok
// IR: verify=ir ln_stats: output 'mean' (f32): max relative error 0 over 1..4 ranks x 3 inputs
// IR: verify=ir ln_stats: output 'rstd' (f32): max relative error 0 over 1..4 ranks x 3 inputs
// IR: verify=ir ln_stats: output 'out' (f32): max relative error 0 over 1..4 ranks x 3 inputs
// IR: verify=ir ln_stats: ok
// IR: verify=ir rmsnorm_bf16: ok
// IR: verify=ir variant: ok
// EXEC: verify add_norm: output 'residual' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify add_norm: output 'out' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify add_norm: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify softmax: output 'probs' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify softmax: ok
// EXEC: verify layernorm: output 'out' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify layernorm: ok
// EXEC: verify ln_stats: output 'mean' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify ln_stats: output 'rstd' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify ln_stats: output 'out' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify ln_stats: ok
// EXEC: verify rmsnorm_bf16: output 'out' (bf16): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify rmsnorm_bf16: ok
// EXEC: verify variant: ok
// CODE:    const coconet_part coconet_p = coconet_slice_rows((size_t)tokens * hidden, hidden,
// CODE-NEXT:        coconet_rank, coconet_nranks);
// CODE-NEXT:    COCONET_NCCL_CHECK(ncclReduceScatter(y, y + coconet_p.slice_lo, coconet_p.s, ncclFloat,
// CODE-NEXT:                                         ncclSum, comm, stream));
// CODE: if (coconet_p.s > 0) {
// CODE-NEXT:      add_rmsnorm<<<(unsigned)(coconet_p.s / hidden), 256, 0, stream>>>(out + coconet_p.slice_lo,
// CODE-NEXT:          residual + coconet_p.slice_lo, y + coconet_p.slice_lo, gamma,
// CODE-NEXT:          (int)(coconet_p.s / hidden), hidden, eps);
// CODE: if (coconet_p.tail > 0) {
// CODE-NEXT:      add_rmsnorm<<<(unsigned)(coconet_p.tail / hidden), 256, 0,
// CODE-NEXT:          stream>>>(out + coconet_p.tail_lo, residual + coconet_p.tail_lo, y + coconet_p.tail_lo,
// CODE-NEXT:                    gamma, (int)(coconet_p.tail / hidden), hidden, eps);
// CODE: ncclAllGather(residual + coconet_p.slice_lo, residual, coconet_p.s, ncclFloat, comm, stream)
// CODE-NEXT: ncclAllGather(out + coconet_p.slice_lo, out, coconet_p.s, ncclFloat, comm, stream)
// CODE:    coconet_softmax_slice<<<coconet_grid_size(coconet_p.s), COCONET_BLOCK_SIZE, 0,
// CODE-NEXT:        stream>>>(scores, bias, cols, coconet_p.slice_lo, coconet_p.slice_hi);
// CODE:      softmax_rows<<<(unsigned)(coconet_p.s / cols), 128, 0, stream>>>(probs + coconet_p.slice_lo,
// CODE-NEXT:          scores + coconet_p.slice_lo, cols);
// CODE:      layernorm<<<(unsigned)(coconet_p.s / h), 64, 0, stream>>>(out + coconet_p.slice_lo,
// CODE-NEXT:          y + coconet_p.slice_lo, w, b, row_scale + coconet_p.slice_lo / h, (int)(coconet_p.s / h),
// CODE-NEXT:          h);
// CODE:      layernorm_stats<<<(unsigned)(coconet_p.s / h), 128, 0, stream>>>(out + coconet_p.slice_lo,
// CODE-NEXT:          mean + coconet_p.slice_lo / h, rstd + coconet_p.slice_lo / h, y + coconet_p.slice_lo, w,
// CODE-NEXT:          b, (int)(coconet_p.s / h), h);
// CODE:    coconet_ln_stats_slice<<<coconet_grid_size(coconet_p.s), COCONET_BLOCK_SIZE, 0, stream>>>(out,
// CODE-NEXT:        rstd, mean, h, coconet_p.slice_lo, coconet_p.slice_hi);
// CODE: const coconet_part coconet_p_2 = coconet_slice(rows, coconet_rank, coconet_nranks);
// CODE-NEXT: ncclAllGather(mean + coconet_p_2.slice_lo, mean, coconet_p_2.s, ncclFloat, comm, stream)
// CODE-NEXT: ncclAllGather(rstd + coconet_p_2.slice_lo, rstd, coconet_p_2.s, ncclFloat, comm, stream)
// CODE-NEXT: ncclAllGather(out + coconet_p.slice_lo, out, coconet_p.s, ncclFloat, comm, stream)
// CODE:      rmsnorm_t<__nv_bfloat16,
// CODE-NEXT:          128><<<(unsigned)(coconet_p.s / dim), 128, 0, stream>>>(out + coconet_p.slice_lo,
// CODE-NEXT:          y + coconet_p.slice_lo, weight, (int)(coconet_p.s / dim), dim, 1e-6f);
// EXPLAIN: - reorder: kernel 'add_rmsnorm' ({{.*}}rowwise.cu:{{[0-9]+}}:5) is row-wise (one block per row of hidden elements, reads of what the slice work writes only in the block's own row): it runs as written on this rank's whole rows of 'y' (and the rows left over) between ReduceScatter and AllGather, which split in rows
// CROSS: rowwise.cu:{{[0-9]+}}:{{[0-9]+}}: error: kernel 'smooth' reads x[(row + 1) % rows * h + j]; a row-wise kernel reads global memory only at [row * H + j] (its block's row, j from a loop `for (j = threadIdx.x; j < H; j += blockDim.x)`), [j] or [row]
// CROSS: note: region 'variant' needs this launch to be row-wise (or pointwise) for its schedule
// ROW_VALUE: error: kernel 'smooth' uses its row index 'row' as a value; a row-wise kernel uses it only to find its row
// GRID_STRIDE: verify variant: output 'out' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// GRID_STRIDE: verify variant: ok
// GRID_STRIDE_CODE:      smooth<<<(unsigned)(coconet_p.s / h), 256, 0, stream>>>(out + coconet_p.slice_lo,
// GRID_STRIDE_CODE-NEXT:          y + coconet_p.slice_lo, (int)(coconet_p.s / h), h);
// GRID_STRIDE_VALUE: error: kernel 'smooth' uses its row index 'blockIdx.x' as a value
// GRID_STRIDE_OUTSIDE: error: kernel 'smooth' writes out[blockIdx.x * h + threadIdx.x]; a row-wise kernel writes global memory only at [row * H + j]
// GRID_STRIDE_STEP: error: kernel 'smooth' reads gridDim.x; a row-wise kernel is one block per row along blockIdx.x, and the schedule changes the grid
// GRID_STRIDE_CARRY: rowwise.cu:[[@LINE-310]]:9: error: kernel 'smooth' writes 'carry' in its grid-stride loop over the rows and reads it there before assigning it: it carries a value from one row to the block's next, and the schedule runs each row in a block of its own; compute it from the row alone
// GRID_STRIDE_SHARED_CARRY: error: kernel 'smooth' writes 'acc' in its grid-stride loop over the rows and reads it there before assigning it
// GRID_STRIDE_NESTED: error: kernel 'smooth' reads gridDim.x; a row-wise kernel is one block per row along blockIdx.x, and the schedule changes the grid
// PER_ROW_OUT: rowwise.cu:{{[0-9]+}}:{{[0-9]+}}: error: kernel 'smooth' writes out[row] and writes out[row * h + j]: one buffer both per row element ([row * H + j]) and per row ([row]); coconet splits a buffer in rows of H elements or of one
// STATS_THREAD1: error: reorder: kernel 'layernorm_stats' updates 'mean' on this rank's slice and its slices are then gathered, but 'mean' at region entry is not known to be identical on every rank
// STATS_ELEMENT: rowwise.cu:{{[0-9]+}}:{{[0-9]+}}: error: reorder: kernel 'rescale_rows' reads mean[i], but kernel 'layernorm_stats' writes 'mean' once per row ([row]): on this rank's rows, [i] is the element of another row; read it at [i / h]
// STATS_OK: verify ln_stats: output 'mean' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// STATS_OK: verify ln_stats: ok
// ATOMIC: error: kernel 'smooth' takes the address of an element of a global buffer (&); coconet cannot follow where it is used
// HALF_GRID: error: kernel 'smooth' is row-wise (one block per row), but the launch's grid 'rows / 2' is not its row count 'rows'; coconet runs one block per row of a slice
// The column loop whose bound is not the row length is named, at its bound:
// COLUMN_BOUND: rowwise.cu:104:33: error: kernel 'add_rmsnorm': the column loop runs to 'hidden - 1', not to the row length 'hidden': a row-wise kernel's column loops run to the row length, a parameter (j < H), so that each row is computed whole
// COLUMN_WRITE: error: kernel 'smooth' reads out[j], outside its block's row, of a buffer it writes (out[row * h + j]): rows would depend on each other
// FUSE: verify variant: ok (the region as written and as scheduled agree within 0 ULP)
// PARTIAL: error: reorder: kernel 'smooth' updates 'out' on this rank's slice and its slices are then gathered, but 'out' at region entry is not known to be identical on every rank
// PARTIAL: note: 'out' at region entry is read here
// PARTIAL_OK: verify variant: output 'out' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// PARTIAL_OK: verify variant: ok
// SQUARE: error: kernel 'smooth' uses 'n' as both its row count and its row length; the schedule passes a slice's row count, which would change the row length too
// MEMBER: error: kernel 'smooth_rows' uses pointer member p.x; a row-wise kernel reaches global memory only through its pointer parameters, whose accesses coconet checks
// STRIDE2: rowwise.cu:{{[0-9]+}}:{{[0-9]+}}: error: kernel 'smooth': the column loop's step 'j += 2 * blockDim.x' is neither blockDim.x nor a positive constant; coconet cannot tell which columns of the row it reaches
// HELPER_ROW: rowwise.cu:{{[0-9]+}}:{{[0-9]+}}: error: kernel 'smooth' uses its row index 'blockIdx.x' as a value
// NARROW: verify variant: output 'out' (u8): max 0 ULP apart over 1..4 ranks x 3 inputs
// NARROW: verify variant: ok (the region as written and as scheduled agree within 0 ULP)
// LAZY: error: reorder: kernel 'smooth' updates 'out' on this rank's slice and its slices are then gathered, but 'out' at region entry is not known to be identical on every rank
// ACCEPTED: verify variant: output 'out' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// ACCEPTED: verify variant: ok
// HALVING: verify add_norm: ok
// SHARED_FILL: verify add_norm: ok
// SHARED_FILL_GLOBAL: error: kernel 'add_rmsnorm' reads x[row * hidden + k]; a row-wise kernel reads global memory only at [row * H + j]
