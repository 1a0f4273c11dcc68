// scale.h: a gradient scale whose launcher returns early on an empty tensor and
// picks one block below 256 elements, a grid of them above
// (tests/corpus/dispatch-launchers.cu): both kernels pointwise, the schedule is
// for the first written that fits.
#pragma once
#include <cuda_runtime.h>

__global__ void scaleBlock(float *x, float a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) x[i] *= a;
}

__global__ void scaleGrid(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

inline void launchScale(float *x, float a, int n, cudaStream_t s) {
  if (n == 0) return;
  if (n < 256) {
    scaleBlock<<<1, 128, 0, s>>>(x, a, n);
    return;
  }
  scaleGrid<<<(n + 255) / 256, 256, 0, s>>>(x, a, n);
}

// Its locals assigned before the choice (-DASSIGNED): the block halved for small
// tensors, the grid covering n with whatever block.x holds.
inline void launchScaleAssigned(float *x, float a, int n, cudaStream_t s) {
  dim3 block(256);
  int small = 512;
  small = small / 2;
  if (n < small) block.x = 128;
  if (n == 0) return;
  scaleGrid<<<(n + block.x - 1) / block.x, block, 0, s>>>(x, a, n);
}

extern int g_calls;
inline int next_mode() { return ++g_calls % 2; }

// A choice with side effects in its condition (-DEFFECTS).
inline void launchScaleCounted(float *x, float a, int n, cudaStream_t s) {
  if (next_mode() == 1) scaleBlock<<<1, 128, 0, s>>>(x, a, n);
  else scaleGrid<<<(n + 255) / 256, 256, 0, s>>>(x, a, n);
}

// A choice read through a pointer (-DTHROUGH): the region would test it before its statements run.
struct ScaleConfig {
  int one_block;
};
inline void launchScaleConfigured(float *x, float a, int n, const ScaleConfig *config, cudaStream_t s) {
  if (config->one_block) scaleBlock<<<1, 128, 0, s>>>(x, a, n);
  else scaleGrid<<<(n + 255) / 256, 256, 0, s>>>(x, a, n);
}
