// Style: a gradient norm reduced the way most kernels write it, in the kernel
// itself: a grid-stride loop into a thread's running sum, the sums stored in a
// __shared__ array, a tree `for (k = blockDim.x / 2; k > 0; k >>= 1)` with a
// barrier per level, then thread 0's atomicAdd of red[0]; a clipped SGD step
// reads the norm. `split reorder` runs both on this rank's slice and all-reduces
// the partial norms (sums in another order: within 1e-5 of the largest value).
// Refused with the reason: a block that is not a power of two (ODD_BLOCK), a
// tree without its barrier (NO_SYNC), the array read in the element loop
// (IN_LOOP).
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %expect 1 %coconet --check %s -- -DODD_BLOCK 2>&1 | %FileCheck --check-prefix=ODD_BLOCK %s
// RUN: %expect 1 %coconet --check %s -- -DNO_SYNC 2>&1 | %FileCheck --check-prefix=NO_SYNC %s
// RUN: %expect 1 %coconet --check %s -- -DIN_LOOP 2>&1 | %FileCheck --check-prefix=IN_LOOP %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void norm_sq(const float *g, float *acc, int n) {
  __shared__ float red[256];
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
#if defined(IN_LOOP)
    s += g[i] * g[i] + red[0];
#else
    s += g[i] * g[i];
#endif
  }
  red[threadIdx.x] = s;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
#if !defined(NO_SYNC)
    __syncthreads();
#endif
  }
  if (threadIdx.x == 0) atomicAdd(acc, red[0]);
}

__global__ void clipped_sgd(float *w, const float *g, const float *acc, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i] * rsqrtf(acc[0] + 1e-6f);
}

void step(float *w, float *g, float *acc, float lr, int n, ncclComm_t comm, cudaStream_t s) {
#if defined(ODD_BLOCK)
  const int block = 192;
#else
  const int block = 256;
#endif
#pragma coconet region name(clip) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    cudaMemsetAsync(acc, 0, sizeof(float), s);
    norm_sq<<<64, block, 0, s>>>(g, acc, n);
    clipped_sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, acc, lr, n);
  }
}

// IR: verify=ir clip: ok
// EXEC: verify clip: output 'w' (f32)
// EXEC: verify clip: ok
// ODD_BLOCK: error: kernel 'norm_sq' sums its running sum with a tree through shared memory, but its launch's block is not a constant power of two at most 256 (the array's length): the tree would not sum the block
// NO_SYNC: error: kernel 'norm_sq': statements after the element loop are not supported (but {{.*}}or a tree through a __shared__ array with a barrier per level
// IN_LOOP: error: kernel 'norm_sq' indexes 'red', which is not a pointer parameter
