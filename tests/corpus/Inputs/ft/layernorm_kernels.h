// layernorm_kernels.h: add bias + residual, then LayerNorm, one block per token
// (tests/corpus/ft-layernorm.cu); the block's sums through shared memory, in the
// style of an inference library's kernels.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace fastertransformer {

template <typename T>
__device__ __forceinline__ T blockReduceSum(T val) {
  static __shared__ T shared[32];
  int lane = threadIdx.x & 0x1f;
  int wid = threadIdx.x >> 5;
  for (int mask = 16; mask > 0; mask >>= 1) val += __shfl_xor_sync(0xffffffff, val, mask, 32);
  if (lane == 0) shared[wid] = val;
  __syncthreads();
  val = (threadIdx.x < (blockDim.x / 32.f)) ? shared[lane] : (T)(0.0f);
  for (int mask = 16; mask > 0; mask >>= 1) val += __shfl_xor_sync(0xffffffff, val, mask, 32);
  return val;
}

template <typename T>
__global__ void addBiasResidualPostLayerNorm(T *out, const T *input, const T *bias, const T *gamma, const T *beta,
                                             const float layernorm_eps, int m, int n) {
  __shared__ float s_mean;
  __shared__ float s_variance;
  float mean = 0.0f;
  float variance = 0.0f;
  float local_out = 0.0f;
  for (int idx = threadIdx.x; idx < n; idx += blockDim.x) {
    local_out += (float)(out[blockIdx.x * n + idx] + input[blockIdx.x * n + idx] + bias[idx]);
  }
  mean = blockReduceSum<float>(local_out);
  if (threadIdx.x == 0) s_mean = mean / n;
  __syncthreads();
  for (int idx = threadIdx.x; idx < n; idx += blockDim.x) {
    float diff = (float)(out[blockIdx.x * n + idx] + input[blockIdx.x * n + idx] + bias[idx]) - s_mean;
    variance += diff * diff;
  }
  variance = blockReduceSum<float>(variance);
  if (threadIdx.x == 0) s_variance = rsqrtf(variance / n + layernorm_eps);
  __syncthreads();
  for (int idx = threadIdx.x; idx < n; idx += blockDim.x) {
    float v = (float)(out[blockIdx.x * n + idx] + input[blockIdx.x * n + idx] + bias[idx]);
    out[blockIdx.x * n + idx] = (T)(((v - s_mean) * s_variance) * (float)gamma[idx] + (float)beta[idx]);
  }
}

template <typename T>
void invokeAddBiasResidualLayerNorm(T *out, const T *input, const T *bias, const T *gamma, const T *beta,
                                    const float layernorm_eps, int m, int n, cudaStream_t stream) {
  dim3 grid(m);
  dim3 block(std::min(n, 1024));
  addBiasResidualPostLayerNorm<T><<<grid, block, 0, stream>>>(out, input, bias, gamma, beta, layernorm_eps, m, n);
}

}  // namespace fastertransformer
