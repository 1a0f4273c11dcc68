// norm_kernels.h: vectorized row kernels (tests/corpus/vector-rows.cu), one
// block per token, each reading its row two or four elements at a time
// through pointers cast from the kernel's parameters.
#pragma once
#include <algorithm>

#include "type_utils.h"

namespace engine {

// add bias + residual, then LayerNorm, half2 at a time (T2 from the trait).
template <typename T>
__global__ void addBiasResidualLayerNorm2(T *out, const T *input, const T *bias, const T *gamma, const T *beta,
                                          const float eps, int m, int n) {
  using T2 = typename TypeConverter<T>::Type;
  __shared__ float s_mean;
  __shared__ float s_variance;
  float mean = 0.0f;
  float variance = 0.0f;

  T2 *out_ptr = (T2 *)out;
  const T2 *input_ptr = (const T2 *)input;
  const T2 *bias_ptr = (const T2 *)bias;
  const T2 *gamma_ptr = (const T2 *)gamma;
  const T2 *beta_ptr = (const T2 *)beta;

  float local_out = 0.0f;
  for (int idx = threadIdx.x; idx < n / 2; idx += blockDim.x) {
#if defined(WRONG_UNITS)
    int id = blockIdx.x * n + idx;
#else
    int id = blockIdx.x * n / 2 + idx;
#endif
#if defined(LDG_ROW)
    T2 tmp = hadd2(hadd2(out_ptr[id], ldg(&input_ptr[id])), ldg(&bias_ptr[idx]));
#else
    T2 tmp = hadd2(hadd2(out_ptr[id], input_ptr[id]), ldg(&bias_ptr[idx]));
#endif
    float2 f = cuda_cast<float2>(tmp);
    local_out += f.x + f.y;
    out_ptr[id] = tmp;
  }
  mean = blockReduceSum<float>(local_out);
  if (threadIdx.x == 0) s_mean = mean / n;
  __syncthreads();

  for (int idx = threadIdx.x; idx < n / 2; idx += blockDim.x) {
    int id = blockIdx.x * n / 2 + idx;
    float2 f = cuda_cast<float2>(out_ptr[id]);
    variance += (f.x - s_mean) * (f.x - s_mean) + (f.y - s_mean) * (f.y - s_mean);
  }
  variance = blockReduceSum<float>(variance);
  if (threadIdx.x == 0) s_variance = rsqrtf(variance / n + eps);
  __syncthreads();

  for (int idx = threadIdx.x; idx < n / 2; idx += blockDim.x) {
    int id = blockIdx.x * n / 2 + idx;
    float2 f = cuda_cast<float2>(out_ptr[id]);
    float2 g = cuda_cast<float2>(ldg(&gamma_ptr[idx]));
    float2 b = cuda_cast<float2>(ldg(&beta_ptr[idx]));
    f.x = (f.x - s_mean) * s_variance * g.x + b.x;
    f.y = (f.y - s_mean) * s_variance * g.y + b.y;
    out_ptr[id] = cuda_cast<T2>(f);
  }
}

template <typename T>
void invokeAddBiasResidualLayerNorm2(T *out, const T *input, const T *bias, const T *gamma, const T *beta,
                                     const float eps, int m, int n, cudaStream_t stream) {
  dim3 grid(m);
  dim3 block(std::min((n / 2 + 31) / 32 * 32, 1024));
  addBiasResidualLayerNorm2<T><<<grid, block, 0, stream>>>(out, input, bias, gamma, beta, eps, m, n);
}

// RMSNorm four floats at a time, through pointers to the block's row (the
// weight through a cast where it is read).
__global__ void rmsNormVec4(float *out, const float *input, const float *weight, float eps, int hidden) {
  const float4 *in4 = reinterpret_cast<const float4 *>(input + blockIdx.x * hidden);
  float4 *out4 = reinterpret_cast<float4 *>(out + blockIdx.x * hidden);
  __shared__ float s_rms;
  float ss = 0.0f;
#if defined(PAST_ROW)
  for (int j = threadIdx.x; j <= hidden / 4; j += blockDim.x) {
#else
  for (int j = threadIdx.x; j < hidden / 4; j += blockDim.x) {
#endif
    float4 v = load(&in4[j]);
    ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
  }
  ss = blockReduceSum<float>(ss);
  if (threadIdx.x == 0) s_rms = rsqrtf(ss / hidden + eps);
  __syncthreads();
  for (int j = threadIdx.x; j < hidden / 4; j += blockDim.x) {
    float4 v = in4[j], w = reinterpret_cast<const float4 *>(weight)[j];
    out4[j] = make_float4(v.x * s_rms * w.x, v.y * s_rms * w.y, v.z * s_rms * w.z, v.w * s_rms * w.w);
  }
}

// A packed vector of `width` elements (a serving engine's style): added,
// summed in squares, scaled by a weight vector.
template <typename scalar_t, int width>
struct __align__(16) PackedVec {
  scalar_t data[width];

  __device__ void operator+=(const PackedVec &other) {
    for (int i = 0; i < width; ++i) data[i] = (scalar_t)((float)data[i] + (float)other.data[i]);
  }
  __device__ float sum_squares() const {
    float result = 0.0f;
    for (int i = 0; i < width; ++i) result += (float)data[i] * (float)data[i];
    return result;
  }
};

// residual += input, then input = RMSNorm(residual) * weight, width elements at
// a time through views whose type is deduced, the row length in vectors in a
// local.
template <typename scalar_t, int width>
__global__ void fusedAddRmsNormVec(scalar_t *__restrict__ input, scalar_t *__restrict__ residual,
                                   const scalar_t *__restrict__ weight, const float eps, const int hidden_size) {
  const int vec_hidden_size = hidden_size / width;
  __shared__ float s_variance;
  float variance = 0.0f;
  auto *__restrict__ input_v = reinterpret_cast<PackedVec<scalar_t, width> *>(input);
  auto *__restrict__ residual_v = reinterpret_cast<PackedVec<scalar_t, width> *>(residual);
  auto *__restrict__ weight_v = reinterpret_cast<const PackedVec<scalar_t, width> *>(weight);

  for (int idx = threadIdx.x; idx < vec_hidden_size; idx += blockDim.x) {
    int id = blockIdx.x * vec_hidden_size + idx;
    PackedVec<scalar_t, width> temp = input_v[id];
    temp += residual_v[id];
    variance += temp.sum_squares();
    residual_v[id] = temp;
  }
  variance = blockReduceSum<float>(variance);
  if (threadIdx.x == 0) s_variance = rsqrtf(variance / hidden_size + eps);
  __syncthreads();

  for (int idx = threadIdx.x; idx < vec_hidden_size; idx += blockDim.x) {
    int id = blockIdx.x * vec_hidden_size + idx;
    PackedVec<scalar_t, width> temp = residual_v[id];
    for (int i = 0; i < width; ++i)
      temp.data[i] = (scalar_t)((float)temp.data[i] * s_variance * (float)weight_v[idx].data[i]);
    input_v[id] = temp;
  }
}

#if defined(NARROW)
// A float buffer read two halves at a time: not whole elements.
__global__ void scaleRowsHalf(float *x, int hidden) {
  half *h = (half *)x;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) h[blockIdx.x * hidden + j] = __float2half(1.0f);
}
#endif

}  // namespace engine
