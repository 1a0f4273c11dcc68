// Style: a library that keeps its kernels and the host functions that launch
// them in one namespace block (as inference engines' kernel libraries do): an
// elementwise epilogue after an AllReduce, and a residual + RMSNorm fused with
// its AllReduce (`split reorder fuse`). Both generated kernels run the kernels'
// own text, so they go beside the region's function, inside the namespace,
// after the kernels (what names no kernel goes above the namespace). Another
// function in a nested namespace uses a kernel of an anonymous namespace; one of
// the namespace's functions is defined outside its block (`void
// kernels::epilogue_late(...)`). --verify runs each region's code at 1..4 ranks
// (the harness names the function's namespace).
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
#include <cuda_runtime.h>
#include <nccl.h>

namespace kernels {

__global__ void add_bias(float *y, const float *bias, int n, int h) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] += bias[i % h];
}

__device__ float block_sum(float v) {
  __shared__ float warps[32];
  __syncthreads();
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  if ((threadIdx.x & 31) == 0) warps[threadIdx.x >> 5] = v;
  __syncthreads();
  v = threadIdx.x < (blockDim.x >> 5) ? warps[threadIdx.x] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  if (threadIdx.x == 0) warps[0] = v;
  __syncthreads();
  return warps[0];
}

__global__ void residual_rmsnorm(float *out, float *residual, const float *x, const float *w, int rows, int h) {
  const int row = blockIdx.x;
  if (row >= rows) return;
  float ss = 0.0f;
  for (int j = threadIdx.x; j < h; j += blockDim.x) {
    const float v = x[row * h + j] + residual[row * h + j];
    residual[row * h + j] = v;
    ss += v * v;
  }
  const float inv = rsqrtf(block_sum(ss) / h + 1e-6f);
  for (int j = threadIdx.x; j < h; j += blockDim.x) out[row * h + j] = residual[row * h + j] * inv * w[j];
}

void epilogue(float *y, const float *bias, int rows, int h, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(bias_out) split reorder replicated(bias)
  {
    ncclAllReduce(y, y, rows * h, ncclFloat, ncclSum, comm, s);
    add_bias<<<16, 128, 0, s>>>(y, bias, rows * h, h);
  }
}

void block_output(float *x, float *residual, float *out, const float *w, int rows, int h, ncclComm_t comm,
                  cudaStream_t s) {
#pragma coconet region name(norm_out) split reorder replicated(residual, w) scratch(x) fuse
  {
    ncclAllReduce(x, x, rows * h, ncclFloat, ncclSum, comm, s);
    residual_rmsnorm<<<rows, 128, 0, s>>>(out, residual, x, w, rows, h);
  }
}

void epilogue_late(float *y, const float *bias, int rows, int h, ncclComm_t comm, cudaStream_t s);

}  // namespace kernels

namespace {
__global__ void scale_rows(float *out, const float *x, int rows, int h) {
  const int row = blockIdx.x;
  if (row >= rows) return;
  for (int j = threadIdx.x; j < h; j += blockDim.x) out[row * h + j] = 0.5f * x[row * h + j];
}
}  // namespace

namespace outer {
namespace inner {
void scaled(float *x, float *out, int rows, int h, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(scaled) split reorder scratch(x) fuse
  {
    ncclAllReduce(x, x, rows * h, ncclFloat, ncclSum, comm, s);
    scale_rows<<<rows, 64, 0, s>>>(out, x, rows, h);
  }
}
}  // namespace inner
}  // namespace outer

// EXEC: verify bias_out: ok
// EXEC: verify norm_out: ok
// EXEC: verify scaled: ok

// The runtime's include after the file's; the elementwise slice kernel, which runs add_bias's own
// text, beside its function after that kernel; the fused kernel beside its function too; nothing
// above the namespace.
// CODE: #include <nccl.h>
// CODE-NEXT: #include <coconet_fused.h>  // coconet:
// CODE-NOT: region bias_out
// CODE: namespace kernels {
// CODE: __global__ void add_bias(
// CODE: __global__ void residual_rmsnorm(
// CODE: // coconet: begin generated code for region bias_out, beside its function
// CODE-NOT: namespace kernels
// CODE: __device__ __forceinline__ void coconet_bias_out_slice_add_bias(
// CODE: __global__ void coconet_bias_out_slice(
// CODE: // coconet: end generated code for region bias_out, beside its function
// CODE-EMPTY:
// CODE-NEXT: void epilogue(
// CODE: // coconet: begin generated code for region norm_out, beside its function
// CODE-NOT: namespace kernels
// CODE: __device__ __forceinline__ void coconet_norm_out_residual_rmsnorm(
// CODE: __global__ void coconet_norm_out_fused(
// CODE: // coconet: end generated code for region norm_out, beside its function
// CODE-EMPTY:
// CODE-NEXT: void block_output(
// A kernel of an anonymous namespace, launched from a nested namespace: its copy is wrapped in its namespace, above.
// CODE: // coconet: begin generated code for region scaled
// CODE: namespace {
// CODE-NEXT: __device__ __forceinline__ void coconet_scaled_scale_rows(
// CODE: }  // namespace (anonymous)
// CODE: __global__ void coconet_scaled_fused(
// CODE: coconet_scaled_scale_rows(out + coconet_lo
// CODE: namespace outer {

// A kernel launched by its qualified name from outside its namespace: the
// generated op function for its text gets one identifier for a name.
void qualified(float *y, const float *bias, int rows, int h, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(qualified) split reorder replicated(bias)
  {
    ncclAllReduce(y, y, rows * h, ncclFloat, ncclSum, comm, s);
    kernels::add_bias<<<16, 128, 0, s>>>(y, bias, rows * h, h);
  }
}
// EXEC: verify qualified: ok (the region as written and as scheduled agree within 0 ULP)
// CODE: {{^[^/]*}}__device__ __forceinline__ void coconet_qualified_slice_kernels__add_bias(

// Defined outside its namespace's block: the region names add_bias as the function's namespace does.
void kernels::epilogue_late(float *y, const float *bias, int rows, int h, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(late) split reorder replicated(bias)
  {
    ncclAllReduce(y, y, rows * h, ncclFloat, ncclSum, comm, s);
    add_bias<<<16, 128, 0, s>>>(y, bias, rows * h, h);
  }
}
// EXEC: verify late: ok (the region as written and as scheduled agree within 0 ULP)
