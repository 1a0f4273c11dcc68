// Data-parallel AdamW with global gradient-norm clipping, as GPT-2 trainers do it.
//
// Every MPI rank holds the parameters p in bf16 and computes a bf16 gradient g
// from its own mini-batch; the optimizer keeps fp32 master weights w and the
// fp32 moments m and v. After the gradients are summed with ncclAllReduce, one
// kernel computes the squared norm of the summed gradient (each thread sums its
// elements, the block sums its threads warp by warp through shared memory,
// thread 0 adds the block's sum to a device scalar with atomicAdd, the scalar
// zeroed first), and the AdamW kernel scales the gradient by PyTorch's
// clip_grad_norm_ factor, min(1, max_norm / (|mean gradient| + 1e-6)), before
// its update.
//
// coconet's `split reorder` turns the step into CoCoNet's schedule for it:
// ReduceScatter(g), each rank sums the squares of its slice, one small AllReduce
// adds the ranks' partial sums, AdamW runs on this rank's slice with the global
// norm, AllGather(p). Only the sum's order changes (floating-point sums differ
// from the program as written by rounding).
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 adamw_clip.cu -o adamw_clip -lnccl
//            $(mpicxx --showme:compile) $(mpicxx --showme:link)
//        (or `make` in this folder, which builds it through coconet-cc)
// Run:   mpirun -np 4 ./adamw_clip -n 1000003 -steps 5 -max_norm 1

#include <cuda_bf16.h>
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

// The same initial weights on every rank: the fp32 master copy and its bf16 image.
__global__ void init_weights(float* w, __nv_bfloat16* p, size_t n, uint32_t key)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        const float x = 0.5f * hashed_uniform(key, i);
        w[i] = x;
        p[i] = __float2bfloat16(x);
    }
}

// Stand-in for the backward pass, which reads the bf16 parameters as a mixed
// precision model does: the gradient of 0.5 * |p - target|^2 plus noise that
// depends on this rank's mini-batch (batch_key differs by rank and step), stored
// in bf16.
__global__ void backward(__nv_bfloat16* g, const __nv_bfloat16* p, size_t n, uint32_t target_key,
                         uint32_t batch_key)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        const float grad = (__bfloat162float(p[i]) - hashed_uniform(target_key, i)) + 0.5f * hashed_uniform(batch_key, i);
        g[i] = __float2bfloat16(grad);
    }
}

// The squared norm of the summed gradient, as GPT-2 trainers compute it: a
// thread's running sum over its elements, the block's sum (warp by warp: each
// warp's shuffle butterfly, lane 0 storing it in the warp's shared slot, the
// first warp summing the slots), thread 0 adding it to *out (zeroed before the
// launch).
constexpr int kWarpSize = 32;

__device__ float warp_reduce_sum(float val)
{
    for (int offset = 16; offset > 0; offset /= 2)
        val += __shfl_xor_sync(0xffffffffu, val, offset);
    return val;
}

__device__ float block_reduce_sum(float val)
{
    __shared__ float shared_val[kWarpSize];
    const int lane_id = threadIdx.x % kWarpSize;
    const int warp_id = threadIdx.x / kWarpSize;
    const int num_warps = blockDim.x / kWarpSize;
    float warp_val = warp_reduce_sum(val);
    if (lane_id == 0)
        shared_val[warp_id] = warp_val;
    __syncthreads();
    warp_val = (lane_id < num_warps) ? shared_val[lane_id] : 0.0f;
    return warp_reduce_sum(warp_val);
}

__global__ void global_norm_squared(float* out, const __nv_bfloat16* data, size_t count)
{
    float acc = 0.0f;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += blockDim.x * gridDim.x) {
        const float x = __bfloat162float(data[i]);
        acc += x * x;
    }
    const float block_sum = block_reduce_sum(acc);
    if (threadIdx.x == 0)
        atomicAdd(out, block_sum);
}

// One AdamW step on every element, in fp32, of the clipped mean gradient. g
// holds the bf16 sum of the ranks' gradients, grad_scale = 1/nranks turns it
// into their mean, and *norm2 is the squared norm of the sum: the clip factor
// is min(1, max_norm / (|mean| + 1e-6)). bc1 and bc2 are the bias corrections;
// the weight decay wd is decoupled from the gradient. p receives the bf16 copy
// of the updated master weight.
__global__ void adamw_clipped(__nv_bfloat16* __restrict__ p, float* __restrict__ w,
                              const __nv_bfloat16* __restrict__ g, float* __restrict__ m, float* __restrict__ v,
                              const float* __restrict__ norm2, size_t n, float grad_scale, float max_norm,
                              float lr, float beta1, float beta2, float eps, float wd, float bc1, float bc2)
{
    const float norm = sqrtf(*norm2) * grad_scale;
    const float clip = fminf(1.0f, max_norm / (norm + 1e-6f));
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        const float grad = __bfloat162float(g[i]) * grad_scale * clip;
        const float mi = beta1 * m[i] + (1.0f - beta1) * grad;
        const float vi = beta2 * v[i] + (1.0f - beta2) * grad * grad;
        const float wi = w[i] - lr * ((mi / bc1) / (sqrtf(vi / bc2) + eps) + wd * w[i]);
        m[i] = mi;
        v[i] = vi;
        w[i] = wi;
        p[i] = __float2bfloat16(wi);
    }
}

// ---------------------------------------------------------------------------
// Training.

struct Hyper {
    float lr = 1e-3f;
    float beta1 = 0.9f;
    float beta2 = 0.999f;
    float eps = 1e-8f;
    float weight_decay = 1e-2f;
    float max_norm = 1.0f;
};

static constexpr int kThreads = 256;

// One training step (step counts from 1): backward, gradient all-reduce, the
// gradient's global norm, clipped AdamW.
static void train_step(__nv_bfloat16* p, float* w, __nv_bfloat16* g, float* m, float* v, float* norm2, size_t n,
                       int step, const Hyper& hp, uint32_t seed, int rank, int nranks, int blocks, ncclComm_t comm,
                       cudaStream_t stream)
{
    const uint32_t target_key = hash32(seed);
    const uint32_t batch_key = hash32(seed ^ hash32(static_cast<uint32_t>(rank) * 0x9e3779b9U + static_cast<uint32_t>(step)));
    backward<<<blocks, kThreads, 0, stream>>>(g, p, n, target_key, batch_key);
    CUDACHECK(cudaGetLastError());

    const float bc1 = 1.0f - std::pow(hp.beta1, static_cast<float>(step));
    const float bc2 = 1.0f - std::pow(hp.beta2, static_cast<float>(step));
    const float grad_scale = 1.0f / static_cast<float>(nranks);
    // After the step only p (and the norm, which every rank computes) is read in
    // full: the fp32 master weights and the moments are optimizer state only
    // this region reads again (shard), and the reduced gradient is dead (scratch).
#pragma coconet region name(clip_step) split reorder shard(m, v, w) scratch(g)
    {
        NCCLCHECK(ncclAllReduce(g, g, n, ncclBfloat16, ncclSum, comm, stream));
        CUDACHECK(cudaMemsetAsync(norm2, 0, sizeof(float), stream));
        global_norm_squared<<<blocks, kThreads, 0, stream>>>(norm2, g, n);
        adamw_clipped<<<blocks, kThreads, 0, stream>>>(p, w, g, m, v, norm2, n, grad_scale, hp.max_norm, hp.lr,
                                                       hp.beta1, hp.beta2, hp.eps, hp.weight_decay, bc1, bc2);
    }
    CUDACHECK(cudaGetLastError());
}

// ---------------------------------------------------------------------------
// Command line.

struct Options {
    size_t n = 1000003;  // not a multiple of common rank counts, on purpose
    int steps = 5;
    uint32_t seed = 1234;
    float max_norm = 1.0f;
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
        else if (strcmp(key, "-max_norm") == 0)
            opt->max_norm = strtof(val, &end);
        else
            return false;
        if (end == val || *end != '\0')
            return false;
    }
    return opt->n > 0 && opt->steps > 0 && opt->max_norm > 0.0f;
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
            fprintf(stderr, "usage: mpirun -np N %s [-n ELEMENTS] [-steps S] [-seed SEED] [-max_norm M]\n", argv[0]);
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
    const size_t bytes16 = n * sizeof(__nv_bfloat16);
    const size_t bytes32 = n * sizeof(float);
    __nv_bfloat16 *p, *g;
    float *w, *m, *v, *norm2;
    CUDACHECK(cudaMalloc(&p, bytes16));
    CUDACHECK(cudaMalloc(&g, bytes16));
    CUDACHECK(cudaMalloc(&w, bytes32));
    CUDACHECK(cudaMalloc(&m, bytes32));
    CUDACHECK(cudaMalloc(&v, bytes32));
    CUDACHECK(cudaMalloc(&norm2, sizeof(float)));

    // Enough blocks to fill the GPU; the grid-stride loops cover the rest.
    const int blocks = static_cast<int>(std::min<size_t>((n + kThreads - 1) / kThreads,
                                                         static_cast<size_t>(prop.multiProcessorCount) * 8));

    init_weights<<<blocks, kThreads, 0, stream>>>(w, p, n, hash32(opt.seed ^ 0x5eedU));
    CUDACHECK(cudaGetLastError());
    CUDACHECK(cudaMemsetAsync(m, 0, bytes32, stream));
    CUDACHECK(cudaMemsetAsync(v, 0, bytes32, stream));

    Hyper hp;
    hp.max_norm = opt.max_norm;
    float norm = 0.0f;
    for (int step = 1; step <= opt.steps; ++step) {
        CUDACHECK(cudaEventRecord(start, stream));
        train_step(p, w, g, m, v, norm2, n, step, hp, opt.seed, rank, nranks, blocks, comm, stream);
        CUDACHECK(cudaEventRecord(stop, stream));
        CUDACHECK(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CUDACHECK(cudaEventElapsedTime(&ms, start, stop));
        float sum2 = 0.0f;
        CUDACHECK(cudaMemcpy(&sum2, norm2, sizeof(float), cudaMemcpyDeviceToHost));
        norm = std::sqrt(sum2) / static_cast<float>(nranks);
        if (rank == 0)
            printf("adamw_clip: step %d/%d time_ms=%.3f grad_norm=%.6e clip=%.6e\n", step, opt.steps, ms, norm,
                   std::min(1.0f, hp.max_norm / (norm + 1e-6f)));
    }

    // The bf16 parameters p are replicated: every rank must hold the same values.
    std::vector<__nv_bfloat16> host(n);
    CUDACHECK(cudaMemcpy(host.data(), p, bytes16, cudaMemcpyDeviceToHost));
    double sums[2] = {0.0, 0.0};
    for (const __nv_bfloat16& x : host) {
        const double d = static_cast<double>(__bfloat162float(x));
        sums[0] += d;
        sums[1] += std::fabs(d);
    }
    double lo[2], hi[2];
    MPICHECK(MPI_Allreduce(sums, lo, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
    MPICHECK(MPI_Allreduce(sums, hi, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    const bool consistent = lo[0] == hi[0] && lo[1] == hi[1];
    if (rank == 0) {
        printf("adamw_clip: n=%zu steps=%d ranks=%d grad_norm=%.6e checksum=%.9e abssum=%.9e\n", n, opt.steps, nranks,
               norm, sums[0], sums[1]);
        if (!consistent)
            fprintf(stderr, "adamw_clip: error: replicas of p differ across ranks (checksum %.9e .. %.9e)\n", lo[0],
                    hi[0]);
    }

    CUDACHECK(cudaFree(p));
    CUDACHECK(cudaFree(g));
    CUDACHECK(cudaFree(w));
    CUDACHECK(cudaFree(m));
    CUDACHECK(cudaFree(v));
    CUDACHECK(cudaFree(norm2));
    CUDACHECK(cudaEventDestroy(start));
    CUDACHECK(cudaEventDestroy(stop));
    CUDACHECK(cudaStreamDestroy(stream));
    NCCLCHECK(ncclCommDestroy(comm));
    MPICHECK(MPI_Comm_free(&node_comm));
    MPICHECK(MPI_Finalize());
    return consistent ? 0 : 1;
}
