// The element loop written in a __device__ helper the kernel calls (llm.c's adamw_kernel3
// calling adamw_update): the error names the helper and says what to write instead.
// RUN: %expect 1 %coconet --check %s 2>&1 | %FileCheck %s
#include <cuda_runtime.h>
#include <nccl.h>
__device__ void update(float *p, const float *g, float lr, int n) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= n) return;
  p[idx] -= lr * g[idx];
}
__global__ void kern(float *p, const float *g, float lr, int n) { update(p, g, lr, n); }
void f(float *p, float *g, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(h) split reorder replicated(p) scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    kern<<<(n + 255) / 256, 256, 0, s>>>(p, g, 0.1f, n);
  }
}
// CHECK: loop-in-helper.cu:11:67: error: kernel 'kern': cannot find the element loop (blockIdx.x * blockDim.x + threadIdx.x with a grid-stride loop or an 'if (i < n)' guard, 'i < n' first in a guard of several conditions) at 'update(p, g, lr, n)'; the element index is computed in __device__ function 'update', which coconet does not read for it: write the index and its guard in the kernel, and call the helper for one element
