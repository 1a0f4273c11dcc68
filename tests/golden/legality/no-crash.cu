// An unsupported right-hand side assigned to an existing local is a located
// error, not a crash (it was a segfault in ir_pw_let, with fmaf before fmaf was
// supported).
// RUN: %expect 1 %coconet --check %s 2>&1 | %FileCheck %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void adam(float *p, const float *g, float *m, float b1, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float mm = m[i];
    mm = __shfl_xor_sync(0xffffffffu, mm, 1) * b1 + g[i];
    m[i] = mm;
    p[i] -= mm;
  }
}

void step(float *p, float *g, float *m, float b1, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(step) split reorder scratch(g) shard(m) replicated(p)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    adam<<<(n + 255) / 256, 256, 0, s>>>(p, g, m, b1, n);
  }
}

// CHECK: no-crash.cu:12:10: error: kernel 'adam' calls '__shfl_xor_sync', which a pointwise kernel cannot use
// CHECK: note: region 'step' needs this launch to be pointwise for its schedule
// CHECK-NOT: error
