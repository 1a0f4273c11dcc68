// A two-stage pipeline-parallel forward pass: each stage a tensor-parallel group.
//
// 2T ranks form two pipeline stages of T tensor-parallel ranks each (rank r
// is rank r % T of stage r / T). Stage 0 ends a transformer block: every rank
// holds a partial sum of the block's output y [tokens x hidden]; the partial
// sums are summed with ncclAllReduce on the stage's group, added to the
// residual stream and normalized (RMSNorm, one block per token), and the
// normalized activations are sent with ncclSend to the rank of the same index
// in stage 1, which receives them with ncclRecv and starts its own work on them
// (a stand-in kernel accumulates them).
//
// As written, each of the T ranks of stage 0 sends all of the activations to
// its peer: T identical copies cross the link between the stages. With
// `split reorder ... pipeline(tag=activations)` each rank normalizes its 1/T of
// the tokens and sends only those rows (and the rows left over), and stage 1's
// `pipeline(tag=activations, group=tp)` all-gathers the rows on its own group:
// the link between the stages carries 1/T of the bytes per rank. This is
// CoCoNet's pipeline-parallel transformation.
//
// Each of `micro` microbatches: a stand-in kernel makes this rank's partial
// sum from the microbatch's input (hashed), the stages run, and stage 1 adds
// what it received into its accumulator. Inputs are hashes of the global
// element index, the rank and the microbatch, so runs are reproducible.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 pipeline.cu -o pipeline -lnccl
//            $(mpicxx --showme:compile) $(mpicxx --showme:link)
// Run:   mpirun -np 4 ./pipeline -tokens 255 -hidden 1024 -micro 4   (an even rank count)
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

// Stand-in for this rank's share of the block's output projection: its
// partial sum of microbatch key's output, a hashed value per rank and element.
__global__ void partial_output(float* y, size_t n, uint32_t key)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x)
        y[i] = hashed_uniform(key, i);
}

// Stand-in for stage 1's first layer: acc += x * w.
__global__ void accumulate(float* acc, const float* x, float w, size_t n)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x)
        acc[i] += x[i] * w;
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

// Stage 0's end: the block's output reduced on the stage's group, residual +
// RMSNorm, the activations sent to the next stage.
static void stage_out(float* y, float* residual, float* out, const float* gamma, int tokens, int hidden, int next,
                      ncclComm_t tp, ncclComm_t world, cudaStream_t stream)
{
    const float eps = 1e-6f;
#pragma coconet region name(stage_out) split reorder replicated(residual, gamma) scratch(y, out) pipeline(tag=activations)
    {
        NCCLCHECK(ncclAllReduce(y, y, (size_t)tokens * hidden, ncclFloat, ncclSum, tp, stream));
        residual_rmsnorm<<<tokens, kThreads, 0, stream>>>(out, residual, y, gamma, tokens, hidden, eps);
        NCCLCHECK(ncclSend(out, (size_t)tokens * hidden, ncclFloat, next, world, stream));
    }
    CUDACHECK(cudaGetLastError());
}

// Stage 1's start: the activations received, then its first layer.
static void stage_in(float* x, float* acc, float w, size_t n, int prev, ncclComm_t tp, ncclComm_t world,
                     cudaStream_t stream)
{
    (void)tp;  // the stage's group: only the translation uses it (pipeline's group=)
#pragma coconet region name(stage_in) pipeline(tag=activations, group=tp)
    {
        NCCLCHECK(ncclRecv(x, n, ncclFloat, prev, world, stream));
        accumulate<<<128, kThreads, 0, stream>>>(acc, x, w, n);
    }
    CUDACHECK(cudaGetLastError());
}

// ---------------------------------------------------------------------------
// Command line.

struct Options {
    int tokens = 255;
    int hidden = 1024;
    int micro = 4;
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
        else if (strcmp(key, "-micro") == 0)
            opt->micro = static_cast<int>(strtol(val, &end, 10));
        else if (strcmp(key, "-seed") == 0)
            opt->seed = strtoull(val, &end, 10);
        else
            return false;
        if (end == val || *end != '\0')
            return false;
    }
    return opt->tokens > 0 && opt->hidden > 0 && opt->micro > 0 &&
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
    if (!parse_args(argc, argv, &opt) || nranks % 2 != 0) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2T %s [-tokens T] [-hidden H] [-micro M] [-seed SEED]\n"
                            "  (two pipeline stages of T ranks: an even number of ranks)\n", argv[0]);
        MPICHECK(MPI_Finalize());
        return 2;
    }
    const int group = nranks / 2;
    const int stage = rank / group;
    const int tp_rank = rank % group;
    const int peer = stage == 0 ? rank + group : rank - group;

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
    ncclComm_t world;
    ncclComm_t tp;
    NCCLCHECK(ncclCommInitRank(&world, nranks, id, rank));
    NCCLCHECK(ncclCommSplit(world, stage, tp_rank, &tp, nullptr));

    cudaStream_t stream;
    CUDACHECK(cudaStreamCreate(&stream));

    const int tokens = opt.tokens;
    const int hidden = opt.hidden;
    const size_t n = static_cast<size_t>(tokens) * hidden;
    float *y, *residual, *out, *gamma, *x, *acc;
    CUDACHECK(cudaMalloc(&y, n * sizeof(float)));
    CUDACHECK(cudaMalloc(&residual, n * sizeof(float)));
    CUDACHECK(cudaMalloc(&out, n * sizeof(float)));
    CUDACHECK(cudaMalloc(&gamma, hidden * sizeof(float)));
    CUDACHECK(cudaMalloc(&x, n * sizeof(float)));
    CUDACHECK(cudaMalloc(&acc, n * sizeof(float)));

    // The residual stream and the norm's weight, the same on every rank of stage 0.
    const uint32_t key = hash32(static_cast<uint32_t>(opt.seed));
    fill<<<128, kThreads, 0, stream>>>(residual, n, hash32(key ^ 1), 1.0f, 0.0f);
    fill<<<128, kThreads, 0, stream>>>(gamma, hidden, hash32(key ^ 3), 0.1f, 1.0f);
    CUDACHECK(cudaGetLastError());
    CUDACHECK(cudaMemsetAsync(acc, 0, n * sizeof(float), stream));

    for (int m = 0; m < opt.micro; ++m) {
        MPICHECK(MPI_Barrier(MPI_COMM_WORLD));
        const double t0 = MPI_Wtime();
        if (stage == 0) {
            const uint32_t ykey = hash32(key ^ hash32(static_cast<uint32_t>(m * 1024 + tp_rank + 16)));
            partial_output<<<128, kThreads, 0, stream>>>(y, n, ykey);
            CUDACHECK(cudaGetLastError());
            stage_out(y, residual, out, gamma, tokens, hidden, peer, tp, world, stream);
        } else {
            stage_in(x, acc, 1.0f / static_cast<float>(m + 1), n, peer, tp, world, stream);
        }
        CUDACHECK(cudaStreamSynchronize(stream));
        MPICHECK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0)
            printf("pipeline: microbatch %d/%d time_ms=%.3f\n", m + 1, opt.micro, (MPI_Wtime() - t0) * 1e3);
    }

    // Stage 0's residual stream and stage 1's accumulator are each the same on
    // every rank of their stage.
    const double mine = stage == 0 ? checksum(residual, n) : checksum(acc, n);
    double lo[2] = {0.0, 0.0}, hi[2] = {0.0, 0.0}, in_lo[2], in_hi[2];
    in_lo[stage] = in_hi[stage] = mine;
    in_lo[1 - stage] = 1e300;
    in_hi[1 - stage] = -1e300;
    MPICHECK(MPI_Allreduce(in_lo, lo, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
    MPICHECK(MPI_Allreduce(in_hi, hi, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    const bool consistent = lo[0] == hi[0] && lo[1] == hi[1];
    if (rank == 0) {
        printf("pipeline: tokens=%d hidden=%d micro=%d stages=2x%d residual=%.9e received=%.9e checksum=%.9e\n",
               tokens, hidden, opt.micro, group, lo[0], lo[1], lo[0] + lo[1]);
        if (!consistent)
            fprintf(stderr,
                    "pipeline: error: a stage's ranks disagree (residual %.9e .. %.9e, received %.9e .. %.9e)\n",
                    lo[0], hi[0], lo[1], hi[1]);
    }

    CUDACHECK(cudaFree(y));
    CUDACHECK(cudaFree(residual));
    CUDACHECK(cudaFree(out));
    CUDACHECK(cudaFree(gamma));
    CUDACHECK(cudaFree(x));
    CUDACHECK(cudaFree(acc));
    CUDACHECK(cudaStreamDestroy(stream));
    NCCLCHECK(ncclCommDestroy(tp));
    NCCLCHECK(ncclCommDestroy(world));
    MPICHECK(MPI_Comm_free(&node_comm));
    MPICHECK(MPI_Finalize());
    return consistent ? 0 : 1;
}
