// Style: mixed precision as GPT trainers write it: bf16 gradients reduced in
// bf16, fp32 master weights and moments, a bf16 copy of the weights written
// by the same kernel, a loss scale and bias corrections passed as scalars,
// and a lerp helper.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

__device__ __forceinline__ float lerp(float start, float end, float weight) {
  return fmaf(weight, end, fmaf(-weight, start, start));
}

__global__ void adamw_master(__nv_bfloat16 *params, float *master, const __nv_bfloat16 *grads, float *m, float *v,
                             size_t n, float lr, float beta1, float beta2, float c1, float c2, float eps, float wd,
                             float grad_scale) {
  size_t idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= n) return;
  float grad = grad_scale * __bfloat162float(grads[idx]);
  float mi = lerp(grad, m[idx], beta1);
  m[idx] = mi;
  float vi = lerp(grad * grad, v[idx], beta2);
  v[idx] = vi;
  mi /= c1;
  vi /= c2;
  float old = master[idx];
  float param = old - (lr * (mi / (sqrtf(vi) + eps) + wd * old));
  master[idx] = param;
  params[idx] = __float2bfloat16(param);
}

void step(__nv_bfloat16 *params, float *master, __nv_bfloat16 *grads, float *m, float *v, size_t n, int t,
          ncclComm_t comm, cudaStream_t stream) {
  const float beta1 = 0.9f, beta2 = 0.95f;
  const float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
  const int block = 512;
  const int grid = (int)((n + block - 1) / block);
#pragma coconet region name(adamw_master) split reorder shard(m, v, master) scratch(grads) replicated(params)
  {
    ncclAllReduce(grads, grads, n, ncclBfloat16, ncclSum, comm, stream);
    adamw_master<<<grid, block, 0, stream>>>(params, master, grads, m, v, n, 3e-4f, beta1, beta2, c1, c2, 1e-8f, 0.1f,
                                             1.0f / 1024.0f);
  }
}

// IR: verify=ir adamw_master: ok
// EXEC: verify adamw_master: ok (the region as written and as scheduled agree within 0 ULP)
