// Style: host code that relies on what nvcc's headers give host code: min and
// max on integers, mixed signedness and doubles in launch helpers, as a
// 3,000-line trainer does before any pragma. clang's CUDA headers declare them
// for device code only; coconet's parsing prelude declares nvcc's host set.
// The translated file is compiled by nvcc (tests/compile/translated.mk).
// RUN: %coconet --check %s | %FileCheck --check-prefix=CHECK %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_runtime.h>
#include <nccl.h>
#include <algorithm>
__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = max(min(x[i] * a, 1.0f), -1.0f) + (float)min(i, 3);
}
int blocks_for(int n, int b) { return min((n + b - 1) / b, 1024) + max(0, 0); }
size_t chunk(size_t a, size_t b) { return min(a, b) + std::min(a, b); }
double md(double a, float b) { return max(a, b); }
unsigned um(unsigned a, int b) { return min(a, b); }
void h(float *x, int n, ncclComm_t comm, cudaStream_t s) {
  long long big = max(1LL, (long long)n);
  (void)big;
#pragma coconet region name(host_minmax) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(x, 0.5f, n);
  }
}

int main_like(int n) { return blocks_for(n, 256) + (int)chunk(4, 8) + (int)md(1.0, 2.0f) + (int)um(3u, 4); }

// CHECK: region host_minmax ({{.*}}host-minmax.cu:{{[0-9]+}}) in h: nccl:ncclAllReduce launch:scale
// EXEC: verify host_minmax: output 'x' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify host_minmax: ok
