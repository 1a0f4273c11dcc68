// invoke.h: the engine's launchers (tests/corpus/header-wrappers.cu): template
// invoke functions that compute a grid and launch, one calling another.
#pragma once
#include <algorithm>

#include "kernels.h"

#ifdef SECOND_STATEMENT
extern int g_launches;
#endif

template <typename T>
void invokeAddBiasResidual(T *out, const T *bias, const T *residual, const int m, const int n, cudaStream_t stream) {
  dim3 block(256);
  dim3 grid((m * n + block.x - 1) / block.x);
  addBiasResidual<T><<<grid, block, 0, stream>>>(out, bias, residual, m * n, n);
#ifdef SECOND_STATEMENT
  g_launches++;
#endif
}

template <typename T> void invokeAddBiasGelu(T *out, const T *bias, const int m, const int n, cudaStream_t stream) {
  const int blocks = std::min((m * n + 255) / 256, 1024);
  addBiasGelu<T><<<blocks, 256, 0, stream>>>(out, bias, m * n, n);
}

#ifdef GLOBAL_BLOCK
static int g_block = 256;
#endif

// The engine's generic entry: picks the activation at compile time.
template <typename T>
void invokeGenericActivation(T *out, const T *bias, const int m, const int n, cudaStream_t stream) {
#ifdef GLOBAL_BLOCK
  addBiasGelu<T><<<(m * n + g_block - 1) / g_block, g_block, 0, stream>>>(out, bias, m * n, n);
#else
  invokeAddBiasGelu<T>(out, bias, m, n, stream);
#endif
}
