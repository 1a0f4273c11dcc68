// Style: a trainer's multi-tensor optimizer. One launch updates every layer's
// slice of one flat buffer: its grid is dim3(blocks, layers), blockIdx.y picks
// the layer and the element loop counts i over the layer's n elements along x.
// AdamW (a template, bf16 parameters with fp32 master weights, lerp written
// with fmaf, stochastic rounding keyed by threadIdx.x, blockIdx.x and
// blockIdx.y) is launched through a template host wrapper whose grid is
// dim3(num_blocks, num_slices), the offset to the layer a local; SGD (GRID_STRIDE)
// is a grid-stride loop through a pointer to the layer, with a per-layer scale
// [blockIdx.y] and a bias shared by the layers [i]. Pragma lines only: the flat
// gradient is all-reduced, split, the update runs on this rank's slice of the
// flat buffer and its state is sharded (ZeRO). The nearest refusals: a stride
// the launch passes other than the count, a stride narrower than the count
// (NARROW_STRIDE, an int given a long count's value), a write at [i] under a
// 2-D grid, a block of two dimensions.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=4 %s -- -DFP32 | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=ir:4 %s -- -DGRID_STRIDE | %FileCheck --check-prefix=IR_SGD %s
// RUN: %coconet --verify=4 %s -- -DGRID_STRIDE | %FileCheck --check-prefix=EXEC_SGD %s
// RUN: %coconet --verify=4 %s -- -DGRID_STRIDE -DTEMPLATE_SGD | %FileCheck --check-prefix=EXEC_SGD %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --explain %s | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %expect 1 %coconet --check %s -- -DSTRIDE 2>&1 | %FileCheck --check-prefix=STRIDE %s
// RUN: %expect 1 %coconet --check %s -- -DNARROW_STRIDE 2>&1 | %FileCheck --check-prefix=NARROW_STRIDE %s
// RUN: %expect 1 %coconet --check %s -- -DGRID_STRIDE -DUNSLICED 2>&1 | %FileCheck --check-prefix=UNSLICED %s
// RUN: %expect 1 %coconet --check %s -- -DGRID_STRIDE -DBLOCK2D 2>&1 | %FileCheck --check-prefix=BLOCK2D %s
// The grid as a local `dim3 grid(64, layers)` (or braced) is read where it is declared;
// a variable it reads that changes after is refused (GRID_CHANGED), and so is a member, which
// a member function may change (GRID_MEMBER).
// RUN: %coconet --verify=3 %s -- -DGRID_STRIDE -DLOCAL_GRID | %FileCheck --check-prefix=SGD_OK %s
// RUN: %coconet --verify=3 %s -- -DGRID_STRIDE -DBRACED_GRID | %FileCheck --check-prefix=SGD_OK %s
// RUN: %expect 1 %coconet --check %s -- -DGRID_STRIDE -DLOCAL_GRID -DGRID_CHANGED 2>&1 | %FileCheck --check-prefix=GRID_CHANGED %s
// RUN: %expect 1 %coconet --check %s -- -DGRID_STRIDE -DGRID_MEMBER 2>&1 | %FileCheck --check-prefix=GRID_CHANGED %s
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

__device__ __forceinline__ unsigned rng_bits(unsigned seed, unsigned a, unsigned b) {
  unsigned h = seed ^ (a * 0x9E3779B1u) ^ (b * 0x85EBCA77u);
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return h;
}

__device__ __forceinline__ void round_sr(__nv_bfloat16 *out, float x, unsigned bits) {
  unsigned u = __float_as_uint(x) + (bits & 0xFFFFu);
  *out = __ushort_as_bfloat16((unsigned short)(u >> 16));
}
__device__ __forceinline__ void round_sr(float *out, float x, unsigned) { *out = x; }

#ifdef NARROW_STRIDE
typedef long count_t;  // a count wider than the stride
#else
typedef int count_t;
#endif

template <typename Tp>
__global__ void adamw_multi(Tp *params, float *master, const float *grads, float *m, float *v, count_t n,
                            int stride, float lr, float beta1, float beta2, float eps, float wd, unsigned seed) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= n) return;
  size_t off = (size_t)blockIdx.y * stride;
  float g = grads[off + idx];
  float mi = fmaf(beta1, m[off + idx] - g, g);
  float vi = fmaf(beta2, v[off + idx] - g * g, g * g);
  m[off + idx] = mi;
  v[off + idx] = vi;
  float w = master[off + idx];
  w -= lr * (mi / (sqrtf(vi) + eps) + wd * w);
  master[off + idx] = w;
  round_sr(&params[off + idx], w, rng_bits(seed, threadIdx.x, blockIdx.x ^ (blockIdx.y << 16)));
}

template <typename Tp>
void adamw_update(Tp *params, float *master, const float *grads, float *m, float *v, count_t n, int stride,
                  int num_slices, float lr, float beta1, float beta2, float eps, float wd, unsigned seed,
                  cudaStream_t stream) {
  const int block_size = 512;
  const int num_blocks = (n + block_size - 1) / block_size;
  adamw_multi<Tp><<<dim3(num_blocks, num_slices), block_size, 0, stream>>>(params, master, grads, m, v, n, stride,
                                                                           lr, beta1, beta2, eps, wd, seed);
}

#ifdef FP32
typedef float param_t;
#else
typedef __nv_bfloat16 param_t;
#endif

void adamw_step(param_t *params, float *master, float *grads, float *m, float *v, int n, int layers, float lr,
                unsigned seed, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(adamw) split reorder scratch(grads) shard(m, v, master) replicated(params)
  {
    ncclAllReduce(grads, grads, (size_t)layers * n, ncclFloat, ncclSum, comm, s);
#ifdef STRIDE
    adamw_update(params, master, grads, m, v, n, n + 1, layers, lr, 0.9f, 0.95f, 1e-8f, 0.1f, seed, s);
#else
    adamw_update(params, master, grads, m, v, n, n, layers, lr, 0.9f, 0.95f, 1e-8f, 0.1f, seed, s);
#endif
  }
}

#ifdef GRID_STRIDE
#ifdef TEMPLATE_SGD
// A template whose read-only buffer is not const (g): the element function takes it as
// its template parameter's type, named through the generated namespace.
template <typename T>
__global__ void sgd_multi(T *w, T *g, const T *scale, const T *bias, float lr, int n) {
  T *wl = w + blockIdx.y * n;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    wl[i] -= lr * scale[blockIdx.y] * (g[(size_t)blockIdx.y * n + i] + bias[i]);
}
#else
__global__ void sgd_multi(float *w, const float *g, const float *scale, const float *bias, float lr, int n) {
  float *wl = w + blockIdx.y * n;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
#ifdef UNSLICED
    w[i] -= lr * g[i];
#else
    wl[i] -= lr * scale[blockIdx.y] * (g[(size_t)blockIdx.y * n + i] + bias[i]);
#endif
}
#endif

void sgd_step(float *w, float *g, const float *scale, const float *bias, float lr, int n, int layers,
              ncclComm_t comm, cudaStream_t s) {
#if defined(LOCAL_GRID)
  dim3 grid(64, layers);
#elif defined(BRACED_GRID)
  dim3 grid{64u, (unsigned)layers};
#endif
#if defined(GRID_CHANGED)
  layers += 1;
#endif
#if defined(GRID_MEMBER)
  struct Shape {
    int layers;
    void grow() { layers += 1; }
  } shape{layers};
  dim3 grid(64, shape.layers);
  shape.grow();  // a member function changes what the grid read
  layers = shape.layers;
#endif
#pragma coconet region name(sgd) split reorder replicated(w, scale, bias)
  {
    ncclAllReduce(g, g, layers * n, ncclFloat, ncclSum, comm, s);
#if defined(BLOCK2D)
    sgd_multi<<<dim3(64, layers), dim3(128, 2), 0, s>>>(w, g, scale, bias, lr, n);
#elif defined(LOCAL_GRID) || defined(BRACED_GRID) || defined(GRID_MEMBER)
    sgd_multi<<<grid, 128, 0, s>>>(w, g, scale, bias, lr, n);
#else
    sgd_multi<<<dim3(64, layers), 128, 0, s>>>(w, g, scale, bias, lr, n);
#endif
  }
}
#endif

// IR: verify=ir adamw: ok
// EXEC: verify adamw: output 'params' ({{bf16|f32}}): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify adamw: ok
// IR_SGD: verify=ir sgd: ok
// EXEC_SGD: verify sgd: output 'w' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC_SGD: verify sgd: ok
// The kernel's own text, element e of the flat buffer being idx of slice e / n:
// CODE: const int idx = (int)(coconet_e % (size_t)n);
// CODE: const uint3 blockIdx = make_uint3((unsigned)(coconet_t / 512u),
// CODE-NEXT: (unsigned)(coconet_e / (size_t)n), 0);
// CODE: round_sr(&params[off + idx], w, rng_bits(seed, threadIdx.x, blockIdx.x ^ (blockIdx.y << 16)));
// EXPLAIN: the call of 'adamw_update<__nv_bfloat16>' ({{.*}}multi-tensor.cu:{{[0-9]+}}:6) is the launch of kernel 'adamw_multi' inside it
// EXPLAIN: reorder: kernel 'adamw_multi<__nv_bfloat16>' {{.*}} runs on this rank's slice of 'grads'
// NARROW_STRIDE: error: kernel 'adamw_multi' steps from slice to slice by 'stride', the value of its count 'n', but as 'int', which does not hold every value of the count's type 'long': declare the stride at least as wide as the count
// STRIDE: error: kernel 'adamw_multi' steps from slice to slice by 'stride' (the launch passes 'n + 1'), and coconet reads its grid's y as slices of one flat buffer only when that step is the element loop's count 'n' (n)
// UNSLICED: error: kernel 'sgd_multi' writes w[i], and its grid's y selects a slice (layers of them): a launch read as slices writes only at blockIdx.y * n + i
// SGD_OK: verify sgd: ok
// GRID_CHANGED: error: kernel 'sgd_multi' is launched with '<<<grid, 128>>>', whose grid or block has more than one dimension
// BLOCK2D: error: kernel 'sgd_multi' is launched with '<<<dim3(64, layers), dim3(128, 2)>>>', whose grid or block has more than one dimension
