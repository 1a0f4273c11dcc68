// Found by the differential test (seed 1026): a statement coconet does not see
// into (here a kernel whose launch does not cover its count, so it is kept as
// written) may read anything, so the AllGather of a scratch buffer it reads is
// not dead and stays; the programs then agree.
// RUN: %coconet --explain %s | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %coconet --verify=2 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void copy_half(float *o, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] = x[i];
}

void step(float *g, float *o, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(opaque_reader) split scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    copy_half<<<(n + 255) / 256, 128, 0, s>>>(o, g, n);
  }
}

// EXPLAIN: - split: AllReduce(sum, g)
// EXPLAIN-NOT: AllGather of 'g' is dead
// EXEC: verify opaque_reader: memory 'o' (used where coconet does not look): max 0 ULP apart
// EXEC: verify opaque_reader: ok
