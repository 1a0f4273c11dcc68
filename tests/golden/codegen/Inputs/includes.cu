// Where the runtime's one #include goes: after the file's last #include that is at
// file scope and in the same #if blocks as the region's function. Here that is
// <nccl.h>, inside the include guard: not <cstdio> (another #if block), not the
// one in the block comment.
#ifndef INCLUDES_CU_GUARD
#define INCLUDES_CU_GUARD
#include <cuda_runtime.h>
#include <nccl.h>
#if defined(WITH_EXTRA)
#include <cstdio>
#endif
/* an #include in a comment is not one:
#include <vector>
*/

__global__ void scale(float *x, float by, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= by;
}

void step(float *x, float by, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(scaled) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(x, by, n);
  }
}
#endif
