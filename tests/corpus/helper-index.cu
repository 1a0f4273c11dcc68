// Style: a helper that loads through its own parameters, passed the element index as it is
// (`ld(bias, i)`, an int parameter given the kernel's int index): the helper's b[i] is the
// element's bias[i] (before, a read at another index coconet refused as "reads bias[i]; only
// bias[i] can be computed"). Once the helper changes its parameter (SHIFTED), it is no longer
// the index: the reads after it are refused with the text they have. A narrower parameter
// (with NARROW, a short given an int index) is not the index either: the message says so.
// RUN: %coconet --verify=3 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %expect 1 %coconet --check %s -- -DSHIFTED 2>&1 | %FileCheck --check-prefix=SHIFTED %s
// RUN: %expect 1 %coconet --check %s -- -DNARROW 2>&1 | %FileCheck --check-prefix=NARROW %s
#include <cuda_runtime.h>
#include <nccl.h>

#if defined(SHIFTED)
__device__ float ld(const float *b, int i) {
  i += 1;
  return b[i - 1];
}
#elif defined(NARROW)
__device__ float ld(const float *b, short i) { return b[i]; }
#else
__device__ float ld(const float *b, int i) { return b[i]; }
#endif

__global__ void add_bias(float *out, const float *g, const float *bias, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = g[i] + ld(bias, i);
}

void step(float *out, float *g, const float *bias, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(bias) split reorder replicated(bias)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    add_bias<<<(n + 255) / 256, 256, 0, s>>>(out, g, bias, n);
  }
}
// EXEC: verify bias: ok
// SHIFTED: error: reorder: kernel 'add_bias' reads bias[i - 1]; only bias[i] can be computed on a slice
// NARROW: error: reorder: kernel 'add_bias' reads bias[i] ('i' is not the element's own index, or not all of it); only bias[i] can be computed on a slice
