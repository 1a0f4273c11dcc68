// Style: kernels with __launch_bounds__, __restrict__, static linkage, in an
// anonymous namespace, indexed with size_t and an early return, launched with
// a dim3 configuration and a block size constant.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_runtime.h>
#include <nccl.h>
#include <cstddef>

namespace {
constexpr int kThreads = 512;

__global__ void __launch_bounds__(kThreads) scale_bias(float *__restrict__ y, const float *__restrict__ bias,
                                                        float alpha, size_t n, size_t hidden) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = alpha * y[i] + bias[i % hidden];
}
}  // namespace

void epilogue(float *y, const float *bias, size_t tokens, size_t hidden, ncclComm_t comm, cudaStream_t stream) {
  const size_t n = tokens * hidden;
  const dim3 block(kThreads);
  const dim3 grid((unsigned)((n + kThreads - 1) / kThreads));
#pragma coconet region name(bias_epilogue) split reorder replicated(bias)
  {
    ncclAllReduce(y, y, n, ncclFloat, ncclSum, comm, stream);
    scale_bias<<<grid, block, 0, stream>>>(y, bias, 0.5f, n, hidden);
  }
}

// IR: verify=ir bias_epilogue: ok
// EXEC: verify bias_epilogue: ok (the region as written and as scheduled agree within 0 ULP)
