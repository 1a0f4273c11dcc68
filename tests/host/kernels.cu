// Host backend: the CUDA execution model and runtime API, with known results.
// Launches are written as the translator lowers them (coconet_host_launch).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cub/cub.cuh>
#include <cuda/functional>
#include <cuda_fp16.h>
#include <math.h>
#include <math_constants.h>
#include <nccl.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

namespace cg = cooperative_groups;

/* ---- COCONET_HOST_SIMPLE kernels ---------------------------------------------- */

__global__ void axpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void grid_stride_square(const int *x, int *y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = x[i] * x[i];
}

// Every thread of a 3D grid of 3D blocks writes its indices at its linear id.
__global__ void where_am_i(int4 *out) {
  const unsigned block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  const unsigned thread = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  const unsigned id = block * (blockDim.x * blockDim.y * blockDim.z) + thread;
  out[id] = make_int4((int)block, (int)thread, (int)(gridDim.x * gridDim.y * gridDim.z), (int)blockDim.z);
}

template <typename T, int K>
__global__ void scale_by(T *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= (T)K;
}

__device__ int launches_seen;
__constant__ float coefficients[4];

__device__ __forceinline__ float polynomial(float x) {
  return ((coefficients[3] * x + coefficients[2]) * x + coefficients[1]) * x + coefficients[0];
}

__global__ void eval_polynomial(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = polynomial(x[i]);
  if (i == 0) atomicAdd(&launches_seen, 1);
}

// A thread that changes its parameters must not change anyone else's.
__global__ void own_parameters(int n, int *out, int *base) {
  n += (int)threadIdx.x;
  base += threadIdx.x;
  *base = n;
  out[threadIdx.x] = n;
}

__global__ void histogram(const unsigned char *data, int n, unsigned *bins) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) atomicAdd(&bins[data[i]], 1u);
}

struct atomic_results {
  int add, sub, max, min, exch, and_, or_, xor_;
  unsigned inc, dec, cas_count;
  unsigned long long ull;
  float fadd;
  double dadd;
  __half hadd;
};

__global__ void atomics(atomic_results *r) {
  const int t = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  atomicAdd(&r->add, t);
  atomicSub(&r->sub, 2);
  atomicMax(&r->max, (t * 37) % 101);
  atomicMin(&r->min, (t * 37) % 101 - 50);
  atomicExch(&r->exch, 7);
  atomicAnd(&r->and_, ~(1 << (t % 31)));
  atomicOr(&r->or_, 1 << (t % 31));
  atomicXor(&r->xor_, 1 << (t % 4));
  atomicInc(&r->inc, 9u);
  atomicDec(&r->dec, 9u);
  atomicAdd(&r->ull, 1ull << 40);
  atomicAdd(&r->fadd, 0.5f);
  atomicAdd_block(&r->dadd, 0.25);
  atomicAdd(&r->hadd, __float2half(1.0f));
  unsigned old = r->cas_count, seen;
  while ((seen = atomicCAS(&r->cas_count, old, old + 1)) != old) old = seen;
}

__global__ void call_syncthreads(void) { __syncthreads(); }

/* ---- COCONET_HOST_SYNC kernels ------------------------------------------------- */

// Per-block sum: shared-memory tree down to a warp, then shuffles.
__global__ void block_sum(const float *x, float *sums, int n) {
  static __shared__ float partial[256];
  const int t = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + t;
  partial[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int k = blockDim.x / 2; k >= 32; k /= 2) {
    if (t < k) partial[t] += partial[t + k];
    __syncthreads();
  }
  if (t < 32) {
    float v = partial[t];
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (t == 0) sums[blockIdx.x] = v;
  }
}

// Reverses each block's slice through dynamic shared memory.
__global__ void reverse_blocks(const int *in, int *out) {
  int *s = (int *)coconet_host_dynamic_shared();
  const int t = threadIdx.x, base = blockIdx.x * blockDim.x;
  s[t] = in[base + t];
  __syncthreads();
  out[base + t] = s[blockDim.x - 1 - t];
}

struct warp_results {
  int bcast, up_scan, xor_sum, sub8_sum, down_edge;
  unsigned ballot, active, match;
  int any, all;
  unsigned reduce_add;
  int reduce_min, reduce_max;
  unsigned reduce_or;
  double dbl;
  float half_back;
  int count, and_, or_;
};

__global__ void warp_ops(warp_results *r) {
  const int lane = threadIdx.x % 32;
  warp_results *me = r + threadIdx.x;
  me->bcast = __shfl_sync(0xffffffffu, lane * 10, 3);
  int scan = lane;
  for (int d = 1; d < 32; d *= 2) {
    const int other = __shfl_up_sync(0xffffffffu, scan, (unsigned)d);
    if (lane >= d) scan += other;
  }
  me->up_scan = scan;
  int x = lane;
  for (int m = 16; m > 0; m /= 2) x += __shfl_xor_sync(0xffffffffu, x, m);
  me->xor_sum = x;
  int s8 = lane;
  for (int m = 4; m > 0; m /= 2) s8 += __shfl_xor_sync(0xffffffffu, s8, m, 8);
  me->sub8_sum = s8;
  me->down_edge = __shfl_down_sync(0xffffffffu, lane, 5, 16);
  me->ballot = __ballot_sync(0xffffffffu, lane % 3 == 0);
  me->active = __activemask();
  me->match = __match_any_sync(0xffffffffu, lane / 8);
  me->any = __any_sync(0xffffffffu, lane == 17);
  me->all = __all_sync(0xffffffffu, lane < 31);
  me->reduce_add = __reduce_add_sync(0xffffffffu, (unsigned)lane);
  me->reduce_min = __reduce_min_sync(0xffffffffu, lane - 10);
  me->reduce_max = __reduce_max_sync(0xffffffffu, lane - 10);
  me->reduce_or = __reduce_or_sync(0xffffffffu, 1u << lane);
  me->dbl = __shfl_sync(0xffffffffu, 0.5 + lane, 31 - lane);
  me->half_back = __half2float(__shfl_sync(0xffffffffu, __float2half((float)lane), 0));
  __syncwarp();
  me->count = __syncthreads_count(threadIdx.x % 2);
  me->and_ = __syncthreads_and(threadIdx.x < 1000);
  me->or_ = __syncthreads_or(threadIdx.x == 63);
}

// A 48-thread block: warp 1 has 16 lanes, and the masks name only those.
__global__ void partial_warp(unsigned *ballots, int *sums) {
  const unsigned mask = threadIdx.x < 32 ? 0xffffffffu : 0x0000ffffu;
  ballots[threadIdx.x] = __ballot_sync(mask, 1);
  int v = 1;
  for (int m = threadIdx.x < 32 ? 16 : 8; m > 0; m /= 2) v += __shfl_xor_sync(mask, v, m);
  sums[threadIdx.x] = v;
}

// Threads past n leave early; the barrier must still release the others.
__global__ void early_exit(int *out, int n) {
  __shared__ int total;
  if ((int)threadIdx.x >= n) return;
  if (threadIdx.x == 0) total = 0;
  __syncthreads();
  atomicAdd(&total, 1);
  __syncthreads();
  out[threadIdx.x] = total;
}

// Two groups of lanes of one warp shuffle independently with disjoint masks.
__global__ void split_warp(int *out) {
  const int lane = threadIdx.x;
  int v = lane;
  if (lane < 16) {
    v = __shfl_sync(0x0000ffffu, v, 15);
  } else {
    v = __shfl_sync(0xffff0000u, v, 16);
  }
  out[lane] = v;
}

__global__ void cg_reduce(const int *x, int *block_sums, int *tile8) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  __shared__ int warp_sums[8];
  const int v = x[blockIdx.x * blockDim.x + threadIdx.x];
  const int s = cg::reduce(warp, v, cg::plus<int>());
  if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = s;
  block.sync();
  if (block.thread_rank() == 0) {
    int total = 0;
    for (unsigned w = 0; w < warp.meta_group_size(); ++w) total += warp_sums[w];
    block_sums[blockIdx.x] = total;
  }
  cg::thread_block_tile<8> tile = cg::tiled_partition<8>(block);
  int t = (int)tile.thread_rank();
  for (unsigned d = 4; d > 0; d /= 2) t += tile.shfl_down(t, d);
  tile8[blockIdx.x * blockDim.x + threadIdx.x] = t;
}

// cub::BlockReduce: per block the sum, the max (a functor), the sum of the
// first 100 threads and of two items per thread, the storage reused; thread 0
// writes them.
struct MaxOp {
  __device__ int operator()(int a, int b) const { return a > b ? a : b; }
};

// A smaller block than the type's, reduced with num_valid = its threads (vLLM's RMSNorm does this).
__global__ void cub_reduce_partial(const int *x, int *out) {
  typedef cub::BlockReduce<int, 128> BlockReduce;
  __shared__ typename BlockReduce::TempStorage temp;
  const int total = BlockReduce(temp).Reduce(x[threadIdx.x], MaxOp(), blockDim.x);
  const int least = BlockReduce(temp).Reduce(x[threadIdx.x] + 5, cuda::minimum<>{}, blockDim.x);
  const int sum = BlockReduce(temp).Reduce(x[threadIdx.x], cuda::std::plus<int>(), blockDim.x);
  const int most = BlockReduce(temp).Reduce(x[threadIdx.x], cuda::maximum<int>(), 10);
  if (threadIdx.x == 0) {
    out[0] = total;
    out[1] = least;
    out[2] = sum;
    out[3] = most;
  }
}

__global__ void cub_reduce(const int *x, int *out) {
  typedef cub::BlockReduce<int, 128> BlockReduce;
  __shared__ typename BlockReduce::TempStorage temp;
  const int v = x[blockIdx.x * blockDim.x + threadIdx.x];
  int pair[2] = {v, 1};
  const int sum = BlockReduce(temp).Sum(v);
  const int max = BlockReduce(temp).Reduce(v, MaxOp());
  const int first = BlockReduce(temp).Sum(v, 100);
  const int items = BlockReduce(temp).Sum(pair);
  if (threadIdx.x == 0) {
    out[4 * blockIdx.x] = sum;
    out[4 * blockIdx.x + 1] = max;
    out[4 * blockIdx.x + 2] = first;
    out[4 * blockIdx.x + 3] = items;
  }
}

/* ---- the tests ----------------------------------------------------------------- */

static void test_simple_kernels(void) {
  const int n = 1000;
  float *x, *y;
  CHECK(cudaMalloc(&x, n * sizeof(float)) == cudaSuccess);
  CHECK(cudaMallocManaged(&y, n * sizeof(float)) == cudaSuccess);
  float hx[n];
  for (int i = 0; i < n; ++i) hx[i] = (float)i;
  CHECK(cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice) == cudaSuccess);
  for (int i = 0; i < n; ++i) y[i] = 1.0f;
  coconet_host_launch(COCONET_HOST_SIMPLE, axpy, (n + 127) / 128, 128, 0, 0, 2, x, y, n);
  CHECK(cudaGetLastError() == cudaSuccess);
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += y[i] != 2.0f * i + 1.0f;
  CHECK(bad == 0);

  int *xi, *yi;
  cudaMallocManaged(&xi, 777 * sizeof(int));
  cudaMallocManaged(&yi, 777 * sizeof(int));
  for (int i = 0; i < 777; ++i) xi[i] = i - 300;
  coconet_host_launch(COCONET_HOST_SIMPLE, grid_stride_square, 3, 64, 0, 0, xi, yi, 777);
  bad = 0;
  for (int i = 0; i < 777; ++i) bad += yi[i] != (i - 300) * (i - 300);
  CHECK(bad == 0);
  cudaFree(xi);
  cudaFree(yi);

  const dim3 grid(3, 2, 2), block(4, 3, 2);
  const int total = 3 * 2 * 2 * 4 * 3 * 2;
  int4 *where;
  cudaMallocManaged(&where, total * sizeof(int4));
  coconet_host_launch(COCONET_HOST_SIMPLE, where_am_i, grid, block, 0, 0, where);
  bad = 0;
  for (int id = 0; id < total; ++id)
    bad += where[id].x != id / 24 || where[id].y != id % 24 || where[id].z != 12 || where[id].w != 2;
  CHECK(bad == 0);
  cudaFree(where);

  float *f;
  double *d;
  cudaMallocManaged(&f, 10 * sizeof(float));
  cudaMallocManaged(&d, 10 * sizeof(double));
  for (int i = 0; i < 10; ++i) f[i] = d[i] = i;
  coconet_host_launch(COCONET_HOST_SIMPLE, scale_by<float, 3>, 1, 16, 0, 0, f, 10);
  coconet_host_launch(COCONET_HOST_SIMPLE, scale_by<double, 2>, dim3(2), dim3(8), 0, 0, d, 10);
  CHECK(f[9] == 27.0f && d[9] == 18.0);
  cudaFree(f);
  cudaFree(d);

  const float c[4] = {1, 2, 3, 4};
  CHECK(cudaMemcpyToSymbol(coefficients, c, sizeof c) == cudaSuccess);
  launches_seen = 0;
  coconet_host_launch(COCONET_HOST_SIMPLE, eval_polynomial, 8, 128, 0, 0, x, y, n);
  coconet_host_launch(COCONET_HOST_SIMPLE, eval_polynomial, 8, 128, 0, 0, x, y, n);
  int seen = 0;
  CHECK(cudaMemcpyFromSymbol(&seen, launches_seen, sizeof seen) == cudaSuccess);
  CHECK(seen == 2);
  CHECK(y[2] == 1 + 2 * 2 + 3 * 4 + 4 * 8);
  cudaFree(x);
  cudaFree(y);

  int *out, *base;
  cudaMallocManaged(&out, 32 * sizeof(int));
  cudaMallocManaged(&base, 32 * sizeof(int));
  coconet_host_launch(COCONET_HOST_SIMPLE, own_parameters, 1, 32, 0, 0, 100, out, base);
  bad = 0;
  for (int i = 0; i < 32; ++i) bad += out[i] != 100 + i || base[i] != 100 + i;
  CHECK(bad == 0);
  cudaFree(out);
  cudaFree(base);

  const int bytes = 100003;
  unsigned char *data;
  unsigned *bins;
  cudaMallocManaged(&data, bytes);
  cudaMalloc(&bins, 256 * sizeof(unsigned));
  cudaMemset(bins, 0, 256 * sizeof(unsigned));
  unsigned expect[256] = {0};
  for (int i = 0; i < bytes; ++i) expect[data[i] = (unsigned char)((i * 2654435761u) >> 13)]++;
  coconet_host_launch(COCONET_HOST_SIMPLE, histogram, 13, 96, 0, 0, data, bytes, bins);
  unsigned got[256];
  cudaMemcpy(got, bins, sizeof got, cudaMemcpyDeviceToHost);
  CHECK(memcmp(got, expect, sizeof got) == 0);
  cudaFree(data);
  cudaFree(bins);

  atomic_results *r;
  cudaMallocManaged(&r, sizeof *r);
  memset(r, 0, sizeof *r);
  r->min = 1000;
  r->and_ = -1;
  r->dec = 3;
  coconet_host_launch(COCONET_HOST_SIMPLE, atomics, 4, 64, 0, 0, r);
  CHECK(r->add == 255 * 256 / 2);
  CHECK(r->sub == -512);
  CHECK(r->max == 100);
  CHECK(r->min == -50);
  CHECK(r->exch == 7);
  CHECK(r->and_ == (int)0x80000000u);
  CHECK(r->or_ == 0x7fffffff);
  CHECK(r->xor_ == 0);
  CHECK(r->inc == 256 % 10);
  CHECK(r->dec == (unsigned)((3 - 256) % 10 + 10) % 10);
  CHECK(r->ull == 256ull << 40);
  CHECK(r->fadd == 128.0f);
  CHECK(r->dadd == 64.0);
  CHECK(__half2float(r->hadd) == 256.0f);
  CHECK(r->cas_count == 256);
  cudaFree(r);
}

static void test_sync_kernels(void) {
  const int n = 7 * 256 - 100;
  float *x, *sums;
  cudaMallocManaged(&x, n * sizeof(float));
  cudaMallocManaged(&sums, 7 * sizeof(float));
  for (int i = 0; i < n; ++i) x[i] = (float)(i % 17);
  coconet_host_launch(COCONET_HOST_SYNC, block_sum, 7, 256, 0, 0, x, sums, n);
  int bad = 0;
  for (int b = 0; b < 7; ++b) {
    float expect = 0;
    for (int i = b * 256; i < (b + 1) * 256 && i < n; ++i) expect += x[i];
    bad += sums[b] != expect;
  }
  CHECK(bad == 0);
  cudaFree(x);
  cudaFree(sums);

  int *in, *out;
  cudaMallocManaged(&in, 5 * 64 * sizeof(int));
  cudaMallocManaged(&out, 5 * 64 * sizeof(int));
  for (int i = 0; i < 5 * 64; ++i) in[i] = i;
  coconet_host_launch(COCONET_HOST_SYNC, reverse_blocks, 5, 64, 64 * sizeof(int), 0, in, out);
  bad = 0;
  for (int i = 0; i < 5 * 64; ++i) bad += out[i] != (i / 64) * 64 + 63 - i % 64;
  CHECK(bad == 0);
  cudaFree(in);
  cudaFree(out);

  warp_results *w;
  cudaMallocManaged(&w, 64 * sizeof *w);
  coconet_host_launch(COCONET_HOST_SYNC, warp_ops, 1, 64, 0, 0, w);
  bad = 0;
  for (int t = 0; t < 64; ++t) {
    const int lane = t % 32;
    const warp_results &e = w[t];
    bad += e.bcast != 30;
    bad += e.up_scan != lane * (lane + 1) / 2;
    bad += e.xor_sum != 31 * 32 / 2;
    bad += e.sub8_sum != (lane / 8) * 64 + 28;
    bad += e.down_edge != (lane % 16 + 5 < 16 ? lane + 5 : lane);
    bad += e.ballot != 0x49249249u;
    bad += e.active != 0xffffffffu;
    bad += e.match != 0xffu << (lane / 8 * 8);
    bad += e.any != 1 || e.all != 0;
    bad += e.reduce_add != 496u || e.reduce_min != -10 || e.reduce_max != 21 || e.reduce_or != 0xffffffffu;
    bad += e.dbl != 0.5 + (31 - lane);
    bad += e.half_back != 0.0f;
    bad += e.count != 32 || e.and_ != 1 || e.or_ != 1;
  }
  CHECK_MSG(bad == 0, "%d wrong warp results", bad);
  cudaFree(w);

  unsigned *ballots;
  int *psums;
  cudaMallocManaged(&ballots, 48 * sizeof(unsigned));
  cudaMallocManaged(&psums, 48 * sizeof(int));
  coconet_host_launch(COCONET_HOST_SYNC, partial_warp, 1, 48, 0, 0, ballots, psums);
  bad = 0;
  for (int t = 0; t < 48; ++t) bad += ballots[t] != (t < 32 ? 0xffffffffu : 0xffffu) || psums[t] != (t < 32 ? 32 : 16);
  CHECK(bad == 0);
  cudaFree(ballots);
  cudaFree(psums);

  int *early;
  cudaMallocManaged(&early, 64 * sizeof(int));
  coconet_host_launch(COCONET_HOST_SYNC, early_exit, 1, 64, 0, 0, early, 40);
  bad = 0;
  for (int t = 0; t < 40; ++t) bad += early[t] != 40;
  CHECK(bad == 0);
  coconet_host_launch(COCONET_HOST_SYNC, split_warp, 1, 32, 0, 0, early);
  bad = 0;
  for (int t = 0; t < 32; ++t) bad += early[t] != (t < 16 ? 15 : 16);
  CHECK(bad == 0);
  cudaFree(early);

  int *xi, *block_sums, *tile8;
  cudaMallocManaged(&xi, 3 * 256 * sizeof(int));
  cudaMallocManaged(&block_sums, 8 * sizeof(int));  // cg_reduce: 3, cub_reduce: 8
  cudaMallocManaged(&tile8, 3 * 256 * sizeof(int));
  for (int i = 0; i < 3 * 256; ++i) xi[i] = i;
  coconet_host_launch(COCONET_HOST_SYNC, cg_reduce, 3, 256, 0, 0, xi, block_sums, tile8);
  bad = 0;
  for (int b = 0; b < 3; ++b) bad += block_sums[b] != 256 * (256 * b) + 255 * 256 / 2;
  for (int i = 0; i < 3 * 256; i += 8) bad += tile8[i] != 28;
  CHECK(bad == 0);
  coconet_host_launch(COCONET_HOST_SYNC, cub_reduce, 2, 128, 0, 0, xi, block_sums);  // xi[i] = i
  bad = 0;
  for (int b = 0; b < 2; ++b) {
    const int lo = 128 * b;
    bad += block_sums[4 * b] != 128 * lo + 127 * 128 / 2 || block_sums[4 * b + 1] != lo + 127;
    bad += block_sums[4 * b + 2] != 100 * lo + 99 * 100 / 2 || block_sums[4 * b + 3] != 128 * lo + 127 * 128 / 2 + 128;
  }
  CHECK(bad == 0);
  coconet_host_launch(COCONET_HOST_SYNC, cub_reduce_partial, 1, 96, 0, 0, xi, block_sums);
  CHECK(block_sums[0] == 95 && block_sums[1] == 5 && block_sums[2] == 95 * 96 / 2 && block_sums[3] == 9);
  cudaFree(xi);
  cudaFree(block_sums);
  cudaFree(tile8);
}

static void test_launch_errors(void) {
  int *p;
  cudaMallocManaged(&p, 4 * sizeof(int));
  p[0] = 5;
  CHECK(cudaGetLastError() == cudaSuccess);
  coconet_host_launch(COCONET_HOST_SIMPLE, grid_stride_square, 1, 2048, 0, 0, p, p, 1);
  CHECK(cudaPeekAtLastError() == cudaErrorInvalidConfiguration);
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(p[0] == 5);
  coconet_host_launch(COCONET_HOST_SIMPLE, grid_stride_square, dim3(0), 32, 0, 0, p, p, 1);
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
  coconet_host_launch(COCONET_HOST_SYNC, reverse_blocks, 1, 4, 64 * 1024, 0, p, p);
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  CHECK(cudaFuncSetAttribute(reverse_blocks, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024) == cudaSuccess);
  coconet_host_launch(COCONET_HOST_SYNC, reverse_blocks, 1, 4, 64 * 1024, 0, p, p);
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(cudaFuncSetAttribute(reverse_blocks, cudaFuncAttributeMaxDynamicSharedMemorySize, 1 << 20) ==
        cudaErrorInvalidValue);
  cudaGetLastError();
  p[0] = 5;
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s) == cudaSuccess);
  CHECK(cudaStreamDestroy(s) == cudaSuccess);
  coconet_host_launch(COCONET_HOST_SIMPLE, grid_stride_square, 1, 1, 0, s, p, p, 1);
  CHECK(cudaGetLastError() == cudaErrorInvalidResourceHandle);
  CHECK(p[0] == 5);
  cudaFree(p);
}

static void host_callback(void *data) { *static_cast<int *>(data) += 1; }

static void test_runtime_api(void) {
  int count = 0, dev = -1;
  CHECK(cudaGetDeviceCount(&count) == cudaSuccess && count == 1);
  CHECK(cudaSetDevice(0) == cudaSuccess);
  CHECK(cudaGetDevice(&dev) == cudaSuccess && dev == 0);
  CHECK(cudaSetDevice(1) == cudaErrorInvalidDevice);
  CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
  CHECK(cudaSetDevice(-1) == cudaErrorInvalidDevice);
  CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
  CHECK(prop.warpSize == 32 && prop.multiProcessorCount == 132 && prop.maxThreadsPerBlock == 1024);
  int sms = 0, major = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess && sms == 132);
  CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess && major == 9);
  CHECK(strcmp(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument") == 0);
  CHECK(strcmp(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation") == 0);
  int version = 0;
  CHECK(cudaRuntimeGetVersion(&version) == cudaSuccess && version == CUDART_VERSION);

  unsigned char *d;
  CHECK(cudaMalloc(&d, 1000) == cudaSuccess);
  CHECK(d[0] == 0xff && d[999] == 0xff);
  CHECK(((uintptr_t)d & 255) == 0);
  cudaPointerAttributes attr;
  CHECK(cudaPointerGetAttributes(&attr, d + 10) == cudaSuccess && attr.type == cudaMemoryTypeDevice);
  int on_stack = 0;
  CHECK(cudaPointerGetAttributes(&attr, &on_stack) == cudaSuccess && attr.type == cudaMemoryTypeUnregistered);
  CHECK(cudaMemset(d, 7, 500) == cudaSuccess && d[499] == 7 && d[500] == 0xff);
  CHECK(cudaFree(d + 1) == cudaErrorInvalidValue);
  CHECK(cudaFreeHost(d) == cudaErrorInvalidValue);
  CHECK(cudaFree(d) == cudaSuccess);
  CHECK(cudaFree(nullptr) == cudaSuccess);
  cudaGetLastError();

  char *host, *pitched;
  size_t pitch = 0;
  CHECK(cudaMallocHost(&host, 64) == cudaSuccess);
  CHECK(cudaMallocPitch(&pitched, &pitch, 10, 3) == cudaSuccess && pitch >= 10);
  for (int i = 0; i < 30; ++i) host[i] = (char)i;
  CHECK(cudaMemcpy2D(pitched, pitch, host, 10, 10, 3, cudaMemcpyHostToDevice) == cudaSuccess);
  CHECK(pitched[pitch + 3] == 13 && pitched[2 * pitch + 9] == 29);
  CHECK(cudaMemcpy(host, host, 8, (cudaMemcpyKind)5) == cudaErrorInvalidMemcpyDirection);
  cudaGetLastError();
  CHECK(cudaFreeHost(host) == cudaSuccess);
  CHECK(cudaFree(pitched) == cudaSuccess);

  cudaStream_t s;
  cudaEvent_t start, stop;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  CHECK(cudaEventCreate(&start) == cudaSuccess);
  CHECK(cudaEventCreate(&stop) == cudaSuccess);
  float *y;
  cudaMallocAsync(&y, 100 * sizeof(float), s);
  CHECK(cudaEventRecord(start, s) == cudaSuccess);
  cudaMemsetAsync(y, 0, 100 * sizeof(float), s);
  coconet_host_launch(COCONET_HOST_SIMPLE, axpy, 1, 100, 0, s, 1.0f, y, y, 100);
  int calls = 0;
  CHECK(cudaLaunchHostFunc(s, host_callback, &calls) == cudaSuccess && calls == 1);
  CHECK(cudaEventRecord(stop, s) == cudaSuccess);
  CHECK(cudaStreamWaitEvent(cudaStreamPerThread, stop, 0) == cudaSuccess);
  CHECK(cudaEventSynchronize(stop) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess);
  float ms = -1.0f;
  CHECK(cudaEventElapsedTime(&ms, start, stop) == cudaSuccess && ms >= 0.0f && ms < 10000.0f);
  CHECK(cudaFreeAsync(y, s) == cudaSuccess);
  CHECK(cudaEventDestroy(start) == cudaSuccess);
  CHECK(cudaEventDestroy(stop) == cudaSuccess);
  CHECK(cudaEventQuery(start) == cudaErrorInvalidResourceHandle);
  CHECK(cudaStreamDestroy(s) == cudaSuccess);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  cudaGetLastError();
}

static void test_intrinsics(void) {
  CHECK(__popc(0xf0f0u) == 8 && __popcll(~0ull) == 64);
  CHECK(__clz(0) == 32 && __clz(1) == 31 && __clzll(1) == 63);
  CHECK(__ffs(0) == 0 && __ffs(8) == 4);
  CHECK(__brev(1u) == 0x80000000u && __brevll(1ull) == 1ull << 63);
  CHECK(__byte_perm(0x33221100u, 0x77665544u, 0x5410u) == 0x55441100u);
  CHECK(__funnelshift_l(0x80000000u, 1u, 1) == 3u && __funnelshift_r(1u, 1u, 1) == 0x80000000u);
  CHECK(__funnelshift_lc(0u, 5u, 40) == 0u && __funnelshift_rc(0u, 5u, 40) == 5u);
  CHECK(__float2int_rn(2.5f) == 2 && __float2int_rn(3.5f) == 4 && __float2int_rz(-2.7f) == -2);
  CHECK(__float2int_rd(-2.5f) == -3 && __float2int_ru(2.1f) == 3);
  CHECK(__float2int_rn(1e20f) == INT_MAX && __float2int_rn(-1e20f) == INT_MIN && __float2int_rn(NAN) == 0);
  CHECK(__float2uint_rn(-5.0f) == 0u && __double2ll_rz(-1e30) == LLONG_MIN);
  CHECK(__saturatef(1.5f) == 1.0f && __saturatef(-1.0f) == 0.0f && __saturatef(NAN) == 0.0f);
  CHECK(min(3, 5) == 3 && max(3u, 5) == 5u && min(2.0f, 1.0f) == 1.0f && max(1.0, 2.0f) == 2.0);
  CHECK(__mul24(-3, 5) == -15 && __umulhi(0x80000000u, 4u) == 2u && __mul64hi(-1, 1) == -1);
  CHECK(__sad(3, 10, 1u) == 8u && __hadd(-3, 0) == -2 && __rhadd(1, 2) == 2);
  CHECK(__int_as_float(0x3f800000) == 1.0f && __float_as_uint(-0.0f) == 0x80000000u);
  CHECK(__double_as_longlong(1.0) == 0x3ff0000000000000ll && __hiloint2double(0x3ff00000, 0) == 1.0);
  CHECK(isinf(CUDART_INF_F) && CUDART_PI_F == 3.141592654F);
  CHECK(fabsf(rsqrtf(4.0f) - 0.5f) == 0.0f && __fdividef(1.0f, 4.0f) == 0.25f);
  const long long t0 = clock64();
  CHECK(clock64() >= t0);
}

// A program that never starts MPI itself: NCCL starts it (one rank) and
// finalizes it at exit.
static void test_nccl_without_mpi_init(void) {
  ncclUniqueId id;
  ncclComm_t comm;
  CHECK(ncclGetUniqueId(&id) == ncclSuccess);
  CHECK(ncclCommInitRank(&comm, 1, id, 0) == ncclSuccess);
  float *x;
  cudaMallocManaged(&x, 3 * sizeof(float));
  x[0] = 1.5f;
  x[1] = -2.0f;
  x[2] = 8.0f;
  CHECK(ncclAllReduce(x, x, 3, ncclFloat32, ncclMax, comm, 0) == ncclSuccess);
  CHECK(x[0] == 1.5f && x[1] == -2.0f && x[2] == 8.0f);
  CHECK(ncclCommDestroy(comm) == ncclSuccess);
  cudaFree(x);
}

int main(void) {
  test_simple_kernels();
  test_sync_kernels();
  test_launch_errors();
  test_runtime_api();
  test_intrinsics();
  test_nccl_without_mpi_init();
  return check_summary("host kernels");
}
