// Style: the byte-wide buffers training code keeps next to its activations:
// a dropout mask saved as uint8_t for the backward pass (Philox keyed by the
// element index, the forward's fused bias + dropout + residual), the backward
// reading a replicated bool mask, and an int8_t quantization of the reduced
// values with a bool "non-zero" map (a float stored into bool is 0 or 1);
// and a bool buffer all-reduced itself, as ncclUint8 with ncclMax (NCCL has no
// bool), before an update that skips the elements it flags.
// The masks are gathered as ncclUint8 / ncclInt8. With the element loop in a
// helper whose default argument names a constant (fake_quant), the element is
// generated from coconet's IR (int8_t and uint8_t casts, locals and parameters
// keep their wrap, a float stored into bool its != 0). A keep-mask set by
// cudaMemsetAsync(mask, 1, n) (bytes, so elements) before the collective; a
// uint8 vote summed (wrapping) and a bool flag, fused too (-DFUSE).
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --verify=3 %s -- -DFUSE | %FileCheck --check-prefix=FUSED %s
// RUN: %expect 1 %coconet --check %s -- -DSHORT_MASK 2>&1 | %FileCheck --check-prefix=SHORT %s
// RUN: %expect 1 %coconet --check %s -- -DPLAIN_CHAR 2>&1 | %FileCheck --check-prefix=PLAIN_CHAR %s
// RUN: %expect 1 %coconet --check %s -- -DINT8_DATATYPE 2>&1 | %FileCheck --check-prefix=INT8_DATATYPE %s
// RUN: %expect 1 %coconet --check %s -- -DHEX_MEMSET 2>&1 | %FileCheck --check-prefix=HEX_MEMSET %s
#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <curand_kernel.h>
#include <nccl.h>

#ifdef SHORT_MASK
typedef unsigned short mask_t;
#else
typedef uint8_t mask_t;
#endif

__global__ void bias_dropout_add(__half *out, mask_t *mask, const __half *x, const __half *bias,
                                 const __half *residual, float p, unsigned long long seed,
                                 unsigned long long offset, int n, int hidden) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  curandStatePhilox4_32_10_t state;
  curand_init(seed, i, offset, &state);
  const mask_t keep = curand_uniform(&state) > p;
  mask[i] = keep;
  const float v = __half2float(x[i]) + __half2float(bias[i % hidden]);
  out[i] = __float2half(__half2float(residual[i]) + (keep ? v / (1.0f - p) : 0.0f));
}

__global__ void dropout_backward(float *dx, const bool *mask, const float *dy, float scale, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    dx[i] = mask[i] ? dy[i] * scale : 0.0f;
}

__global__ void quantize(int8_t *q, bool *nonzero, const float *x, float inv_scale, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    q[i] = (int8_t)fmaxf(-127.0f, fminf(127.0f, rintf(x[i] * inv_scale)));
    nonzero[i] = x[i] - 0.5f;
  }
}

__global__ void skip_flagged(float *w, const bool *flagged, const float *g, float lr, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] = flagged[i] ? w[i] : w[i] - lr * g[i];
}

constexpr float kScale = 64.0f;
__device__ void fake_quant_loop(int8_t *q, float *y, bool *nonzero, const float *x, uint8_t bias, int n,
                                float scale = kScale) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const int8_t r = (int8_t)(x[i] * scale);
    const uint8_t u = (uint8_t)(r + bias);
    q[i] = r;
    y[i] = r / scale + (float)u;
    nonzero[i] = x[i] * 0.5f;
  }
}
__global__ void fake_quant(int8_t *q, float *y, bool *nonzero, const float *x, uint8_t bias, int n) {
  fake_quant_loop(q, y, nonzero, x, bias, n);
}

__global__ void keep_above(uint8_t *keep, float *y, const float *x, float threshold, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    if (x[i] < threshold) keep[i] = 0;
    y[i] = keep[i] ? x[i] : 0.0f;
  }
}

#ifdef PLAIN_CHAR
typedef char vote_t;
#else
typedef uint8_t vote_t;
#endif
__global__ void tally(float *out, const vote_t *votes, int *count, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = votes[i] * 0.5f;
#ifndef FUSE  // (a fused kernel takes no sums)
    atomicAdd(count, (int)(votes[i] > 2));
#endif
  }
}

void forward(__half *out, mask_t *mask, __half *x, const __half *bias, const __half *residual, int tokens,
             int hidden, unsigned long long seed, ncclComm_t comm, cudaStream_t s) {
  const int n = tokens * hidden;
#pragma coconet region name(bias_dropout) split reorder replicated(bias, residual) scratch(x)
  {
    ncclAllReduce(x, x, n, ncclHalf, ncclSum, comm, s);
    bias_dropout_add<<<(n + 255) / 256, 256, 0, s>>>(out, mask, x, bias, residual, 0.1f, seed, 4, n, hidden);
  }
#pragma coconet region name(bias_dropout_fused) split reorder fuse replicated(bias, residual) scratch(x)
  {
    ncclAllReduce(x, x, n, ncclHalf, ncclSum, comm, s);
    bias_dropout_add<<<(n + 255) / 256, 256, 0, s>>>(out, mask, x, bias, residual, 0.1f, seed, 8, n, hidden);
  }
}

void backward(float *dx, const bool *mask, float *dy, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(dropout_backward) split reorder replicated(mask) scratch(dy)
  {
    ncclAllReduce(dy, dy, n, ncclFloat, ncclSum, comm, s);
    dropout_backward<<<128, 256, 0, s>>>(dx, mask, dy, 1.0f / 0.9f, n);
  }
}

void quantized(int8_t *q, bool *nonzero, float *x, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(quantize) split reorder scratch(x)
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    quantize<<<(n + 255) / 256, 256, 0, s>>>(q, nonzero, x, 16.0f, n);
  }
}

void update(float *w, bool *flagged, const float *g, int n, ncclComm_t comm, cudaStream_t s) {
#ifdef FUSE
#pragma coconet region name(skip_flagged) split reorder fuse replicated(w, g)
#else
#pragma coconet region name(skip_flagged) split reorder replicated(w, g)
#endif
  {
    ncclAllReduce(flagged, flagged, n, ncclUint8, ncclMax, comm, s);
    skip_flagged<<<(n + 255) / 256, 256, 0, s>>>(w, flagged, g, 0.01f, n);
  }
}

void fake_quantized(int8_t *q, float *y, bool *nonzero, float *x, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(fake_quant) split reorder scratch(x)
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    fake_quant<<<64, 256, 0, s>>>(q, y, nonzero, x, 200, n);
  }
}

void keep_mask(uint8_t *keep, float *y, float *x, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(keep_mask) split reorder scratch(x)
  {
    cudaMemsetAsync(keep, 1, n, s);
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    keep_above<<<(n + 255) / 256, 256, 0, s>>>(keep, y, x, 0.1f, n);
  }
}

void votes(float *out, vote_t *v, int *count, int n, ncclComm_t comm, cudaStream_t s) {
#ifdef FUSE
#pragma coconet region name(votes) split reorder fuse
#else
#pragma coconet region name(votes) split reorder
#endif
  {
#if defined(HEX_MEMSET)
    cudaMemsetAsync(count, 0x01, sizeof(int), s);
#elif !defined(FUSE)
    cudaMemsetAsync(count, 0x00, sizeof(int), s);
#endif
#ifdef INT8_DATATYPE
    ncclAllReduce(v, v, n, ncclInt8, ncclSum, comm, s);
#else
    ncclAllReduce(v, v, n, ncclUint8, ncclSum, comm, s);
#endif
    tally<<<(n + 255) / 256, 256, 0, s>>>(out, v, count, n);
  }
}

// IR: verify=ir bias_dropout: ok
// IR: verify=ir bias_dropout_fused: ok
// IR: verify=ir dropout_backward: ok
// IR: verify=ir quantize: ok
// IR: verify=ir skip_flagged: ok
// IR: verify=ir fake_quant: ok
// IR: verify=ir keep_mask: ok
// IR: verify=ir votes: ok
// EXEC: verify bias_dropout: output 'mask' (u8): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify bias_dropout: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify bias_dropout_fused: output 'mask' (u8): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify bias_dropout_fused: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify dropout_backward: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify quantize: output 'q' (i8): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify quantize: output 'nonzero' (bool): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify quantize: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify skip_flagged: output 'flagged' (bool): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify skip_flagged: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify fake_quant: output 'q' (i8): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify fake_quant: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify keep_mask: output 'keep' (u8): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify keep_mask: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify votes: ok
// FUSED: verify skip_flagged: ok (the region as written and as scheduled agree within 0 ULP)
// FUSED: verify votes: ok
// CODE: const int8_t r = (int8_t)(x * 64.0f);
// CODE: const uint8_t u = (uint8_t)((int)r + (int)bias);
// CODE: nonzero = (bool)(x * 0.5f);
// CODE: ncclAllGather(mask + coconet_p.slice_lo, mask, coconet_p.s, ncclUint8,
// CODE: (size_t)n * sizeof(bool), false}
// CODE: ncclAllGather(q + coconet_p.slice_lo, q, coconet_p.s, ncclInt8, comm,
// CODE: ncclAllGather(nonzero + coconet_p.slice_lo, nonzero, coconet_p.s, ncclUint8,
// CODE: ncclReduceScatter(flagged, flagged + coconet_p.slice_lo, coconet_p.s, ncclUint8,
// SHORT: error: kernel 'bias_dropout_add': buffer 'mask' has elements of type 'unsigned short'
// PLAIN_CHAR: error: kernel 'tally': buffer 'votes' has elements of type 'char', which C++ keeps apart from signed char and unsigned char: declare it int8_t or uint8_t
// INT8_DATATYPE: error: ncclAllReduce: datatype 'ncclInt8' is i8 but the buffer points to u8
// HEX_MEMSET: error: reorder: kernel 'tally' sums into 'count' (atomicAdd), which the region does not zero before it
