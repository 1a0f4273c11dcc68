// layernorm.h: the host entry point of the fused norm (tests/corpus/serving-norm.cu):
// grid and block as dim3 locals, the kernel template launched for the tensor's type.
#pragma once
#include <algorithm>

#include "layernorm_kernels.cuh"

#if defined(LAUNCHER_IN_NAMESPACE)
// The entry point inside the kernel's namespace, naming it as that namespace sees it.
namespace serving {
template <typename scalar_t>
void fused_add_rms_norm(scalar_t *input, scalar_t *residual, const scalar_t *weight, float epsilon, int num_tokens,
                        int hidden_size, cudaStream_t stream) {
  dim3 grid(num_tokens);
  dim3 block(std::min(hidden_size, 1024));
  fused_add_rms_norm_kernel<scalar_t><<<grid, block, 0, stream>>>(input, residual, weight, epsilon, num_tokens,
                                                                  hidden_size);
}
}  // namespace serving
using serving::fused_add_rms_norm;
#else
template <typename scalar_t>
void fused_add_rms_norm(scalar_t *input, scalar_t *residual, const scalar_t *weight, float epsilon, int num_tokens,
                        int hidden_size, cudaStream_t stream) {
  dim3 grid(num_tokens);
  dim3 block(std::min(hidden_size, 1024));
  serving::fused_add_rms_norm_kernel<scalar_t><<<grid, block, 0, stream>>>(input, residual, weight, epsilon,
                                                                           num_tokens, hidden_size);
}
#endif
