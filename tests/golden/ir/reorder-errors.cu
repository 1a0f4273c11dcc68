// Schedules that are not legal are refused with the reason and where.
// RUN: %expect 1 %coconet --check --dump=ir %s -- -DCASE_NEIGHBOUR 2>&1 | %FileCheck --check-prefix=NEIGHBOUR %s
// RUN: %expect 1 %coconet --dump=ir %s -- -DCASE_ATOMIC 2>&1 | %FileCheck --check-prefix=ATOMIC %s
// RUN: %expect 1 %coconet --dump=ir %s -- -DCASE_LOCAL 2>&1 | %FileCheck --check-prefix=LOCAL %s
// RUN: %coconet --verify=ir:5 %s -- -DCASE_SHARD | %FileCheck --check-prefix=SHARD %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void smooth(float *w, const float *g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= 0.5f * (g[i] + g[i + 1]);  // a neighbour: not on a slice
}

__global__ void sgd(float *w, const float *g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i];
}

__global__ void norm(const float *g, float *total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(total, g[i] * g[i]);
}

__global__ void add_noise(float *out, const float *g, const float *noise, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = g[i] + noise[i];
}

void step(float *w, float *g, float *noise, float *out, float *total, int n, ncclComm_t comm,
          cudaStream_t s) {
#if defined(CASE_NEIGHBOUR)
#pragma coconet region name(neighbour) split reorder
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    smooth<<<(n + 255) / 256, 256, 0, s>>>(w, g, n);
  }
#elif defined(CASE_ATOMIC)
#pragma coconet region name(atomic) split reorder
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    norm<<<(n + 255) / 256, 256, 0, s>>>(g, total, n);
  }
#elif defined(CASE_LOCAL)
#pragma coconet region name(local) split reorder
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    add_noise<<<(n + 255) / 256, 256, 0, s>>>(out, g, noise, n);
  }
#elif defined(CASE_SHARD)
#pragma coconet region name(sharded) split reorder shard(out) scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    add_noise<<<(n + 255) / 256, 256, 0, s>>>(out, g, noise, n);
  }
#endif
  (void)sgd;
}

// NEIGHBOUR: reorder-errors.cu:11:37: error: reorder: kernel 'smooth' reads g[i + 1]; only g[i] can be computed on a slice
// NEIGHBOUR-NEXT: {{^}}  if (i < n) w[i] -= 0.5f * (g[i] + g[i + 1]);  // a neighbour: not on a slice
// NEIGHBOUR-NEXT: {{^                                    \^$}}
// ATOMIC: reorder-errors.cu:41:5: error: reorder: kernel 'norm' sums into 'total' (atomicAdd), which the region does not zero before it; each rank sums its slice and an AllReduce adds the partial sums, which would count what 'total' held once per rank: zero all of it in the region first (cudaMemsetAsync(total, 0, ...))
// LOCAL: error: reorder: 'out' differs per rank (kernel 'add_noise' computes it from local 'noise'), so gathering its slices after the region would change it; declare it shard(out) or scratch(out), or 'noise' replicated(noise)
// SHARD: verify=ir sharded: shard 'out' (f32): max relative error 0 over 1..5 ranks
// SHARD: verify=ir sharded: ok
