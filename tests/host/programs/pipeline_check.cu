// pipeline_check.cu: two pipeline stages of T tensor-parallel ranks each
// (2T ranks; rank r is stage r / T, rank r % T of its stage's group), as a
// pipeline-parallel trainer hands activations from one stage to the next.
// Stage 0 all-reduces its partial outputs on its group, runs a kernel on the
// sum and sends the result to the rank of the same index in stage 1, which
// receives it. Translated with coconet-cc --target=host: `split reorder
// pipeline(tag=...)` sends each rank's slice only, `pipeline(tag=..., group=tp)`
// receives it and all-gathers the slices on the receiving group. Both
// exchanges are checked against a CPU reference on every rank of stage 1:
//
//   pipeline_check ok         a bias + GeLU (1001 elements, which no T
//                             divides) and a block-per-row RMSNorm (37 rows)
//   pipeline_check wrong-tag  stage 1 receives the first exchange in a region
//                             of another tag: the receiver stops with a message
//   pipeline_check short      stage 1 receives one element less than sent:
//                             the receiver stops with a message
#include <math.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#define CUDA_CHECK(call)                                                                        \
  do {                                                                                          \
    cudaError_t err_ = (call);                                                                  \
    if (err_ != cudaSuccess) {                                                                  \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                             \
    }                                                                                           \
  } while (0)

#define NCCL_CHECK(call)                                                                        \
  do {                                                                                          \
    ncclResult_t res_ = (call);                                                                 \
    if (res_ != ncclSuccess) {                                                                  \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, ncclGetErrorString(res_)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                             \
    }                                                                                           \
  } while (0)

__device__ float gelu(float x) { return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x))); }

__global__ void bias_gelu(float *out, const float *in, const float *bias, int n, int hidden) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = gelu(in[i] + bias[i % hidden]);
}

// One block per row; the row's sum of squares by a shared-memory tree.
__global__ void rmsnorm_block(float *out, const float *in, const float *weight, int hidden) {
  __shared__ float part[128];
  int row = blockIdx.x;
  float ss = 0.0f;
  for (int c = threadIdx.x; c < hidden; c += blockDim.x) ss += in[row * hidden + c] * in[row * hidden + c];
  part[threadIdx.x] = ss;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  float scale = rsqrtf(part[0] / hidden + 1e-6f);
  for (int c = threadIdx.x; c < hidden; c += blockDim.x) out[row * hidden + c] = in[row * hidden + c] * scale * weight[c];
}

static void send_act(float *y, float *h, const float *bias, int n, int hidden, int peer, ncclComm_t tp,
                     ncclComm_t world, cudaStream_t stream) {
#pragma coconet region name(send_act) split reorder replicated(bias) scratch(h) pipeline(tag=act)
  {
    NCCL_CHECK(ncclAllReduce(y, y, n, ncclFloat, ncclSum, tp, stream));
    bias_gelu<<<(n + 255) / 256, 256, 0, stream>>>(h, y, bias, n, hidden);
    NCCL_CHECK(ncclSend(h, n, ncclFloat, peer, world, stream));
  }
}

static void recv_act(float *x, int n, int peer, ncclComm_t tp, ncclComm_t world, cudaStream_t stream) {
#pragma coconet region name(recv_act) pipeline(tag=act, group=tp)
  {
    NCCL_CHECK(ncclRecv(x, n, ncclFloat, peer, world, stream));
  }
}

static void recv_other(float *x, int n, int peer, ncclComm_t tp, ncclComm_t world, cudaStream_t stream) {
#pragma coconet region name(recv_other) pipeline(tag=other, group=tp)
  {
    NCCL_CHECK(ncclRecv(x, n, ncclFloat, peer, world, stream));
  }
}

static void send_norm(float *y, float *out, const float *weight, int rows, int hidden, int peer, ncclComm_t tp,
                      ncclComm_t world, cudaStream_t stream) {
#pragma coconet region name(send_norm) split reorder replicated(weight) scratch(y, out) pipeline(tag=norm)
  {
    NCCL_CHECK(ncclAllReduce(y, y, (size_t)rows * hidden, ncclFloat, ncclSum, tp, stream));
    rmsnorm_block<<<rows, 128, 0, stream>>>(out, y, weight, hidden);
    NCCL_CHECK(ncclSend(out, (size_t)rows * hidden, ncclFloat, peer, world, stream));
  }
}

static void recv_norm(float *x, size_t n, int peer, ncclComm_t tp, ncclComm_t world, cudaStream_t stream) {
#pragma coconet region name(recv_norm) pipeline(tag=norm, group=tp)
  {
    NCCL_CHECK(ncclRecv(x, n, ncclFloat, peer, world, stream));
  }
}

// Rank q's partial output: element k is (k % 89 - 44) / 32 + q / 4, exact in float.
static float partial(size_t k, int q) { return (float)((int)(k % 89) - 44) / 32.0f + (float)q / 4.0f; }

static float *device_copy(const std::vector<float> &h) {
  float *d;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}

static std::vector<float> host_copy(const float *d, size_t n) {
  std::vector<float> h(n);
  CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

// The sum over stage 0's T ranks of their partial outputs at k.
static double reduced(size_t k, int T) {
  double s = 0;
  for (int q = 0; q < T; q++) s += partial(k, q);
  return s;
}

static int compare(const char *what, const std::vector<float> &got, const std::vector<double> &want, int rank) {
  int bad = 0;
  for (size_t k = 0; k < want.size(); k++)
    if (fabs(got[k] - want[k]) > 1e-5 * (fabs(want[k]) + 1)) {
      if (!bad) fprintf(stderr, "pipeline_check: rank %d: %s[%zu] = %g, want %g\n", rank, what, k, got[k], want[k]);
      bad++;
    }
  return bad;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const char *mode = argc > 1 ? argv[1] : "ok";
  if (nranks % 2) {
    if (rank == 0) fprintf(stderr, "pipeline_check: needs an even number of ranks (two stages)\n");
    MPI_Finalize();
    return 2;
  }
  const int T = nranks / 2, stage = rank / T, tp_rank = rank % T, peer = stage ? rank - T : rank + T;
  const int n = 1001, hidden = 64, rows = 37, width = 96;
  const size_t m = (size_t)rows * width;

  ncclUniqueId id;
  if (rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t world, tp;
  NCCL_CHECK(ncclCommInitRank(&world, nranks, id, rank));
  NCCL_CHECK(ncclCommSplit(world, stage, tp_rank, &tp, NULL));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));

  std::vector<float> h_y(n), h_bias(hidden), h_z(m), h_w(width);
  for (int k = 0; k < n; k++) h_y[k] = partial(k, tp_rank);
  for (int c = 0; c < hidden; c++) h_bias[c] = (float)(c % 5 - 2) / 8.0f;
  for (size_t k = 0; k < m; k++) h_z[k] = partial(k, tp_rank);
  for (int c = 0; c < width; c++) h_w[c] = 0.5f + (float)(c % 7) / 8.0f;
  float *y = device_copy(h_y), *bias = device_copy(h_bias), *z = device_copy(h_z), *w = device_copy(h_w);
  float *h, *out, *x, *xn;
  CUDA_CHECK(cudaMalloc(&h, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&out, m * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&x, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&xn, m * sizeof(float)));
  CUDA_CHECK(cudaMemset(x, 0, n * sizeof(float)));
  CUDA_CHECK(cudaMemset(xn, 0, m * sizeof(float)));

  if (stage == 0) {
    send_act(y, h, bias, n, hidden, peer, tp, world, stream);
    send_norm(z, out, w, rows, width, peer, tp, world, stream);
  } else {
    if (strcmp(mode, "wrong-tag") == 0) recv_other(x, n, peer, tp, world, stream);
    else recv_act(x, strcmp(mode, "short") == 0 ? n - 1 : n, peer, tp, world, stream);
    recv_norm(xn, m, peer, tp, world, stream);
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));

  int bad = 0;
  if (stage == 1) {
    std::vector<double> want(n), want_n(m);
    for (int k = 0; k < n; k++) {
      double v = reduced(k, T) + h_bias[k % hidden];
      want[k] = 0.5 * v * (1 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
    }
    for (int r = 0; r < rows; r++) {
      double ss = 0;
      for (int c = 0; c < width; c++) ss += reduced((size_t)r * width + c, T) * reduced((size_t)r * width + c, T);
      double s = 1.0 / sqrt(ss / width + 1e-6);
      for (int c = 0; c < width; c++) want_n[(size_t)r * width + c] = reduced((size_t)r * width + c, T) * s * h_w[c];
    }
    bad += compare("x", host_copy(x, n), want, rank);
    bad += compare("xn", host_copy(xn, m), want_n, rank);
  }
  int all_bad = 0;
  MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (!all_bad && rank == 0)
    printf("pipeline_check: %s: 2 stages of %d ranks, %d elements and %d rows of %d: ok\n", mode, T, n, rows, width);

  for (float *p : {y, bias, z, w, h, out, x, xn}) CUDA_CHECK(cudaFree(p));
  CUDA_CHECK(cudaStreamDestroy(stream));
  NCCL_CHECK(ncclCommDestroy(tp));
  NCCL_CHECK(ncclCommDestroy(world));
  MPI_Finalize();
  return all_bad ? 1 : 0;
}
