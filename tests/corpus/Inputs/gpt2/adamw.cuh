// adamw.cuh: the multi-tensor AdamW, kernel and launcher (tests/corpus/ceil-div-launchers.cu).
// Strides are parameters of their own, as the count is; fp32 master weights are
// optional (NULL: the parameters are their own master); the launcher sizes the grid
// with CEIL_DIV and computes the bias corrections.
#pragma once
#include "cuda_common.h"

__device__ inline float lerp(float start, float end, float weight) {
  return fma(weight, end, fma(-weight, start, start));
}

#if defined(ELEMENT_HELPER)
// llm.c's shape: the kernel's body is one call of a __device__ helper that holds the element loop.
template <typename Tp, typename Tg>
__device__ void adamw_elem(Tp *params, float *master, Tg *grads, float *m, float *v, size_t num_parameters,
                           float learning_rate, float beta1, float beta2, float beta1_correction,
                           float beta2_correction, float eps, float weight_decay, float grad_scale) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= num_parameters) return;
  float grad = grad_scale * (float)grads[idx];
  float mi = lerp(grad, m[idx], beta1);
  float vi = lerp(grad * grad, v[idx], beta2);
  m[idx] = mi;
  v[idx] = vi;
  mi /= beta1_correction;
  vi /= beta2_correction;
  float old_param = master != NULL ? master[idx] : (float)params[idx];
  float param = old_param - (learning_rate * (mi / (sqrtf(vi) + eps) + weight_decay * old_param));
  if (master != NULL) master[idx] = param;
  params[idx] = (Tp)param;
}

template <typename Tp, typename Tg>
__global__ void adamw_kernel3(Tp *params_memory, float *master_params_memory, Tg *grads_memory, float *m_memory,
                              float *v_memory, size_t num_parameters, ptrdiff_t w_stride, ptrdiff_t g_stride,
                              ptrdiff_t s_stride, float learning_rate, float beta1, float beta2,
                              float beta1_correction, float beta2_correction, float eps, float weight_decay,
                              float grad_scale) {
  adamw_elem(params_memory + blockIdx.y * w_stride,
             master_params_memory != NULL ? master_params_memory + blockIdx.y * s_stride : NULL,
             grads_memory + blockIdx.y * g_stride, m_memory + blockIdx.y * s_stride,
             v_memory + blockIdx.y * s_stride, num_parameters, learning_rate, beta1, beta2, beta1_correction,
             beta2_correction, eps, weight_decay, grad_scale);
}
#else
template <typename Tp, typename Tg>
__global__ void adamw_kernel3(Tp *params_memory, float *master_params_memory, Tg *grads_memory, float *m_memory,
                              float *v_memory, size_t num_parameters, ptrdiff_t w_stride, ptrdiff_t g_stride,
                              ptrdiff_t s_stride, float learning_rate, float beta1, float beta2,
                              float beta1_correction, float beta2_correction, float eps, float weight_decay,
                              float grad_scale) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= num_parameters) return;
  Tp *params = params_memory + blockIdx.y * w_stride;
  float *master = master_params_memory + blockIdx.y * s_stride;
  Tg *grads = grads_memory + blockIdx.y * g_stride;
  float *m = m_memory + blockIdx.y * s_stride;
  float *v = v_memory + blockIdx.y * s_stride;
  float grad = grad_scale * (float)grads[idx];
  float mi = lerp(grad, m[idx], beta1);
  float vi = lerp(grad * grad, v[idx], beta2);
  m[idx] = mi;
  v[idx] = vi;
  mi /= beta1_correction;
  vi /= beta2_correction;
  float old_param = master_params_memory != NULL ? master[idx] : (float)params[idx];
  float param = old_param - (learning_rate * (mi / (sqrtf(vi) + eps) + weight_decay * old_param));
  if (master_params_memory != NULL) master[idx] = param;
  params[idx] = (Tp)param;
}
#endif

template <typename Tp, typename Tg>
void adamw_update(Tp *params_memory, float *master_params_memory, Tg *grads_memory, float *m_memory,
                  float *v_memory, size_t num_parameters, ptrdiff_t w_stride, ptrdiff_t g_stride,
                  ptrdiff_t s_stride, int num_slices, float learning_rate, float beta1, float beta2, int t,
                  float eps, float weight_decay, float grad_scale, cudaStream_t stream) {
  int block_size = 512;
  int num_blocks = CEIL_DIV(num_parameters, block_size);
  float beta1_correction = 1.0f - powf(beta1, t);
  float beta2_correction = 1.0f - powf(beta2, t);
  adamw_kernel3<<<dim3(num_blocks, num_slices), block_size, 0, stream>>>(
      params_memory, master_params_memory, grads_memory, m_memory, v_memory, num_parameters, w_stride, g_stride,
      s_stride, learning_rate, beta1, beta2, beta1_correction, beta2_correction, eps, weight_decay, grad_scale);
  cudaCheck(cudaGetLastError());
}
