// layernorm_kernels.cuh: an inference engine's fused residual add + RMSNorm
// (tests/corpus/serving-norm.cu): one block per token, cub::BlockReduce over
// the block's valid threads, the sum written back to the residual in place.
#pragma once
#include <cub/cub.cuh>
#include <cuda/std/functional>
#include <cuda_runtime.h>

namespace serving {

template <typename scalar_t>
__global__ void fused_add_rms_norm_kernel(scalar_t *__restrict__ input, scalar_t *__restrict__ residual,
                                          const scalar_t *__restrict__ weight, const float epsilon,
                                          const int num_tokens, const int hidden_size) {
  __shared__ float s_variance;
  float variance = 0.0f;
  for (int idx = threadIdx.x; idx < hidden_size; idx += blockDim.x) {
    float z = (float)input[blockIdx.x * hidden_size + idx] + (float)residual[blockIdx.x * hidden_size + idx];
    variance += z * z;
    residual[blockIdx.x * hidden_size + idx] = (scalar_t)z;
  }
  using BlockReduce = cub::BlockReduce<float, 1024>;
  __shared__ typename BlockReduce::TempStorage reduce_store;
  variance = BlockReduce(reduce_store).Reduce(variance, cuda::std::plus<>{}, blockDim.x);
  if (threadIdx.x == 0) s_variance = rsqrtf(variance / hidden_size + epsilon);
  __syncthreads();
  for (int idx = threadIdx.x; idx < hidden_size; idx += blockDim.x) {
    float x = (float)residual[blockIdx.x * hidden_size + idx];
    input[blockIdx.x * hidden_size + idx] = (scalar_t)(x * s_variance) * weight[idx];
  }
}

}  // namespace serving
