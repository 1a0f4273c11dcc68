// optim/adamw.cuh: a multi-tensor AdamW, kernel and launcher in a header
// (tests/corpus/trainer-zero.cu). One launch updates every layer: blockIdx.y
// picks the layer's slice of the flat buffers, a pointer to it per buffer.
#pragma once
#include <cuda_bf16.h>

#include "../common.cuh"

__device__ __forceinline__ float lerp(float start, float end, float weight) {
  return fmaf(weight, end, fmaf(-weight, start, start));
}

__device__ __forceinline__ void stochastic_round(__nv_bfloat16 *out, float in, unsigned seed) {
  unsigned h = seed ^ (threadIdx.x * 0x9E3779B1u) ^ ((blockIdx.x ^ (blockIdx.y << 16)) * 0x85EBCA77u);
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  unsigned bits = __float_as_uint(in);
  bits = (bits & 0xFFFFu) > (h & 0xFFFFu) ? (bits | 0xFFFFu) : (bits & ~0xFFFFu);
  *out = __float2bfloat16_rn(__uint_as_float(bits));
}
__device__ __forceinline__ void stochastic_round(float *out, float in, unsigned) { *out = in; }

template <typename Tp>
__global__ void adamw_kernel(Tp *params, float *master, const float *grads, float *m, float *v, size_t n,
                             float lr, float beta1, float beta2, float b1c, float b2c, float eps, float wd,
                             unsigned seed) {
  size_t idx = blockIdx.x * blockDim.x + threadIdx.x;
  Tp *p = params + blockIdx.y * n;
  float *mp = master + blockIdx.y * n;
  const float *g = grads + blockIdx.y * n;
  float *mm = m + blockIdx.y * n;
  float *vv = v + blockIdx.y * n;
  if (idx >= n) return;
  float grad = g[idx];
  float mi = lerp(grad, mm[idx], beta1);
  float vi = lerp(grad * grad, vv[idx], beta2);
  mm[idx] = mi;
  vv[idx] = vi;
  mi /= b1c;
  vi /= b2c;
  float old = mp[idx];
  float w = old - (lr * (mi / (sqrtf(vi) + eps) + wd * old));
  mp[idx] = w;
  stochastic_round(&p[idx], w, seed);
}

template <typename Tp>
void adamw_update(Tp *params, float *master, const float *grads, float *m, float *v, size_t n, int num_slices,
                  float lr, float beta1, float beta2, int t, float eps, float wd, unsigned seed,
                  cudaStream_t stream) {
  const int block_size = 512;
  const int num_blocks = (n + block_size - 1) / block_size;
  const float b1c = 1.0f - powf(beta1, t);
  const float b2c = 1.0f - powf(beta2, t);
  adamw_kernel<Tp><<<dim3(num_blocks, num_slices), block_size, 0, stream>>>(params, master, grads, m, v, n, lr,
                                                                          beta1, beta2, b1c, b2c, eps, wd, seed);
  cudaCheck(cudaGetLastError());
}
