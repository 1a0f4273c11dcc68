// Style: vectorized kernels, as optimizer and epilogue kernels are written for
// bandwidth: float4 loads through reinterpret_cast over n / 4 vectors (the last
// n % 4 elements are left alone, as the kernel leaves them), float4 * and
// __half2 * parameters the launch passes as views of scalar buffers, __half2
// arithmetic (__hadd2, __hmul2, __float2half2_rn, operators), __nv_bfloat162
// converted to float2 and back, float2 through __ldg and make_float2, and a
// scalar buffer read once per vector (s[i]). coconet computes them element by
// element: each lane may use only its own lane of what it reads, and all lanes
// must compute alike. Operators and helpers on float4 defined in the file
// (helper_math.h style) are inlined lane by lane, and a scalar loop over the
// n % 4 elements a float4 loop leaves is read with it. The -D cases are refused,
// with the reason.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %expect 1 %coconet --check %s -- -DMIX 2>&1 | %FileCheck --check-prefix=MIX %s
// RUN: %expect 1 %coconet --check %s -- -DUNALIKE 2>&1 | %FileCheck --check-prefix=UNALIKE %s
// RUN: %expect 1 %coconet --check %s -- -DNOCAST 2>&1 | %FileCheck --check-prefix=NOCAST %s
// RUN: %expect 1 %coconet --check %s -- -DSCALAR_STORE 2>&1 | %FileCheck --check-prefix=SCALAR %s
// RUN: %expect 1 %coconet --check %s -- -DHFMA2 2>&1 | %FileCheck --check-prefix=HFMA2 %s
// RUN: %expect 1 %coconet --check %s -- -DPACKED 2>&1 | %FileCheck --check-prefix=PACKED %s
// RUN: %expect 1 %coconet --check %s -- -DDOT 2>&1 | %FileCheck --check-prefix=DOT %s
// RUN: %expect 1 %coconet --check %s -- -DREMAINDER_UNALIKE 2>&1 | %FileCheck --check-prefix=REMAINDER %s
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>

// AdamW on float4s: every buffer viewed as float4 in the kernel.
__global__ void adamw4(float *params, const float *grads, float *m, float *v, int n, float lr, float beta1,
                       float beta2, float eps, float wd) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n / 4) return;
  const float4 g = reinterpret_cast<const float4 *>(grads)[i];
  float4 mi = reinterpret_cast<float4 *>(m)[i];
  float4 vi = reinterpret_cast<float4 *>(v)[i];
  float4 p = reinterpret_cast<float4 *>(params)[i];
  mi.x = beta1 * mi.x + (1.0f - beta1) * g.x;
  mi.y = beta1 * mi.y + (1.0f - beta1) * g.y;
  mi.z = beta1 * mi.z + (1.0f - beta1) * g.z;
  mi.w = beta1 * mi.w + (1.0f - beta1) * g.w;
  vi.x = beta2 * vi.x + (1.0f - beta2) * g.x * g.x;
  vi.y = beta2 * vi.y + (1.0f - beta2) * g.y * g.y;
  vi.z = beta2 * vi.z + (1.0f - beta2) * g.z * g.z;
  vi.w = beta2 * vi.w + (1.0f - beta2) * g.w * g.w;
  p.x -= lr * (mi.x / (sqrtf(vi.x) + eps) + wd * p.x);
  p.y -= lr * (mi.y / (sqrtf(vi.y) + eps) + wd * p.y);
  p.z -= lr * (mi.z / (sqrtf(vi.z) + eps) + wd * p.z);
  p.w -= lr * (mi.w / (sqrtf(vi.w) + eps) + wd * p.w);
  reinterpret_cast<float4 *>(m)[i] = mi;
  reinterpret_cast<float4 *>(v)[i] = vi;
#ifdef SCALAR_STORE
  params[i] = p.x;
#else
  reinterpret_cast<float4 *>(params)[i] = p;
#endif
}

// A scaled residual on float4 parameters, per-vector scale s[i], grid-stride.
__global__ void residual4(float4 *out, const float4 *res, const float *s, int n4) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += blockDim.x * gridDim.x) {
    float4 o = out[i];
    const float4 r = res[i];
    const float k = s[i];
#ifdef MIX
    out[i] = make_float4(k * o.x + r.x, k * o.y + r.y, k * o.z + r.z, o.x + o.w);
#elif defined(UNALIKE)
    out[i] = make_float4(k * o.x + r.x, k * o.y + r.y, k * o.z + r.z, 2.0f * o.w + r.w);
#else
    out[i] = make_float4(k * o.x + r.x, k * o.y + r.y, k * o.z + r.z, k * o.w + r.w);
#endif
  }
}

// __half2 epilogue: y = 0.5 * y + (x + b), with the intrinsics and the operators.
__global__ void axpb_half2(__half2 *y, const __half2 *x, const __half2 *b, int n2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n2) {
#ifdef HFMA2
    y[i] = __hfma2(__float2half2_rn(0.5f), y[i], __hadd2(x[i], b[i]));
#else
    const __half2 h = __float2half2_rn(0.5f);
    y[i] = __hmul2(y[i], h) + (x[i] + b[i]);
#endif
  }
}

// bf16 pairs: bias + GELU-free residual, computed in float and rounded once.
__global__ void bias_bf162(__nv_bfloat16 *out, const __nv_bfloat16 *bias, float alpha, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 2) {
    float2 o = __bfloat1622float2(reinterpret_cast<__nv_bfloat162 *>(out)[i]);
    const float2 c = __bfloat1622float2(reinterpret_cast<const __nv_bfloat162 *>(bias)[i]);
    reinterpret_cast<__nv_bfloat162 *>(out)[i] = __floats2bfloat162_rn(alpha * o.x + c.x, alpha * o.y + c.y);
  }
}

// float2 through __ldg, __low2float-style lane access by member.
__global__ void scale2(float2 *y, const float2 *x, float a, int n2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n2) {
    const float2 xi = __ldg(x + i);
    float2 yi = y[i];
    yi = make_float2(a * yi.x + xi.x, a * yi.y + xi.y);
    y[i] = yi;
  }
}

// helper_math.h-style operators and helpers on float4, defined in the file: inlined lane by lane.
inline __device__ float4 operator+(float4 a, float4 b) { return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); }
inline __device__ float4 operator*(float s, const float4 &a) { return make_float4(s * a.x, s * a.y, s * a.z, s * a.w); }
__device__ float4 relu4(float4 v) {
  float4 r;
  r.x = fmaxf(v.x, 0.0f);
  r.y = fmaxf(v.y, 0.0f);
  r.z = fmaxf(v.z, 0.0f);
  r.w = fmaxf(v.w, 0.0f);
  return r;
}
__device__ float dot4(float4 a, float4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }

__global__ void relu_axpy4(float4 *y, const float4 *x, float a, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
#ifdef DOT
    y[i] = make_float4(dot4(x[i], y[i]), 0.0f, 0.0f, 0.0f);  // a horizontal sum: lanes that mix
#else
    y[i] = relu4(a * y[i] + x[i]);
#endif
  }
}

// The index computed once, a float4 grid-stride loop, then a scalar loop over the
// n % 4 elements it leaves: the two loops cover [0, n) and compute alike.
__global__ void axpy_rem(float *y, const float *x, float a, int n) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  const int stride = blockDim.x * gridDim.x;
  const int n4 = n / 4;
  for (int i = idx; i < n4; i += stride) {
    float4 v = reinterpret_cast<float4 *>(y)[i];
    const float4 u = reinterpret_cast<const float4 *>(x)[i];
    v.x = a * v.x + u.x;
    v.y = a * v.y + u.y;
    v.z = a * v.z + u.z;
    v.w = a * v.w + u.w;
    reinterpret_cast<float4 *>(y)[i] = v;
  }
#ifdef REMAINDER_UNALIKE
  for (int j = 4 * n4 + idx; j < n; j += stride) y[j] = a * y[j] - x[j];
#else
  for (int j = 4 * n4 + idx; j < n; j += stride) y[j] = a * y[j] + x[j];
#endif
}

#ifdef PACKED
// Eight halves in a float4 (a 128-bit packed load): the lanes are not the buffer's elements.
__global__ void packed(__half *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 4) {
    float4 v = reinterpret_cast<float4 *>(y)[i];
    reinterpret_cast<float4 *>(y)[i] = v;
  }
}
#endif

void step(float *params, float *grads, float *m, float *v, int n, float lr, float *out, float *res, float *s, int rows,
          __half *y, __half *x, __half *b, int k, __nv_bfloat16 *act, __nv_bfloat16 *bias, float *y2, float *x2,
          int pairs, ncclComm_t comm, cudaStream_t st) {
#pragma coconet region name(adamw4) split reorder replicated(params) shard(m, v)
  {
    ncclAllReduce(grads, grads, n, ncclFloat, ncclAvg, comm, st);
    adamw4<<<(n / 4 + 127) / 128, 128, 0, st>>>(params, grads, m, v, n, lr, 0.9f, 0.999f, 1e-8f, 0.01f);
  }
#ifdef NOCAST
  const float4 *res4 = reinterpret_cast<const float4 *>(res);
#endif
#pragma coconet region name(residual4) split reorder replicated(res, s)
  {
    ncclAllReduce(out, out, 4 * rows, ncclFloat, ncclSum, comm, st);
#ifdef NOCAST
    residual4<<<32, 256, 0, st>>>((float4 *)out, res4, s, rows);  // a float4 * variable: coconet cannot see what it views
#else
    residual4<<<32, 256, 0, st>>>((float4 *)out, reinterpret_cast<const float4 *>(res), s, rows);
#endif
  }
#pragma coconet region name(half2) split reorder replicated(x, b)
  {
    ncclAllReduce(y, y, k, ncclHalf, ncclSum, comm, st);
    axpb_half2<<<(k / 2 + 255) / 256, 256, 0, st>>>(reinterpret_cast<__half2 *>(y), reinterpret_cast<const __half2 *>(x),
                                                     reinterpret_cast<const __half2 *>(b), k / 2);
  }
#pragma coconet region name(bf162) split reorder replicated(bias)
  {
    ncclAllReduce(act, act, k, ncclBfloat16, ncclSum, comm, st);
    bias_bf162<<<(k / 2 + 255) / 256, 256, 0, st>>>(act, bias, 0.5f, k);
  }
#pragma coconet region name(scale2) split reorder replicated(x2)
  {
    ncclAllReduce(y2, y2, 2 * pairs, ncclFloat, ncclSum, comm, st);
    scale2<<<(pairs + 255) / 256, 256, 0, st>>>(reinterpret_cast<float2 *>(y2), reinterpret_cast<const float2 *>(x2),
                                                2.0f, pairs);
  }
#pragma coconet region name(relu4) split reorder replicated(x2)
  {
    ncclAllReduce(y2, y2, 4 * pairs, ncclFloat, ncclSum, comm, st);
    relu_axpy4<<<(pairs + 255) / 256, 256, 0, st>>>((float4 *)y2, (const float4 *)x2, 0.5f, pairs);
  }
#pragma coconet region name(axpy_rem) split reorder replicated(x2)
  {
    ncclAllReduce(y2, y2, pairs, ncclFloat, ncclSum, comm, st);
    axpy_rem<<<64, 256, 0, st>>>(y2, x2, 0.5f, pairs);
  }
#ifdef PACKED
#pragma coconet region name(packed) split reorder
  {
    ncclAllReduce(y, y, k, ncclHalf, ncclSum, comm, st);
    packed<<<(k / 4 + 255) / 256, 256, 0, st>>>(y, k);
  }
#endif
}

// IR: verify=ir adamw4: ok
// IR: verify=ir residual4: ok
// IR: verify=ir half2: ok
// IR: verify=ir bf162: ok
// IR: verify=ir scale2: ok
// IR: verify=ir relu4: ok
// IR: verify=ir axpy_rem: ok
// EXEC: verify adamw4: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify residual4: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify half2: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify bf162: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify scale2: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify relu4: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify axpy_rem: ok (the region as written and as scheduled agree within 0 ULP)
// The kernel over n / 4 float4s leaves the last n % 4 elements as they are:
// CODE-LABEL: void coconet_adamw4_slice_elem(
// CODE: const float g = grads;
// CODE: params = (int64_t)i < 4LL * (int64_t)(n / 4) ? p_2 : params;
// The per-vector scale is read once per 4 elements:
// CODE-LABEL: void coconet_residual4_slice_elem(
// CODE: const float k_2 = s[i / 4];
// CODE-LABEL: void coconet_half2_slice_elem(
// CODE: y = (int64_t)i < 2LL * (int64_t)n2 ?
// MIX: vector-access.cu:{{[0-9]+}}:5: error: kernel 'residual4' computes lane 3 of the float4 it stores to out[i] from another lane of 'out' (
// UNALIKE: vector-access.cu:{{[0-9]+}}:1: error: kernel 'residual4' computes lane 3 of its vectors differently from lane 0
// NOCAST: error: kernel 'residual4': vector parameter 'res' is passed 'res4'; coconet reads a vector buffer as a view of a scalar one: pass reinterpret_cast<float4 *>(x)
// SCALAR: vector-access.cu:{{[0-9]+}}:3: error: kernel 'adamw4' stores a scalar (params[i] = p.x) in a kernel whose element is a vector of 4 lanes
// HFMA2: error: kernel 'axpb_half2' calls '__hfma2' on vectors, which coconet does not read
// DOT: error: kernel 'relu_axpy4' computes lane 0 of the float4 it stores to y[i] from another lane of 'x2' (
// REMAINDER: error: kernel 'axpy_rem': the loop over the elements the vector loop leaves computes them differently from the vector loop's lanes
// With the remainder loop there is no guard: every element is computed.
// CODE-LABEL: void coconet_axpy_rem_slice_elem(float &y2, float x2, float a)
// CODE-NEXT: {
// CODE-NEXT: const float v = y2;
// CODE-NEXT: const float u = x2;
// CODE-NEXT: const float v_2 = a * v + u;
// CODE-NEXT: y2 = v_2;
// PACKED: error: kernel 'packed' views 'y' (__half *) as 'float4 *', whose lanes are not its elements
