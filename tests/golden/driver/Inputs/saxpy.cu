// A CUDA program without '#pragma coconet': coconet-cc passes it through.
#include <cstdio>

#include "saxpy.h"

__global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
  float *x, *y;
  cudaMallocManaged(&x, SAXPY_N * sizeof(float));
  cudaMallocManaged(&y, SAXPY_N * sizeof(float));
  for (int i = 0; i < SAXPY_N; i++) {
    x[i] = 1.0f;
    y[i] = (float)i;
  }
  saxpy<<<(SAXPY_N + 255) / 256, 256>>>(SAXPY_SCALE, x, y, SAXPY_N);
  cudaDeviceSynchronize();
  float sum = 0;
  for (int i = 0; i < SAXPY_N; i++) sum += y[i];
  std::printf("saxpy sum %.1f\n", sum);
  cudaFree(x);
  cudaFree(y);
  return 0;
}
