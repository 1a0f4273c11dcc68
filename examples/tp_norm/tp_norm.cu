// Tensor-parallel transformer block outputs: AllReduce -> residual add + RMSNorm.
//
// In a tensor-parallel transformer (Megatron-LM's row-parallel attention and
// MLP output projections) every rank holds a partial sum of each block's
// output y [tokens x hidden]. The partial sums are summed with ncclAllReduce,
// added to the residual stream, and the sum is normalized with RMSNorm for the
// next block:
//
//   residual = residual + y          (written back: the stream carries on)
//   out      = residual / rms(residual) * gamma
//
// One CUDA block normalizes one token's row: it reduces the row's sum of
// squares with warp shuffles and shared memory, then scales the row. This is
// the pattern inference engines fuse with the AllReduce and that vLLM's
// sequence-parallel pass rewrites into ReduceScatter -> RMSNorm -> AllGather;
// here coconet does it on the kernel as written (`split reorder`): each rank
// reduces and normalizes only its 1/N of the tokens, and the normalized rows
// and the residual are all-gathered.
//
// Each of `layers` steps stands for one block: a stand-in kernel makes this
// rank's partial sum from the previous block's normalized output (a hashed
// per-rank, per-layer weight times out), then the marked region runs. Inputs
// are hashes of the global element index (and of the rank and layer), so a
// run is reproducible; tokens need not divide by the rank count (the rows left
// over are reduced and normalized by every rank).
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 tp_norm.cu -o tp_norm -lnccl
//            $(mpicxx --showme:compile) $(mpicxx --showme:link)
// Run:   mpirun -np 4 ./tp_norm -tokens 255 -hidden 1024 -layers 4
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <climits>
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
// Deterministic inputs.

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
__host__ __device__ inline float hashed_uniform(uint32_t key, size_t i)
{
    const uint32_t h = hash32(key ^ hash32(static_cast<uint32_t>(i) ^ hash32(static_cast<uint32_t>(i >> 32))));
    return static_cast<float>(h >> 8) * (1.0f / 8388608.0f) - 1.0f;
}

__global__ void fill(float* a, size_t n, uint32_t key, float scale, float bias)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x)
        a[i] = bias + scale * hashed_uniform(key, i);
}

// Stand-in for this rank's share of a block's output projection: its partial
// sum y = out * w_r, with w_r a hashed weight of this rank and layer.
__global__ void partial_output(float* y, const float* out, size_t n, uint32_t key)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x)
        y[i] = out[i] * hashed_uniform(key, i);
}

// ---------------------------------------------------------------------------
// Residual add + RMSNorm, one block per token.

static constexpr int kThreads = 256;

__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// The sum of v over the block (every thread gets it).
__device__ float block_sum(float v)
{
    __shared__ float warps[32];
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0)
        warps[threadIdx.x >> 5] = v;
    __syncthreads();
    v = threadIdx.x < (blockDim.x >> 5) ? warps[threadIdx.x] : 0.0f;
    if (threadIdx.x < 32)
        v = warp_sum(v);
    if (threadIdx.x == 0)
        warps[0] = v;
    __syncthreads();
    return warps[0];
}

__global__ void residual_rmsnorm(float* out, float* residual, const float* y, const float* gamma, int tokens,
                                 int hidden, float eps)
{
    const int token = blockIdx.x;
    if (token >= tokens)
        return;
    float sum_sq = 0.0f;
    for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
        const float h = residual[(size_t)token * hidden + j] + y[(size_t)token * hidden + j];
        residual[(size_t)token * hidden + j] = h;
        sum_sq += h * h;
    }
    const float inv_rms = rsqrtf(block_sum(sum_sq) / hidden + eps);
    for (int j = threadIdx.x; j < hidden; j += blockDim.x)
        out[(size_t)token * hidden + j] = residual[(size_t)token * hidden + j] * inv_rms * gamma[j];
}

// One block's output: the AllReduce of the partial sums, then residual + RMSNorm.
static void block_output(float* y, float* residual, float* out, const float* gamma, int tokens, int hidden,
                         ncclComm_t comm, cudaStream_t stream)
{
    const float eps = 1e-6f;
#ifndef COCONET_EXAMPLE_FUSE
#pragma coconet region name(tp_norm) split reorder replicated(residual, gamma) scratch(y)
#else  // one kernel (make demo builds this variant too): y, residual and out are symmetric below
#pragma coconet region name(tp_norm) split reorder replicated(residual, gamma) scratch(y) fuse
#endif
    {
        NCCLCHECK(ncclAllReduce(y, y, (size_t)tokens * hidden, ncclFloat, ncclSum, comm, stream));
        residual_rmsnorm<<<tokens, kThreads, 0, stream>>>(out, residual, y, gamma, tokens, hidden, eps);
    }
    CUDACHECK(cudaGetLastError());
}

// ---------------------------------------------------------------------------
// Command line.

struct Options {
    int tokens = 255;
    int hidden = 1024;
    int layers = 4;
    unsigned long long seed = 1234;
};

static bool parse_args(int argc, char** argv, Options* opt)
{
    for (int a = 1; a < argc; a += 2) {
        if (a + 1 >= argc)
            return false;
        const char* key = argv[a];
        const char* val = argv[a + 1];
        char* end = nullptr;
        if (strcmp(key, "-tokens") == 0)
            opt->tokens = static_cast<int>(strtol(val, &end, 10));
        else if (strcmp(key, "-hidden") == 0)
            opt->hidden = static_cast<int>(strtol(val, &end, 10));
        else if (strcmp(key, "-layers") == 0)
            opt->layers = static_cast<int>(strtol(val, &end, 10));
        else if (strcmp(key, "-seed") == 0)
            opt->seed = strtoull(val, &end, 10);
        else
            return false;
        if (end == val || *end != '\0')
            return false;
    }
    return opt->tokens > 0 && opt->hidden > 0 && opt->layers > 0 &&
           static_cast<long long>(opt->tokens) * opt->hidden <= INT_MAX;
}

static double checksum(const float* d, size_t n)
{
    std::vector<float> host(n);
    CUDACHECK(cudaMemcpy(host.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
    double sum = 0.0;
    for (float v : host)
        sum += static_cast<double>(v);
    return sum;
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
            fprintf(stderr, "usage: mpirun -np N %s [-tokens T] [-hidden H] [-layers L] [-seed SEED]\n", argv[0]);
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
    CUDACHECK(cudaSetDevice(local_rank % ndevices));

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

    const int tokens = opt.tokens;
    const int hidden = opt.hidden;
    const size_t n = static_cast<size_t>(tokens) * hidden;
    float *y, *residual, *out, *gamma;
#ifdef COCONET_EXAMPLE_FUSE
    // The fused kernel reads y and writes residual and out on the peers: NCCL's symmetric memory.
#pragma coconet symmetric
    CUDACHECK(cudaMalloc(&y, n * sizeof(float)));
#pragma coconet symmetric
    CUDACHECK(cudaMalloc(&residual, n * sizeof(float)));
#pragma coconet symmetric
    CUDACHECK(cudaMalloc(&out, n * sizeof(float)));
#else
    CUDACHECK(cudaMalloc(&y, n * sizeof(float)));
    CUDACHECK(cudaMalloc(&residual, n * sizeof(float)));
    CUDACHECK(cudaMalloc(&out, n * sizeof(float)));
#endif
    CUDACHECK(cudaMalloc(&gamma, hidden * sizeof(float)));

    // The residual stream and the first block's input, the same on every rank.
    const uint32_t key = hash32(static_cast<uint32_t>(opt.seed));
    fill<<<128, kThreads, 0, stream>>>(residual, n, hash32(key ^ 1), 1.0f, 0.0f);
    fill<<<128, kThreads, 0, stream>>>(out, n, hash32(key ^ 2), 1.0f, 0.0f);
    fill<<<128, kThreads, 0, stream>>>(gamma, hidden, hash32(key ^ 3), 0.1f, 1.0f);
    CUDACHECK(cudaGetLastError());

    for (int layer = 0; layer < opt.layers; ++layer) {
        const uint32_t wkey = hash32(key ^ hash32(static_cast<uint32_t>(layer * 1024 + rank + 16)));
        partial_output<<<128, kThreads, 0, stream>>>(y, out, n, wkey);
        CUDACHECK(cudaGetLastError());
        CUDACHECK(cudaEventRecord(start, stream));
        block_output(y, residual, out, gamma, tokens, hidden, comm, stream);
        CUDACHECK(cudaEventRecord(stop, stream));
        CUDACHECK(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CUDACHECK(cudaEventElapsedTime(&ms, start, stop));
        if (rank == 0)
            printf("tp_norm: layer %d/%d time_ms=%.3f\n", layer + 1, opt.layers, ms);
    }

    // The residual stream and the last block's output are replicated: every rank must hold the same values.
    const double sum = checksum(out, n) + checksum(residual, n);
    double lo = 0.0;
    double hi = 0.0;
    MPICHECK(MPI_Allreduce(&sum, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
    MPICHECK(MPI_Allreduce(&sum, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    const bool consistent = lo == hi;
    if (rank == 0) {
        printf("tp_norm: tokens=%d hidden=%d layers=%d ranks=%d checksum=%.9e\n", tokens, hidden, opt.layers,
               nranks, sum);
        if (!consistent)
            fprintf(stderr, "tp_norm: error: outputs differ across ranks (checksum %.9e .. %.9e)\n", lo, hi);
    }

    CUDACHECK(cudaFree(y));
    CUDACHECK(cudaFree(residual));
    CUDACHECK(cudaFree(out));
    CUDACHECK(cudaFree(gamma));
    CUDACHECK(cudaEventDestroy(start));
    CUDACHECK(cudaEventDestroy(stop));
    CUDACHECK(cudaStreamDestroy(stream));
    NCCLCHECK(ncclCommDestroy(comm));
    MPICHECK(MPI_Comm_free(&node_comm));
    MPICHECK(MPI_Finalize());
    return consistent ? 0 : 1;
}
