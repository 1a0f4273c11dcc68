// Style: a GPT-2 trainer's block reduction, a __device__ template whose
// template argument is the warp reduction (a function pointer) and whose
// later parameters have defaults (a barrier after it, the value past the
// warps): a gradient norm summed through it before thread 0's atomicAdd, two
// LAMB norms of one kernel (the barrier asked for, so the helper can run
// twice), a softmax over rows whose max and sum go through it, and an
// activation applied through a helper template that takes the function as
// its template argument. `split reorder` runs each on this rank's slice or
// rows. Each -D variant is a call coconet must refuse, with its reason: a
// padding that is not 0, the helper twice without its barrier, a max where a
// sum is needed, a block-wide function reached through a template argument
// from a kernel with a warp per row (the rows of one block would meet in
// it), calls through a function pointer held in a variable or passed in.
// HEADER_HELPER keeps the block helper in a header of the project's, which
// coconet reads there (it was refused): it runs equal.
//
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --explain %s | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %expect 1 %coconet --check %s -- -DPAD_ONE 2>&1 | %FileCheck --check-prefix=NOT_TAKEN %s
// RUN: %expect 1 %coconet --check %s -- -DMAX_FOR_SUM 2>&1 | %FileCheck --check-prefix=NOT_TAKEN %s
// RUN: %expect 1 %coconet --check %s -- -DUNFENCED 2>&1 | %FileCheck --check-prefix=UNFENCED %s
// RUN: %expect 1 %coconet --check %s -- -DWARP_ROWS 2>&1 | %FileCheck --check-prefix=WARP_ROWS %s
// RUN: %expect 1 %coconet --check %s -- -DROW_POINTER 2>&1 | %FileCheck --check-prefix=ROW_POINTER %s
// RUN: %expect 1 %coconet --check %s -- -DACT_POINTER 2>&1 | %FileCheck --check-prefix=ACT_POINTER %s
// RUN: %coconet --verify=4 %s -- -DHEADER_HELPER | %FileCheck --check-prefix=HEADER_HELPER %s

#include <cuda_runtime.h>
#include <math.h>
#include <nccl.h>

#if defined(HEADER_HELPER)
#include "Inputs/block-helpers.cuh"
#endif

#define WARP_SIZE 32U
typedef float (*warp_fn)(float);

__device__ inline float warp_add(float v) {
  for (int step = 16; step > 0; step /= 2) v += __shfl_xor_sync(0xFFFFFFFF, v, step);
  return v;
}

__device__ inline float warp_max(float v) {
  for (int step = 16; step > 0; step /= 2) v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFF, v, step));
  return v;
}

// Every warp reduces its lanes, lane 0 parks the result, every warp reduces
// the parked values; `sync_after` lets a caller run it again.
template <warp_fn reduce_warp>
__device__ inline float block_reduce(float v, bool sync_after = false, float pad = 0.0f) {
  __shared__ float parked[WARP_SIZE];
  const int lane = threadIdx.x % WARP_SIZE;
  const int warp = threadIdx.x / WARP_SIZE;
  const int warps = blockDim.x / WARP_SIZE;
  float r = reduce_warp(v);
  if (lane == 0) { parked[warp] = r; }
  __syncthreads();
  r = (lane < warps) ? parked[lane] : pad;
  float all = reduce_warp(r);
  if (sync_after) {
    __syncthreads();
  }
  return all;
}

template <class T>
__global__ void norm_sq(float *out, const T *g, size_t n) {
  size_t first = blockIdx.x * blockDim.x + threadIdx.x;
  size_t stride = blockDim.x * gridDim.x;
  float acc = 0.f;
  for (size_t i = first; i < n; i += stride) acc += (float)g[i] * (float)g[i];
#if defined(PAD_ONE)
  float total = block_reduce<warp_add>(acc, false, 1.0f);
#elif defined(MAX_FOR_SUM)
  float total = block_reduce<warp_max>(acc);
#else
  float total = block_reduce<warp_add>(acc);
#endif
  if (threadIdx.x == 0) atomicAdd(out, total);
}

__global__ void norms_pair(float *norms, const float *g, const float *w, size_t n) {
  float a = 0.0f, b = 0.0f;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    a += g[i] * g[i];
    b += w[i] * w[i];
  }
#if defined(UNFENCED)
  a = block_reduce<warp_add>(a);
#else
  a = block_reduce<warp_add>(a, true);
#endif
  b = block_reduce<warp_add>(b, true);
  if (threadIdx.x == 0) {
    atomicAdd(&norms[0], a);
    atomicAdd(&norms[1], b);
  }
}

__global__ void clipped(float *w, const float *g, const float *norm2, float lr, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    w[i] -= lr * fminf(1.0f, 1.0f / (sqrtf(norm2[0]) + 1e-6f)) * g[i];
}

__global__ void trust_step(float *w, const float *g, const float *norms, float lr, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    w[i] -= lr * sqrtf(norms[1]) / (sqrtf(norms[0]) + 1e-6f) * g[i];
}

// A block per row: out = softmax(x) along the row.
__global__ void softmax_rows(float *out, const float *x, int h) {
  const float *row = x + (size_t)blockIdx.x * h;
  float m = -INFINITY;
  for (int j = threadIdx.x; j < h; j += blockDim.x) m = fmaxf(m, row[j]);
#if defined(ROW_POINTER)
  warp_fn largest = warp_max;
  m = largest(m);
#elif defined(HEADER_HELPER)
  m = header_block_max(m);
#else
  m = block_reduce<warp_max>(m, false, -INFINITY);
#endif
  float s = 0.0f;
  for (int j = threadIdx.x; j < h; j += blockDim.x) s += expf(row[j] - m);
  s = block_reduce<warp_add>(s);
  for (int j = threadIdx.x; j < h; j += blockDim.x) out[(size_t)blockIdx.x * h + j] = expf(row[j] - m) / s;
}

#if defined(WARP_ROWS)
__device__ float block_add(float v) {
  __syncthreads();
  return warp_add(v);
}

template <warp_fn f>
__device__ float through(float v) { return f(v); }

// A warp per row, whose row sum goes through a function that meets the whole block.
__global__ void rms_warps(float *out, const float *x, int rows, int h) {
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (row >= rows) return;
  float ss = 0.0f;
  for (int j = threadIdx.x % 32; j < h; j += 32) ss += x[row * h + j] * x[row * h + j];
  ss = through<block_add>(ss);
  for (int j = threadIdx.x % 32; j < h; j += 32) out[row * h + j] = x[row * h + j] * rsqrtf(ss / h + 1e-6f);
}
#endif

__device__ float gelu_tanh(float x) {
  return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

template <warp_fn act>
__device__ float activate(float x) { return act(x); }

#if defined(ACT_POINTER)
// The activation a device function pointer the host looked up.
__global__ void act_kernel(float *out, const float *y, warp_fn act, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = act(y[i]);
}
#else
__global__ void act_kernel(float *out, const float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = activate<gelu_tanh>(y[i]);
}
#endif

void clip(float *w, float *g, float *norm2, size_t n, float lr, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(clip_t) split reorder replicated(w) scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    cudaMemsetAsync(norm2, 0, sizeof(float), s);
    norm_sq<float><<<64, 512, 0, s>>>(norm2, g, n);
    clipped<<<64, 256, 0, s>>>(w, g, norm2, lr, n);
  }
}

void lamb_pair(float *w, float *g, float *norms, size_t n, float lr, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(lamb_t) split reorder replicated(w) scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    cudaMemsetAsync(norms, 0, 2 * sizeof(float), s);
    norms_pair<<<32, 128, 0, s>>>(norms, g, w, n);
    trust_step<<<64, 256, 0, s>>>(w, g, norms, lr, n);
  }
}

void softmax(float *out, float *x, int rows, int h, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(softmax_t) split reorder
  {
    ncclAllReduce(x, x, (size_t)rows * h, ncclFloat, ncclSum, comm, s);
    softmax_rows<<<rows, 256, 0, s>>>(out, x, h);
  }
}

#if defined(WARP_ROWS)
void rms(float *out, float *x, int rows, int h, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(rms_t) split reorder
  {
    ncclAllReduce(x, x, (size_t)rows * h, ncclFloat, ncclSum, comm, s);
    rms_warps<<<(rows + 3) / 4, 128, 0, s>>>(out, x, rows, h);
  }
}
#endif

#if defined(ACT_POINTER)
void act(float *out, float *y, warp_fn f, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(act_t) split reorder
  {
    ncclAllReduce(y, y, n, ncclFloat, ncclSum, comm, s);
    act_kernel<<<(n + 255) / 256, 256, 0, s>>>(out, y, f, n);
  }
}
#else
void act(float *out, float *y, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(act_t) split reorder
  {
    ncclAllReduce(y, y, n, ncclFloat, ncclSum, comm, s);
    act_kernel<<<(n + 255) / 256, 256, 0, s>>>(out, y, n);
  }
}
#endif

// IR: verify=ir clip_t: ok
// IR: verify=ir lamb_t: ok
// IR: verify=ir softmax_t: ok
// IR: verify=ir act_t: ok
// EXEC: verify clip_t: ok
// EXEC: verify lamb_t: ok
// EXEC: verify softmax_t: ok
// EXEC: verify act_t: ok
// EXPLAIN: reorder: kernel 'norm_sq<float>' ({{.*}}) sums into 'norm2' (atomicAdd) on this rank's slice of 'g'
// EXPLAIN: reorder: kernel 'norms_pair' ({{.*}}) sums into 'norms' (atomicAdd) on this rank's slice of 'g'

// NOT_TAKEN: error: kernel 'norm_sq' sums 'acc' with 'block_reduce', whose shared memory coconet does not recognize as a block sum: it takes the warp-by-warp form
// UNFENCED: error: kernel 'norms_pair' calls 'block_reduce' again; a warp may store its next sum in its slot while the first warp still reads the last one
// WARP_ROWS: error: kernel 'rms_warps' runs one warp per row and calls __syncthreads(), through which the warps of a block meet
// ROW_POINTER: error: kernel 'softmax_rows' calls through a function pointer in largest(m); coconet reads the functions a row-wise kernel calls and cannot tell which one this is: call it by name
// ACT_POINTER: error: kernel 'act_kernel' calls through a function pointer in act(y[i]); coconet reads the functions a kernel calls and cannot tell which one this is: call it by name
// HEADER_HELPER: verify softmax_t: ok
