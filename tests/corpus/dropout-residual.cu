// Style: a transformer block's output epilogue: bias, dropout with curand
// Philox keyed by the element index (the seed and offset passed in), and the
// residual add, in bf16 with fp32 math.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <curand_kernel.h>
#include <nccl.h>

__global__ void bias_dropout_add(__nv_bfloat16 *out, const __nv_bfloat16 *bias, const __nv_bfloat16 *residual,
                                 float p, unsigned long long seed, unsigned long long offset, int n, int hidden) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    curandStatePhilox4_32_10_t state;
    curand_init(seed, i, offset, &state);
    float keep = curand_uniform(&state) > p ? 1.0f / (1.0f - p) : 0.0f;
    float x = __bfloat162float(out[i]) + __bfloat162float(bias[i % hidden]);
    out[i] = __float2bfloat16(x * keep + __bfloat162float(residual[i]));
  }
}

void block_output(__nv_bfloat16 *out, const __nv_bfloat16 *bias, const __nv_bfloat16 *residual, int tokens,
                  int hidden, unsigned long long seed, unsigned long long step, ncclComm_t comm, cudaStream_t s) {
  const int n = tokens * hidden;
#pragma coconet region name(dropout_residual) split reorder replicated(bias, residual)
  {
    ncclAllReduce(out, out, n, ncclBfloat16, ncclSum, comm, s);
    bias_dropout_add<<<(n + 255) / 256, 256, 0, s>>>(out, bias, residual, 0.1f, seed, step * 4, n, hidden);
  }
}

// IR: verify=ir dropout_residual: ok
// EXEC: verify dropout_residual: ok (the region as written and as scheduled agree within 0 ULP)
