// Style: values keyed by where the thread is, in grid-stride kernels launched
// with fewer threads than elements (a grid from the SM count): stochastic
// rounding of bf16 weights whose noise hashes threadIdx.x and blockIdx.x, and
// a scale by the grid's own size (gridDim.x, blockDim.x). The schedule runs
// element i on another thread; it computes the thread the launch as written
// gives element i (t = i % (gridDim.x * blockDim.x), threadIdx.x = t %
// blockDim.x, blockIdx.x = t / blockDim.x) from that launch's grid and block,
// passed where the launch is, so the bits are the same.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --verify=ir:4 %s -- -DY_KEY | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s -- -DY_KEY | %FileCheck --check-prefix=EXEC %s
// RUN: %expect 1 %coconet --check %s -- -DY_KEY -DY_GRID 2>&1 | %FileCheck --check-prefix=Y_GRID %s
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

__device__ __forceinline__ unsigned int mix(unsigned int seed, unsigned int a, unsigned int b) {
  unsigned int h = seed ^ (a * 0x9E3779B9u) ^ (b * 0x85EBCA6Bu);
  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  h *= 0x846ca68bu;
  h ^= h >> 16;
  return h;
}

__device__ __forceinline__ __nv_bfloat16 round_sr(float x, unsigned int r) {
  unsigned int bits = __float_as_uint(x);
  bits = (bits + (r & 0xFFFFu)) & 0xFFFF0000u;
  return __float2bfloat16_rn(__uint_as_float(bits));
}

__global__ void momentum_sr(__nv_bfloat16 *p, float *master, const float *g, float *m, float lr, unsigned int seed,
                            int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    float mi = 0.9f * m[i] + 0.1f * g[i];
    m[i] = mi;
    float w = master[i] - lr * mi / (float)(gridDim.x * blockDim.x);
    master[i] = w;
    p[i] = round_sr(w, mix(seed, threadIdx.x, blockIdx.x));
  }
}

// llm.c keys its stochastic rounding by blockIdx.y too: 0 in a one-dimensional launch.
__global__ void momentum_sr_y(__nv_bfloat16 *p, float *master, const float *g, float *m, float lr, unsigned int seed,
                              int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    float mi = 0.9f * m[i] + 0.1f * g[i];
    m[i] = mi;
    float w = master[i] - lr * mi / (float)(gridDim.x * blockDim.x);
    master[i] = w;
    p[i] = round_sr(w, mix(seed, threadIdx.x + threadIdx.y, blockIdx.x * blockDim.y + blockIdx.y * gridDim.x));
  }
}

void step(__nv_bfloat16 *p, float *master, float *g, float *m, float lr, unsigned int seed, int n, int blocks,
          ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(sr) split reorder scratch(g) shard(m) replicated(master, p)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
#if defined(Y_GRID)
    momentum_sr_y<<<dim3(blocks, 2), 128, 0, s>>>(p, master, g, m, lr, seed, n);
#elif defined(Y_KEY)
    momentum_sr_y<<<blocks, 128, 0, s>>>(p, master, g, m, lr, seed, n);
#else
    momentum_sr<<<blocks, 128, 0, s>>>(p, master, g, m, lr, seed, n);
#endif
  }
}

// IR: verify=ir sr: ok
// EXEC: verify sr: output 'p' (bf16): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify sr: ok
// The kernel's own text runs with the coordinates the launch as written gives
// element i; the launch's grid is a parameter, passed as written:
// CODE: {{^[^/]*}}const size_t coconet_t = (size_t)i % ((size_t)coconet_grid_x * 128u);
// CODE-NEXT: {{^[^/]*}}const dim3 blockDim(128u);
// CODE-NEXT: {{^[^/]*}}const dim3 gridDim(coconet_grid_x);
// CODE-NEXT: {{^[^/]*}}const uint3 threadIdx = make_uint3((unsigned)(coconet_t % 128u), 0, 0);
// CODE-NEXT: {{^[^/]*}}const uint3 blockIdx = make_uint3((unsigned)(coconet_t / 128u), 0, 0);
// CODE: {{^[^/]*}}p = round_sr(w, mix(seed, threadIdx.x, blockIdx.x));
// CODE: {{^[^/]*}}float lr, unsigned int coconet_grid_x, unsigned int seed)
// CODE: {{^[^/]*}}lr, dim3(blocks).x, seed, coconet_p.slice_lo, coconet_p.slice_hi);
// Y_GRID: error: kernel 'momentum_sr_y' writes m[i], and its grid's y selects a slice (2 of them): a launch read as slices writes only at blockIdx.y * n + i
