// comm.h: a project's NCCL and launch functions that log (tests/corpus/logged-wrappers.cu).
#pragma once
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>

namespace proj {

int log_level();  // (below: 1 with PROJ_LOG set)

#define PROJ_DEBUG(...)                       \
  do {                                        \
    if (proj::log_level() > 0) {              \
      std::fprintf(stderr, "[proj] ");        \
      std::fprintf(stderr, __VA_ARGS__);      \
      std::fprintf(stderr, "\n");             \
    }                                         \
  } while (0)

inline int log_level() {
  static int level = std::getenv("PROJ_LOG") ? 1 : 0;
  return level;
}

struct Stats {
  int collectives = 0;
};
inline Stats &stats() {
  static Stats s;
  return s;
}
inline void count_collective() { stats().collectives++; }

#if defined(UNSEEN)
void trace_event(const char *what);  // defined in another file
#elif defined(HOOK)
std::function<void()> after_hook;  // set by the program (it may launch)
#elif defined(DESTRUCTOR)
__global__ void mark(float *x) { x[0] = 1.0f; }
float *g_marks;
struct Span {  // a trace span whose end marks a buffer on the device
  ~Span() { mark<<<1, 1>>>(g_marks); }
};
#elif defined(GLOBAL_COUNT)
size_t g_count = 1024;
#endif

template <typename T>
ncclDataType_t nccl_type_of() {
  PROJ_DEBUG("nccl_type_of");
  return ncclFloat;
}

template <typename T>
void all_reduce_sum(T *buf, size_t n, ncclComm_t comm, cudaStream_t stream) {
  PROJ_DEBUG("all_reduce_sum start");
#if defined(READS_PARAM)
  PROJ_DEBUG("all_reduce_sum of %zu", n);
#elif defined(DEVICE)
  cudaDeviceSynchronize();
#elif defined(UNSEEN)
  trace_event("all_reduce_sum");
#endif
  const ncclDataType_t type = nccl_type_of<T>();
  if (ncclAllReduce(buf, buf, n, type, ncclSum, comm, stream) != ncclSuccess) std::abort();
  PROJ_DEBUG("all_reduce_sum stop");
  count_collective();
#if defined(HOOK)
  if (after_hook) after_hook();
#elif defined(DESTRUCTOR)
  Span();
#elif defined(THROWS)
  if (stats().collectives > 1000) throw std::runtime_error("too many collectives");
#elif defined(GLOBAL_COUNT)
  g_count += 256;
#elif defined(DIRECTIVE)
  {
#ifdef PROJ_TRACE
    std::fprintf(stderr, "trace\n");
#endif
  }
#endif
}

template <typename T>
__global__ void scale_add(T *x, const T *b, float s, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * s + b[i];
}

template <typename T>
void invoke_scale_add(T *x, const T *b, float s, size_t n, cudaStream_t stream) {
#if defined(LAUNCHER_LOGS)
  PROJ_DEBUG("invoke_scale_add");
#endif
  scale_add<T><<<(n + 255) / 256, 256, 0, stream>>>(x, b, s, n);
}

}  // namespace proj
