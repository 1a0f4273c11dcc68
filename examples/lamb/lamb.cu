// Data-parallel training with LAMB and global gradient-norm clipping.
//
// Every MPI rank holds the same fp32 weights w and computes its own gradient g
// from its mini-batch; ncclAllReduce sums the gradients. The optimizer step
// then needs three sums over all n elements before it can update anything:
//
//   - the squared norm of the mean gradient, to clip it to max_norm (global-norm
//     clipping, as torch.nn.utils.clip_grad_norm_ does);
//   - LAMB's two per-tensor norms, of the weights and of the Adam direction u,
//     whose ratio (the trust ratio) scales the step (You et al., "Large Batch
//     Optimization for Deep Learning", 2019).
//
// Each sum is a kernel that adds a thread's running sum to a device scalar with
// atomicAdd, the accumulator zeroed with cudaMemsetAsync first. The step is
// marked for coconet, which splits the AllReduce into ReduceScatter + AllGather
// and runs everything on this rank's slice: each rank sums its slice, one
// AllReduce of a scalar (or two) adds the partial sums, the update runs on the
// slice, and only the weights are gathered. The moments m and v are then kept
// only on the owning rank's slice (shard), as CoCoNet's LAMB schedule does.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 lamb.cu -o lamb -lnccl
//            $(mpicxx --showme:compile) $(mpicxx --showme:link)
//        (or `make` in this folder, which builds it through coconet-cc)
// Run:   mpirun -np 4 ./lamb -n 1000003 -steps 5

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
// Kernels. All use a grid-stride loop, so any grid size covers any n.

__global__ void init_weights(float* w, size_t n, uint32_t key)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        w[i] = 0.5f * hashed_uniform(key, i);
}

// Stand-in for the backward pass: the gradient of 0.5 * |w - target|^2 plus
// noise that depends on this rank's mini-batch (batch_key differs by rank and step).
__global__ void backward(float* g, const float* w, size_t n, uint32_t target_key, uint32_t batch_key)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        g[i] = (w[i] - hashed_uniform(target_key, i)) + 0.5f * hashed_uniform(batch_key, i);
}

// The squared norm of the summed gradient: each thread sums its elements, then
// adds its sum to *norm2 (zeroed before the launch).
__global__ void grad_norm2(const float* __restrict__ g, float* __restrict__ norm2, size_t n)
{
    float acc = 0.0f;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        const float x = g[i];
        acc += x * x;
    }
    atomicAdd(norm2, acc);
}

// The Adam direction of the clipped mean gradient, u = mhat / (sqrt(vhat) + eps)
// + wd * w, and LAMB's two squared norms: norms[0] = |w|^2, norms[1] = |u|^2.
// The clip factor is min(1, max_norm / |mean gradient|).
__global__ void lamb_direction(float* __restrict__ u, float* __restrict__ m, float* __restrict__ v,
                               const float* __restrict__ g, const float* __restrict__ w,
                               const float* __restrict__ gnorm2, float* __restrict__ norms, float grad_scale,
                               float max_norm, float beta1, float beta2, float eps, float wd, float bc1, float bc2,
                               size_t n)
{
    const float clip = fminf(1.0f, max_norm / (sqrtf(*gnorm2) * grad_scale + 1e-6f));
    float wsum = 0.0f;
    float usum = 0.0f;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        const float grad = g[i] * grad_scale * clip;
        const float mi = beta1 * m[i] + (1.0f - beta1) * grad;
        const float vi = beta2 * v[i] + (1.0f - beta2) * grad * grad;
        m[i] = mi;
        v[i] = vi;
        const float wi = w[i];
        const float ui = (mi / bc1) / (sqrtf(vi / bc2) + eps) + wd * wi;
        u[i] = ui;
        wsum += wi * wi;
        usum += ui * ui;
    }
    atomicAdd(&norms[0], wsum);
    atomicAdd(&norms[1], usum);
}

// w <- w - lr * trust_ratio * u, trust_ratio = |w| / |u| (1 when either is 0).
__global__ void lamb_apply(float* __restrict__ w, const float* __restrict__ u, const float* __restrict__ norms,
                           float lr, size_t n)
{
    const float wn = sqrtf(norms[0]);
    const float un = sqrtf(norms[1]);
    const float ratio = wn > 0.0f && un > 0.0f ? wn / un : 1.0f;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        w[i] -= lr * ratio * u[i];
}

// ---------------------------------------------------------------------------
// Training.

struct LambHyper {
    float lr = 1e-2f;
    float beta1 = 0.9f;
    float beta2 = 0.999f;
    float eps = 1e-6f;
    float weight_decay = 1e-2f;
    float max_norm = 1.0f;
};

static constexpr int kThreads = 256;

// One training step (step counts from 1): backward, gradient all-reduce, the
// clipping norm, LAMB. gnorm2 and norms are device scalars (1 and 2 floats).
static void train_step(float* w, float* g, float* m, float* v, float* u, float* gnorm2, float* norms, size_t n,
                       int step, const LambHyper& hp, uint32_t seed, int rank, int nranks, int blocks,
                       ncclComm_t comm, cudaStream_t stream)
{
    const uint32_t target_key = hash32(seed);
    const uint32_t batch_key = hash32(seed ^ hash32(static_cast<uint32_t>(rank) * 0x9e3779b9U + static_cast<uint32_t>(step)));
    backward<<<blocks, kThreads, 0, stream>>>(g, w, n, target_key, batch_key);
    CUDACHECK(cudaGetLastError());

    const float bc1 = 1.0f - std::pow(hp.beta1, static_cast<float>(step));
    const float bc2 = 1.0f - std::pow(hp.beta2, static_cast<float>(step));
    const float grad_scale = 1.0f / static_cast<float>(nranks);
    // The weights are the same on every rank (replicated) and read in full after
    // the step; the moments are optimizer state only this region reads again
    // (shard); the reduced gradient and the direction u are dead after it (scratch).
#pragma coconet region name(lamb_step) split reorder replicated(w) shard(m, v) scratch(g, u)
    {
        NCCLCHECK(ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream));
        CUDACHECK(cudaMemsetAsync(gnorm2, 0, sizeof(float), stream));
        CUDACHECK(cudaMemsetAsync(norms, 0, 2 * sizeof(float), stream));
        grad_norm2<<<blocks, kThreads, 0, stream>>>(g, gnorm2, n);
        lamb_direction<<<blocks, kThreads, 0, stream>>>(u, m, v, g, w, gnorm2, norms, grad_scale, hp.max_norm,
                                                        hp.beta1, hp.beta2, hp.eps, hp.weight_decay, bc1, bc2, n);
        lamb_apply<<<blocks, kThreads, 0, stream>>>(w, u, norms, hp.lr, n);
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
    float *w, *g, *m, *v, *u, *sums;
    CUDACHECK(cudaMalloc(&w, bytes));
    CUDACHECK(cudaMalloc(&g, bytes));
    CUDACHECK(cudaMalloc(&m, bytes));
    CUDACHECK(cudaMalloc(&v, bytes));
    CUDACHECK(cudaMalloc(&u, bytes));
    CUDACHECK(cudaMalloc(&sums, 3 * sizeof(float)));  // the clipping norm, then LAMB's two
    float* gnorm2 = sums;
    float* norms = sums + 1;

    const int blocks = static_cast<int>(std::min<size_t>((n + kThreads - 1) / kThreads,
                                                         static_cast<size_t>(prop.multiProcessorCount) * 8));

    // Same initial weights on every rank; the moments start at zero.
    init_weights<<<blocks, kThreads, 0, stream>>>(w, n, hash32(opt.seed ^ 0x5eedU));
    CUDACHECK(cudaGetLastError());
    CUDACHECK(cudaMemsetAsync(m, 0, bytes, stream));
    CUDACHECK(cudaMemsetAsync(v, 0, bytes, stream));

    const LambHyper hp;
    for (int step = 1; step <= opt.steps; ++step) {
        CUDACHECK(cudaEventRecord(start, stream));
        train_step(w, g, m, v, u, gnorm2, norms, n, step, hp, opt.seed, rank, nranks, blocks, comm, stream);
        CUDACHECK(cudaEventRecord(stop, stream));
        CUDACHECK(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CUDACHECK(cudaEventElapsedTime(&ms, start, stop));
        if (rank == 0)
            printf("lamb: step %d/%d time_ms=%.3f\n", step, opt.steps, ms);
    }

    // Checksum of this rank's replica of w, and the last step's norms.
    std::vector<float> host(n);
    float norms_host[3];
    CUDACHECK(cudaMemcpy(host.data(), w, bytes, cudaMemcpyDeviceToHost));
    CUDACHECK(cudaMemcpy(norms_host, sums, sizeof norms_host, cudaMemcpyDeviceToHost));
    double local[2] = {0.0, 0.0};
    for (const float x : host) {
        local[0] += static_cast<double>(x);
        local[1] += std::fabs(static_cast<double>(x));
    }

    // Data parallelism must leave every replica of w identical.
    double lo[2], hi[2];
    MPICHECK(MPI_Allreduce(local, lo, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
    MPICHECK(MPI_Allreduce(local, hi, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    const bool consistent = lo[0] == hi[0] && lo[1] == hi[1];
    if (rank == 0) {
        // The checksum is the sum of |w| (the signed sum cancels, which would magnify
        // the rounding the reordered norms may differ by).
        printf("lamb: n=%zu steps=%d ranks=%d grad_norm=%.6e trust_ratio=%.6e sum=%.9e checksum=%.9e\n", n,
               opt.steps, nranks, std::sqrt(norms_host[0]) / nranks, std::sqrt(norms_host[1] / norms_host[2]),
               local[0], local[1]);
        if (!consistent)
            fprintf(stderr, "lamb: error: replicas of w differ across ranks (checksum %.9e .. %.9e)\n", lo[0], hi[0]);
    }

    CUDACHECK(cudaFree(w));
    CUDACHECK(cudaFree(g));
    CUDACHECK(cudaFree(m));
    CUDACHECK(cudaFree(v));
    CUDACHECK(cudaFree(u));
    CUDACHECK(cudaFree(sums));
    CUDACHECK(cudaEventDestroy(start));
    CUDACHECK(cudaEventDestroy(stop));
    CUDACHECK(cudaStreamDestroy(stream));
    NCCLCHECK(ncclCommDestroy(comm));
    MPICHECK(MPI_Comm_free(&node_comm));
    MPICHECK(MPI_Finalize());
    return consistent ? 0 : 1;
}
