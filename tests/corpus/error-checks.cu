// Style: an inference engine's and a trainer's error checks between the work of
// a region (Inputs/checks/debug_sync.h): sync_check_cuda_error() after the
// AllReduce and after each kernel, a macro calling a function of the library that
// synchronizes and throws on a CUDA error when DEBUG_LEVEL=DEBUG (static locals
// reading the environment, std::string). Such a check reads and writes nothing
// the region computes with, so the schedule keeps it and runs the kernels that
// follow it next to the collective; it goes after them (--explain says so).
// Checked: split reorder of a bias + GELU, run equal with DEBUG_LEVEL unset and
// DEBUG (the host backend's synchronize); a ZeRO-style AdamW whose moments are
// shard(...) (the check after the AllReduce blocked the shard before); and the
// one-shot fused kernel; a layer's method (FfnLayer: members, a guarded AllReduce, a
// launcher's path), with the check inside the guard as the library writes it
// (`if (world > 1) { allreduce; sync_check_cuda_error(); }`: the check then runs
// when the guard does not hold too, changing nothing); a check written as a
// do-while macro with its own local (MACRO_CHECK). Refused, each with why (a
// review's programs, where the check changed what a kernel reads: run as written
// and scheduled, they differed): a check that counts into a global of the library
// (COUNTED_CHECKS), one given the region's stream (STREAM_CHECK), one writing
// through a const pointer to a global (CONST_PTR), calling a function through
// std::invoke (INVOKE), setting the environment, which a kernel's argument could read (ENV),
// changing a static local that a kernel's argument reads through the function returning
// it by reference (STATIC_REF; a singleton's, a logger's, no statement reads is fine),
// and a method of the layer (MEMBER_CHECK).
// RUN: %coconet --verify=3 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: env DEBUG_LEVEL=DEBUG %coconet --verify=2 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=2 %s -- -I%S/Inputs -DFUSE | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -I%S/Inputs | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --explain --check %s -- -I%S/Inputs | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DCOUNTED_CHECKS 2>&1 | %FileCheck --check-prefix=COUNTED %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DSTREAM_CHECK 2>&1 | %FileCheck --check-prefix=STREAM %s
// RUN: %coconet --verify=2 %s -- -I%S/Inputs -DMACRO_CHECK | %FileCheck --check-prefix=EXEC %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DCONST_PTR 2>&1 | %FileCheck --check-prefix=CONST_PTR %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DINVOKE 2>&1 | %FileCheck --check-prefix=INVOKE %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DENV 2>&1 | %FileCheck --check-prefix=ENV %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DSTATIC_REF 2>&1 | %FileCheck --check-prefix=STATIC_REF %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DMEMBER_CHECK 2>&1 | %FileCheck --check-prefix=MEMBER %s
#include <nccl.h>

#include "checks/debug_sync.h"

#include <cstdio>
#include <cstdlib>
#include <functional>

// The nearest refusals: what each "check" changes, a kernel's argument reads.
float g_scale = 1.0f;
#if defined(CONST_PTR)
float *const g_scale_ptr = &g_scale;  // (a const variable unused elsewhere: nvcc warns)
#endif
inline void bump() { g_scale *= 2.0f; }
inline float &gelu_scale() {
  static float s = 1.0f;
  return s;
}
inline void scaled_check() {
  gelu_scale() *= 2.0f;
  cudaDeviceSynchronize();
}
#define CHECK_LAST()                                                \
  do {                                                              \
    cudaError_t e = cudaGetLastError();                             \
    if (e != cudaSuccess) {                                         \
      fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e));   \
      exit(1);                                                      \
    }                                                               \
  } while (0)
#if defined(CONST_PTR)
#define FIRST_CHECK() (*g_scale_ptr = 2.0f, cudaDeviceSynchronize())
#elif defined(INVOKE)
#define FIRST_CHECK() (std::invoke(bump), cudaDeviceSynchronize())
#elif defined(ENV)
#define FIRST_CHECK() (setenv("GELU_SCALE", "2", 1), cudaDeviceSynchronize())
#elif defined(STATIC_REF)
#define FIRST_CHECK() scaled_check()
#define GELU_SCALE gelu_scale()
#elif defined(MACRO_CHECK)
#define FIRST_CHECK() CHECK_LAST()
#else
#define FIRST_CHECK() sync_check_cuda_error()
#endif
#ifndef GELU_SCALE
#define GELU_SCALE 1.0f
#endif

__global__ void add_bias_gelu(float *x, const float *bias, float scale, int n, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i] + bias[i % cols];
    x[i] = scale * 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
  }
}

__global__ void adamw(float *w, const float *g, float *m, float *v, float lr, float b1, float b2, float eps,
                      float wd, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    m[i] = b1 * m[i] + (1.0f - b1) * g[i];
    v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
    w[i] -= lr * (m[i] / (sqrtf(v[i]) + eps) + wd * w[i]);
  }
}

void mlp_out(float *x, const float *bias, int tokens, int cols, ncclComm_t comm, cudaStream_t stream) {
#ifdef FUSE
#pragma coconet region name(mlp) split reorder replicated(bias) fuse
#else
#pragma coconet region name(mlp) split reorder replicated(bias)
#endif
  {
    ncclAllReduce(x, x, tokens * cols, ncclFloat, ncclSum, comm, stream);
#ifdef STREAM_CHECK
    engine::streamCheck(stream);
#else
    FIRST_CHECK();
#endif
    add_bias_gelu<<<(tokens * cols + 255) / 256, 256, 0, stream>>>(x, bias, GELU_SCALE, tokens * cols, cols);
    sync_check_cuda_error();
  }
}

void optimizer_step(float *w, float *g, float *m, float *v, float lr, int n, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(adam) split reorder shard(m, v) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream);
    sync_check_cuda_error();
    adamw<<<(n + 255) / 256, 256, 0, stream>>>(w, g, m, v, lr, 0.9f, 0.999f, 1e-8f, 0.01f, n);
    sync_check_cuda_error();
  }
}

// A layer of the library's: the region in a method of a class template, its sizes and stream
// members, the AllReduce guarded by the world size, a launcher that picks its kernel by a
// member (the schedule is for one path, tested at the region's top: a check between is read
// as changing nothing, where any other call might change a member).
template <typename T>
void invoke_bias_gelu(T *x, const T *bias, int n, int cols, cudaStream_t stream) {
  if (cols % 4 == 0)
    add_bias_gelu<<<(n + 255) / 256, 256, 0, stream>>>(x, bias, 1.0f, n, cols);
  else
    add_bias_gelu<<<(n + 127) / 128, 128, 0, stream>>>(x, bias, 1.0f, n, cols);
}

struct TensorParallel {
  int world_size_;
  ncclComm_t comm_;
};

template <typename T>
class FfnLayer {
 public:
  FfnLayer(int hidden_units, TensorParallel tp, cudaStream_t stream)
      : hidden_units_(hidden_units), tensor_para_(tp), stream_(stream) {}
  void forward(T *out, const T *bias, int h_token_num);

 private:
  void check() { hidden_units_ = hidden_units_ / 2; }
  int hidden_units_;
  TensorParallel tensor_para_;
  cudaStream_t stream_;
};

template <typename T>
void FfnLayer<T>::forward(T *out, const T *bias, int h_token_num) {
#ifdef FUSE
#pragma coconet region name(ffn) split reorder replicated(bias) fuse
#else
#pragma coconet region name(ffn) split reorder replicated(bias)
#endif
  {
    if (tensor_para_.world_size_ > 1) {
      ncclAllReduce(out, out, h_token_num * hidden_units_, ncclFloat, ncclSum, tensor_para_.comm_, stream_);
      sync_check_cuda_error();
    }
#ifdef MEMBER_CHECK
    check();
#endif
    invoke_bias_gelu(out, bias, h_token_num * hidden_units_, hidden_units_, stream_);
    sync_check_cuda_error();
  }
}

template class FfnLayer<float>;

// EXEC: verify mlp: ok
// EXEC: verify adam: ok
// EXEC: verify ffn_float: ok
// CODE: COCONET_NCCL_CHECK(ncclAllGather(x + coconet_p.slice_lo, x,
// CODE-NEXT: stream));
// CODE-NEXT: FIRST_CHECK();
// CODE-NEXT: sync_check_cuda_error();
// The layer's region: the check inside the guard runs after the kernel, unguarded; the region as
// written runs it inside the guard, once.
// CODE: COCONET_NCCL_CHECK(ncclAllGather(out + coconet_p.slice_lo, out, coconet_p.s, ncclFloat,
// CODE-NEXT: tensor_para_.comm_, stream_));
// CODE-NEXT: sync_check_cuda_error();
// CODE-NEXT: sync_check_cuda_error();
// CODE-NEXT: } else {
// CODE-NEXT: if (tensor_para_.world_size_ > 1) {
// CODE-NEXT: ncclAllReduce(out, out, h_token_num * hidden_units_, ncclFloat, ncclSum, tensor_para_.comm_, stream_);
// CODE-NEXT: sync_check_cuda_error();
// CODE-NEXT: }
// CODE-NEXT: invoke_bias_gelu(out, bias, h_token_num * hidden_units_, hidden_units_, stream_);
// CODE-NEXT: sync_check_cuda_error();
// CODE-NEXT: }
// EXPLAIN: the error check 'FIRST_CHECK();' ({{.*}}error-checks.cu:[[#@LINE-91]]:5) runs after the kernels that follow it: it reads and writes no buffer
// EXPLAIN-NOT: error-checks.cu:[[#@LINE-89]]:5) runs after
// COUNTED: error: reorder: no pointwise kernel consumes the result of a split AllReduce
// COUNTED: note: the AllReduce is followed by 'sync_check_cuda_error();', a statement coconet does not see into
// CONST_PTR: note: the AllReduce is followed by 'FIRST_CHECK();', a statement coconet does not see into (nor reads as an error check: it reads 'g_scale_ptr', a variable of the program, and coconet does not follow what it changes)
// INVOKE: (nor reads as an error check: it calls 'invoke' of a library with a type or a function of the program, whose code coconet does not follow there)
// ENV: (nor reads as an error check: it calls 'setenv', which changes what a later call reads)
// STATIC_REF: (nor reads as an error check: it uses a static local of 'gelu_scale', which the statement at line [[#@LINE-96]] calls too)
// MEMBER: error: region 'ffn_float': 'invoke_bias_gelu<float>' launches kernel 'add_bias_gelu' when (hidden_units_ % 4 == 0), so the schedule, which is for that kernel, runs when it holds at the top of the region; this statement may change 'hidden_units_' first
// STREAM: note: the AllReduce is followed by 'engine::streamCheck(stream);', a statement coconet does not see into
