// Style: kernel templates, as trainers write their optimizers and epilogues:
// parameter and gradient types as template parameters (bf16 gradients read
// through a cast), launched with explicit and with deduced arguments, and a
// block size as a non-type parameter used in the index and the stride, in a
// namespace, calling helper templates of that namespace (clang resolves those
// calls to instantiated helpers, read with their types).
// coconet analyzes the instance each launch runs (clang resolves the types).
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --explain %s | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --target=host %s | %FileCheck --check-prefix=HOST %s
// RUN: %expect 1 %coconet --check %s -- -DDEPENDENT 2>&1 | %FileCheck --check-prefix=DEPENDENT %s
// RUN: %expect 1 %coconet --check %s -- -DPACK 2>&1 | %FileCheck --check-prefix=PACK %s
// RUN: %expect 1 %coconet --check %s -- -DLATER_OVERLOAD 2>&1 | %FileCheck --check-prefix=LATER %s
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

template <typename T, typename G>
__global__ void adamw(T *p, const G *g, float *m, float *v, float lr, float b1, float b2, float eps, float wd, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float grad = (float)g[i];
  float mi = b1 * m[i] + (1.0f - b1) * grad;
  float vi = b2 * v[i] + (1.0f - b2) * grad * grad;
  m[i] = mi;
  v[i] = vi;
  float w = static_cast<float>(p[i]);
  p[i] = T(w - lr * (mi / (sqrtf(vi) + eps) + wd * w));
}

namespace kernels {
template <typename T> __device__ T fused_mul_add(T a, T b, T c) { return a * b + c; }
template <typename T> __device__ T truncated(T a) { return T(int(a)); }

template <int BLOCK, typename T>
__global__ void scale_add(T *x, const T *y, T s, int n) {
  for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += BLOCK * gridDim.x) x[i] = fused_mul_add(x[i], s, y[i]) + truncated<T>(y[i]);
}
}  // namespace kernels

void step_bf16(float *p, __nv_bfloat16 *g, float *m, float *v, float lr, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(explicit_args) split reorder shard(m, v) scratch(g) replicated(p)
  {
    ncclAllReduce(g, g, n, ncclBfloat16, ncclSum, comm, s);
    adamw<float, __nv_bfloat16><<<(n + 255) / 256, 256, 0, s>>>(p, g, m, v, lr, 0.9f, 0.999f, 1e-8f, 0.01f, n);
  }
}

void step_deduced(float *p, float *g, float *m, float *v, float lr, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(deduced_args) split reorder shard(m, v) scratch(g) replicated(p)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    adamw<<<(n + 255) / 256, 256, 0, s>>>(p, g, m, v, lr, 0.9f, 0.999f, 1e-8f, 0.01f, n);
  }
}

constexpr int kBlock = 128;

void residual(float *x, float *y, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(block_param) split reorder replicated(y)
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    kernels::scale_add<kBlock><<<32, kBlock, 0, s>>>(x, y, 0.5f, n);
  }
}

// Outside any region: kept as written (the host backend writes the deduced arguments out).
void plain_step(float *p, const float *g, float *m, float *v, int n, cudaStream_t s) {
  adamw<<<(n + 255) / 256, 256, 0, s>>>(p, g, m, v, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, n);
  kernels::scale_add<kBlock><<<32, kBlock, 0, s>>>(p, m, 0.5f, n);
}

#ifdef DEPENDENT
template <typename T>
void generic_step(T *x, T *y, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(dependent) split reorder replicated(y)
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    kernels::scale_add<kBlock><<<32, kBlock, 0, s>>>(x, y, T(0.5f), n);
  }
}
#endif

#ifdef LATER_OVERLOAD
// The template's call of pick (a dependent call on a float: no argument-dependent
// lookup) sees only the pick(double) before it; the instance coconet parses at the
// end of the file would see this better overload too: refused.
__device__ float pick(double x) { return (float)x + 1.0f; }
template <typename T> __global__ void picked(T *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = pick(x[i]);
}
__device__ float pick(float x) { return x + 2.0f; }

void later(float *x, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(later) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    picked<<<(n + 255) / 256, 256, 0, s>>>(x, n);
  }
}
#endif

#ifdef PACK
template <typename... Ts>
__global__ void first_of(float *x, int n, Ts... rest) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 2.0f * x[i];
}

void pack(float *x, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(pack) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    first_of<<<(n + 255) / 256, 256, 0, s>>>(x, n, 1, 2.0f);
  }
}
#endif

// IR: verify=ir explicit_args: output 'p' (f32): max relative error 0 over 1..4 ranks x 3 inputs
// IR: verify=ir explicit_args: ok
// IR: verify=ir deduced_args: ok
// IR: verify=ir block_param: output 'x' (f32): max relative error 0 over 1..4 ranks x 3 inputs
// IR: verify=ir block_param: ok

// EXEC: verify explicit_args: shard 'm' (f32): max 0 ULP apart
// EXEC: verify explicit_args: output 'p' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify explicit_args: ok
// EXEC: verify deduced_args: ok
// EXEC: verify block_param: output 'x' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify block_param: ok


// EXPLAIN: explain explicit_args
// EXPLAIN-NEXT: - analysis: kernel 'adamw' ({{.*}}templates.cu:21:17) is a template: analyzed as its instance for <float, __nv_bfloat16>
// EXPLAIN: explain block_param
// EXPLAIN-NEXT: - analysis: kernel 'scale_add' ({{.*}}templates.cu:38:17) is a template: analyzed as its instance for <128, float>

// DEPENDENT: templates.cu:38:17: error: the launch of kernel template 'scale_add' has template arguments that depend on the enclosing template; coconet analyzes a launch whose arguments are known types and integers, and reads a region in a template in each instance of it that the file makes, which it could not for this one (no instance, or a template it does not instantiate: see pragmas.md, regions in templates)
// DEPENDENT: templates.cu:81:5: note: region 'dependent' needs this launch to be pointwise for its schedule
// PACK: error: kernel template 'first_of' has a template template parameter or a parameter pack

// The constant only the replaced launch used is kept used (nvcc warns otherwise):
// CODE: split reorder replicated(y): ReduceScatter(x) -> kernels::scale_add<kBlock> on this rank's slice -> AllGather(x)
// CODE: (void)kBlock;
// The host backend launches a template with all its arguments written out:
// HOST: coconet_host_launch(COCONET_HOST_SIMPLE, adamw<float, float>, (n + 255) / 256, 256, 0, s, p, g, m, v, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, n);
// HOST-NEXT: coconet_host_launch(COCONET_HOST_SIMPLE, kernels::scale_add<128, float>, 32, kBlock, 0, s, p, m, 0.5f, n);
// LATER: error: kernel template 'picked': coconet reads its instance for <float> where 'pick', which comes after the template in the file, is visible, and the template would not see it
