// Data-parallel SGD with momentum: the program of docs/getting-started.md.
//
// Every MPI rank holds the same weights w, computes a gradient g of its own,
// sums the gradients with ncclAllReduce and applies the same update, so the
// weights stay identical on every rank. One GPU per rank.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_80 sgd.cu -o sgd -lnccl
//            $(mpicxx --showme:compile) $(mpicxx --showme:link)
// Run:   mpirun -np 4 ./sgd [n] [steps]
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDACHECK(cmd) do { cudaError_t e = (cmd); if (e != cudaSuccess) { \
    fprintf(stderr, "%s failed: %s\n", #cmd, cudaGetErrorString(e)); abort(); } } while (0)
#define NCCLCHECK(cmd) do { ncclResult_t r = (cmd); if (r != ncclSuccess) { \
    fprintf(stderr, "%s failed: %s\n", #cmd, ncclGetErrorString(r)); abort(); } } while (0)

// A deterministic stand-in for the backward pass: each rank's gradient differs.
__global__ void backward(float *g, const float *w, size_t n, int rank, int step)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        g[i] = w[i] - 0.001f * (float)((i * 7 + rank * 13 + step) % 101);
}

// Momentum SGD on the mean gradient (scale = 1 / nranks).
__global__ void sgd_momentum(float *w, float *mom, const float *g, size_t n, float lr, float mu, float scale)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        const float m = mu * mom[i] + g[i] * scale;
        mom[i] = m;
        w[i] = w[i] - lr * m;
    }
}

void train_step(float *w, float *g, float *mom, size_t n, float lr, float mu, int rank, int nranks, int step,
                ncclComm_t comm, cudaStream_t stream)
{
    backward<<<256, 256, 0, stream>>>(g, w, n, rank, step);
    const float scale = 1.0f / nranks;
#pragma coconet region name(sgd_step) split reorder shard(mom) scratch(g) replicated(w)
    {
        NCCLCHECK(ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream));
        sgd_momentum<<<256, 256, 0, stream>>>(w, mom, g, n, lr, mu, scale);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks, ndev;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000003;
    const int steps = argc > 2 ? atoi(argv[2]) : 10;

    CUDACHECK(cudaGetDeviceCount(&ndev));
    CUDACHECK(cudaSetDevice(rank % ndev));
    ncclUniqueId id;
    if (rank == 0) NCCLCHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t comm;
    NCCLCHECK(ncclCommInitRank(&comm, nranks, id, rank));
    cudaStream_t stream;
    CUDACHECK(cudaStreamCreate(&stream));

    float *w, *g, *mom;
    CUDACHECK(cudaMalloc(&w, n * sizeof(float)));
    CUDACHECK(cudaMalloc(&g, n * sizeof(float)));
    CUDACHECK(cudaMalloc(&mom, n * sizeof(float)));
    CUDACHECK(cudaMemsetAsync(w, 0, n * sizeof(float), stream));
    CUDACHECK(cudaMemsetAsync(mom, 0, n * sizeof(float), stream));
    for (int step = 0; step < steps; step++)
        train_step(w, g, mom, n, 0.1f, 0.9f, rank, nranks, step, comm, stream);

    std::vector<float> host(n);
    CUDACHECK(cudaMemcpyAsync(host.data(), w, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
    CUDACHECK(cudaStreamSynchronize(stream));
    double sum = 0;
    for (float x : host) sum += x;
    double lo, hi;
    MPI_Allreduce(&sum, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&sum, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("sgd: n=%zu steps=%d ranks=%d checksum=%.9e%s\n", n, steps, nranks, sum,
               lo == hi ? "" : " (ranks differ!)");

    CUDACHECK(cudaFree(w));
    CUDACHECK(cudaFree(g));
    CUDACHECK(cudaFree(mom));
    CUDACHECK(cudaStreamDestroy(stream));
    NCCLCHECK(ncclCommDestroy(comm));
    MPI_Finalize();
    return lo == hi ? 0 : 1;
}
