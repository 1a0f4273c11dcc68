// A host wrapper in a header (header-kernels.cu -DHEADER_WRAPPER): seen
// through where it is, never rewritten; for the host backend its launch is
// lowered into the translated file's output.
#pragma once
#include "header-kernels.cuh"

static inline void launch_scale_grid(float *x, float a, int rows, int cols, cudaStream_t s) {
  scale_grid<<<(rows * cols + 255) / 256, 256, 0, s>>>(x, a, rows, cols);
}
