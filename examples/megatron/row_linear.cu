// Megatron-style row-parallel linear layer, forward pass.
//
//   out = residual + dropout(X W + bias)
//
// X [tokens x k] and W [k x hidden] are split along k: rank r holds the columns
// X_part = X[:, k_r] and the rows W_part = W[k_r, :]. Each rank computes the partial
// product X_part W_part with cuBLAS, the partial products are summed with
// ncclAllReduce, and a pointwise kernel adds the bias, applies dropout and adds the
// residual. The three steps are marked for coconet, which can cut the GEMM and the
// all-reduce into chunks that overlap, and run the pointwise kernel on 1/nranks of
// the output between a ReduceScatter and an AllGather.
//
// All matrices are fp16 and row-major. Inputs are hashes of the global element
// index, so the full X, W, bias and residual are the same for every rank count.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_80 row_linear.cu -o row_linear -lnccl -lcublas
//            $(mpicxx --showme:compile) $(mpicxx --showme:link)
// Run:   mpirun -np 4 ./row_linear -tokens 64 -hidden 1024 -k 512 -p 0.1 -iters 3

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <curand_kernel.h>
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
// Error checking: every CUDA, cuBLAS, NCCL and MPI call goes through one of these.

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

#define CUBLASCHECK(cmd)                                                 \
    do {                                                                 \
        cublasStatus_t s_ = (cmd);                                       \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                               \
            char msg_[32];                                               \
            snprintf(msg_, sizeof(msg_), "cublasStatus_t %d", (int)s_);  \
            die(__FILE__, __LINE__, #cmd, msg_);                         \
        }                                                                \
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
__device__ inline float hashed_uniform(uint32_t key, size_t i)
{
    const uint32_t h = hash32(key ^ hash32(static_cast<uint32_t>(i) ^ hash32(static_cast<uint32_t>(i >> 32))));
    return static_cast<float>(h >> 8) * (1.0f / 8388608.0f) - 1.0f;  // 24 bits -> [0, 2) -> [-1, 1)
}

// Fills a [rows x cols] row-major block with the values of the global row-major
// matrix (ld_global columns) at rows [row0, row0 + rows) and columns
// [col0, col0 + cols), times scale.
__global__ void fill_block(__half* a, int rows, int cols, int row0, int col0, int ld_global, uint32_t key,
                           float scale)
{
    const size_t count = static_cast<size_t>(rows) * cols;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += blockDim.x * gridDim.x) {
        const size_t r = row0 + i / cols;
        const size_t c = col0 + i % cols;
        a[i] = __float2half(scale * hashed_uniform(key, r * ld_global + c));
    }
}

// ---------------------------------------------------------------------------
// The pointwise epilogue: out = residual + dropout(y + bias), computed in float.
// Dropout keeps an element with probability 1 - p and scales it by 1 / (1 - p);
// the random number comes from Philox keyed by (seed, element index, offset), so
// it does not depend on how the work is split across threads or ranks.

__global__ void bias_dropout_residual(__half* out, const __half* y, const __half* bias,
                                      const __half* residual, size_t n, int hidden, float p,
                                      unsigned long long seed, unsigned long long offset)
{
    const size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        curandStatePhilox4_32_10_t st;
        curand_init(seed, i, offset, &st);
        const float keep = 1.0f - p;
        const float x = __half2float(y[i]) + __half2float(bias[i % hidden]);
        const float dropped = curand_uniform(&st) <= keep ? x / keep : 0.0f;
        out[i] = __float2half(dropped + __half2float(residual[i]));
    }
}

// ---------------------------------------------------------------------------
// The layer.

struct Layer {
    int tokens;        // rows of X and Y
    int hidden;        // columns of W and Y
    int k_part;        // this rank's share of k
    __half* x;         // [tokens x k_part], this rank's columns of X
    __half* w;         // [k_part x hidden], this rank's rows of W
    __half* bias;      // [hidden], replicated
    __half* residual;  // [tokens x hidden], replicated
    __half* y;         // [tokens x hidden], X W (partial sum, then full sum)
    __half* out;       // [tokens x hidden]
};

static constexpr int kThreads = 256;

// One forward pass. offset advances the dropout random stream between passes.
static void row_linear_forward(const Layer& layer, float p, unsigned long long seed, unsigned long long offset,
                               cublasHandle_t handle, ncclComm_t comm, cudaStream_t stream)
{
    const __half* x = layer.x;
    const __half* w = layer.w;
    const __half* bias = layer.bias;
    const __half* residual = layer.residual;
    __half* y = layer.y;
    __half* out = layer.out;
    const int tokens = layer.tokens;
    const int hidden = layer.hidden;
    const int k_part = layer.k_part;
    const size_t n = static_cast<size_t>(tokens) * hidden;
    const int blocks = static_cast<int>((n + kThreads - 1) / kThreads);
    const float alpha = 1.0f;
    const float beta = 0.0f;
    // cuBLAS is column-major: a row-major [r x c] matrix is a column-major [c x r]
    // one. So row-major Y = X W is computed as column-major Y^T = W^T X^T:
    // m = hidden, n = tokens, k = k_part, with leading dimensions hidden, k_part, hidden.
#ifndef COCONET_EXAMPLE_FUSE
#pragma coconet region name(row_linear) replicated(residual, bias) overlap(chunks=4) split reorder
#else  // the fused kernel (make demo builds this variant too; not overlapped): y and out are symmetric below
#pragma coconet region name(row_linear) replicated(residual, bias) split reorder fuse
#endif
    {
        CUBLASCHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, hidden, tokens, k_part, &alpha, w, CUDA_R_16F,
                                 hidden, x, CUDA_R_16F, k_part, &beta, y, CUDA_R_16F, hidden, CUBLAS_COMPUTE_32F,
                                 CUBLAS_GEMM_DEFAULT));
        NCCLCHECK(ncclAllReduce(y, y, n, ncclHalf, ncclSum, comm, stream));
        bias_dropout_residual<<<blocks, kThreads, 0, stream>>>(out, y, bias, residual, n, hidden, p, seed, offset);
    }
    CUDACHECK(cudaGetLastError());
}

// ---------------------------------------------------------------------------
// Command line.

struct Options {
    int tokens = 64;
    int hidden = 1024;
    int k = 512;
    float p = 0.1f;
    int iters = 3;
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
        else if (strcmp(key, "-k") == 0)
            opt->k = static_cast<int>(strtol(val, &end, 10));
        else if (strcmp(key, "-p") == 0)
            opt->p = strtof(val, &end);
        else if (strcmp(key, "-iters") == 0)
            opt->iters = static_cast<int>(strtol(val, &end, 10));
        else if (strcmp(key, "-seed") == 0)
            opt->seed = strtoull(val, &end, 10);
        else
            return false;
        if (end == val || *end != '\0')
            return false;
    }
    // tokens * hidden must fit an int: it sets the grid size of the one-thread-per-element kernel.
    return opt->tokens > 0 && opt->hidden > 0 && opt->k > 0 && opt->p >= 0.0f && opt->p < 1.0f &&
           opt->iters > 0 && static_cast<long long>(opt->tokens) * opt->hidden <= INT_MAX;
}

int main(int argc, char** argv)
{
    MPICHECK(MPI_Init(&argc, &argv));
    int rank = 0;
    int nranks = 0;
    MPICHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPICHECK(MPI_Comm_size(MPI_COMM_WORLD, &nranks));

    Options opt;
    if (!parse_args(argc, argv, &opt) || opt.k < nranks) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: mpirun -np N %s [-tokens T] [-hidden H] [-k K (>= N)] [-p P (0 <= P < 1)] [-iters I] "
                    "[-seed SEED]\n       (tokens * hidden < 2^31)\n",
                    argv[0]);
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
    cublasHandle_t handle;
    CUBLASCHECK(cublasCreate(&handle));
    CUBLASCHECK(cublasSetStream(handle, stream));
    cudaEvent_t start, stop;
    CUDACHECK(cudaEventCreate(&start));
    CUDACHECK(cudaEventCreate(&stop));

    // Split k as evenly as possible: rank r owns columns [k0, k1) of X and rows [k0, k1) of W.
    const int tokens = opt.tokens;
    const int hidden = opt.hidden;
    const int k0 = static_cast<int>(static_cast<long long>(opt.k) * rank / nranks);
    const int k1 = static_cast<int>(static_cast<long long>(opt.k) * (rank + 1) / nranks);
    const size_t n = static_cast<size_t>(tokens) * hidden;

    Layer layer;
    layer.tokens = tokens;
    layer.hidden = hidden;
    layer.k_part = k1 - k0;
    CUDACHECK(cudaMalloc(&layer.x, static_cast<size_t>(tokens) * layer.k_part * sizeof(__half)));
    CUDACHECK(cudaMalloc(&layer.w, static_cast<size_t>(layer.k_part) * hidden * sizeof(__half)));
    CUDACHECK(cudaMalloc(&layer.bias, hidden * sizeof(__half)));
    CUDACHECK(cudaMalloc(&layer.residual, n * sizeof(__half)));
#ifdef COCONET_EXAMPLE_FUSE
#pragma coconet symmetric
    CUDACHECK(cudaMalloc(&layer.y, n * sizeof(__half)));
#pragma coconet symmetric
    CUDACHECK(cudaMalloc(&layer.out, n * sizeof(__half)));
#else
    CUDACHECK(cudaMalloc(&layer.y, n * sizeof(__half)));
    CUDACHECK(cudaMalloc(&layer.out, n * sizeof(__half)));
#endif

    // This rank's blocks of the global X, W, bias and residual. W is scaled by
    // 1/sqrt(k) so that Y stays O(1) and fp16 does not overflow.
    const uint32_t key = hash32(static_cast<uint32_t>(opt.seed));
    const float w_scale = 1.0f / std::sqrt(static_cast<float>(opt.k));
    const int fill_blocks = 128;
    fill_block<<<fill_blocks, kThreads, 0, stream>>>(layer.x, tokens, layer.k_part, 0, k0, opt.k, hash32(key ^ 1),
                                                     1.0f);
    fill_block<<<fill_blocks, kThreads, 0, stream>>>(layer.w, layer.k_part, hidden, k0, 0, hidden, hash32(key ^ 2),
                                                     w_scale);
    fill_block<<<fill_blocks, kThreads, 0, stream>>>(layer.bias, 1, hidden, 0, 0, hidden, hash32(key ^ 3), 0.1f);
    fill_block<<<fill_blocks, kThreads, 0, stream>>>(layer.residual, tokens, hidden, 0, 0, hidden, hash32(key ^ 4),
                                                     1.0f);
    CUDACHECK(cudaGetLastError());

    for (int iter = 0; iter < opt.iters; ++iter) {
        CUDACHECK(cudaEventRecord(start, stream));
        row_linear_forward(layer, opt.p, opt.seed, static_cast<unsigned long long>(iter), handle, comm, stream);
        CUDACHECK(cudaEventRecord(stop, stream));
        CUDACHECK(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CUDACHECK(cudaEventElapsedTime(&ms, start, stop));
        if (rank == 0)
            printf("row_linear: iter %d/%d time_ms=%.3f\n", iter + 1, opt.iters, ms);
    }

    // Checksum of the last iteration's output on this rank.
    std::vector<__half> host(n);
    CUDACHECK(cudaMemcpy(host.data(), layer.out, n * sizeof(__half), cudaMemcpyDeviceToHost));
    double sum = 0.0;
    for (__half h : host)
        sum += static_cast<double>(__half2float(h));

    // The output is replicated: every rank must hold the same values.
    double lo = 0.0;
    double hi = 0.0;
    MPICHECK(MPI_Allreduce(&sum, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
    MPICHECK(MPI_Allreduce(&sum, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    const bool consistent = lo == hi;
    if (rank == 0) {
        printf("row_linear: tokens=%d hidden=%d k=%d p=%.3f iters=%d ranks=%d checksum=%.9e\n", opt.tokens,
               opt.hidden, opt.k, opt.p, opt.iters, nranks, sum);
        if (!consistent)
            fprintf(stderr, "row_linear: error: outputs differ across ranks (checksum %.9e .. %.9e)\n", lo, hi);
    }

    CUDACHECK(cudaFree(layer.x));
    CUDACHECK(cudaFree(layer.w));
    CUDACHECK(cudaFree(layer.bias));
    CUDACHECK(cudaFree(layer.residual));
    CUDACHECK(cudaFree(layer.y));
    CUDACHECK(cudaFree(layer.out));
    CUDACHECK(cudaEventDestroy(start));
    CUDACHECK(cudaEventDestroy(stop));
    CUBLASCHECK(cublasDestroy(handle));
    CUDACHECK(cudaStreamDestroy(stream));
    NCCLCHECK(ncclCommDestroy(comm));
    MPICHECK(MPI_Comm_free(&node_comm));
    MPICHECK(MPI_Finalize());
    return consistent ? 0 : 1;
}
