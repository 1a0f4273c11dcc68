// kitchen_sink.cu: activation statistics for a bf16 matrix on every local GPU.
//
// For each GPU: fill a [rows x cols] bf16 matrix, compute per-row L2 norms
// (cub::BlockReduce), the largest |x| (cooperative-groups tiles), the total sum
// (cub::DeviceReduce), a half2 axpy, then combine the norms across GPUs with NCCL.
//
// This file carries no coconet directive. It only mentions one where a naive text
// scanner would be fooled: in comments, in a string literal and in raw strings.
// The translator must copy it unchanged. Non-ASCII text keeps byte offsets honest:
// σ = √(Σ x²) / n, 1 µs, « ok ».

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cub/block/block_reduce.cuh>
#include <cub/device/device_reduce.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "header_only.cuh"

namespace cg = cooperative_groups;

#define CHECK_CUDA(expr)                                                                        \
    do {                                                                                        \
        const cudaError_t err_ = (expr);                                                        \
        if (err_ != cudaSuccess) {                                                              \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr,                  \
                         cudaGetErrorString(err_));                                             \
            std::exit(EXIT_FAILURE);                                                            \
        }                                                                                       \
    } while (false)

#define CHECK_NCCL(expr)                                                                        \
    do {                                                                                        \
        const ncclResult_t res_ = (expr);                                                       \
        if (res_ != ncclSuccess) {                                                              \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr,                  \
                         ncclGetErrorString(res_));                                             \
            std::exit(EXIT_FAILURE);                                                            \
        }                                                                                       \
    } while (false)

#define KS_STR_(x) #x
#define KS_STR(x) KS_STR_(x)
#define KS_KERNEL_NAME(prefix, suffix) prefix##_##suffix

#define KS_BLOCK 256
constexpr int kBlock = KS_BLOCK;
constexpr int kTile = 32;

// Usage text, kept verbatim. The lines below are inside a raw string literal, not
// directives, even the one that starts with a '#'.
static const char* const kUsage = R"(usage: kitchen_sink [--rows N] [--cols N]
  Prints activation statistics for every local GPU.
#pragma coconet region name(not_a_pragma) split reorder
  (the line above is text: "quotes", back\slashes and )parens( are kept as is)
)";

// A raw string with a custom delimiter, so ")" may appear inside.
static const char* const kReportTemplate = R"report(
rows=%d cols=%d devices=%d  /* #pragma coconet region name(x) fuse */  // ")"
)report";

// The loop below could sit under #pragma coconet region name(norms) fuse, but there
// is no collective next to it, so there is nothing to gain.
template <typename T, int BLOCK>
__global__ void __launch_bounds__(BLOCK) row_norms(const T* __restrict__ x, float* __restrict__ norms, int cols)
{
    using BlockReduce = cub::BlockReduce<float, BLOCK>;
    __shared__ typename BlockReduce::TempStorage temp;

    auto square = [](float v) { return v * v; };
    const T* row = x + static_cast<size_t>(blockIdx.x) * cols;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        acc += square(ks::to_float(row[c]));
    const float total = BlockReduce(temp).Sum(acc);
    if (threadIdx.x == 0)
        norms[blockIdx.x] = sqrtf(total);
}

/*
 * An old version did the cross-GPU step like this:
 *
#pragma coconet region name(disabled) split reorder
{
    ncclAllReduce(norms, norms, rows, ncclFloat, ncclSum, comm, stream);
}
 *
 * It is kept in this comment only for the record.
 */
template <int TILE>
__global__ void max_abs(const __nv_bfloat16* __restrict__ x, size_t n, float* result)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<TILE> tile = cg::tiled_partition<TILE>(block);

    float local = 0.0f;
    for (size_t i : ks::grid_stride(n))
        local = fmaxf(local, fabsf(ks::to_float(x[i])));
    const float tile_max = cg::reduce(tile, local, cg::greater<float>());
    // |x| >= 0, so comparing the bit patterns as ints orders them like floats.
    if (tile.thread_rank() == 0)
        atomicMax(reinterpret_cast<int*>(result), __float_as_int(tile_max));
}

__global__ void KS_KERNEL_NAME(fill, bf16)(__nv_bfloat16* x, size_t n, unsigned seed)
{
    for (size_t i : ks::grid_stride(n)) {
        unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
        h ^= h >> 13;
        const float v = static_cast<float>(h & 0xffffu) / 32768.0f - 1.0f;
        x[i] = ks::from_float<__nv_bfloat16>(v);
    }
}

// y = a * x + y on pairs of halves.
__global__ void axpy_half2(__half2* y, const __half2* x, __half a, size_t n2)
{
    const __half2 a2 = __half2half2(a);
    for (size_t i : ks::grid_stride(n2))
        y[i] = __hfma2(a2, x[i], y[i]);
}

__global__ void widen(const __nv_bfloat16* in, float* out_f, __half* out_h, size_t n)
{
    for (size_t i : ks::grid_stride(n)) {
        const float v = ks::clamp(__bfloat162float(in[i]), -1.0f, 1.0f);
        out_f[i] = v;
        out_h[i] = ks::from_float<__half>(v);
    }
}

template <typename... Ts>
constexpr auto sum_all(Ts... xs)
{
    return (xs + ... + 0);
}
static_assert(sum_all(1, 2, 3) == 6, "fold expression");

// Elapsed milliseconds of whatever `work` enqueues on `stream`.
static float time_ms(cudaStream_t stream, const std::function<void()>& work)
{
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    CHECK_CUDA(cudaEventRecord(start, stream));
    work();
    CHECK_CUDA(cudaEventRecord(stop, stream));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    return ms;
}

struct DeviceState {
    int device = 0;
    cudaStream_t stream = nullptr;
    __nv_bfloat16* x = nullptr;
    float* xf = nullptr;
    float* norms = nullptr;
    float* scalars = nullptr;  // [0] = max |x|, [1] = sum of x
    __half* h = nullptr;
    __half* acc = nullptr;  // acc += 0.5 * h
    void* cub_temp = nullptr;
    size_t cub_temp_bytes = 0;
};

static void run_device(DeviceState& s, int rows, int cols)
{
    const size_t n = static_cast<size_t>(rows) * cols;
    const int grid = static_cast<int>(std::min<size_t>(ks::ceil_div<size_t>(n, kBlock), 1024));
    CHECK_CUDA(cudaSetDevice(s.device));
    KS_KERNEL_NAME(fill, bf16)<<<grid, kBlock, 0, s.stream>>>(s.x, n, 0x9e3779b9u + s.device);
    row_norms<__nv_bfloat16, kBlock><<<rows, kBlock, 0, s.stream>>>(s.x, s.norms, cols);
    CHECK_CUDA(cudaMemsetAsync(s.scalars, 0, 2 * sizeof(float), s.stream));
    max_abs<kTile><<<grid, kBlock, 0, s.stream>>>(s.x, n, s.scalars);
    widen<<<grid, kBlock, 0, s.stream>>>(s.x, s.xf, s.h, n);
    CHECK_CUDA(cub::DeviceReduce::Sum(s.cub_temp, s.cub_temp_bytes, s.xf, s.scalars + 1, n, s.stream));
    axpy_half2<<<grid, kBlock, 0, s.stream>>>(reinterpret_cast<__half2*>(s.acc), reinterpret_cast<const __half2*>(s.h),
                                              __float2half(0.5f), n / 2);
    CHECK_CUDA(cudaGetLastError());
}

static bool parse_int(const char* text, int* out)
{
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || v <= 0 || v > (1 << 20))
        return false;
    *out = static_cast<int>(v);
    return true;
}

int main(int argc, char** argv)
{
    int rows = 512;
    int cols = 1024;
    for (int a = 1; a < argc; a += 2) {
        const std::string flag = argv[a];
        const bool ok = a + 1 < argc && ((flag == "--rows" && parse_int(argv[a + 1], &rows)) ||
                                         (flag == "--cols" && parse_int(argv[a + 1], &cols)));
        if (!ok) {
            std::fputs(kUsage, stderr);
            return 2;
        }
    }
    std::printf("hint: a \"#pragma coconet region\" line would go above the all-reduce\n");

    int ndev = 0;
    CHECK_CUDA(cudaGetDeviceCount(&ndev));
    std::vector<int> devices(ndev);
    std::iota(devices.begin(), devices.end(), 0);
    std::vector<ncclComm_t> comms(ndev);
    CHECK_NCCL(ncclCommInitAll(comms.data(), ndev, devices.data()));

    const size_t n = static_cast<size_t>(rows) * cols;
    std::vector<DeviceState> states(ndev);
    for (int d = 0; d < ndev; ++d) {
        DeviceState& s = states[d];
        s.device = d;
        CHECK_CUDA(cudaSetDevice(d));
        CHECK_CUDA(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
        CHECK_CUDA(cudaMalloc(&s.x, n * sizeof(__nv_bfloat16)));
        CHECK_CUDA(cudaMalloc(&s.xf, n * sizeof(float)));
        CHECK_CUDA(cudaMalloc(&s.norms, rows * sizeof(float)));
        CHECK_CUDA(cudaMalloc(&s.scalars, 2 * sizeof(float)));
        CHECK_CUDA(cudaMalloc(&s.h, n * sizeof(__half)));
        CHECK_CUDA(cudaMalloc(&s.acc, n * sizeof(__half)));
        CHECK_CUDA(cudaMemsetAsync(s.acc, 0, n * sizeof(__half), s.stream));
        // First call sizes cub's scratch space, second (in run_device) reduces.
        CHECK_CUDA(cub::DeviceReduce::Sum(nullptr, s.cub_temp_bytes, s.xf, s.scalars + 1, n, s.stream));
        CHECK_CUDA(cudaMalloc(&s.cub_temp, s.cub_temp_bytes));
    }

    // Time on device 0's stream; the events belong to device 0.
    CHECK_CUDA(cudaSetDevice(0));
    const float ms = time_ms(states[0].stream, [&] {
        for (DeviceState& s : states)
            run_device(s, rows, cols);
        CHECK_NCCL(ncclGroupStart());
        for (int d = 0; d < ndev; ++d) {
            CHECK_NCCL(ncclAllReduce(states[d].norms, states[d].norms, rows, ncclFloat, ncclSum, comms[d],
                                     states[d].stream));
            CHECK_NCCL(ncclBroadcast(states[d].x, states[d].x, n, ncclBfloat16, 0, comms[d], states[d].stream));
        }
        CHECK_NCCL(ncclGroupEnd());
    });

    std::vector<float> norms(rows);
    float scalars[2] = {0.0f, 0.0f};
    for (DeviceState& s : states) {
        CHECK_CUDA(cudaSetDevice(s.device));
        CHECK_CUDA(cudaStreamSynchronize(s.stream));
    }
    CHECK_CUDA(cudaSetDevice(0));
    CHECK_CUDA(cudaMemcpy(norms.data(), states[0].norms, rows * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(scalars, states[0].scalars, sizeof(scalars), cudaMemcpyDeviceToHost));
    const auto [lo, hi] = std::minmax_element(norms.begin(), norms.end());
    std::printf(kReportTemplate, rows, cols, ndev);
    std::printf("norm sum over devices: min=%.4f max=%.4f; device 0: max|x|=%.4f sum=%.4f; %.3f ms (block " KS_STR(
                    KS_BLOCK) ")\n",
                *lo, *hi, scalars[0], scalars[1], ms);

    for (int d = 0; d < ndev; ++d) {
        DeviceState& s = states[d];
        CHECK_CUDA(cudaSetDevice(d));
        CHECK_CUDA(cudaFree(s.x));
        CHECK_CUDA(cudaFree(s.xf));
        CHECK_CUDA(cudaFree(s.norms));
        CHECK_CUDA(cudaFree(s.scalars));
        CHECK_CUDA(cudaFree(s.h));
        CHECK_CUDA(cudaFree(s.acc));
        CHECK_CUDA(cudaFree(s.cub_temp));
        CHECK_CUDA(cudaStreamDestroy(s.stream));
        CHECK_NCCL(ncclCommDestroy(comms[d]));
    }
    return EXIT_SUCCESS;
}
