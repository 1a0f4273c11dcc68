// #pragma coconet symmetric: the allocation becomes coconet_symmetric_malloc,
// every cudaFree and ncclCommDestroy call of the file coconet's, and
// <coconet_fused.h> is included once, after the file's includes.
#include <cuda_runtime.h>
#include <nccl.h>

#define CHECK(x) (void)(x)
#define FREE_ALL(p) cudaFree(p)

static int untouched(int x) { return x + 1; }

float *alloc_grad(size_t bytes) {
  float *buf;
#pragma coconet symmetric
  CHECK(cudaMalloc(&buf, bytes));
  return buf;
}

void release(float *buf, float *other, ncclComm_t comm) {
  CHECK(cudaFree(buf));
  cudaFree(other);
  FREE_ALL(other);
  ::ncclCommDestroy(comm);
}
