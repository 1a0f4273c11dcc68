// A diagnostic longer than 511 characters is printed whole (it was cut mid-word: "... in
// the kernel after i"): a kernel name of nearly 300 characters and a half2 row kernel that
// indexes its half2 row in halves.
// RUN: %expect 1 %coconet --check %s 2>&1 | %FileCheck %s
#include <nccl.h>
#include <cuda_fp16.h>
template<typename T>
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
__global__ void aVeryLongKernelNameForAddBiasResidualPostLayerNormHalf_WithATemplateLikeSuffixThatGoesOnAndOn_WithATemplateLikeSuffixThatGoesOnAndOn_WithATemplateLikeSuffixThatGoesOnAndOn_WithATemplateLikeSuffixThatGoesOnAndOn_WithATemplateLikeSuffixThatGoesOnAndOn_WithATemplateLikeSuffixThatGoesOnAndOn(half* out, const half* input, const half* bias, int n)
{
    __shared__ float s_mean;
    half2* out_ptr = (half2*)out;
    const half2* input_ptr = (const half2*)input;
    const half2* bias_ptr = (const half2*)bias;
    float local_out = 0.0f;
    for (int idx = threadIdx.x; idx < n / 2; idx += blockDim.x) {
        half2 tmp = __hadd2(__hadd2(out_ptr[blockIdx.x * (n / 2) + idx], input_ptr[blockIdx.x * (n / 2) + idx]), bias_ptr[idx]);
        float2 f = __half22float2(tmp);
        local_out += f.x;
        local_out += f.y;
        out_ptr[blockIdx.x * n + idx] = tmp;
    }
    float mean = blockReduceSum<float>(local_out);
    if (threadIdx.x == 0) s_mean = mean / n;
    __syncthreads();
    for (int idx = threadIdx.x; idx < n / 2; idx += blockDim.x) {
        float2 f = __half22float2(out_ptr[blockIdx.x * (n / 2) + idx]);
        f.x -= s_mean; f.y -= s_mean;
        out_ptr[blockIdx.x * (n / 2) + idx] = __float22half2_rn(f);
    }
}
void step(half* x, const half* res, const half* b, int m, int n, ncclComm_t comm, cudaStream_t s)
{
#pragma coconet region name(r) split reorder replicated(res, b)
    {
        ncclAllReduce(x, x, m * n, ncclHalf, ncclSum, comm, s);
        aVeryLongKernelNameForAddBiasResidualPostLayerNormHalf_WithATemplateLikeSuffixThatGoesOnAndOn_WithATemplateLikeSuffixThatGoesOnAndOn_WithATemplateLikeSuffixThatGoesOnAndOn_WithATemplateLikeSuffixThatGoesOnAndOn_WithATemplateLikeSuffixThatGoesOnAndOn_WithATemplateLikeSuffixThatGoesOnAndOn<<<m, 256, 0, s>>>(x, res, b, n);
    }
}
// CHECK: error: kernel 'aVeryLongKernelNameForAddBiasResidualPostLayerNormHalf_WithATemplateLikeSuffixThatGoesOnAndOn_WithATemplateLikeSuffixThatGoesOnAndOn_WithATemplateLikeSuffixThatGoesOnAndOn_WithATemplateLikeSuffixThatGoesOnAndOn_WithATemplateLikeSuffixThatGoesOnAndOn_WithATemplateLikeSuffixThatGoesOnAndOn' adds a row offset in units of 1 element and a column in units of 2 (out_ptr[blockIdx.x * n + idx]); a row read k elements at a time is indexed by row * H / k + j, j from a loop to H / k{{$}}
