// overlap alone: the GEMM is issued per chunk of C's columns (both operands
// transposed), each chunk's AllReduce and activation on a second stream.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void gelu(float *y, const float *x, size_t n)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = 0.5f * x[i] * (1.0f + tanhf(0.7978846f * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
}

// out = gelu(sum over ranks of A^T B^T): column-major, C is m x n.
void mlp(cublasHandle_t handle, const float *a, const float *b, float *c, float *out, int m, int n, int k,
         ncclComm_t comm, cudaStream_t stream)
{
    const float one = 1.0f, zero = 0.0f;
#pragma coconet region name(mlp) overlap(chunks=3)
    {
        cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_T, m, n, k, &one, a, k, b, n, &zero, c, m);
        ncclAllReduce(c, c, (size_t)m * n, ncclFloat, ncclSum, comm, stream);
        gelu<<<256, 256, 0, stream>>>(out, c, (size_t)m * n);
    }
}
