// A buffer the program writes as an expression (`ws[l]`, a layer's weights)
// is named as written in what a refusal suggests, not by the IR's name (t2),
// and the suggested clause is accepted.
// RUN: %expect 1 %coconet --check %s 2>&1 | %FileCheck %s
// RUN: %coconet --verify=ir:2 %s -- -DDECLARED | %FileCheck --check-prefix=DECLARED %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void upd(float *w, const float *g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] += g[i];
}

void step(float **ws, float *g, int l, int n, ncclComm_t comm, cudaStream_t s) {
#if defined(DECLARED)
#pragma coconet region name(r) split reorder scratch(g) replicated(ws[l])
#else
#pragma coconet region name(r) split reorder scratch(g)
#endif
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    upd<<<(n + 255) / 256, 256, 0, s>>>(ws[l], g, n);
  }
}

// CHECK: error: reorder: kernel 'upd' updates 'ws[l]' on this rank's slice and its slices are then gathered, but 'ws[l]' at region entry is not known to be identical on every rank; declare replicated(ws[l]) if it is (data-parallel weights are), or shard(ws[l]) or scratch(ws[l])
// CHECK: note: 'ws[l]' at region entry is read here
// DECLARED: verify=ir r: ok
