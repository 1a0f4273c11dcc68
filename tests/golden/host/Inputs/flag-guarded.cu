// Buffers read only behind a flag, NULL while the flag is off (as trainers pass an
// optional mask, bias or residual): the scheduled regions must read them only where
// the program as written does. Each region runs twice, the flag off with NULL and on
// with a buffer, and every element is compared with the program's result computed
// here on the host. Rank r's gradient is (r + 1) * (i % 7 + 1).
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call, ok, what)                                              \
  do {                                                                     \
    if ((call) != (ok)) {                                                  \
      std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, what); \
      std::exit(1);                                                        \
    }                                                                      \
  } while (0)

enum { N = 1000 };

// Every element is updated unless a mask is used and says no: mask[i] is read only
// when use_mask is set.
__global__ void masked_sgd(float *w, const float *g, const int *mask, float lr, int n, int use_mask) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && (!use_mask || mask[i])) w[i] -= lr * g[i];
}

// An optional bias picked by a ?: on a flag.
__global__ void add_bias(float *out, const float *g, const float *bias, int n, int has_bias) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float b = has_bias ? bias[i] : 0.0f;
    out[i] = g[i] + b;
  }
}

// An optional residual added under an if on a flag.
__global__ void scale_residual(float *out, const float *g, const float *res, float scale, int n, int add_res) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    float v = g[i] * scale;
    if (add_res) v += res[i];
    out[i] = v;
  }
}

// Defined below the regions, so its element is generated from the IR (not its text): the
// flag-guarded read must stay behind the flag there too.
__global__ void late_bias(float *out, const float *g, const float *bias, int n, int has_bias);

static void step_masked(float *w, float *g, const int *mask, int use_mask, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(masked) split reorder fuse replicated(w, mask)
  {
    ncclAllReduce(g, g, N, ncclFloat, ncclSum, comm, s);
    masked_sgd<<<(N + 127) / 128, 128, 0, s>>>(w, g, mask, 0.5f, N, use_mask);
  }
}

static void step_bias(float *out, float *g, const float *bias, int has_bias, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(bias) split reorder replicated(bias)
  {
    ncclAllReduce(g, g, N, ncclFloat, ncclSum, comm, s);
    add_bias<<<(N + 255) / 256, 256, 0, s>>>(out, g, bias, N, has_bias);
  }
}

static void step_residual(float *out, float *g, const float *res, int add_res, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(residual) split reorder replicated(res)
  {
    ncclAllReduce(g, g, N, ncclFloat, ncclSum, comm, s);
    scale_residual<<<4, 128, 0, s>>>(out, g, res, 0.25f, N, add_res);
  }
}

// An optional buffer read and written behind a flag: a store is loaded and stored back, and
// gathered, by the schedule, so it runs when the buffer is not NULL (the region as written
// otherwise).
__global__ void accumulate(float *out, const float *g, float *acc, int n, int keep) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = g[i];
    if (keep) {
      v += acc[i];
      acc[i] = v;
    }
    out[i] = v;
  }
}

static void step_accumulate(float *out, float *g, float *acc, int keep, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(accumulate) split reorder replicated(acc)
  {
    ncclAllReduce(g, g, N, ncclFloat, ncclSum, comm, s);
    accumulate<<<(N + 255) / 256, 256, 0, s>>>(out, g, acc, N, keep);
  }
}

static void step_late(float *out, float *g, const float *bias, int has_bias, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(late) split reorder replicated(bias)
  {
    ncclAllReduce(g, g, N, ncclFloat, ncclSum, comm, s);
    late_bias<<<(N + 255) / 256, 256, 0, s>>>(out, g, bias, N, has_bias);
  }
}

__global__ void late_bias(float *out, const float *g, const float *bias, int n, int has_bias) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = g[i];
    if (has_bias) v += bias[i];
    out[i] = v;
  }
}

static float *device(const float *host) {
  float *d;
  CHECK(cudaMalloc(&d, N * sizeof(float)), cudaSuccess, "cudaMalloc");
  CHECK(cudaMemcpy(d, host, N * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess, "cudaMemcpy");
  return d;
}

static int wrong(const float *d, const float *want, const char *what) {
  static float got[N];
  CHECK(cudaMemcpy(got, d, N * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess, "cudaMemcpy");
  int bad = 0;
  for (int i = 0; i < N; i++) bad += got[i] != want[i];
  if (bad) std::printf("%s: %d elements differ (element 0: %g, want %g)\n", what, bad, got[0], want[0]);
  return bad;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  ncclUniqueId id;
  if (rank == 0) CHECK(ncclGetUniqueId(&id), ncclSuccess, "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  CHECK(ncclCommInitRank(&comm, nranks, id, rank), ncclSuccess, "ncclCommInitRank");
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s), cudaSuccess, "cudaStreamCreate");
  static float grad[N], sum[N], ones[N], want[N], extra[N];
  static int keep[N];
  for (int i = 0; i < N; i++) {
    grad[i] = (rank + 1.0f) * (i % 7 + 1);
    sum[i] = nranks * (nranks + 1) / 2.0f * (i % 7 + 1);
    ones[i] = 1.0f;
    extra[i] = i % 5;
    keep[i] = i % 3 != 0;
  }
  int *mask;
  CHECK(cudaMalloc(&mask, N * sizeof(int)), cudaSuccess, "cudaMalloc");
  CHECK(cudaMemcpy(mask, keep, N * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess, "cudaMemcpy");
  int bad = 0;
  for (int flag = 0; flag < 2; flag++) {
    float *w = device(ones), *g = device(grad);
    step_masked(w, g, flag ? mask : nullptr, flag, comm, s);
    for (int i = 0; i < N; i++) want[i] = !flag || keep[i] ? 1.0f - 0.5f * sum[i] : 1.0f;
    bad += wrong(w, want, flag ? "masked, mask on" : "masked, mask off");
    float *out = device(ones), *bias = device(extra);
    CHECK(cudaMemcpy(g, grad, N * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess, "cudaMemcpy");
    step_bias(out, g, flag ? bias : nullptr, flag, comm, s);
    for (int i = 0; i < N; i++) want[i] = sum[i] + (flag ? extra[i] : 0.0f);
    bad += wrong(out, want, flag ? "bias on" : "bias off");
    CHECK(cudaMemcpy(g, grad, N * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess, "cudaMemcpy");
    step_residual(out, g, flag ? bias : nullptr, flag, comm, s);
    for (int i = 0; i < N; i++) want[i] = sum[i] * 0.25f + (flag ? extra[i] : 0.0f);
    bad += wrong(out, want, flag ? "residual on" : "residual off");
    CHECK(cudaMemcpy(g, grad, N * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess, "cudaMemcpy");
    step_late(out, g, flag ? bias : nullptr, flag, comm, s);
    for (int i = 0; i < N; i++) want[i] = sum[i] + (flag ? extra[i] : 0.0f);
    bad += wrong(out, want, flag ? "late bias on" : "late bias off");
    float *acc = device(extra);
    CHECK(cudaMemcpy(g, grad, N * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess, "cudaMemcpy");
    step_accumulate(out, g, flag ? acc : nullptr, flag, comm, s);
    for (int i = 0; i < N; i++) want[i] = sum[i] + (flag ? extra[i] : 0.0f);
    bad += wrong(out, want, flag ? "accumulate on" : "accumulate off");
    if (flag) bad += wrong(acc, want, "accumulated");
    cudaFree(acc);
    CHECK(cudaStreamSynchronize(s), cudaSuccess, "cudaStreamSynchronize");
    cudaFree(w);
    cudaFree(g);
    cudaFree(out);
    cudaFree(bias);
  }
  int total = 0;
  MPI_Reduce(&bad, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) std::printf("flag-guarded: ranks %d, %d wrong\n", nranks, total);
  cudaFree(mask);
  cudaStreamDestroy(s);
  ncclCommDestroy(comm);
  MPI_Finalize();
  return total != 0;
}
