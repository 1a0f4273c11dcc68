// reorder cannot move a kernel that reads g[(i + 1) % n] onto a slice: an error, and
// nothing is written.
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void diff(float *d, const float *g, size_t n)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        d[i] = g[(i + 1) % n] - g[i];
}

void step(float *g, float *d, size_t n, ncclComm_t comm, cudaStream_t stream)
{
#pragma coconet region name(bad) split reorder
    {
        ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream);
        diff<<<64, 256, 0, stream>>>(d, g, n);
    }
}
