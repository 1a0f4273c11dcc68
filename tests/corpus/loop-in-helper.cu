// Style: llm.c's AdamW. The kernel's body is one call of a __device__ helper that holds
// the element loop (`int idx = blockIdx.x * blockDim.x + threadIdx.x; if (idx >= n)
// return;`), called with each tensor's slice of the flat buffers (`params +
// blockIdx.y * w_stride`), the master weights as `master ? master + blockIdx.y *
// s_stride : NULL` and tested against NULL in the helper, bf16 parameters rounded
// stochastically by a helper keyed by the thread. Pragma lines only: the helper's body is
// read as the kernel's, its parameters bound to the call's arguments. With ONE_D, a plain
// launch of a kernel calling a helper with its own buffers. The nearest refusals: a
// kernel with another statement before the call, a helper assigning its count, a helper
// returning a value (RETURNS).
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=4 %s -- -DFP32 | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet %s -- -DFP32 | %FileCheck --check-prefix=TEXT %s
// RUN: %coconet --explain %s | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %coconet --verify=4 %s -- -DONE_D | %FileCheck --check-prefix=ONE_D %s
// RUN: %coconet --verify=3 %s -- -DONE_D -DINDEX_NAMES | %FileCheck --check-prefix=INDEX_NAMES %s
// RUN: %coconet --verify=3 %s -- -DONE_D -DDEFAULT_NAMES | %FileCheck --check-prefix=DEFAULT_NAMES %s
// RUN: %coconet %s -- -DONE_D -DDEFAULT_NAMES | %FileCheck --check-prefix=DEFAULT_CODE %s
// RUN: %expect 1 %coconet --check %s -- -DONE_D -DTWO_STATEMENTS 2>&1 | %FileCheck --check-prefix=TWO_STATEMENTS %s
// RUN: %expect 1 %coconet --check %s -- -DONE_D -DASSIGNS_COUNT 2>&1 | %FileCheck --check-prefix=ASSIGNS_COUNT %s
// RUN: %expect 1 %coconet --check %s -- -DONE_D -DRETURNS 2>&1 | %FileCheck --check-prefix=RETURNS %s
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#ifndef ONE_D
__device__ __forceinline__ unsigned noise_bits(unsigned x, unsigned y, unsigned seed) {
  unsigned h = seed ^ (x * 0x9E3779B1u) ^ (y * 0x85EBCA77u);
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  return h ^ (h >> 12);
}

// Keyed by the thread, as llm.c's stochastic_rounding: the scheduled program must give
// each element the thread coordinates the program as written gives it.
__device__ __forceinline__ void stochastic_rounding(float in, __nv_bfloat16 *out, unsigned seed) {
  unsigned threshold = noise_bits(threadIdx.x, blockIdx.x * blockDim.x + blockIdx.y, seed) & 0xFFFF;
  unsigned float_bits = __float_as_uint(in);
  unsigned rounded_bits = float_bits & 0x0000FFFF;
  float_bits = (rounded_bits > threshold) ? (float_bits | 0xFFFF) : (float_bits & ~0xFFFF);
  *out = __float2bfloat16_rn(__uint_as_float(float_bits));
}
__device__ __forceinline__ void stochastic_rounding(float in, float *out, unsigned) { *out = in; }

__device__ __forceinline__ float lerp(float start, float end, float weight) {
  return fma(weight, end, fma(-weight, start, start));
}

template <typename Tp, typename Tg>
__device__ void adamw_update(Tp *params_memory, float *master_params_memory, Tg *grads_memory, float *m_memory,
                             float *v_memory, size_t num_parameters, float learning_rate, float beta1, float beta2,
                             float beta1_correction, float beta2_correction, float eps, float weight_decay,
                             float grad_scale, unsigned int seed) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= num_parameters) { return; }  // guard
  float grad = grad_scale * (float)grads_memory[idx];
  float m = m_memory[idx];
  float v = v_memory[idx];
  m = lerp(grad, m, beta1);
  m_memory[idx] = m;
  v = lerp(grad * grad, v, beta2);
  v_memory[idx] = v;
  m /= beta1_correction;
  v /= beta2_correction;
  float old_param = (master_params_memory != NULL) ? master_params_memory[idx] : (float)params_memory[idx];
  float param = old_param - (learning_rate * (m / (sqrtf(v) + eps) + weight_decay * old_param));
  stochastic_rounding(param, &params_memory[idx], seed);
  if (master_params_memory != NULL) { master_params_memory[idx] = param; }
}

template <typename Tp, typename Tg>
__global__ void adamw_kernel3(Tp *params_memory, float *master_params_memory, Tg *grads_memory, float *m_memory,
                              float *v_memory, size_t num_parameters, ptrdiff_t w_stride, ptrdiff_t g_stride,
                              ptrdiff_t s_stride, float learning_rate, float beta1, float beta2,
                              float beta1_correction, float beta2_correction, float eps, float weight_decay,
                              float grad_scale, unsigned int seed) {
  adamw_update(params_memory + blockIdx.y * w_stride,
               master_params_memory ? master_params_memory + blockIdx.y * s_stride : NULL,
               grads_memory + blockIdx.y * g_stride,
               m_memory + blockIdx.y * s_stride,
               v_memory + blockIdx.y * s_stride,
               num_parameters, learning_rate, beta1, beta2, beta1_correction, beta2_correction, eps, weight_decay,
               grad_scale, seed);
}

#ifdef FP32
typedef float floatX;
#else
typedef __nv_bfloat16 floatX;
#endif

void adamw_step(floatX *params, float *master, float *grads, float *m, float *v, size_t n, int layers, float lr,
                float b1c, float b2c, unsigned seed, ncclComm_t comm, cudaStream_t s) {
  int block_size = 512;
  int num_blocks = (n + block_size - 1) / block_size;
#pragma coconet region name(adamw) split reorder scratch(grads) shard(m, v, master) replicated(params)
  {
    ncclAllReduce(grads, grads, layers * n, ncclFloat, ncclSum, comm, s);
    adamw_kernel3<<<dim3(num_blocks, layers), block_size, 0, s>>>(params, master, grads, m, v, n, n, n, n, lr, 0.9f,
                                                                  0.95f, b1c, b2c, 1e-8f, 0.1f, 1.0f, seed);
  }
}
#else
__device__ void update(float *p, const float *g, float lr, int n) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef ASSIGNS_COUNT
  n = n / 2;
#endif
  if (idx >= n) return;
  p[idx] -= lr * g[idx];
}
#ifdef INDEX_NAMES
// The helper's index named as a kernel parameter (stride) and as a file-scope constant the kernel's
// arguments read (unit): the element's arguments are evaluated before the helper's names exist.
// The call leaves out an argument with a default (decay): the default is its argument.
constexpr int unit = 1;
__device__ void shift(float *p, const float *g, size_t n, float lr, float decay = 0.25f) {
  int stride = blockIdx.x * blockDim.x + threadIdx.x;
  if (stride >= n) return;
  int unit = stride % 3;
  p[stride] -= lr * g[stride] + decay * (float)unit;
}
__global__ void shift_layers(float *p, const float *g, size_t n, ptrdiff_t stride, float lr) {
  shift(p + blockIdx.y * stride, g + blockIdx.y * stride, n, lr * unit);
}
void layers_step(float *p, float *g, size_t n, int layers, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(names) split reorder replicated(p)
  {
    ncclAllReduce(g, g, n * layers, ncclFloat, ncclSum, comm, s);
    shift_layers<<<dim3((n + 127) / 128, layers), 128, 0, s>>>(p, g, n, n, 0.1f);
  }
}
#endif
#ifdef DEFAULT_NAMES
// A default naming a file-scope constant that the kernel's parameter of the same name hides
// there (K), and a template helper's default naming its parameter (T(2)): the element is
// generated from the IR, which reads each default where the helper declares it.
constexpr float K = 2.0f;
template <typename T>
__device__ void scaled(T *p, const T *g, int n, T lr, T s = K * T(2)) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < n) p[idx] -= lr * s * g[idx];
}
__global__ void scaled_kernel(float *p, const float *g, int n, float K) { scaled(p, g, n, K); }
void scaled_step(float *p, float *g, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(defaults) split reorder replicated(p)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    scaled_kernel<<<(n + 255) / 256, 256, 0, s>>>(p, g, n, 7.0f);
  }
}
#endif
#ifdef RETURNS
// The helper returns the update: what it returns is not a store coconet reads.
__device__ float update_norm(float *p, const float *g, float lr, int n) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= n) return 0.0f;
  p[idx] -= lr * g[idx];
  return p[idx];
}
__global__ void kern(float *p, const float *g, float lr, int n) { update_norm(p, g, lr, n); }
#elif defined(TWO_STATEMENTS)
__global__ void kern(float *p, const float *g, float lr, int n) {
  float half = 0.5f * lr;
  update(p, g, half, n);
}
#else
__global__ void kern(float *p, const float *g, float lr, int n) { update(p, g, lr, n); }
#endif
void f(float *p, float *g, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(h) split reorder replicated(p) scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    kern<<<(n + 255) / 256, 256, 0, s>>>(p, g, 0.1f, n);
  }
}
#endif
// EXEC: verify adamw: ok
// The helper reads where the thread is (stochastic_rounding): the element is generated from the IR,
// which gives it the thread coordinates the launch as written gives it.
// CODE: // coconet: one element i of adamw_kernel3 (loop-in-helper.cu:[[#]]), adamw_kernel3 generated from the
// CODE-NEXT: // IR (helper 'stochastic_rounding' reads where the thread is, and would see the generated kernel's
// The helper's `master_params_memory != NULL` is the kernel's test of `master`: the schedule runs when
// it is not null, the region as written when it is.
// CODE: // coconet: kernel 'adamw_kernel3' tests 'master' against NULL (loop-in-helper.cu:[[#]]:21): the
// CODE-NEXT: // schedule is for master != nullptr; the region runs as written otherwise
// CODE-NEXT: if (master != nullptr) {
// In fp32 the rounding helper reads no thread coordinates: the element runs the helper's own text,
// its parameters bound to the kernel's arguments as written (a parameter named as a kernel
// parameter shadows it in a block of its own), under the helper's template arguments.
// TEXT: // coconet: the arguments {{adamw_kernel3}} passes to adamw_update, its parameters bound to them
// TEXT-NEXT: float *coconet_a0 = params_memory + blockIdx.y * w_stride;
// TEXT-NEXT: float *coconet_a1 = master_params_memory ? master_params_memory + blockIdx.y * s_stride : NULL;
// TEXT: {
// TEXT-NEXT: using Tp {{\[\[}}maybe_unused{{\]\]}} = float;
// TEXT-NEXT: using Tg {{\[\[}}maybe_unused{{\]\]}} = float;
// TEXT-NEXT: float *params_memory = coconet_a0;
// TEXT: float old_param = (master_params_memory != NULL) ? master_params_memory[idx] : (float)params_memory[idx];
// TEXT: stochastic_rounding(param, &params_memory[idx], seed);
// EXPLAIN: analysis: kernel 'adamw_kernel3' is one call of __device__ helper 'adamw_update' ({{.*}}loop-in-helper.cu:[[#]]:[[#]]), which holds the element loop: its body is read as the kernel's, its parameters bound to the call's arguments
// ONE_D: verify h: ok
// DEFAULT_NAMES: verify defaults: ok
// DEFAULT_CODE: // coconet: one element i of scaled_kernel (loop-in-helper.cu:[[#]]), scaled_kernel generated from the
// DEFAULT_CODE-NEXT: // IR (the call leaves out an argument whose default names something)
// INDEX_NAMES: verify names: ok
// INDEX_NAMES: verify h: ok
// TWO_STATEMENTS: loop-in-helper.cu:[[@LINE-42]]:3: error: kernel 'kern': cannot find the element loop {{.*}} at 'update(p, g, half, n)'; the element index is computed in __device__ function 'update', which coconet reads for it only when the kernel's body is the one call of it
// ASSIGNS_COUNT: loop-in-helper.cu:[[@LINE-104]]:64: error: kernel 'kern': helper 'update', which holds the element loop, assigns its parameter 'n'
// RETURNS: loop-in-helper.cu:[[@LINE-48]]:67: error: kernel 'kern': cannot find the element loop {{.*}} at 'update_norm(p, g, lr, n)'; the element index is computed in __device__ function 'update_norm', which coconet reads for it only when the kernel's body is the one call of it and it returns nothing
