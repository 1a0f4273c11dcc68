// Style: the element count written as an expression in the kernel, as kernels
// for [rows x cols] tensors are: a product of parameters, a const local before
// the loop, a member of a by-value parameter struct (llm.c-style `p.n`).
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// In a method, a member named alone (`n_`) and through `this->` are one count (-DMETHOD).
// RUN: %coconet --verify=ir:2 %s -- -DMETHOD | %FileCheck --check-prefix=METHOD %s
// RUN: %coconet %s -- -DMETHOD | %FileCheck --check-prefix=METHOD-CODE %s
#include <cuda_runtime.h>
#include <nccl.h>

struct Params {
  int n;
  float lr;
};

__global__ void bias_gelu_grad(float *dx, const float *dy, const float *x, int rows, int cols) {
  const int total = rows * cols;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < total) dx[i] = dy[i] * (x[i] > 0.0f ? 1.0f : 0.1f);
}

__global__ void sgd_params(float *w, const float *g, Params p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= p.n) return;
  w[i] -= p.lr * g[i];
}

void backward(float *dx, float *dy, const float *x, int rows, int cols, ncclComm_t comm, cudaStream_t s) {
  const int block = 128;
#pragma coconet region name(rows_cols) split reorder replicated(x)
  {
    ncclAllReduce(dy, dy, (size_t)rows * cols, ncclFloat, ncclSum, comm, s);
    bias_gelu_grad<<<(rows * cols + block - 1) / block, block, 0, s>>>(dx, dy, x, rows, cols);
  }
}

void step(float *w, float *g, Params params, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(member_count) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, params.n, ncclFloat, ncclSum, comm, s);
    sgd_params<<<(params.n + 255) / 256, 256, 0, s>>>(w, g, params);
  }
}

#if defined(METHOD)
__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

struct Averager {
  int n_;
  float inv_ranks_;
  void average(float *g, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(method) split reorder
    {
      ncclAllReduce(g, g, this->n_, ncclFloat, ncclSum, comm, s);
      scale<<<(n_ + 255) / 256, 256, 0, s>>>(g, inv_ranks_, n_);
    }
  }
};
#endif
// METHOD: verify=ir method: ok
// METHOD-CODE: const coconet_part coconet_p = coconet_slice(this->n_, coconet_rank, coconet_nranks);

// IR: verify=ir rows_cols: output 'dx' (f32): max relative error 0 over 1..4 ranks x 3 inputs
// IR: verify=ir rows_cols: ok
// IR: verify=ir member_count: output 'w' (f32): max relative error 0 over 1..4 ranks x 3 inputs
// IR: verify=ir member_count: ok
// EXEC: verify rows_cols: output 'dx' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify rows_cols: ok
// EXEC: verify member_count: output 'w' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify member_count: ok
