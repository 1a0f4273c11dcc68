// Style: activation epilogues with auto and constexpr locals inside the
// kernel, extern "C" kernels, ternary ReLU, SiLU and sigmoid written with
// expf, a per-row scale read at [i / cols], and an ncclAvg reduction.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_runtime.h>
#include <nccl.h>

extern "C" __global__ void silu_rowscale(float *x, const float *row_scale, int rows, int cols) {
  const auto i = blockIdx.x * blockDim.x + threadIdx.x;
  constexpr float one = 1.0f;
  if (i < rows * cols) {
    const auto v = x[i] * row_scale[i / cols];
    const float sig = one / (one + expf(-v));
    x[i] = v * sig;
  }
}

extern "C" __global__ void relu_avg(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void act(float *x, const float *row_scale, int rows, int cols, float *y, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(silu) split reorder replicated(row_scale)
  {
    ncclAllReduce(x, x, rows * cols, ncclFloat, ncclSum, comm, s);
    silu_rowscale<<<(rows * cols + 255) / 256, 256, 0, s>>>(x, row_scale, rows, cols);
  }
#pragma coconet region name(relu_avg) split reorder
  {
    ncclAllReduce(y, y, n, ncclFloat, ncclAvg, comm, s);
    relu_avg<<<(n + 511) / 512, 512, 0, s>>>(y, n);
  }
}

// IR: verify=ir silu: ok
// IR: verify=ir relu_avg: ok
// EXEC: verify silu: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify relu_avg: ok (the region as written and as scheduled agree within 0 ULP)
