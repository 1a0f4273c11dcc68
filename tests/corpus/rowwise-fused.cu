// Style: row-wise kernels as inference engines and trainers write them, each
// after its AllReduce with `split reorder fuse`, so that the AllReduce, the
// kernel and the AllGathers become one kernel on NCCL's device API: a vLLM-style
// fused residual + RMSNorm template in a namespace (its input read with __ldg
// through a const __restrict__ pointer, a block reduction helper), a
// grid-stride softmax over rows with dynamic shared memory and launch bounds, a
// LayerNorm with a warp per row that saves mean and rstd (cooperative groups),
// a bf16 RMSNorm with cub::BlockReduce, and a reference kernel with a thread
// per row; -DWITH_BIAS adds an elementwise bias kernel before the softmax.
// --verify runs each fused kernel (the harness's buffers are symmetric) at
// 1..4 ranks, then the NCCL path, against the region as written.
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --target=host %s | %FileCheck --check-prefix=HOST %s
// RUN: %expect 1 %coconet --check %s -- -DMACRO_LDG 2>&1 | %FileCheck --check-prefix=MACRO_LDG %s
// RUN: %coconet --verify=4 %s -- -DWITH_BIAS | %FileCheck --check-prefix=WITH_BIAS %s
// RUN: %coconet %s -- -DWITH_BIAS | %FileCheck --check-prefix=WITH_BIAS_CODE %s
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cub/cub.cuh>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

namespace cg = cooperative_groups;

#if defined(MACRO_LDG)
#define LOAD(p) __ldg(p)
#else
#define LOAD(p) __ldcg(p)
#endif

namespace engine {

template <typename T>
__device__ __forceinline__ T warp_reduce(T v) {
#pragma unroll
  for (int mask = 16; mask > 0; mask >>= 1) v += __shfl_xor_sync(0xffffffff, v, mask);
  return v;
}

// The sum over the block, in every thread.
template <typename T>
__device__ __forceinline__ T block_reduce(T v) {
  __shared__ T shared[32];
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  v = warp_reduce(v);
  if (lane == 0) shared[wid] = v;
  __syncthreads();
  v = threadIdx.x < (blockDim.x >> 5) ? shared[lane] : (T)0.0f;
  v = warp_reduce(v);
  return v;
}

// residual += input; input = rmsnorm(residual) * weight (vLLM's fused_add_rms_norm, in place).
template <typename scalar_t>
__global__ void fused_add_rms_norm(scalar_t *__restrict__ input, scalar_t *__restrict__ residual,
                                   const scalar_t *__restrict__ weight, const float epsilon, const int num_tokens,
                                   const int hidden_size) {
  __shared__ float s_variance;
  float variance = 0.0f;
  for (int idx = threadIdx.x; idx < hidden_size; idx += blockDim.x) {
    float x = (float)__ldg(&input[blockIdx.x * hidden_size + idx]);
    x += (float)LOAD(&residual[blockIdx.x * hidden_size + idx]);
    variance += x * x;
    residual[blockIdx.x * hidden_size + idx] = (scalar_t)x;
  }
  variance = block_reduce<float>(variance);
  if (threadIdx.x == 0) s_variance = rsqrtf(variance / hidden_size + epsilon);
  __syncthreads();
  for (int idx = threadIdx.x; idx < hidden_size; idx += blockDim.x) {
    float x = (float)residual[blockIdx.x * hidden_size + idx];
    input[blockIdx.x * hidden_size + idx] = ((scalar_t)(x * s_variance)) * weight[idx];
  }
}

}  // namespace engine

// Softmax over rows, a grid-stride loop over them, the block's partial maxima and sums in dynamic shared memory.
__global__ void __launch_bounds__(128) softmax_grid(float *out, const float *logits, int rows, int cols) {
  extern __shared__ float red[];
  for (int row = blockIdx.x; row < rows; row += gridDim.x) {
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, logits[(size_t)row * cols + c]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if ((int)threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
      __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += __expf(logits[(size_t)row * cols + c] - m);
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if ((int)threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
      __syncthreads();
    }
    sum = red[0];
    __syncthreads();
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
      out[(size_t)row * cols + c] = __expf(logits[(size_t)row * cols + c] - m) / sum;
  }
}

// LayerNorm forward with a warp per row (GPT-2 trainers' kernel): mean and rstd saved for the backward pass.
__global__ void layernorm_forward(float *__restrict__ out, float *__restrict__ mean, float *__restrict__ rstd,
                                  const float *__restrict__ inp, const float *__restrict__ weight,
                                  const float *__restrict__ bias, int N, int C) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int idx = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
  if (idx >= N) return;
  const float *x = inp + idx * C;
  float sum = 0.0f;
  for (int i = warp.thread_rank(); i < C; i += warp.size()) sum += x[i];
  sum = cg::reduce(warp, sum, cg::plus<float>{});
  float m = sum / C;
  if (warp.thread_rank() == 0) __stcs(mean + idx, m);
  sum = 0.0f;
  for (int i = warp.thread_rank(); i < C; i += warp.size()) {
    float diff = x[i] - m;
    sum += diff * diff;
  }
  sum = cg::reduce(warp, sum, cg::plus<float>{});
  float s = rsqrtf(sum / C + 1e-5f);
  if (warp.thread_rank() == 0) __stcs(rstd + idx, s);
  float *o = out + idx * C;
  for (int c = warp.thread_rank(); c < C; c += warp.size()) {
    float n = s * (__ldcs(x + c) - m);
    __stcs(o + c, n * weight[c] + bias[c]);
  }
}

// bf16 RMSNorm, the sum of squares through CUB's block reduction.
template <int BLOCK>
__global__ void rmsnorm_bf16(__nv_bfloat16 *out, const __nv_bfloat16 *x, const __nv_bfloat16 *w, int rows, int h,
                             float eps) {
  typedef cub::BlockReduce<float, BLOCK> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  __shared__ float inv;
  const int row = blockIdx.x;
  if (row >= rows) return;
  float ss = 0.0f;
  for (int j = threadIdx.x; j < h; j += BLOCK) {
    float v = __bfloat162float(x[(size_t)row * h + j]);
    ss += v * v;
  }
  float total = Reduce(tmp).Sum(ss);
  if (threadIdx.x == 0) inv = rsqrtf(total / h + eps);
  __syncthreads();
  for (int j = threadIdx.x; j < h; j += BLOCK)
    out[(size_t)row * h + j] = __float2bfloat16(__bfloat162float(x[(size_t)row * h + j]) * inv *
                                                __bfloat162float(w[j]));
}

// A reference kernel: one thread per row.
__global__ void rownorm_thread(float *out, const float *inp, int N, int C) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < N) {
    const float *x = inp + idx * C;
    float m = 0.0f;
    for (int i = 0; i < C; i++) m = fmaxf(m, fabsf(x[i]));
    float *o = out + idx * C;
    for (int i = 0; i < C; i++) o[i] = x[i] / (m + 1.0f);
  }
}

__global__ void add_bias(float *y, const float *bias, int n, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += bias[i % cols];
}

void engine_step(float *hidden_states, float *residual, const float *weight, float *logits, float *probs,
                 float *ln_in, float *ln_out, float *mean, float *rstd, const float *lw, const float *lb,
                 __nv_bfloat16 *xb, __nv_bfloat16 *ob, const __nv_bfloat16 *wb, float *t_in, float *t_out,
                 const float *bias, int tokens, int hidden, int vocab, int C, ncclComm_t comm, cudaStream_t stream) {
#if !defined(WITH_BIAS)
  (void)bias;
#endif
#pragma coconet region name(add_norm) split reorder replicated(residual, weight) fuse
  {
    ncclAllReduce(hidden_states, hidden_states, (size_t)tokens * hidden, ncclFloat, ncclSum, comm, stream);
    engine::fused_add_rms_norm<float><<<tokens, 256, 0, stream>>>(hidden_states, residual, weight, 1e-6f, tokens,
                                                                   hidden);
  }
#if defined(WITH_BIAS)
#pragma coconet region name(softmax) split reorder scratch(logits) replicated(bias) fuse
#else
#pragma coconet region name(softmax) split reorder scratch(logits) fuse
#endif
  {
    ncclAllReduce(logits, logits, (size_t)tokens * vocab, ncclFloat, ncclSum, comm, stream);
#if defined(WITH_BIAS)
    add_bias<<<(tokens * vocab + 255) / 256, 256, 0, stream>>>(logits, bias, tokens * vocab, vocab);
#endif
    softmax_grid<<<3, 128, 128 * sizeof(float), stream>>>(probs, logits, tokens, vocab);
  }
#pragma coconet region name(layernorm) split reorder replicated(lw, lb) scratch(ln_in) fuse
  {
    ncclAllReduce(ln_in, ln_in, tokens * C, ncclFloat, ncclSum, comm, stream);
    layernorm_forward<<<(tokens * 32 + 127) / 128, 128, 0, stream>>>(ln_out, mean, rstd, ln_in, lw, lb, tokens, C);
  }
#pragma coconet region name(rms_bf16) split reorder replicated(wb) scratch(xb) fuse
  {
    ncclAllReduce(xb, xb, (size_t)tokens * hidden, ncclBfloat16, ncclSum, comm, stream);
    rmsnorm_bf16<128><<<tokens, 128, 0, stream>>>(ob, xb, wb, tokens, hidden, 1e-5f);
  }
#pragma coconet region name(rownorm) split reorder scratch(t_in) fuse
  {
    ncclAllReduce(t_in, t_in, tokens * C, ncclFloat, ncclSum, comm, stream);
    rownorm_thread<<<(tokens + 63) / 64, 64, 0, stream>>>(t_out, t_in, tokens, C);
  }
}

// EXEC: verify add_norm: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify softmax: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify layernorm: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify rms_bf16: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify rownorm: ok (the region as written and as scheduled agree within 0 ULP)

// The template in its namespace, copied as a template: __ldg coherent, the reduced buffer's __restrict__ dropped.
// CODE: // coconet: begin generated code for region add_norm
// CODE: namespace engine {
// CODE-NEXT: template <typename scalar_t>
// CODE-NEXT: __device__ __forceinline__ void coconet_add_norm_fused_add_rms_norm(scalar_t *input,
// CODE-NEXT:     scalar_t *__restrict__ residual, const scalar_t *__restrict__ weight, const float epsilon,
// CODE-NEXT:     const int num_tokens, const int hidden_size, {{\[\[}}maybe_unused{{\]\]}} const uint3 blockIdx,
// CODE-NEXT:     {{\[\[}}maybe_unused{{\]\]}} const dim3 gridDim)
// CODE: float x = (float)coconet_ld(&input[blockIdx.x * hidden_size + idx]);
// CODE: }  // namespace engine
// CODE: __global__ void coconet_add_norm_fused(ncclDevComm coconet_dev, ncclWindow_t coconet_hidden_states_win, size_t coconet_hidden_states_off, ncclWindow_t coconet_residual_win, size_t coconet_residual_off, float *input, float *residual, const float *weight, float epsilon, int hidden_size, size_t coconet_h, size_t coconet_lo, size_t coconet_hi, size_t coconet_tail_lo, size_t coconet_tail_hi)
// CODE:    coconet_reduce_span<COCONET_SUM>(coconet_hidden_states_win, coconet_hidden_states_off,
// CODE-NEXT:                                     coconet_dev.lsaSize, input, coconet_e0, coconet_e1);
// CODE-NEXT: __syncthreads();
// CODE-NEXT: engine::coconet_add_norm_fused_add_rms_norm<float>(input + coconet_lo, residual + coconet_lo, weight, epsilon, (int)coconet_rows, hidden_size, make_uint3((unsigned)coconet_v, 0, 0), dim3((unsigned)coconet_rows));
// CODE-NEXT: __syncthreads();
// CODE-NEXT:    coconet_gather_span(coconet_dev, coconet_residual_win, coconet_residual_off, residual,
// CODE-NEXT:                        coconet_e0, coconet_e1);
// CODE-NEXT:    coconet_gather_span(coconet_dev, coconet_hidden_states_win, coconet_hidden_states_off, input,
// CODE-NEXT:                        coconet_e0, coconet_e1);
// CODE: coconet_reduce_span_shared<COCONET_SUM>(coconet_bar, coconet_hidden_states_win
// The grid-stride kernel: its launch bounds, its launch's dynamic shared memory, the grid from this rank's rows.
// CODE: __global__ void __launch_bounds__(128) coconet_softmax_fused(
// CODE: coconet_fused_shared((const void *)coconet_softmax_fused, 128 * sizeof(float));
// CODE-NEXT: coconet_softmax_fused<<<coconet_fused_rows_grid(coconet_p.s / vocab, coconet_p.tail / vocab, 1), 128, 128 * sizeof(float), stream>>>(
// A warp per row: the rows a block runs, the per-row outputs gathered by rows.
// CODE: const size_t coconet_per_block = blockDim.x / 32;
// CODE:    coconet_gather_span(coconet_dev, coconet_mean_win, coconet_mean_off, mean,
// CODE-NEXT:                        coconet_e0 / coconet_h, coconet_e1 / coconet_h);
// CODE: coconet_layernorm_fused<<<coconet_fused_rows_grid(coconet_p.s / C, coconet_p.tail / C, (128) / 32), 128, 0, stream>>>(
// CODE: __device__ __forceinline__ void coconet_rms_bf16_rmsnorm_bf16(__nv_bfloat16 *out, const __nv_bfloat16 *x, const __nv_bfloat16 *w
// CODE: coconet_rms_bf16_rmsnorm_bf16<128>(out + coconet_lo
// CODE: const size_t coconet_per_block = blockDim.x / 1;

// --target=host lowers the copy's dynamic shared memory as it lowers the kernel's.
// HOST: __device__ __forceinline__ void coconet_softmax_softmax_grid(
// HOST-NEXT: int rows, int cols, {{\[\[}}maybe_unused{{\]\]}} const uint3 blockIdx, {{\[\[}}maybe_unused{{\]\]}} const dim3 gridDim)
// HOST-NEXT: {
// HOST-NEXT: float *red = (float *)coconet_host_dynamic_shared();
// HOST: coconet_host_launch(COCONET_HOST_SYNC, coconet_softmax_fused, coconet_fused_rows_grid(

// MACRO_LDG: rowwise-fused.cu:64:17: error: fuse: kernel 'engine::fused_add_rms_norm' calls __ldg through a macro; the fused kernel's copy of the kernel turns __ldg into a coherent load (the read-only cache does not see the rows the fused kernel writes) where it is written in the kernel: call __ldg there, or drop fuse
// An elementwise kernel before the row-wise one: its generated kernel's _block function runs on the block's rows.
// WITH_BIAS: verify softmax: ok (the region as written and as scheduled agree within 0 ULP)
// WITH_BIAS_CODE: __device__ __forceinline__ void coconet_softmax_slice_block(float *logits, const float *bias,
// WITH_BIAS_CODE-NEXT:     size_t vocab, size_t lo, size_t hi)
// WITH_BIAS_CODE-NEXT: {
// WITH_BIAS_CODE-NEXT: for (size_t i = lo + coconet_thread_rank(); i < hi; i += coconet_block_threads())
// WITH_BIAS_CODE-NEXT: coconet_softmax_slice_elem(i, logits[i], bias, vocab);
// WITH_BIAS_CODE:    coconet_reduce_span<COCONET_SUM>(coconet_logits_win, coconet_logits_off, coconet_dev.lsaSize,
// WITH_BIAS_CODE-NEXT:                                     logits, coconet_e0, coconet_e1);
// WITH_BIAS_CODE-NEXT: __syncthreads();
// WITH_BIAS_CODE-NEXT: coconet_softmax_slice_block(logits, bias, vocab, coconet_e0, coconet_e1);
// WITH_BIAS_CODE-NEXT: __syncthreads();
// WITH_BIAS_CODE-NEXT: coconet_softmax_softmax_grid(out + coconet_lo, logits_2 + coconet_lo
