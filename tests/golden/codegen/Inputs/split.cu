// split alone, and split(b) on a region with two AllReduces (the other one stays
// as written). The kernels after the AllReduces run as written, on every element.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>

#define NCCLCHECK(cmd)                                                        \
    do {                                                                      \
        ncclResult_t r_ = (cmd);                                              \
        if (r_ != ncclSuccess) {                                              \
            fprintf(stderr, "%s failed: %s\n", #cmd, ncclGetErrorString(r_)); \
            abort();                                                          \
        }                                                                     \
    } while (0)

__global__ void scale(float *x, size_t n, float a)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        x[i] = x[i] * a;
}

// The mean of every rank's gradient.
void average_gradients(float *grad, size_t n, int nranks, ncclComm_t comm, cudaStream_t stream)
{
    const float inv = 1.0f / nranks;
#pragma coconet region name(grad_mean) split
    {
        NCCLCHECK(ncclAllReduce(grad, grad, n, ncclFloat, ncclSum, comm, stream));
        scale<<<(n + 255) / 256, 256, 0, stream>>>(grad, n, inv);
    }
}

// Gradients are summed; the loss-scale statistics take the maximum and stay as written.
void sync_step(float *grad, float *stats, size_t n, size_t nstats, ncclComm_t comm, cudaStream_t stream)
{
#pragma coconet region name(grad_sync) split(grad)
    {
        NCCLCHECK(ncclAllReduce(stats, stats, nstats, ncclFloat, ncclMax, comm, stream));
        NCCLCHECK(ncclAllReduce(grad, grad, n, ncclFloat, ncclSum, comm, stream));
    }
}
