// The precompiled prelude's test input (cache.test): the include lines it
// starts with go into the cached header, one of them a header next to it.
#include <cuda_runtime.h>

#include <nccl.h>  // NCCL
/* the kernel's constant */
#include "cached-scale.h"

__global__ void scale(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= SCALE;
}

void step(float *x, int n, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(cached) split reorder scratch(x)
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, stream);
    scale<<<(n + 255) / 256, 256, 0, stream>>>(x, n);
  }
}
