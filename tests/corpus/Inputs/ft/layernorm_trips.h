// layernorm_trips.h: add bias + residual + LayerNorm with the kernel picked by how
// many trips through the block a row takes (tests/corpus/ft-layernorm-trips.cu), in
// the style of an inference library's fp16 launchers: a row one block covers in one or
// two trips keeps its values in registers (a kernel per trip count); a longer one goes
// to the general kernel, which reads the fp16 rows a half2 at a time. The block is
// min(n, 1024) threads, and every kernel sums with full-warp shuffles
// (blockReduceSum): the program runs only with rows of whole warps below 1024.
#pragma once
#include <algorithm>

#include "layernorm_kernels.h"

namespace fastertransformer {

template <typename T>
struct TypeConverter;
template <>
struct TypeConverter<half> {
  using Type = half2;
};

template <typename T, int N>
__global__ void addBiasResidualPostLayerNormTrips(T *out, const T *input, const T *bias, const T *gamma,
                                                  const T *beta, const float layernorm_eps, int m, int n) {
  __shared__ float s_mean;
  __shared__ float s_variance;
  float cache[N];
  float sum = 0.0f;
  for (int idx = threadIdx.x, i = 0; idx < n && i < N; ++i, idx += blockDim.x) {
    cache[i] = (float)(out[blockIdx.x * n + idx] + input[blockIdx.x * n + idx] + bias[idx]);
    sum += cache[i];
  }
  float mean = blockReduceSum<float>(sum);
  if (threadIdx.x == 0) s_mean = mean / n;
  __syncthreads();
  float squares = 0.0f;
  for (int idx = threadIdx.x, i = 0; idx < n && i < N; ++i, idx += blockDim.x)
    squares += (cache[i] - s_mean) * (cache[i] - s_mean);
  float variance = blockReduceSum<float>(squares);
  if (threadIdx.x == 0) s_variance = rsqrtf(variance / n + layernorm_eps);
  __syncthreads();
  for (int idx = threadIdx.x, i = 0; idx < n && i < N; ++i, idx += blockDim.x)
    out[blockIdx.x * n + idx] = (T)((cache[i] - s_mean) * s_variance * (float)gamma[idx] + (float)beta[idx]);
}

template <typename T>
__global__ void generalAddBiasResidualPostLayerNorm(T *out, const T *input, const T *bias, const T *gamma,
                                                    const T *beta, const float layernorm_eps, int m, int n) {
  using T2 = typename TypeConverter<T>::Type;
  __shared__ float s_mean;
  __shared__ float s_variance;
  T2 *out_ptr = (T2 *)out;
  const T2 *input_ptr = (const T2 *)input;
  const T2 *bias_ptr = (const T2 *)bias;
  const T2 *gamma_ptr = (const T2 *)gamma;
  const T2 *beta_ptr = (const T2 *)beta;
  float local_out = 0.0f;
  for (int idx = threadIdx.x; idx < n / 2; idx += blockDim.x) {
    int id = blockIdx.x * n / 2 + idx;
    T2 tmp = __hadd2(__hadd2(out_ptr[id], input_ptr[id]), bias_ptr[idx]);
    float2 f = __half22float2(tmp);
    local_out += f.x + f.y;
    out_ptr[id] = tmp;
  }
  float mean = blockReduceSum<float>(local_out);
  if (threadIdx.x == 0) s_mean = mean / n;
  __syncthreads();
  float variance = 0.0f;
  for (int idx = threadIdx.x; idx < n / 2; idx += blockDim.x) {
    float2 f = __half22float2(out_ptr[blockIdx.x * n / 2 + idx]);
    variance += (f.x - s_mean) * (f.x - s_mean) + (f.y - s_mean) * (f.y - s_mean);
  }
  variance = blockReduceSum<float>(variance);
  if (threadIdx.x == 0) s_variance = rsqrtf(variance / n + layernorm_eps);
  __syncthreads();
  for (int idx = threadIdx.x; idx < n / 2; idx += blockDim.x) {
    int id = blockIdx.x * n / 2 + idx;
    float2 f = __half22float2(out_ptr[id]);
    float2 g = __half22float2(gamma_ptr[idx]);
    float2 b = __half22float2(beta_ptr[idx]);
    f.x = (f.x - s_mean) * s_variance * g.x + b.x;
    f.y = (f.y - s_mean) * s_variance * g.y + b.y;
    out_ptr[id] = __float22half2_rn(f);
  }
}

template <typename T>
void invokeAddBiasResidualLayerNormTrips(T *out, const T *input, const T *bias, const T *gamma, const T *beta,
                                         const float layernorm_eps, int m, int n, cudaStream_t stream) {
  dim3 grid(m);
  dim3 block(std::min(n, 1024));
  int num_trips = (n + block.x - 1) / block.x;
  if (num_trips == 1) {
    addBiasResidualPostLayerNormTrips<T, 1><<<grid, block, 0, stream>>>(out, input, bias, gamma, beta,
                                                                         layernorm_eps, m, n);
  } else if (num_trips == 2) {
    addBiasResidualPostLayerNormTrips<T, 2><<<grid, block, 0, stream>>>(out, input, bias, gamma, beta,
                                                                         layernorm_eps, m, n);
  } else {
    generalAddBiasResidualPostLayerNorm<T><<<grid, block, 0, stream>>>(out, input, bias, gamma, beta,
                                                                        layernorm_eps, m, n);
  }
}

}  // namespace fastertransformer
