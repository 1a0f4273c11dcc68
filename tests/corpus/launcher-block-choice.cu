// Style: an inference library's launchers that pick only a block size at run
// time (FasterTransformer's T5 pre-LayerNorm: `dim3 block(min(n, 1024)); if
// (n % 32 != 0) block.x = 1024;`, then one launch). Both paths launch the same
// kernel with the same grid and arguments, so the schedule is for both: its
// launch takes the block the path taken would (`(n % 32 != 0) ? (1024) :
// (min(n, 1024))`), and no path condition is left (the two are each other's
// negation). A pointwise kernel whose block choice its coverage proof cannot
// read as one (`threads` 256 or 512 for one grid) is scheduled for the first
// path alone, which runs when its condition holds.
// RUN: %coconet --verify=3 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --explain --check %s | %FileCheck --check-prefix=EXPLAIN %s
#include <algorithm>
#include <cuda_runtime.h>
#include <nccl.h>

__device__ float block_sum(float v) {
  __shared__ float part[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  return v;
}

__global__ void add_residual_rms(const float *input, const float *gamma, float *output, float *norm_output,
                                 float eps, int m, int n) {
  __shared__ float s_rms;
  float sum = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    output[blockIdx.x * n + i] = input[blockIdx.x * n + i] + output[blockIdx.x * n + i];
    sum += output[blockIdx.x * n + i] * output[blockIdx.x * n + i];
  }
  sum = block_sum(sum);
  if (threadIdx.x == 0) s_rms = rsqrtf(sum / n + eps);
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    norm_output[blockIdx.x * n + i] = output[blockIdx.x * n + i] * s_rms * gamma[i];
}

void invokeAddResidualRms(float *output, float *norm_output, const float *input, const float *gamma, float eps,
                          int m, int n, cudaStream_t stream) {
  dim3 grid(m);
  dim3 block(std::min(n, 1024));
  if (n % 32 != 0) block.x = 1024;
  add_residual_rms<<<grid, block, 0, stream>>>(input, gamma, output, norm_output, eps, m, n);
}

__global__ void scale(float *x, float s, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) x[i] = x[i] * s;
}

void invokeScale(float *x, float s, int n, cudaStream_t stream) {
  int threads = 128;
  if (n > 4096) threads = 256;
  else if (n > 1024) threads = 512;
  scale<<<64, threads, 0, stream>>>(x, s, n);
}

void decoder_step(float *attn_out, float *residual, float *normed, const float *gamma, int tokens, int hidden,
                  ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(t5) split reorder replicated(residual, gamma)
  {
    ncclAllReduce(attn_out, attn_out, (size_t)tokens * hidden, ncclFloat, ncclSum, comm, stream);
    invokeAddResidualRms(residual, normed, attn_out, gamma, 1e-6f, tokens, hidden, stream);
  }
}

void grad_mean(float *g, int n, float inv, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(mean) split reorder
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream);
    invokeScale(g, inv, n, stream);
  }
}

// EXEC: verify t5: ok
// EXEC: verify mean: ok

// CODE: void decoder_step(
// CODE-NOT: coconet_path
// CODE: add_residual_rms<<<(unsigned)(coconet_p.s / hidden),
// CODE-NEXT: ((hidden % 32 != 0)) ? (1024) : (std::min(hidden, 1024)), 0,
// CODE: void grad_mean(
// CODE: const bool coconet_path = (((n > 4096)) || (!(n > 4096) && (n > 1024))) ||
// CODE-NEXT: (!(n > 4096) && !(n > 1024));

// EXPLAIN: explain t5
// EXPLAIN-NOT: picks its kernel at run time
// EXPLAIN: explain mean
