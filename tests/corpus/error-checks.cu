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
// launcher's path). Refused, each with why: a check that counts into a
// global of the library (COUNTED_CHECKS), a check given the region's stream
// (STREAM_CHECK).
// RUN: %coconet --verify=3 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: env DEBUG_LEVEL=DEBUG %coconet --verify=2 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=2 %s -- -I%S/Inputs -DFUSE | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -I%S/Inputs | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --explain --check %s -- -I%S/Inputs | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DCOUNTED_CHECKS 2>&1 | %FileCheck --check-prefix=COUNTED %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DSTREAM_CHECK 2>&1 | %FileCheck --check-prefix=STREAM %s
#include <nccl.h>

#include "checks/debug_sync.h"

__global__ void add_bias_gelu(float *x, const float *bias, int n, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i] + bias[i % cols];
    x[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
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
    sync_check_cuda_error();
#endif
    add_bias_gelu<<<(tokens * cols + 255) / 256, 256, 0, stream>>>(x, bias, tokens * cols, cols);
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
    add_bias_gelu<<<(n + 255) / 256, 256, 0, stream>>>(x, bias, n, cols);
  else
    add_bias_gelu<<<(n + 127) / 128, 128, 0, stream>>>(x, bias, n, cols);
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
  int hidden_units_;
  TensorParallel tensor_para_;
  cudaStream_t stream_;
};

template <typename T>
void FfnLayer<T>::forward(T *out, const T *bias, int h_token_num) {
#pragma coconet region name(ffn) split reorder replicated(bias)
  {
    if (tensor_para_.world_size_ > 1) {
      ncclAllReduce(out, out, h_token_num * hidden_units_, ncclFloat, ncclSum, tensor_para_.comm_, stream_);
    }
    sync_check_cuda_error();
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
// CODE-NEXT: sync_check_cuda_error();
// CODE-NEXT: sync_check_cuda_error();
// EXPLAIN: the error check 'sync_check_cuda_error();' ({{.*}}error-checks.cu:[[#@LINE-69]]:5) runs after the kernels that follow it: it reads and writes no buffer
// EXPLAIN-NOT: error-checks.cu:[[#@LINE-67]]:5) runs after
// COUNTED: error: reorder: no pointwise kernel consumes the result of a split AllReduce
// COUNTED: note: the AllReduce is followed by 'sync_check_cuda_error();', a statement coconet does not see into
// STREAM: note: the AllReduce is followed by 'engine::streamCheck(stream);', a statement coconet does not see into
