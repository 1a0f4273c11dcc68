// Style: a gradient norm whose running sums are summed over the block by a
// __device__ helper written by hand, warp by warp, before one atomicAdd by
// thread 0, as GPT-2 trainers (llm.c's blockReduce, its warp sum in a helper,
// the lane and warp in locals) and inference engines (a block_sum that the
// first warp finishes and hands to every thread through slot 0) write it;
// LAMB-style, two norms of one kernel through a helper that starts with a
// barrier. `split reorder` sums this rank's slice with coconet's own kernel,
// all-reduces the partial sums and steps on the slice. Each -D variant is a
// helper coconet must not take for a block sum, or a launch it does not
// cover, refused with its reason.
//
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --explain %s | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %expect 1 %coconet --check %s -- -DPARTIAL_BLOCK 2>&1 | %FileCheck --check-prefix=PARTIAL_BLOCK %s
// RUN: %expect 1 %coconet --check %s -- -DFEW_SLOTS 2>&1 | %FileCheck --check-prefix=FEW_SLOTS %s
// RUN: %expect 1 %coconet --check %s -- -DTWICE_UNFENCED 2>&1 | %FileCheck --check-prefix=TWICE_UNFENCED %s
// RUN: %expect 1 %coconet --check %s -- -DNO_BARRIER 2>&1 | %FileCheck --check-prefix=NOT_TAKEN %s
// RUN: %expect 1 %coconet --check %s -- -DWRONG_LANE 2>&1 | %FileCheck --check-prefix=NOT_TAKEN %s
// RUN: %expect 1 %coconet --check %s -- -DNONZERO 2>&1 | %FileCheck --check-prefix=NOT_TAKEN %s
// RUN: %expect 1 %coconet --check %s -- -DLANE_ASSIGNED 2>&1 | %FileCheck --check-prefix=NOT_TAKEN %s
// RUN: %expect 1 %coconet --check %s -- -DOTHER_WARP 2>&1 | %FileCheck --check-prefix=NOT_TAKEN %s

#include <cuda_runtime.h>
#include <nccl.h>

#define WARP_SIZE 32
#if defined(FEW_SLOTS)
#define SLOTS 4
#else
#define SLOTS WARP_SIZE
#endif

__device__ float warpReduceSum(float val) {
  for (int offset = 16; offset > 0; offset /= 2) val += __shfl_xor_sync(0xFFFFFFFF, val, offset);
  return val;
}

// Every warp sums the warps' slots; thread 0 (every thread) ends with the block's sum.
__device__ float blockReduceSum(float val) {
  __shared__ float shared_val[SLOTS];
  int lane_id = threadIdx.x % WARP_SIZE;
  const int warp_id = threadIdx.x / WARP_SIZE;
  const int num_warps = blockDim.x / WARP_SIZE;
#if defined(LANE_ASSIGNED)
  lane_id = lane_id ^ 1;
#endif
  float warp_val = warpReduceSum(val);
#if defined(WRONG_LANE)
  if (lane_id == 1) {
#else
  if (lane_id == 0) {
#endif
    shared_val[warp_id] = warp_val;
  }
#if !defined(NO_BARRIER)
  __syncthreads();
#endif
#if defined(NONZERO)
  warp_val = (lane_id < num_warps) ? shared_val[lane_id] : 1.0f;
#else
  warp_val = (lane_id < num_warps) ? shared_val[lane_id] : 0.0f;
#endif
  float block_val = warpReduceSum(warp_val);
  return block_val;
}

// The first warp sums the slots and thread 0 hands the total to every thread;
// the barrier first lets a kernel call it twice.
__device__ float block_sum(float v) {
  __shared__ float warps[32];
  __syncthreads();
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  if ((threadIdx.x & 31) == 0) warps[threadIdx.x >> 5] = v;
  __syncthreads();
  v = threadIdx.x < (blockDim.x >> 5) ? warps[threadIdx.x] : 0.0f;
#if defined(OTHER_WARP)
  if (threadIdx.x >> 5 == 1) v = warpReduceSum(v);  // the second warp: thread 0 would not hold the sum
#else
  if (threadIdx.x < 32) v = warpReduceSum(v);
#endif
  if (threadIdx.x == 0) warps[0] = v;
  __syncthreads();
  return warps[0];
}

__global__ void norm2_llmc(float *out, const float *g, size_t n) {
  float acc = 0.0f;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) acc += g[i] * g[i];
  float block_sum = blockReduceSum(acc);
  if (threadIdx.x == 0) atomicAdd(out, block_sum);
}

__global__ void norms_two(float *norms, const float *g, const float *w, size_t n) {
  float a = 0.0f, b = 0.0f;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    a += g[i] * g[i];
    b += w[i] * w[i];
  }
#if defined(TWICE_UNFENCED)
  a = blockReduceSum(a);
  b = blockReduceSum(b);
#else
  a = block_sum(a);
  b = block_sum(b);
#endif
  if (threadIdx.x == 0) atomicAdd(&norms[0], a);
  if (threadIdx.x == 0) atomicAdd(&norms[1], b);
}

__global__ void clipped(float *w, const float *g, const float *norm2, float lr, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    w[i] -= lr * fminf(1.0f, 1.0f / (sqrtf(norm2[0]) + 1e-6f)) * g[i];
}

// w -= lr * (|w| / |g|) g, LAMB's trust ratio from the two norms.
__global__ void trust_step(float *w, const float *g, const float *norms, float lr, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    w[i] -= lr * sqrtf(norms[1]) / (sqrtf(norms[0]) + 1e-6f) * g[i];
}

void clip(float *w, float *g, float *norm2, size_t n, float lr, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(clip_llmc) split reorder replicated(w) scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    cudaMemsetAsync(norm2, 0, sizeof(float), s);
#if defined(PARTIAL_BLOCK)
    norm2_llmc<<<64, 100, 0, s>>>(norm2, g, n);
#else
    norm2_llmc<<<64, 256, 0, s>>>(norm2, g, n);
#endif
    clipped<<<64, 256, 0, s>>>(w, g, norm2, lr, n);
  }
}

void lamb_like(float *w, float *g, float *norms, size_t n, float lr, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(two_norms) split reorder replicated(w) scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    cudaMemsetAsync(norms, 0, 2 * sizeof(float), s);
    norms_two<<<32, 128, 0, s>>>(norms, g, w, n);
    trust_step<<<64, 256, 0, s>>>(w, g, norms, lr, n);
  }
}

// IR: verify=ir clip_llmc: ok
// IR: verify=ir two_norms: ok
// EXEC: verify clip_llmc: ok
// EXEC: verify two_norms: ok
// EXPLAIN: reorder: kernel 'norm2_llmc' ({{.*}}) sums into 'norm2' (atomicAdd) on this rank's slice of 'g'
// EXPLAIN: reorder: kernel 'norms_two' ({{.*}}) sums into 'norms' (atomicAdd) on this rank's slice of 'g'

// PARTIAL_BLOCK: error: kernel 'norm2_llmc' sums with 'blockReduceSum', a block sum warp by warp through 32 shared slots, but its launch's block is not a constant number of whole warps, at most 32 of them: the sum would not cover the block
// FEW_SLOTS: error: kernel 'norm2_llmc' sums with 'blockReduceSum', a block sum warp by warp through 4 shared slots, but its launch's block is not a constant number of whole warps, at most 4 of them
// TWICE_UNFENCED: error: kernel 'norms_two' calls 'blockReduceSum' again; a warp may store its next sum in its slot while the first warp still reads the last one (there is no __syncthreads() after the first call's reads or before this one's stores): add one to 'blockReduceSum'
// NOT_TAKEN: error: kernel '{{norm2_llmc|norms_two}}' sums '{{acc|a}}' with '{{blockReduceSum|block_sum}}', whose shared memory coconet does not recognize as a block sum: it takes the warp-by-warp form
