// A count that no rank count above 1 divides (1001 = 7 * 11 * 13): the tail is
// all-reduced and computed by every rank. The second AllReduce is out of place.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#define COUNT 1001

__global__ void residual_add(__half *out, const __half *x, const __half *res, size_t n, __half alpha)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = x[i] * alpha + res[i];
}

void block(__half *x, __half *partial, __half *out, const __half *res, __half alpha, ncclComm_t comm,
           cudaStream_t stream)
{
#pragma coconet region name(res_add) split reorder replicated(res)
    {
        ncclAllReduce(x, x, 1001, ncclHalf, ncclSum, comm, stream);
        residual_add<<<4, 256, 0, stream>>>(out, x, res, 1001, alpha);
    }
#pragma coconet region name(res_add2) split reorder replicated(res)
    {
        ncclAllReduce(partial, x, COUNT, ncclHalf, ncclSum, comm, stream);
        residual_add<<<4, 256, 0, stream>>>(out, x, res, COUNT, alpha);
    }
}
