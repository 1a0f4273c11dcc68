// slices/ops.cuh: kernels and their launchers in one header, longer than the
// file that includes it (tests/corpus/header-macros.cu): a multi-tensor launch
// whose kernel reads threadIdx.x as a value, a grid and a factor from macros
// the header #undefs at its end.
//
// Its launches sit past the last byte of the including file: coconet reads a
// header's text from the header (a launch's grid was once read at the header's
// offsets in the including file's bytes, which made dim3(X, layers) look
// one-dimensional and ran every layer's element once instead of per layer).
// A constant macro in a launcher's text moves to the region as its value (the
// macro is gone there); a kernel whose text uses a macro #undef'd before the
// generated code is printed from the IR, which holds the macro's value.
//
// The kernels:
//   layer_axpy   w[l][i] += g[l][i] * (threadIdx.x % 3 + 1) for each layer l
//                (blockIdx.y), the multiplier keyed by the thread as written;
//   keyed_scale  x[i] = x[i] * OPS_FACTOR + blockIdx.x, a grid-stride loop on
//                OPS_GRID blocks of 32 threads (the block index as a value).
#pragma once
#define OPS_GRID 3
#define OPS_FACTOR 3.0f

__global__ void layer_axpy(float *w, const float *g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[blockIdx.y * n + i] += g[blockIdx.y * n + i] * (float)(threadIdx.x % 3 + 1);
}

inline void launch_layer_axpy(float *w, const float *g, int n, int layers, cudaStream_t s) {
  layer_axpy<<<dim3((n + 127) / 128, layers), 128, 0, s>>>(w, g, n);
}

__global__ void keyed_scale(float *x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    x[i] = x[i] * OPS_FACTOR + (float)blockIdx.x;
}

inline void launch_keyed_scale(float *x, int n, cudaStream_t s) { keyed_scale<<<OPS_GRID, 32, 0, s>>>(x, n); }

#undef OPS_GRID
#undef OPS_FACTOR
