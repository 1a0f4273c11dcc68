// Style: a GPT-2 trainer's AdamW on bf16 weights with fp32 master weights,
// where the bf16 copy is written by stochastic rounding: a __device__ helper
// that stores through a pointer to the element (`&params[idx]`), draws noise
// from an integer hash of the element index and a seed (constexpr constants,
// multiplies, xor-shifts, a fixed number of rounds in a loop), and rounds the
// float's bits (__float_as_uint / __uint_as_float, masks, a ternary).
// -DTHREAD_KEYED keys the noise by threadIdx.x and blockIdx.x as some trainers
// do: each element's rounding depends on which thread of the launch as
// written runs it, so the schedule computes that thread's coordinates from
// the element index and the launch's own grid and block (it was refused);
// the bits are the same. DIM3 (the launch's block a dim3 of two dimensions)
// is refused: coordinates are rebuilt for one-dimensional launches only.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=KERNEL %s
// RUN: %coconet --verify=ir:4 %s -- -DTHREAD_KEYED | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s -- -DTHREAD_KEYED | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -DTHREAD_KEYED | %FileCheck --check-prefix=THREAD %s
// RUN: %expect 1 %coconet --check %s -- -DTHREAD_KEYED -DDIM3 2>&1 | %FileCheck --check-prefix=DIM3 %s
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

__device__ __forceinline__ unsigned int noise(unsigned int position, unsigned int seed) {
  constexpr unsigned int BIT_NOISE1 = 0xd2a80a3f;
  constexpr unsigned int BIT_NOISE2 = 0xa884f197;
  constexpr unsigned int BIT_NOISE3 = 0x6C736F4B;
  unsigned int mangled = position;
  for (int round = 0; round < 2; round++) {
    mangled *= BIT_NOISE1;
    mangled += seed;
    mangled ^= (mangled >> 9);
    mangled += BIT_NOISE2;
    mangled ^= (mangled >> 11);
    mangled *= BIT_NOISE3;
    mangled ^= (mangled >> 13);
  }
  return mangled;
}

__device__ __forceinline__ void stochastic_rounding(float in, __nv_bfloat16 *out, unsigned int position,
                                                    unsigned int seed) {
#ifdef THREAD_KEYED
  unsigned int random = noise(threadIdx.x + blockIdx.x * 7919u, seed);
#else
  unsigned int random = noise(position, seed);
#endif
  unsigned int threshold = random & 0xFFFF;
  unsigned int float_bits = __float_as_uint(in);
  unsigned int rounded_bits = float_bits & 0x0000FFFF;
  float_bits = (rounded_bits > threshold) ? (float_bits | 0xFFFF) : (float_bits & ~0xFFFF);
  *out = __float2bfloat16_rn(__uint_as_float(float_bits));
}

__device__ __forceinline__ float lerp(float start, float end, float weight) {
  return fmaf(weight, end, fmaf(-weight, start, start));
}

__global__ void adamw_sr(__nv_bfloat16 *params, float *master, const float *grads, float *m, float *v, size_t n,
                         float lr, float beta1, float beta2, float c1, float c2, float eps, float wd,
                         unsigned int seed) {
  size_t idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= n) return;
  float grad = grads[idx];
  float mi = lerp(grad, m[idx], beta1);
  m[idx] = mi;
  float vi = lerp(grad * grad, v[idx], beta2);
  v[idx] = vi;
  float old = master[idx];
  float param = old - (lr * ((mi / c1) / (sqrtf(vi / c2) + eps) + wd * old));
  master[idx] = param;
  stochastic_rounding(param, &params[idx], (unsigned int)idx, seed);
}

void step(__nv_bfloat16 *params, float *master, float *grads, float *m, float *v, size_t n, unsigned int seed,
          ncclComm_t comm, cudaStream_t stream) {
#if defined(DIM3)
  const dim3 block(128, 2);
  const int grid = (int)((n + 255) / 256);
#else
  const int block = 256;
  const int grid = (int)((n + block - 1) / block);
#endif
#pragma coconet region name(adamw_sr) split reorder shard(m, v, master) scratch(grads) replicated(params)
  {
    ncclAllReduce(grads, grads, n, ncclFloat, ncclSum, comm, stream);
    adamw_sr<<<grid, block, 0, stream>>>(params, master, grads, m, v, n, 3e-4f, 0.9f, 0.95f, 0.5f, 0.25f, 1e-8f,
                                         0.1f, seed);
  }
}

// IR: verify=ir adamw_sr: ok
// EXEC: verify adamw_sr: ok (the region as written and as scheduled agree within 0 ULP)
// KERNEL: __float_as_uint(
// KERNEL: __uint_as_float(
// The thread of element idx in the launch as written: idx % block and idx / block (a guard, block = 256):
// THREAD: {{^[^/]*}}(unsigned int)((int64_t)i % 256LL)
// THREAD: {{^[^/]*}}(unsigned int)((int64_t)i / 256LL)
// DIM3: error: kernel 'adamw_sr' is launched with '<<<grid, block>>>', whose grid or block has more than one dimension: each element would be computed by as many threads as the other dimensions hold
