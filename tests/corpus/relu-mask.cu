// Style: an activation that also saves its mask for the backward pass, with
// the early-return shape people write: the negative case stores both outputs
// and returns, the rest of the body handles the positive case. The mask is
// __half here; -DBYTE_MASK makes it `unsigned char` (gathered as ncclUint8).
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// Both paths store both outputs: every element is stored, so neither may be NULL (no run-time test).
// RUN: %coconet %s | %FileCheck --check-prefix=TOTAL %s
// RUN: %coconet --verify=4 %s -- -DBYTE_MASK | %FileCheck --check-prefix=BYTE %s
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#ifdef BYTE_MASK
typedef unsigned char mask_t;
#define MASK(v) (v)
#else
typedef __half mask_t;
#define MASK(v) __float2half(v)
#endif

__global__ void bias_relu_mask(__half *out, mask_t *mask, const __half *x, const __half *bias, int rows,
                               int cols) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= rows * cols) return;
  const float v = __half2float(x[idx]) + __half2float(bias[idx % cols]);
  if (v <= 0.0f) {
    out[idx] = __float2half(0.0f);
    mask[idx] = MASK(0);
    return;
  }
  out[idx] = __float2half(v);
  mask[idx] = MASK(1);
}

void forward(__half *out, mask_t *mask, __half *x, const __half *bias, int rows, int cols, ncclComm_t comm,
             cudaStream_t stream) {
#pragma coconet region name(bias_relu) split reorder replicated(bias) scratch(x)
  {
    ncclAllReduce(x, x, rows * cols, ncclHalf, ncclSum, comm, stream);
    bias_relu_mask<<<(rows * cols + 255) / 256, 256, 0, stream>>>(out, mask, x, bias, rows, cols);
  }
}

// IR: verify=ir bias_relu: ok
// EXEC: verify bias_relu: ok (the region as written and as scheduled agree within 0 ULP)
// CODE: out = !(v <= 0.0f) ? __float2half_rn(v) : __float2half_rn(0.0f);
// BYTE: verify bias_relu: output 'mask' (u8): max 0 ULP apart over 1..4 ranks x 3 inputs
// BYTE: verify bias_relu: ok (the region as written and as scheduled agree within 0 ULP)
// TOTAL-NOT: only under a {{condition}}
// TOTAL-NOT: {{out|mask}} != {{nullptr}}
