// Style: row-wise kernels that give a row to one warp or to one thread, the
// way GPT-2 trainers write LayerNorm when the hidden size is small: the warp's
// row from blockIdx.x * (blockDim.x / WARP_SIZE) + threadIdx.x / WARP_SIZE,
// columns from the lane, the row reduced with shuffles in a helper, mean and
// rstd stored by lane 0 through __stcs when the caller passed a buffer, the
// output through __stcs / __ldcs; and the reference kernel with one thread per
// row walking its columns from 0. Both launch ceil(rows / rows-per-block)
// blocks and stop the extra warps (threads) at the rows test. `split reorder`
// runs each on this rank's whole rows with blocks enough for them; the
// generated code checks that the launch as written reaches every row and that
// the null-tested buffers are there. Each -D variant is a kernel coconet must
// refuse, with its reason, except LANE_STEP and CEIL_GRID (the grid through the
// trainer's CEIL_DIV(rows * WARP_SIZE, 128) macro), which it must translate.
//
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %expect 1 %coconet --check %s -- -DSHARED 2>&1 | %FileCheck --check-prefix=SHARED %s
// RUN: %expect 1 %coconet --check %s -- -DSYNC 2>&1 | %FileCheck --check-prefix=SYNC %s
// RUN: %expect 1 %coconet --check %s -- -DWARP_VALUE 2>&1 | %FileCheck --check-prefix=WARP_VALUE %s
// RUN: %expect 1 %coconet --check %s -- -DTHREAD_VALUE 2>&1 | %FileCheck --check-prefix=THREAD_VALUE %s
// RUN: %expect 1 %coconet --check %s -- -DUNGUARDED 2>&1 | %FileCheck --check-prefix=UNGUARDED %s
// RUN: %expect 1 %coconet --check %s -- -DBACKWARD_TEST 2>&1 | %FileCheck --check-prefix=UNGUARDED %s
// RUN: %expect 1 %coconet --check %s -- -DNO_TEST 2>&1 | %FileCheck --check-prefix=NO_TEST %s
// RUN: %expect 1 %coconet --check %s -- -DSHUFFLE 2>&1 | %FileCheck --check-prefix=SHUFFLE %s
// RUN: %expect 1 %coconet --check %s -- -DPART_WARP 2>&1 | %FileCheck --check-prefix=PART_WARP %s
// RUN: %expect 1 %coconet --check %s -- -DDIM3 2>&1 | %FileCheck --check-prefix=DIM3 %s
// RUN: %expect 1 %coconet --check %s -- -DBLOCK_RANK 2>&1 | %FileCheck --check-prefix=BLOCK_RANK %s
// RUN: %coconet --verify=4 %s -- -DLANE_STEP | %FileCheck --check-prefix=LANE_STEP %s
// RUN: %coconet --verify=4 %s -- -DCEIL_GRID | %FileCheck --check-prefix=CEIL_GRID %s

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>
#include <nccl.h>

namespace cg = cooperative_groups;

#define WARP_SIZE 32
#define CEIL_DIV(m, n) (((m) + (n) - 1) / (n))

__device__ float warp_reduce_sum(float v) {
  for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffff, v, offset);
  return v;
}

// One warp per row.
__global__ void layernorm_warp(float *__restrict__ out, float *__restrict__ mean, float *__restrict__ rstd,
                               const float *__restrict__ inp, const float *__restrict__ weight,
                               const float *__restrict__ bias, int N, int C) {
#if defined(SHARED)
  __shared__ float scratch[WARP_SIZE];
#endif
  int lane_id = threadIdx.x % WARP_SIZE;
  int warp_id = threadIdx.x / WARP_SIZE;
  int num_warps = blockDim.x / WARP_SIZE;
  int idx = blockIdx.x * num_warps + warp_id;
#if defined(UNGUARDED)
  float first = 0.0f;  // read before the test: a part's warps past its rows would read other rows
  for (int i = lane_id; i < C; i += WARP_SIZE) first += inp[idx * C + i];
#elif defined(BACKWARD_TEST)
  if (idx < N) return;  // the wrong way round: the warps past the rows go on
  float first = 0.0f;
#else
  if (idx >= N) return;
  float first = 0.0f;
#endif
  const float *x = inp + idx * C;
  float sum = 0.0f;
#if defined(LANE_STEP)
  for (int i = lane_id; i < C; i += 64) sum += x[i];  // a constant step that may skip columns: kept as written
#else
  for (int i = lane_id; i < C; i += WARP_SIZE) sum += x[i];
#endif
  sum = warp_reduce_sum(sum);
#if defined(SYNC)
  __syncthreads();
#endif
  float m = sum / C + 0.0f * first;
  if (lane_id == 0 && mean != nullptr) __stcs(mean + idx, m);
  sum = 0.0f;
  for (int i = lane_id; i < C; i += WARP_SIZE) {
    float d = x[i] - m;
    sum += d * d;
  }
  sum = warp_reduce_sum(sum);
  float s = rsqrtf(sum / C + 1e-5f);
  if (lane_id == 0 && rstd != nullptr) __stcs(rstd + idx, s);
  float *o = out + idx * C;
  for (int c = lane_id; c < C; c += WARP_SIZE) {
    float n = s * (__ldcs(x + c) - m);
#if defined(WARP_VALUE)
    n += 1e-3f * warp_id;  // which warp of its block a row is on changes with the slice
#endif
    __stcs(o + c, n * weight[c] + bias[c]);
  }
}

// One thread per row, the columns walked from 0.
__global__ void layernorm_thread(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                                 const float *bias, int N, int C) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
#if defined(NO_TEST)
  {
#else
  if (idx < N) {
#endif
    const float *x = inp + idx * C;
    float m = 0.0f;
    for (int i = 0; i < C; i++) m += x[i];
    m = m / C;
#if defined(SHUFFLE)
    m = __shfl_sync(0xffffffff, m, 0);  // another thread's row
#endif
    float v = 0.0f;
    for (int i = 0; i < C; i++) {
      float d = x[i] - m;
      v += d * d;
    }
    float s = 1.0f / sqrtf(v / C + 1e-5f);
#if defined(THREAD_VALUE)
    s *= 1.0f + (threadIdx.x & 1);  // the thread's place in its block moves with the slice
#endif
    float *out_idx = out + idx * C;
    for (int i = 0; i < C; i++) out_idx[i] = s * (x[i] - m) * weight[i] + bias[i];
    mean[idx] = m;
    rstd[idx] = s;
  }
}

// One warp per row through cooperative groups: a tile of 32 threads.
__global__ void rmsnorm_tile(float *out, const float *inp, const float *weight, int N, int C) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int idx = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
  if (idx >= N) return;
  const float *x = inp + idx * C;
  float ss = 0.0f;
  for (int i = warp.thread_rank(); i < C; i += warp.size()) ss += x[i] * x[i];
  ss = cg::reduce(warp, ss, cg::plus<float>{});
  float s = rsqrtf(ss / C + 1e-6f);
#if defined(BLOCK_RANK)
  s += 1e-3f * block.thread_rank();  // the thread's rank in its block moves with the slice
#endif
  for (int i = warp.thread_rank(); i < C; i += warp.size()) out[idx * C + i] = x[i] * s * weight[i];
}

void ln_warp(float *y, float *out, float *mean, float *rstd, const float *w, const float *b, int rows, int h,
             ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(ln_warp) split reorder replicated(w, b) scratch(y)
  {
    ncclAllReduce(y, y, rows * h, ncclFloat, ncclSum, comm, stream);
#if defined(PART_WARP)
    layernorm_warp<<<(rows * WARP_SIZE + 47) / 48, 48, 0, stream>>>(out, mean, rstd, y, w, b, rows, h);
#elif defined(DIM3)
    layernorm_warp<<<(rows + 3) / 4, dim3(128, 1), 0, stream>>>(out, mean, rstd, y, w, b, rows, h);
#elif defined(CEIL_GRID)
    layernorm_warp<<<CEIL_DIV(rows * WARP_SIZE, 128), 128, 0, stream>>>(out, mean, rstd, y, w, b, rows, h);
#else
    layernorm_warp<<<(rows * WARP_SIZE + 127) / 128, 128, 0, stream>>>(out, mean, rstd, y, w, b, rows, h);
#endif
  }
}

void rms_tile(float *y, float *out, const float *w, int rows, int h, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(rms_tile) split reorder replicated(w) scratch(y)
  {
    ncclAllReduce(y, y, rows * h, ncclFloat, ncclSum, comm, stream);
    rmsnorm_tile<<<(rows + 7) / 8, 256, 0, stream>>>(out, y, w, rows, h);
  }
}

void ln_thread(float *y, float *out, float *mean, float *rstd, const float *w, const float *b, int rows, int h,
               ncclComm_t comm, cudaStream_t stream) {
  const int block = 64;
#pragma coconet region name(ln_thread) split reorder replicated(w, b) scratch(y)
  {
    ncclAllReduce(y, y, rows * h, ncclFloat, ncclSum, comm, stream);
    layernorm_thread<<<(rows + block - 1) / block, block, 0, stream>>>(out, mean, rstd, y, w, b, rows, h);
  }
}

// IR: verify=ir ln_warp: output 'mean' (f32): max relative error 0 over 1..4 ranks x 3 inputs
// IR: verify=ir ln_warp: output 'rstd' (f32): max relative error 0 over 1..4 ranks x 3 inputs
// IR: verify=ir ln_warp: output 'out' (f32): max relative error 0 over 1..4 ranks x 3 inputs
// IR: verify=ir ln_warp: ok
// IR: verify=ir rms_tile: ok
// IR: verify=ir ln_thread: ok
// EXEC: verify ln_warp: output 'mean' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify ln_warp: output 'rstd' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify ln_warp: output 'out' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify ln_warp: ok
// EXEC: verify rms_tile: output 'out' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify rms_tile: ok
// EXEC: verify ln_thread: output 'mean' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify ln_thread: ok
// CODE: coconet_require_buffer(mean, "mean", __FILE__, __LINE__);
// CODE-NEXT: coconet_require_buffer(rstd, "rstd", __FILE__, __LINE__);
// CODE-NEXT:    coconet_check_rows((rows * WARP_SIZE + 127) / 128, 128, 32, rows, "layernorm_warp", __FILE__,
// CODE-NEXT:                       __LINE__);
// CODE-NEXT: if (coconet_p.s > 0) {
// CODE-NEXT:      layernorm_warp<<<coconet_rows_grid(coconet_p.s / h, 128, 32), 128, 0,
// CODE-NEXT:          stream>>>(out + coconet_p.slice_lo, mean + coconet_p.slice_lo / h,
// CODE-NEXT:                    rstd + coconet_p.slice_lo / h, y + coconet_p.slice_lo, w, b,
// CODE-NEXT:                    (int)(coconet_p.s / h), h);
// CODE: layernorm_warp<<<coconet_rows_grid(coconet_p.tail / h, 128, 32), 128, 0, stream>>>(out + coconet_p.tail_lo,
// CODE: coconet_check_rows((rows + 7) / 8, 256, 32, rows, "rmsnorm_tile", __FILE__, __LINE__);
// CODE-NEXT: if (coconet_p.s > 0) {
// CODE-NEXT:      rmsnorm_tile<<<coconet_rows_grid(coconet_p.s / h, 256, 32), 256, 0,
// CODE-NEXT:          stream>>>(out + coconet_p.slice_lo, y + coconet_p.slice_lo, w, (int)(coconet_p.s / h), h);
// CODE:    coconet_check_rows((rows + block - 1) / block, block, 1, rows, "layernorm_thread", __FILE__,
// CODE-NEXT:                       __LINE__);
// CODE-NEXT: if (coconet_p.s > 0) {
// CODE-NEXT:      layernorm_thread<<<coconet_rows_grid(coconet_p.s / h, block, 1), block, 0,
// CODE-NEXT:          stream>>>(out + coconet_p.slice_lo, mean + coconet_p.slice_lo / h,
// CODE-NEXT:                    rstd + coconet_p.slice_lo / h, y + coconet_p.slice_lo, w, b,
// CODE-NEXT:                    (int)(coconet_p.s / h), h);
// SHARED: rowwise-warps.cu:{{[0-9]+}}:{{[0-9]+}}: error: kernel 'layernorm_warp' runs one warp per row and declares shared memory 'scratch', which the rows of a block share
// SYNC: error: kernel 'layernorm_warp' runs one warp per row and calls __syncthreads(), through which the warps of a block meet
// WARP_VALUE: error: kernel 'layernorm_warp' uses 'warp_id', which depends on where its row runs; with one warp per row the schedule runs the kernel on a part of the rows, where a row's warp sits elsewhere in the grid (the lane threadIdx.x % 32 and blockDim.x may be used)
// THREAD_VALUE: error: kernel 'layernorm_thread' uses 'threadIdx.x', which depends on where its row runs
// UNGUARDED: error: kernel 'layernorm_warp' reaches {{.*}} before it tests its row against the row count; with one warp per row coconet launches blocks enough for a slice's rows
// NO_TEST: error: kernel 'layernorm_thread' reaches x[i] before it tests its row against the row count; with one thread per row
// SHUFFLE: error: kernel 'layernorm_thread' runs one thread per row and calls __shfl_sync(), through which threads of a warp exchange values
// PART_WARP: error: kernel 'layernorm_warp' runs one warp per row with blocks of 48 threads, not whole warps
// DIM3: error: kernel 'layernorm_warp' runs one warp per row, but the launch's block 'dim3(128, 1)' is not a number of threads
// LANE_STEP: verify ln_warp: ok
// CEIL_GRID: verify ln_warp: ok
// BLOCK_RANK: error: kernel 'rmsnorm_tile' uses 'block.thread_rank()', which depends on where its row runs
