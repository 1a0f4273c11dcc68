// Style: an inference engine's launch wrappers. Kernel templates are launched
// from `template <typename T> void invokeX(..., cudaStream_t stream)` functions
// that compute a dim3 grid and block, sometimes through another wrapper with a
// block size as a template argument, and an explicit specialization for one
// type. coconet sees through the instance the call uses, to any depth, and
// writes the kernel template's arguments out where it launches it.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --explain %s | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// The same through the wrappers, fused into one kernel on NCCL's device API:
// RUN: %coconet --verify=4 %s -- -DFUSE | %FileCheck --check-prefix=FUSE %s
// RUN: %coconet --explain %s -- -DFUSE | %FileCheck --check-prefix=FUSE_EXPLAIN %s
// RUN: %expect 1 %coconet --check %s -- -DEXTRA_STATEMENT 2>&1 | %FileCheck --check-prefix=EXTRA %s
// RUN: %expect 1 %coconet --check %s -- -DTWO_DIM_BLOCK 2>&1 | %FileCheck --check-prefix=TWO_DIM %s
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>

template <typename T>
__global__ void addBiasResidual(T *out, const T *bias, const T *residual, int n, int hidden) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (T)((float)out[i] + (float)bias[i % hidden] + (float)residual[i]);
}

template <typename T>
static void invokeAddBiasResidual(T *out, const T *bias, const T *residual, int m, int n, cudaStream_t stream) {
  const int total = m * n;
#ifdef TWO_DIM_BLOCK
  dim3 block(128, 2);
#else
  dim3 block(256);
#endif
  dim3 grid((total + block.x - 1) / block.x);
  addBiasResidual<T><<<grid, block, 0, stream>>>(out, bias, residual, total, n);
}

template <typename T, int BLOCK> __global__ void scaleBy(T *x, float a, int n) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) x[i] = (T)((float)x[i] * a);
}

template <typename T, int BLOCK> void invokeScale(T *x, float a, int n, cudaStream_t stream) {
  scaleBy<T, BLOCK><<<(n + BLOCK - 1) / BLOCK, BLOCK, 0, stream>>>(x, a, n);
}

template <typename T> void invokeHalve(T *x, int n, cudaStream_t stream) {
#ifdef EXTRA_STATEMENT
  cudaGetLastError();
#endif
  invokeScale<T, 128>(x, 0.5f, n, stream);
}

__global__ void reluKernel(float *x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) x[i] = fmaxf(x[i], 0.0f);
}

template <typename T> void invokeRelu(T *x, int n, cudaStream_t stream);
template <> void invokeRelu<float>(float *x, int n, cudaStream_t stream) {
  dim3 grid(std::min((n + 255) / 256, 1024));
  reluKernel<<<grid, 256, 0, stream>>>(x, n);
}

void layer(float *out, const float *bias, const float *res, __half *h, float *act, int tokens, int hidden,
           ncclComm_t comm, cudaStream_t s) {
#ifdef FUSE
#pragma coconet region name(bias_residual) split reorder fuse replicated(bias, res)
#else
#pragma coconet region name(bias_residual) split reorder replicated(bias, res)
#endif
  {
    ncclAllReduce(out, out, tokens * hidden, ncclFloat, ncclSum, comm, s);
    invokeAddBiasResidual(out, bias, res, tokens, hidden, s);
  }
#pragma coconet region name(two_deep) split reorder
  {
    ncclAllReduce(h, h, tokens * hidden, ncclHalf, ncclSum, comm, s);
    invokeHalve(h, tokens * hidden, s);
  }
#pragma coconet region name(specialized) split reorder
  {
    ncclAllReduce(act, act, tokens * hidden, ncclFloat, ncclSum, comm, s);
    invokeRelu<float>(act, tokens * hidden, s);
  }
}

// IR: verify=ir bias_residual: ok
// IR: verify=ir two_deep: ok
// IR: verify=ir specialized: ok
// EXEC: verify bias_residual: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify two_deep: output 'h' (f16): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify two_deep: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify specialized: ok (the region as written and as scheduled agree within 0 ULP)
// EXPLAIN: explain bias_residual
// EXPLAIN-NEXT: - analysis: the call of 'invokeAddBiasResidual<float>' ({{.*}}template-wrappers.cu:{{[0-9]+}}:13) is the launch of kernel 'addBiasResidual' inside it, seen through (its parameters stand for the call's arguments)
// EXPLAIN-NEXT: - analysis: kernel 'addBiasResidual' ({{.*}}) is a template: analyzed as its instance for <float>
// EXPLAIN: explain two_deep
// EXPLAIN-NEXT: - analysis: the call of 'invokeHalve<__half>' ({{.*}}) is the launch of kernel 'scaleBy' inside it (through 'invokeScale<__half, 128>'), seen through (its parameters stand for the call's arguments)
// EXPLAIN: explain specialized
// EXPLAIN-NEXT: - analysis: the call of 'invokeRelu<float>' ({{.*}}) is the launch of kernel 'reluKernel' inside it, seen through
// The slice kernels run the kernels' own text with the instance's arguments;
// where the block falls back to the region as written, it is the call as written:
// CODE: {{^[^/]*}}typedef float T;
// CODE: {{^[^/]*}}typedef __half T;
// CODE-NEXT: {{^[^/]*}}constexpr int BLOCK = 128;
// CODE: {{^[^/]*}}invokeAddBiasResidual(out, bias, res, tokens, hidden, s);
// CODE: {{^[^/]*}}coconet_two_deep_slice<<<
// CODE: {{^[^/]*}}coconet_specialized_slice<<<
// CODE-NOT: {{^[^/]*}}(void)invoke
// EXTRA: note: the call of 'invokeHalve<__half>' ({{.*}}template-wrappers.cu:{{[0-9]+}}:28) is not seen through as the kernel launch or collective inside it: its body has a statement that is not an initialized local, a launch, an NCCL collective or group call, a call of such a function, or one coconet can run beside its collective ('cudaGetLastError()' at template-wrappers.cu:{{[0-9]+}}: it calls 'cudaGetLastError', which may touch the device); coconet sees through a host function whose body is initialized locals and then one launch, one NCCL collective (in a group of its own or none), or one call of another such function, and beside a collective, statements that read none of its parameters or locals and reach no kernel, CUDA or NCCL call
// TWO_DIM: note: the call of 'invokeAddBiasResidual<float>' ({{.*}}) is not seen through as the kernel launch or collective inside it: its body declares a local without an initializer of one value
// FUSE: verify bias_residual: ok (the region as written and as scheduled agree within 0 ULP)
// FUSE_EXPLAIN: fuse: ReduceScatter of 'out' + 2 slice kernel launch(es) + AllGather(s) become one kernel (group 1)
