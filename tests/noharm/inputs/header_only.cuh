// header_only.cuh: small templated device helpers shared by kernels.
// There is no coconet directive in this header; the translator must leave it alone.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <type_traits>

namespace ks {

template <typename T>
__host__ __device__ constexpr T ceil_div(T a, T b)
{
    return (a + b - 1) / b;
}

static_assert(ceil_div(10, 4) == 3, "ceil_div rounds up");

// Widen any storage type to float for arithmetic.
template <typename T>
__device__ __forceinline__ float to_float(T v)
{
    if constexpr (std::is_same_v<T, __half>)
        return __half2float(v);
    else if constexpr (std::is_same_v<T, __nv_bfloat16>)
        return __bfloat162float(v);
    else
        return static_cast<float>(v);
}

// Narrow a float back to the storage type, rounding to nearest even.
template <typename T>
__device__ __forceinline__ T from_float(float v)
{
    if constexpr (std::is_same_v<T, __half>)
        return __float2half_rn(v);
    else if constexpr (std::is_same_v<T, __nv_bfloat16>)
        return __float2bfloat16_rn(v);
    else
        return static_cast<T>(v);
}

template <typename T>
__device__ __forceinline__ T clamp(T v, T lo, T hi)
{
    return v < lo ? lo : (hi < v ? hi : v);
}

// Sum over a full warp; lane 0 gets the total.
template <typename T>
__device__ __forceinline__ T warp_sum(T v)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// A grid-stride loop as a range: for (size_t i : ks::grid_stride(n)) { ... }
class grid_stride {
public:
    class iterator {
    public:
        __device__ iterator(size_t i, size_t step) : i_(i), step_(step) {}
        __device__ size_t operator*() const { return i_; }
        __device__ iterator& operator++()
        {
            i_ += step_;
            return *this;
        }
        // Any position at or past the end compares equal to end().
        __device__ bool operator!=(const iterator& end) const { return i_ < end.i_; }

    private:
        size_t i_;
        size_t step_;
    };

    __device__ explicit grid_stride(size_t n) : n_(n) {}
    __device__ iterator begin() const
    {
        return iterator(blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x,
                        static_cast<size_t>(gridDim.x) * blockDim.x);
    }
    __device__ iterator end() const { return iterator(n_, 0); }

private:
    size_t n_;
};

}  // namespace ks
