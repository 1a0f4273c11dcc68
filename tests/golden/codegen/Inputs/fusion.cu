// reorder with two consecutive pointwise kernels: both run on this rank's slice
// in one generated kernel (one pass over memory). The step lives in a namespace:
// the generated kernels go before it, at file scope.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

// g = clip(g * scale, -clip, clip)
__global__ void unscale_clip(float *g, size_t n, float scale, float clip)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        const float v = g[i] * scale;
        g[i] = fminf(fmaxf(v, -clip), clip);
    }
}

// SGD with a per-row weight decay, and the bf16 copy of w the forward pass reads.
__global__ void sgd(float *w, __nv_bfloat16 *w16, const float *g, const float *decay, size_t n, int cols, float lr)
{
    const size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float nw = w[i] - lr * (g[i] + decay[i / cols] * w[i]);
        w[i] = nw;
        w16[i] = __float2bfloat16(nw);
    }
}

namespace train {

void step(float *g, float *w, __nv_bfloat16 *w16, const float *decay, size_t n, int cols, float scale, float clip,
          float lr, ncclComm_t comm, cudaStream_t stream)
{
    const int blocks = 1024;
#pragma coconet region name(sgd_step) split reorder scratch(g) replicated(w, decay)
    {
        ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream);
        unscale_clip<<<blocks, 256, 0, stream>>>(g, n, scale, clip);
        sgd<<<(n + 255) / 256, 256, 0, stream>>>(w, w16, g, decay, n, cols, lr);
    }
}

}  // namespace train
