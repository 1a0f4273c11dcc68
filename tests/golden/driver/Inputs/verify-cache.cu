// A region for verify-cache.test: scale after an AllReduce. -DSCALE=V changes
// the harness's commands (the build's flags), so it runs again.
#include <cuda_runtime.h>
#include <nccl.h>

#ifndef SCALE
#define SCALE 0.5f
#endif

__global__ void scale(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= SCALE;
}

void step(float *x, int n, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(scaled) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, stream);
    scale<<<(n + 255) / 256, 256, 0, stream>>>(x, n);
  }
}
