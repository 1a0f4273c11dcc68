// fused.cu: the fused kernel of `split reorder fuse` against its NCCL path, at
// np=1 on one GPU (bench/gpu/run.sh; built by prepare.sh with coconet-cc). One
// momentum-SGD region runs on two sets of buffers: allocated under
// `#pragma coconet symmetric` (the call site takes the fused kernel) and with
// plain cudaMalloc (it takes the NCCL path: ReduceScatter, slice kernel,
// AllGather). Each is timed with CUDA events over ITERS steps after 3 warm-up
// steps, and the results are compared bit for bit. Prints
//   fused n=N iters=K nccl_ms=A fused_ms=B speedup=A/B fused_gbps=G equal=yes|no
// where G counts the bytes the fused kernel reads and writes at np=1 (g read,
// buf and w read and written: 20 bytes per element) over its time, the
// convention of copybw (bytes read + written). Then the same for a row-wise
// region, AllReduce + residual + RMSNorm (one block per token) fused with
// `split reorder fuse` (the kernel's body copied into the fused kernel):
//   fused_rows tokens=T hidden=H iters=K nccl_ms=A fused_ms=B speedup=A/B equal=yes|no
// Usage: fused [N [ITERS [TOKENS HIDDEN]]].
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                                  \
  do {                                                                                         \
    if ((x) != 0) {                                                                            \
      fprintf(stderr, "fused: %s:%d: %s failed\n", __FILE__, __LINE__, #x);                    \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

__global__ void momentum(float *w, float *buf, const float *g, size_t n, float lr, float mu) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
    const float b = mu * buf[i] + g[i];
    buf[i] = b;
    w[i] = w[i] - lr * b;
  }
}

static void step(float *g, float *w, float *buf, size_t n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(bench_sgd) split reorder shard(buf) scratch(g) replicated(w) fuse
  {
    CK(ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s));
    momentum<<<1024, 256, 0, s>>>(w, buf, g, n, 0.01f, 0.9f);
  }
}

// The sum of v over the block, in every thread (warp shuffles, then 32 shared slots).
__device__ float block_sum(float v) {
  __shared__ float warps[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) warps[threadIdx.x >> 5] = v;
  __syncthreads();
  v = threadIdx.x < (blockDim.x >> 5) ? warps[threadIdx.x] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();
  return v;
}

// residual += y; out = rmsnorm(residual) * gamma, one block per token.
__global__ void residual_rmsnorm(float *out, float *residual, const float *y, const float *gamma, int tokens,
                                 int hidden) {
  const int t = blockIdx.x;
  if (t >= tokens) return;
  float ss = 0.0f;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    const float h = residual[(size_t)t * hidden + j] + y[(size_t)t * hidden + j];
    residual[(size_t)t * hidden + j] = h;
    ss += h * h;
  }
  const float inv = rsqrtf(block_sum(ss) / hidden + 1e-6f);
  for (int j = threadIdx.x; j < hidden; j += blockDim.x)
    out[(size_t)t * hidden + j] = residual[(size_t)t * hidden + j] * inv * gamma[j];
}

static void norm_step(float *y, float *residual, float *out, const float *gamma, int tokens, int hidden,
                      ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(bench_rows) split reorder replicated(residual, gamma) scratch(y) fuse
  {
    CK(ncclAllReduce(y, y, (size_t)tokens * hidden, ncclFloat, ncclSum, comm, s));
    residual_rmsnorm<<<tokens, 256, 0, s>>>(out, residual, y, gamma, tokens, hidden);
  }
}

struct Buffers {
  float *g, *w, *buf;
};

struct RowBuffers {
  float *y, *residual, *out, *gamma;
};

static float time_rows(const RowBuffers &b, const std::vector<float> &init, int tokens, int hidden, int iters,
                       ncclComm_t comm, cudaStream_t s) {
  const size_t bytes = (size_t)tokens * hidden * sizeof(float);
  CK(cudaMemcpy(b.residual, init.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b.gamma, init.data(), (size_t)hidden * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  float total = 0;
  for (int i = 0; i < iters + 3; i++) {  // y is scratch: refilled before each step, outside the timing
    CK(cudaMemcpyAsync(b.y, init.data(), bytes, cudaMemcpyHostToDevice, s));
    CK(cudaEventRecord(t0, s));
    norm_step(b.y, b.residual, b.out, b.gamma, tokens, hidden, comm, s);
    CK(cudaEventRecord(t1, s));
    CK(cudaEventSynchronize(t1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, t0, t1));
    if (i >= 3) total += ms;
  }
  CK(cudaEventDestroy(t0));
  CK(cudaEventDestroy(t1));
  return total / (float)iters;
}

// The row-wise region on symmetric buffers (fused) and on plain ones (the NCCL path).
static bool rows_bench(int tokens, int hidden, int iters, ncclComm_t comm, cudaStream_t s) {
  const size_t n = (size_t)tokens * hidden, bytes = n * sizeof(float);
  RowBuffers fused, plain;
#pragma coconet symmetric
  CK(cudaMalloc(&fused.y, bytes));
#pragma coconet symmetric
  CK(cudaMalloc(&fused.residual, bytes));
#pragma coconet symmetric
  CK(cudaMalloc(&fused.out, bytes));
  CK(cudaMalloc(&fused.gamma, (size_t)hidden * sizeof(float)));
  CK(cudaMalloc(&plain.y, bytes));
  CK(cudaMalloc(&plain.residual, bytes));
  CK(cudaMalloc(&plain.out, bytes));
  CK(cudaMalloc(&plain.gamma, (size_t)hidden * sizeof(float)));
  std::vector<float> init(n);
  for (size_t i = 0; i < n; i++) init[i] = 0.001f * (float)(i % 997) - 0.5f;
  const float nccl_ms = time_rows(plain, init, tokens, hidden, iters, comm, s);
  const float fused_ms = time_rows(fused, init, tokens, hidden, iters, comm, s);
  std::vector<float> a(n), b(n);
  CK(cudaMemcpy(a.data(), plain.out, bytes, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(b.data(), fused.out, bytes, cudaMemcpyDeviceToHost));
  const bool equal = memcmp(a.data(), b.data(), bytes) == 0;
  printf("fused_rows tokens=%d hidden=%d iters=%d nccl_ms=%.4f fused_ms=%.4f speedup=%.2f equal=%s\n", tokens, hidden,
         iters, (double)nccl_ms, (double)fused_ms, fused_ms > 0 ? (double)(nccl_ms / fused_ms) : 0.0,
         equal ? "yes" : "no");
  CK(cudaFree(fused.y));
  CK(cudaFree(fused.residual));
  CK(cudaFree(fused.out));
  CK(cudaFree(fused.gamma));
  CK(cudaFree(plain.y));
  CK(cudaFree(plain.residual));
  CK(cudaFree(plain.out));
  CK(cudaFree(plain.gamma));
  return equal;
}

static float time_steps(const Buffers &b, const std::vector<float> &init, size_t n, int iters, ncclComm_t comm,
                        cudaStream_t s) {
  const size_t bytes = n * sizeof(float);
  CK(cudaMemcpy(b.w, init.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b.g, init.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemset(b.buf, 0, bytes));
  for (int i = 0; i < 3; i++) step(b.g, b.w, b.buf, n, comm, s);
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  CK(cudaEventRecord(t0, s));
  for (int i = 0; i < iters; i++) step(b.g, b.w, b.buf, n, comm, s);
  CK(cudaEventRecord(t1, s));
  CK(cudaEventSynchronize(t1));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, t0, t1));
  CK(cudaEventDestroy(t0));
  CK(cudaEventDestroy(t1));
  return ms / (float)iters;
}

int main(int argc, char **argv) {
  const size_t n = argc > 1 ? strtoull(argv[1], nullptr, 10) : (size_t)64 << 20;
  const int iters = argc > 2 ? atoi(argv[2]) : 20;
  const int tokens = argc > 3 ? atoi(argv[3]) : 4096;
  const int hidden = argc > 4 ? atoi(argv[4]) : 8192;
  ncclUniqueId id;
  CK(ncclGetUniqueId(&id));
  ncclComm_t comm;
  CK(ncclCommInitRank(&comm, 1, id, 0));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  const size_t bytes = n * sizeof(float);
  Buffers fused, plain;
#pragma coconet symmetric
  CK(cudaMalloc(&fused.g, bytes));
#pragma coconet symmetric
  CK(cudaMalloc(&fused.w, bytes));
  CK(cudaMalloc(&fused.buf, bytes));
  CK(cudaMalloc(&plain.g, bytes));
  CK(cudaMalloc(&plain.w, bytes));
  CK(cudaMalloc(&plain.buf, bytes));
  std::vector<float> init(n);
  for (size_t i = 0; i < n; i++) init[i] = 0.001f * (float)(i % 1000) - 0.5f;
  const float nccl_ms = time_steps(plain, init, n, iters, comm, s);
  const float fused_ms = time_steps(fused, init, n, iters, comm, s);
  std::vector<float> a(n), b(n);
  CK(cudaMemcpy(a.data(), plain.w, bytes, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(b.data(), fused.w, bytes, cudaMemcpyDeviceToHost));
  const bool equal = memcmp(a.data(), b.data(), bytes) == 0;
  printf("fused n=%zu iters=%d nccl_ms=%.4f fused_ms=%.4f speedup=%.2f fused_gbps=%.0f equal=%s\n", n, iters,
         (double)nccl_ms, (double)fused_ms, fused_ms > 0 ? (double)(nccl_ms / fused_ms) : 0.0,
         fused_ms > 0 ? 20.0 * (double)n / ((double)fused_ms * 1e-3) / 1e9 : 0.0, equal ? "yes" : "no");
  CK(cudaFree(fused.g));
  CK(cudaFree(fused.w));
  CK(cudaFree(fused.buf));
  CK(cudaFree(plain.g));
  CK(cudaFree(plain.w));
  CK(cudaFree(plain.buf));
  const bool rows_equal = rows_bench(tokens, hidden, iters, comm, s);
  CK(cudaStreamDestroy(s));
  CK(ncclCommDestroy(comm));
  return equal && rows_equal ? 0 : 1;
}
