// Style: fp16 kernels with cuda_fp16.h intrinsics: __hadd, __hsub, __hmul, __hdiv, __hneg,
// __float2half_rn, __half2float, a tanh GELU computed in float, as inference
// epilogues write them. __hfma (one rounding of a * b + c to half), which
// coconet's IR does not model, runs as the kernel's own text calls it.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=4 %s -- -DHFMA | %FileCheck --check-prefix=HFMA %s
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void residual_gelu_half(__half *out, const __half *res, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = __half2float(out[i]);
    float g = 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
    out[i] = __hadd(__float2half_rn(g), res[i]);
  }
}

__global__ void axpby_half(__half *y, const __half *x, __half a, __half b, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
#ifdef HFMA
    y[i] = __hfma(a, x[i], __hmul(b, y[i]));
#else
    y[i] = __hadd(__hmul(a, x[i]), __hneg(__hsub(__hdiv(y[i], b), __hmul(b, y[i]))));
#endif
}

void block_out(__half *out, const __half *res, __half *y, const __half *x, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(gelu_half) split reorder replicated(res)
  {
    ncclAllReduce(out, out, n, ncclHalf, ncclSum, comm, s);
    residual_gelu_half<<<(n + 127) / 128, 128, 0, s>>>(out, res, n);
  }
#pragma coconet region name(axpby_half) split reorder replicated(x)
  {
    ncclAllReduce(y, y, n, ncclHalf, ncclSum, comm, s);
    axpby_half<<<80, 256, 0, s>>>(y, x, __float2half(0.5f), __float2half(2.0f), n);
  }
}

// IR: verify=ir gelu_half: ok
// IR: verify=ir axpby_half: ok
// EXEC: verify gelu_half: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify axpby_half: ok (the region as written and as scheduled agree within 0 ULP)
// HFMA: verify axpby_half: output 'y' (f16): max 0 ULP apart over 1..4 ranks x 3 inputs
// HFMA: verify axpby_half: ok
