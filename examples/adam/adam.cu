// Data-parallel training with Adam.
//
// Every MPI rank holds a full replica of the fp32 master weights w and computes a
// gradient g from its own mini-batch. The gradients are summed across ranks with
// ncclAllReduce and every rank applies the same Adam update, so the replicas stay
// identical. The step is marked for coconet, which can turn it into
// ReduceScatter -> Adam on this rank's slice -> AllGather(w), with the optimizer
// moments m and v kept only on the owning rank's slice.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_80 adam.cu -o adam -lnccl
//            $(mpicxx --showme:compile) $(mpicxx --showme:link)
// Run:   mpirun -np 4 ./adam -n 1000003 -steps 5

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// ---------------------------------------------------------------------------
// Error checking: every CUDA, NCCL and MPI call goes through one of these.

[[noreturn]] static void die(const char* file, int line, const char* call, const char* msg)
{
    int initialized = 0;
    int rank = -1;
    MPI_Initialized(&initialized);
    if (initialized)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "rank %d: %s:%d: %s failed: %s\n", rank, file, line, call, msg);
    if (initialized)
        MPI_Abort(MPI_COMM_WORLD, 1);
    abort();
}

#define CUDACHECK(cmd)                                                   \
    do {                                                                 \
        cudaError_t e_ = (cmd);                                          \
        if (e_ != cudaSuccess)                                           \
            die(__FILE__, __LINE__, #cmd, cudaGetErrorString(e_));       \
    } while (0)

#define NCCLCHECK(cmd)                                                   \
    do {                                                                 \
        ncclResult_t r_ = (cmd);                                         \
        if (r_ != ncclSuccess)                                           \
            die(__FILE__, __LINE__, #cmd, ncclGetErrorString(r_));       \
    } while (0)

#define MPICHECK(cmd)                                                    \
    do {                                                                 \
        int e_ = (cmd);                                                  \
        if (e_ != MPI_SUCCESS) {                                         \
            char msg_[MPI_MAX_ERROR_STRING];                             \
            int len_ = 0;                                                \
            MPI_Error_string(e_, msg_, &len_);                           \
            die(__FILE__, __LINE__, #cmd, msg_);                         \
        }                                                                \
    } while (0)

// ---------------------------------------------------------------------------
// Deterministic data: inputs are hashes of (key, element index), so every run with
// the same arguments and rank count computes the same numbers.

// lowbias32 (C. Wellons): a cheap, well-mixed 32-bit integer permutation.
__host__ __device__ inline uint32_t hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

// A value in [-1, 1) for element i of the stream named by key.
__device__ inline float hashed_uniform(uint32_t key, size_t i)
{
    const uint32_t h = hash32(key ^ hash32(static_cast<uint32_t>(i) ^ hash32(static_cast<uint32_t>(i >> 32))));
    return static_cast<float>(h >> 8) * (1.0f / 8388608.0f) - 1.0f;  // 24 bits -> [0, 2) -> [-1, 1)
}

// ---------------------------------------------------------------------------
// Kernels. All use a grid-stride loop, so any grid size covers any n (the grid
// itself stays far below 2^32 threads, so the 32-bit index arithmetic is exact).

__global__ void init_weights(float* w, size_t n, uint32_t key)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        w[i] = 0.5f * hashed_uniform(key, i);
}

// Stand-in for the backward pass: the gradient of 0.5 * |w - target|^2 plus noise
// that depends on this rank's mini-batch (batch_key differs by rank and step).
__global__ void backward(float* g, const float* w, size_t n, uint32_t target_key, uint32_t batch_key)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        g[i] = (w[i] - hashed_uniform(target_key, i)) + 0.5f * hashed_uniform(batch_key, i);
}

// One Adam step on every element. g holds the sum of the ranks' gradients;
// grad_scale = 1/nranks turns it into their mean. The bias corrections are folded
// into step_size = lr / (1 - beta1^t) and inv_sqrt_bc2 = 1 / sqrt(1 - beta2^t).
__global__ void adam_update(float* __restrict__ w, const float* __restrict__ g,
                            float* __restrict__ m, float* __restrict__ v, size_t n,
                            float grad_scale, float beta1, float beta2, float eps,
                            float step_size, float inv_sqrt_bc2)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        const float grad = g[i] * grad_scale;
        const float mi = beta1 * m[i] + (1.0f - beta1) * grad;
        const float vi = beta2 * v[i] + (1.0f - beta2) * grad * grad;
        m[i] = mi;
        v[i] = vi;
        w[i] -= step_size * mi / (sqrtf(vi) * inv_sqrt_bc2 + eps);
    }
}

// ---------------------------------------------------------------------------
// Training.

struct AdamHyper {
    float lr = 1e-3f;
    float beta1 = 0.9f;
    float beta2 = 0.999f;
    float eps = 1e-8f;
};

static constexpr int kThreads = 256;

// One training step (step counts from 1): backward, gradient all-reduce, Adam.
static void train_step(float* w, float* g, float* m, float* v, size_t n, int step,
                       const AdamHyper& hp, uint32_t seed, int rank, int nranks, int blocks,
                       ncclComm_t comm, cudaStream_t stream)
{
    const uint32_t target_key = hash32(seed);
    const uint32_t batch_key = hash32(seed ^ hash32(static_cast<uint32_t>(rank) * 0x9e3779b9U + static_cast<uint32_t>(step)));
    backward<<<blocks, kThreads, 0, stream>>>(g, w, n, target_key, batch_key);
    CUDACHECK(cudaGetLastError());

    // Bias corrections are computed here on the host, as PyTorch's Adam does.
    const float step_size = hp.lr / (1.0f - std::pow(hp.beta1, static_cast<float>(step)));
    const float inv_sqrt_bc2 = 1.0f / std::sqrt(1.0f - std::pow(hp.beta2, static_cast<float>(step)));
    const float grad_scale = 1.0f / static_cast<float>(nranks);
#ifndef COCONET_EXAMPLE_FUSE
#pragma coconet region name(adam_step) split reorder shard(m, v) scratch(g) replicated(w)
#else  // the fused kernel (make demo builds this variant too): g and w are symmetric below
#pragma coconet region name(adam_step) split reorder shard(m, v) scratch(g) replicated(w) fuse
#endif
    {
        NCCLCHECK(ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream));
        adam_update<<<blocks, kThreads, 0, stream>>>(w, g, m, v, n, grad_scale, hp.beta1, hp.beta2, hp.eps,
                                                     step_size, inv_sqrt_bc2);
    }
    CUDACHECK(cudaGetLastError());
}

// ---------------------------------------------------------------------------
// Command line.

struct Options {
    size_t n = 1000003;  // not a multiple of common rank counts, on purpose
    int steps = 5;
    uint32_t seed = 1234;
};

static bool parse_args(int argc, char** argv, Options* opt)
{
    for (int a = 1; a < argc; a += 2) {
        if (a + 1 >= argc)
            return false;
        const char* key = argv[a];
        const char* val = argv[a + 1];
        char* end = nullptr;
        if (strcmp(key, "-n") == 0)
            opt->n = strtoull(val, &end, 10);
        else if (strcmp(key, "-steps") == 0)
            opt->steps = static_cast<int>(strtol(val, &end, 10));
        else if (strcmp(key, "-seed") == 0)
            opt->seed = static_cast<uint32_t>(strtoul(val, &end, 10));
        else
            return false;
        if (end == val || *end != '\0')
            return false;
    }
    return opt->n > 0 && opt->steps > 0;
}

int main(int argc, char** argv)
{
    MPICHECK(MPI_Init(&argc, &argv));
    int rank = 0;
    int nranks = 0;
    MPICHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPICHECK(MPI_Comm_size(MPI_COMM_WORLD, &nranks));

    Options opt;
    if (!parse_args(argc, argv, &opt)) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np N %s [-n ELEMENTS] [-steps S] [-seed SEED]\n", argv[0]);
        MPICHECK(MPI_Finalize());
        return 2;
    }

    // One GPU per rank: ranks on the same node take devices round-robin.
    MPI_Comm node_comm;
    int local_rank = 0;
    MPICHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_comm));
    MPICHECK(MPI_Comm_rank(node_comm, &local_rank));
    int ndevices = 0;
    CUDACHECK(cudaGetDeviceCount(&ndevices));
    const int device = local_rank % ndevices;
    CUDACHECK(cudaSetDevice(device));
    cudaDeviceProp prop;
    CUDACHECK(cudaGetDeviceProperties(&prop, device));

    ncclUniqueId id;
    if (rank == 0)
        NCCLCHECK(ncclGetUniqueId(&id));
    MPICHECK(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD));
    ncclComm_t comm;
    NCCLCHECK(ncclCommInitRank(&comm, nranks, id, rank));

    cudaStream_t stream;
    CUDACHECK(cudaStreamCreate(&stream));
    cudaEvent_t start, stop;
    CUDACHECK(cudaEventCreate(&start));
    CUDACHECK(cudaEventCreate(&stop));

    const size_t n = opt.n;
    const size_t bytes = n * sizeof(float);
    float *w, *g, *m, *v;
#ifdef COCONET_EXAMPLE_FUSE
#pragma coconet symmetric
    CUDACHECK(cudaMalloc(&w, bytes));
#pragma coconet symmetric
    CUDACHECK(cudaMalloc(&g, bytes));
#else
    CUDACHECK(cudaMalloc(&w, bytes));
    CUDACHECK(cudaMalloc(&g, bytes));
#endif
    CUDACHECK(cudaMalloc(&m, bytes));
    CUDACHECK(cudaMalloc(&v, bytes));

    // Enough blocks to fill the GPU; the grid-stride loops cover the rest.
    const int blocks = static_cast<int>(std::min<size_t>((n + kThreads - 1) / kThreads,
                                                         static_cast<size_t>(prop.multiProcessorCount) * 8));

    // Same initial weights on every rank; Adam moments start at zero.
    init_weights<<<blocks, kThreads, 0, stream>>>(w, n, hash32(opt.seed ^ 0x5eedU));
    CUDACHECK(cudaGetLastError());
    CUDACHECK(cudaMemsetAsync(m, 0, bytes, stream));
    CUDACHECK(cudaMemsetAsync(v, 0, bytes, stream));

    const AdamHyper hp;
    for (int step = 1; step <= opt.steps; ++step) {
        CUDACHECK(cudaEventRecord(start, stream));
        train_step(w, g, m, v, n, step, hp, opt.seed, rank, nranks, blocks, comm, stream);
        CUDACHECK(cudaEventRecord(stop, stream));
        CUDACHECK(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CUDACHECK(cudaEventElapsedTime(&ms, start, stop));
        if (rank == 0)
            printf("adam: step %d/%d time_ms=%.3f\n", step, opt.steps, ms);
    }

    // Checksum of this rank's replica of w.
    std::vector<float> host(n);
    CUDACHECK(cudaMemcpy(host.data(), w, bytes, cudaMemcpyDeviceToHost));
    double sums[2] = {0.0, 0.0};
    for (float x : host) {
        sums[0] += x;
        sums[1] += std::fabs(x);
    }

    // Data parallelism must leave every replica bit-identical.
    double lo[2], hi[2];
    MPICHECK(MPI_Allreduce(sums, lo, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
    MPICHECK(MPI_Allreduce(sums, hi, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    const bool consistent = lo[0] == hi[0] && lo[1] == hi[1];
    if (rank == 0) {
        printf("adam: n=%zu steps=%d ranks=%d checksum=%.9e abssum=%.9e\n", n, opt.steps, nranks, sums[0],
               sums[1]);
        if (!consistent)
            fprintf(stderr, "adam: error: replicas of w differ across ranks (checksum %.9e .. %.9e)\n", lo[0],
                    hi[0]);
    }

    CUDACHECK(cudaFree(w));
    CUDACHECK(cudaFree(g));
    CUDACHECK(cudaFree(m));
    CUDACHECK(cudaFree(v));
    CUDACHECK(cudaEventDestroy(start));
    CUDACHECK(cudaEventDestroy(stop));
    CUDACHECK(cudaStreamDestroy(stream));
    NCCLCHECK(ncclCommDestroy(comm));
    MPICHECK(MPI_Comm_free(&node_comm));
    MPICHECK(MPI_Finalize());
    return consistent ? 0 : 1;
}
