// Style: FasterTransformer's kernels. A kernel template with an explicit specialization for
// float (`template <> __global__ void k(float *out, ...)`): the launch k<float> runs the
// specialization, so that is the code coconet reads, not the primary template's instance.
// A pointwise template whose float specialization scales differently, and a row-wise
// template whose primary form cannot be read (its rows step by gridDim.x) while the
// specialization the launch runs can: both translated and verified. The nearest refusal:
// a specialization that reads the next row (the primary template is row-wise; before,
// coconet read the primary and the translation computed something else), and a specialization
// only declared here, its code in another file (with DECLARED_ONLY).
// RUN: %coconet --verify=3 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %expect 1 %coconet --check %s -- -DNEXT_ROW 2>&1 | %FileCheck --check-prefix=NEXT_ROW %s
// RUN: %expect 1 %coconet --check %s -- -DDECLARED_ONLY 2>&1 | %FileCheck --check-prefix=DECLARED_ONLY %s
#include <cuda_runtime.h>
#include <nccl.h>

template <typename T>
__global__ void scale_add(T *out, const T *bias, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (T)((float)out[i] * s + (float)bias[i]);
}

// What runs for float: a different formula, the one the schedule must compute.
#ifdef DECLARED_ONLY
template <>
__global__ void scale_add(float *out, const float *bias, float s, int n);  // defined in another file
#else
template <>
__global__ void scale_add(float *out, const float *bias, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fmaf(out[i], 0.5f * s, bias[i]);
}
#endif

__device__ float block_sum(float v) {
  __shared__ float part[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  return v;
}

// The primary template reads rows at blockIdx.x + gridDim.x: not what runs for float.
template <typename T>
__global__ void center(T *out, const T *res, int n) {
  __shared__ float s_mean;
  float sum = 0.0f;
  for (int j = threadIdx.x; j < n; j += blockDim.x) sum += (float)res[((blockIdx.x + 1) % gridDim.x) * n + j];
  sum = block_sum(sum);
  if (threadIdx.x == 0) s_mean = sum / n;
  __syncthreads();
  for (int j = threadIdx.x; j < n; j += blockDim.x) out[blockIdx.x * n + j] = (T)((float)out[blockIdx.x * n + j] - s_mean);
}

template <>
__global__ void center(float *out, const float *res, int n) {
  __shared__ float s_mean;
  float sum = 0.0f;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
#ifdef NEXT_ROW
    float v = out[blockIdx.x * n + j] + res[((blockIdx.x + 1) % gridDim.x) * n + j];
#else
    float v = out[blockIdx.x * n + j] + res[blockIdx.x * n + j];
#endif
    out[blockIdx.x * n + j] = v;
    sum += v;
  }
  sum = block_sum(sum);
  if (threadIdx.x == 0) s_mean = sum / n;
  __syncthreads();
  for (int j = threadIdx.x; j < n; j += blockDim.x) out[blockIdx.x * n + j] = out[blockIdx.x * n + j] - s_mean;
}

void bias_step(float *x, const float *bias, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(bias) split reorder replicated(bias)
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    scale_add<float><<<(n + 255) / 256, 256, 0, s>>>(x, bias, 2.0f, n);
  }
}

void norm_step(float *x, const float *res, int rows, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(norm) split reorder replicated(res)
  {
    ncclAllReduce(x, x, rows * n, ncclFloat, ncclSum, comm, s);
    center<float><<<rows, 256, 0, s>>>(x, res, n);
  }
}
// EXEC: verify bias: ok
// EXEC: verify norm: ok
// The element runs the specialization's text.
// CODE: // coconet: element i of scale_add<float> ({{.*}}), the kernel's own text
// CODE-NEXT: // (explicit-specialization.cu:[[#@LINE-64]])
// CODE: out = fmaf(out, 0.5f * s, bias);
// NEXT_ROW: explicit-specialization.cu:[[@LINE-34]]:41: error: kernel 'center' reads res[((blockIdx.x + 1) % gridDim.x) * n + j]; a row-wise kernel reads global memory only at
// DECLARED_ONLY: error: the kernel's definition is not in this file or a header it includes
