// Style: an optimizer written with CUDA's math intrinsics (fmaf, __fmaf_rn,
// min/max, fminf/fmaxf, __saturatef, __fdividef, copysignf, rsqrtf, __expf,
// __ldg on the inputs), as fused optimizers in training code are.
// Accepted unchanged, checked by the interpreter and by running the code:
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_runtime.h>
#include <nccl.h>

__device__ __forceinline__ float lerp(float a, float b, float t) { return fmaf(t, b - a, a); }

__global__ void adam_intrinsics(float *p, const float *__restrict__ g, float *m, float *v, float lr, float beta1,
                                float beta2, float eps, float clip, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float grad = fminf(fmaxf(__ldg(&g[i]), -clip), clip);
    float mi = lerp(grad, m[i], beta1);
    float vi = __fmaf_rn(beta2, v[i], (1.0f - beta2) * grad * grad);
    m[i] = mi;
    v[i] = vi;
    float step = __fdividef(mi, sqrtf(vi) + eps);
    float trust = __saturatef(rsqrtf(vi + 1.0f));
    p[i] = p[i] - lr * copysignf(fabsf(step), step) * max(trust, 0.25f) * __expf(-min(eps, 1.0f));
  }
}

void step(float *p, float *g, float *m, float *v, float lr, float beta1, float beta2, float eps, float clip, int n,
          ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(adam_intrinsics) split reorder shard(m, v) scratch(g) replicated(p)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    adam_intrinsics<<<(n + 255) / 256, 256, 0, s>>>(p, g, m, v, lr, beta1, beta2, eps, clip, n);
  }
}

// IR: verify=ir adam_intrinsics: output 'p' (f32): max relative error 0 over 1..4 ranks x 3 inputs
// IR: verify=ir adam_intrinsics: ok
// EXEC: verify adam_intrinsics: shard 'm' (f32): max 0 ULP apart
// EXEC: verify adam_intrinsics: output 'p' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify adam_intrinsics: ok
