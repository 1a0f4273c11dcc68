// A kernel that writes a file-scope __device__ array: coconet sees only the
// buffers a launch passes, and says that this is the reason (not that the
// write is at the wrong element: it is at [i]).
// RUN: %expect 1 %coconet --check %s 2>&1 | %FileCheck %s
#include <cuda_runtime.h>
#include <nccl.h>

__device__ float g_copy[1024];

__global__ void sgd(float *w, const float *g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    w[i] -= lr * g[i];
    g_copy[i] = g[i];
  }
}

void step(float *w, float *g, float lr, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(r) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr, n);
  }
}

// CHECK: global-write.cu:14:5: error: kernel 'sgd' writes g_copy[i], and 'g_copy' is not one of its pointer parameters (a global or a file-scope array): coconet sees only the buffers a launch passes; pass it as a parameter
