// Style: 64-bit element indices (int64_t, long long, unsigned), a grid-stride
// loop with the stride held in a local, and a count passed as size_t.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cstdint>
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void lamb_like(float *p, const float *g, int64_t n, float lr) {
  const int64_t stride = (int64_t)blockDim.x * gridDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) p[i] -= lr * g[i];
}

__global__ void scale_u(float *x, unsigned n, float s) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}

void step(float *p, float *g, float *x, size_t count, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(int64_loop) split reorder scratch(g) replicated(p)
  {
    ncclAllReduce(g, g, count, ncclFloat, ncclSum, comm, s);
    lamb_like<<<132, 256, 0, s>>>(p, g, (int64_t)count, 1e-3f);
  }
#pragma coconet region name(unsigned_index) split reorder
  {
    ncclAllReduce(x, x, count, ncclFloat, ncclSum, comm, s);
    scale_u<<<(unsigned)((count + 255) / 256), 256, 0, s>>>(x, (unsigned)count, 0.25f);
  }
}

// IR: verify=ir int64_loop: ok
// IR: verify=ir unsigned_index: ok
// EXEC: verify int64_loop: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify unsigned_index: ok (the region as written and as scheduled agree within 0 ULP)
