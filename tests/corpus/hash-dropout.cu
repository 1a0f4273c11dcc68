// Style: dropout without curand, as inference and some training code writes
// it: a counter-based integer hash of the element index and a seed (a
// helper with a fixed number of mixing rounds in a loop, shifts, xors and
// multiplies on uint32_t), turned into a uniform float from its top 24 bits,
// then the residual add; the mask is kept as 0/1 floats.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cstdint>
#include <cuda_runtime.h>
#include <nccl.h>

static constexpr int kRounds = 3;

__device__ inline uint32_t mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

__device__ inline float uniform01(uint32_t index, uint32_t seed) {
  uint32_t h = index ^ (seed * 0x9E3779B9U);
  for (int r = 0; r < kRounds; ++r) h = mix(h + r);
  return (float)(h >> 8) * (1.0f / 16777216.0f);
}

__global__ void dropout_residual(float *out, float *keep, const float *x, const float *residual, float p,
                                 uint32_t seed, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float u = uniform01((uint32_t)i, seed);
    const float k = u >= p ? 1.0f : 0.0f;
    keep[i] = k;
    out[i] = residual[i] + x[i] * k / (1.0f - p);
  }
}

void attention_out(float *out, float *keep, float *x, const float *residual, float p, uint32_t seed, int n,
                   ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(dropout_residual) split reorder scratch(x) replicated(residual)
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, stream);
    dropout_residual<<<256, 256, 0, stream>>>(out, keep, x, residual, p, seed, n);
  }
}

// IR: verify=ir dropout_residual: ok
// EXEC: verify dropout_residual: ok (the region as written and as scheduled agree within 0 ULP)
