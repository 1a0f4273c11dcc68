// header-fuse.cuh: a project's row kernels kept in a header, in its namespace,
// summing through the block-reduction helper they call unqualified, as
// FasterTransformer keeps its LayerNorm kernels (tests/corpus/header-fuse.cu).
// coconet reads them where they are, copies them into the fused kernel, and
// never rewrites this file.
#pragma once
#include <cuda_runtime.h>

namespace proj {

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
  for (int mask = 16; mask > 0; mask >>= 1) v += __shfl_xor_sync(0xffffffff, v, mask, 32);
  return v;
}

// The block's sum: each warp's, then the warps' through shared slots.
template <typename T>
__device__ __forceinline__ T block_sum(T v) {
  static __shared__ T shared[32];
  int lane = threadIdx.x & 0x1f;
  int wid = threadIdx.x >> 5;
  v = warp_sum<T>(v);
  if (lane == 0) shared[wid] = v;
  __syncthreads();
  v = (threadIdx.x < (blockDim.x / 32.f)) ? shared[lane] : (T)0.0f;
  v = warp_sum<T>(v);
  return v;
}

// out = LayerNorm(out + residual + bias) * gamma + beta, one block per row of n.
__global__ void add_bias_residual_layernorm(float *out, const float *residual, const float *bias,
                                            const float *gamma, const float *beta, float eps, int m, int n) {
  __shared__ float s_mean;
  __shared__ float s_variance;
  float mean = 0.0f;
  float variance = 0.0f;
  for (int idx = threadIdx.x; idx < n; idx += blockDim.x) {
    float v = out[blockIdx.x * n + idx] + residual[blockIdx.x * n + idx] + __ldg(&bias[idx]);
    mean += v;
    out[blockIdx.x * n + idx] = v;
  }
  mean = block_sum<float>(mean);
  if (threadIdx.x == 0) s_mean = mean / n;
  __syncthreads();
  for (int idx = threadIdx.x; idx < n; idx += blockDim.x) {
    float d = out[blockIdx.x * n + idx] - s_mean;
    variance += d * d;
  }
  variance = block_sum<float>(variance);
  if (threadIdx.x == 0) s_variance = rsqrtf(variance / n + eps);
  __syncthreads();
  for (int idx = threadIdx.x; idx < n; idx += blockDim.x)
    out[blockIdx.x * n + idx] =
        (out[blockIdx.x * n + idx] - s_mean) * s_variance * __ldg(&gamma[idx]) + __ldg(&beta[idx]);
}

}  // namespace proj

// The epsilon, a macro the header drops at its end under -DUNDEF_AFTER (as
// X-macro headers do).
#define RMS_EPS 1e-6f

// RMSNorm of the row, at global scope.
__global__ void rms_rows(float *x, const float *weight, int rows, int hidden) {
  int row = blockIdx.x;
  if (row >= rows) return;
  float s = 0.0f;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) s += x[row * hidden + j] * x[row * hidden + j];
#if defined(WHERE)
  s += 0.0f * __LINE__;
#endif
  s = proj::block_sum<float>(s);
  __shared__ float r;
  if (threadIdx.x == 0) r = rsqrtf(s / hidden + RMS_EPS);
  __syncthreads();
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) x[row * hidden + j] *= r * weight[j];
}

#if defined(UNDEF_AFTER)
#undef RMS_EPS
#endif
