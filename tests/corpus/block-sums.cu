// Style: gradient clipping whose squared norm is summed over a group of
// threads before one atomicAdd per group, as trainers write it: a warp's
// shuffle butterfly in a __device__ helper (llm.c's warpReduceSum) or written
// out with __shfl_down_sync, cooperative groups' cg::reduce over a tile of 32,
// and cub::BlockReduce; each thread's running sum from a grid-stride loop, the
// accumulator zeroed in the region, a clipped SGD step after it. `split
// reorder` sums this rank's slice with coconet's own kernel (the user's group
// sum adds the same total as every thread adding its own), all-reduces the
// partial norm, and steps on the slice. Each -D variant is a kernel coconet
// must refuse, with its reason, but SHARED_TREE (the block's tree written in
// the kernel), which runs equal.
//
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %expect 1 %coconet --check %s -- -DEVERY_LANE 2>&1 | %FileCheck --check-prefix=EVERY_LANE %s
// RUN: %expect 1 %coconet --check %s -- -DNOT_SUMMED 2>&1 | %FileCheck --check-prefix=NOT_SUMMED %s
// RUN: %expect 1 %coconet --check %s -- -DBLOCK_LEADER 2>&1 | %FileCheck --check-prefix=BLOCK_LEADER %s
// RUN: %expect 1 %coconet --check %s -- -DHALF_BUTTERFLY 2>&1 | %FileCheck --check-prefix=HALF_BUTTERFLY %s
// RUN: %expect 1 %coconet --check %s -- -DCUB_SHAPE 2>&1 | %FileCheck --check-prefix=CUB_SHAPE %s
// RUN: %expect 1 %coconet --check %s -- -DTWICE 2>&1 | %FileCheck --check-prefix=TWICE %s
// RUN: %coconet --verify=4 %s -- -DSHARED_TREE | %FileCheck --check-prefix=SHARED_TREE %s

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <nccl.h>

namespace cg = cooperative_groups;

#define WARP_SIZE 32

__device__ float warpReduceSum(float val) {
  for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) val += __shfl_xor_sync(0xffffffff, val, offset);
  return val;
}

// The warp's butterfly in a helper; lane 0 of every warp adds.
__global__ void norm2_warp(const float *g, float *norm2, int n) {
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) s += g[i] * g[i];
#if defined(TWICE)
  s = warpReduceSum(s);
#endif
  s = warpReduceSum(s);
#if defined(EVERY_LANE)
  atomicAdd(norm2, s);  // 32 lanes each add the warp's total
#elif defined(BLOCK_LEADER)
  if (threadIdx.x == 0) atomicAdd(norm2, s);  // only the first warp of each block
#else
  if (threadIdx.x % WARP_SIZE == 0) atomicAdd(norm2, s);
#endif
}

// The butterfly written out with __shfl_down_sync; the lane in a local.
__global__ void norm2_down(const float *g, float *norm2, int n) {
  const int lane = threadIdx.x & 31;
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) s += g[i] * g[i];
#if defined(HALF_BUTTERFLY)
  for (int o = 8; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);  // 16 lanes
#elif defined(NOT_SUMMED)
#else
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
#endif
  if (lane == 0) atomicAdd(norm2, s);
}

// cg::reduce over a tile of 32.
__global__ void norm2_tile(const float *g, float *norm2, int n) {
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) s += g[i] * g[i];
  const float total = cg::reduce(warp, s, cg::plus<float>());
  if (warp.thread_rank() == 0) atomicAdd(norm2, total);
}

// cub::BlockReduce; thread 0 adds.
#if defined(CUB_SHAPE)
#define CUB_THREADS 128  // the launch has 256
#else
#define CUB_THREADS 256
#endif
__global__ void norm2_cub(const float *g, float *norm2, int n) {
  typedef cub::BlockReduce<float, CUB_THREADS> BlockReduce;
  __shared__ typename BlockReduce::TempStorage temp;
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) s += g[i] * g[i];
  const float total = BlockReduce(temp).Sum(s);
  if (threadIdx.x == 0) atomicAdd(norm2, total);
}

#if defined(SHARED_TREE)
// A block reduction written by hand through shared memory: not recognized.
__global__ void norm2_tree(const float *g, float *norm2, int n) {
  __shared__ float part[256];
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) s += g[i] * g[i];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(norm2, part[0]);
}
#endif

__global__ void clipped_sgd(float *w, const float *g, const float *norm2, float lr, float max_norm, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    w[i] -= lr * fminf(1.0f, max_norm / (sqrtf(norm2[0]) + 1e-6f)) * g[i];
}

void clip_warp(float *w, float *g, float *norm2, int n, float lr, float max_norm, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(clip_warp) split reorder replicated(w) scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream);
    cudaMemsetAsync(norm2, 0, sizeof(float), stream);
#if defined(SHARED_TREE)
    norm2_tree<<<64, 256, 0, stream>>>(g, norm2, n);
#else
    norm2_warp<<<64, 256, 0, stream>>>(g, norm2, n);
#endif
    clipped_sgd<<<64, 256, 0, stream>>>(w, g, norm2, lr, max_norm, n);
  }
}

void clip_down(float *w, float *g, float *norm2, int n, float lr, float max_norm, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(clip_down) split reorder replicated(w) scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream);
    cudaMemsetAsync(norm2, 0, sizeof(float), stream);
    norm2_down<<<(n + 127) / 128, 128, 0, stream>>>(g, norm2, n);
    clipped_sgd<<<64, 256, 0, stream>>>(w, g, norm2, lr, max_norm, n);
  }
}

void clip_tile(float *w, float *g, float *norm2, int n, float lr, float max_norm, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(clip_tile) split reorder replicated(w) scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream);
    cudaMemsetAsync(norm2, 0, sizeof(float), stream);
    norm2_tile<<<32, 256, 0, stream>>>(g, norm2, n);
    clipped_sgd<<<64, 256, 0, stream>>>(w, g, norm2, lr, max_norm, n);
  }
}

void clip_cub(float *w, float *g, float *norm2, int n, float lr, float max_norm, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(clip_cub) split reorder replicated(w) scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream);
    cudaMemsetAsync(norm2, 0, sizeof(float), stream);
    norm2_cub<<<16, 256, 0, stream>>>(g, norm2, n);
    clipped_sgd<<<64, 256, 0, stream>>>(w, g, norm2, lr, max_norm, n);
  }
}

// IR: verify=ir clip_warp: ok
// IR: verify=ir clip_down: ok
// IR: verify=ir clip_tile: ok
// IR: verify=ir clip_cub: ok
// EXEC: verify clip_warp: output 'norm2' (f32)
// EXEC: verify clip_warp: ok
// EXEC: verify clip_down: ok
// EXEC: verify clip_tile: ok
// EXEC: verify clip_cub: output 'w' (f32)
// EXEC: verify clip_cub: ok
// CODE: ncclReduceScatter(g, g + coconet_p.slice_lo
// CODE: coconet_clip_warp_slice_sum<<<coconet_sum_grid_size(coconet_p.s), COCONET_BLOCK_SIZE, 0, stream>>>(
// CODE: ncclAllReduce(norm2, norm2, 1, ncclFloat, ncclSum, comm, stream)
// CODE: coconet_clip_cub_slice_sum<<<coconet_sum_grid_size(coconet_p.s), COCONET_BLOCK_SIZE, 0, stream>>>(
// EVERY_LANE: block-sums.cu:{{[0-9]+}}:{{[0-9]+}}: error: kernel 'norm2_warp' adds 's', which holds the sum over a warp, in other threads than exactly the first of each; coconet takes it as a sum over the elements only when `if (lane == 0)` adds it
// NOT_SUMMED: error: kernel 'norm2_down' adds its running sum only in the first thread of each group; the other threads' sums would be lost
// BLOCK_LEADER: error: kernel 'norm2_warp' adds 's', which holds the sum over a warp, in other threads than exactly the first of each
// HALF_BUTTERFLY: error: kernel 'norm2_down': statements after the element loop are not supported
// CUB_SHAPE: error: kernel 'norm2_cub' sums with cub::BlockReduce<float, 128{{.*}}>, but its launch's block is not 128 threads (one-dimensional, a constant): the reduction would not cover the block
// TWICE: error: kernel 'norm2_warp' sums 's' over a group of threads twice
// SHARED_TREE: verify clip_warp: ok
