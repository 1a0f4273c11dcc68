// fuse: a split group becomes a fused kernel on NCCL's device API with the
// NCCL schedule as fallback; an AllReduce group a one-shot fused kernel with
// the statements as written as fallback.
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void momentum(float *w, float *buf, const float *g, size_t n, float lr, float mu)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        const float b = mu * buf[i] + g[i];
        buf[i] = b;
        w[i] = w[i] - lr * b;
    }
}

__global__ void relu(float *x, size_t n)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void step(float *g, float *w, float *buf, size_t n, float lr, float mu, ncclComm_t comm, cudaStream_t stream)
{
  #pragma coconet region name(sgd_fused) split reorder shard(buf) scratch(g) replicated(w) fuse
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream);
    momentum<<<512, 256, 0, stream>>>(w, buf, g, n, lr, mu);
  }
}

void activation(float *x, size_t n, ncclComm_t comm, cudaStream_t stream)
{
  #pragma coconet region name(relu_sum) fuse
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, stream);
    relu<<<512, 256, 0, stream>>>(x, n);
  }
}
