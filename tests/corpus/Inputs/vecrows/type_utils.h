// type_utils.h: the type helpers of an inference library's vectorized kernels
// (tests/corpus/vector-rows.cu): a trait giving a type's two-wide vector, a
// cache-hinted load, a plain one, paired arithmetic and conversions, a block sum.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace engine {

template <typename T>
struct TypeConverter {
  using Type = half2;
};
template <>
struct TypeConverter<half> {
  using Type = half2;
};
template <>
struct TypeConverter<float> {
  using Type = float2;
};

template <typename T>
inline __device__ T ldg(const T *val) {
  return __ldg(val);
}

template <typename T>
inline __device__ T load(const T *p) {
  return *p;
}

inline __device__ half2 hadd2(half2 a, half2 b) { return __hadd2(a, b); }

template <typename T_OUT, typename T_IN>
__device__ inline T_OUT cuda_cast(T_IN val) {
  return val;
}
template <>
__device__ inline float2 cuda_cast<float2, half2>(half2 val) {
  return __half22float2(val);
}
template <>
__device__ inline half2 cuda_cast<half2, float2>(float2 val) {
  return __float22half2_rn(val);
}

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

}  // namespace engine
