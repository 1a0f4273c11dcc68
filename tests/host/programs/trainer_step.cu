// trainer_step.cu: one data-parallel step of an MLP layer, written the way
// GPT-style CUDA trainers write it, and built unchanged with
// `coconet-cc --target=host` as it would be with nvcc (-lcublas -lcublasLt):
//   - each process picks its GPU by node-local rank (MPI_Comm_split_type),
//   - forward: one cublasLtMatmul with the GELU_AUX_BIAS epilogue (the
//     pre-GELU activations kept for backward) on this rank's micro-batch,
//   - a templated loss-gradient kernel launched with deduced arguments,
//   - backward: cublasLtMatmul for the weight gradient with BGRADB (the bias
//     gradient in the same call), after a templated GELU-backward kernel,
//   - ncclAllReduce(ncclAvg) of both gradients, then a templated SGD kernel.
// Every rank checks the updated weights and bias against a reference that
// the program computes on the CPU from every rank's micro-batch.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <math.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#include <vector>

#define cudaCheck(call)                                                                                     \
  do {                                                                                                      \
    cudaError_t e_ = (call);                                                                                \
    if (e_ != cudaSuccess) {                                                                                \
      printf("[CUDA ERROR] at file %s:%d:\n%s\n", __FILE__, __LINE__, cudaGetErrorString(e_));              \
      exit(EXIT_FAILURE);                                                                                   \
    }                                                                                                       \
  } while (0)
#define cublasCheck(call)                                                                                   \
  do {                                                                                                      \
    cublasStatus_t s_ = (call);                                                                             \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                      \
      printf("[cuBLAS ERROR]: %d %s %d\n", (int)s_, __FILE__, __LINE__);                                    \
      exit(EXIT_FAILURE);                                                                                   \
    }                                                                                                       \
  } while (0)
#define ncclCheck(call)                                                                                     \
  do {                                                                                                      \
    ncclResult_t r_ = (call);                                                                               \
    if (r_ != ncclSuccess) {                                                                                \
      printf("[NCCL ERROR] at file %s:%d:\n%s\n", __FILE__, __LINE__, ncclGetErrorString(r_));              \
      exit(EXIT_FAILURE);                                                                                   \
    }                                                                                                       \
  } while (0)

static const int BT = 24, C = 16, OC = 32;  // micro-batch rows, input and output channels
static const float LR = 0.125f;

static cublasLtHandle_t cublaslt_handle;

// out[BT][OC] (row-major) = inp[BT][C] weight[OC][C]^T + bias, through cuBLASLt's
// column-major view, as trainers call it; with `aux`, keeps the pre-GELU values.
static void matmul_cublaslt(float *d, const float *a, const float *b, const float *bias, int m, int n, int k,
                            bool transA, bool transB, cublasLtEpilogue_t epilogue, float *aux, cudaStream_t stream) {
  cublasLtMatmulDesc_t desc;
  cublasCheck(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N, opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasCheck(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA)));
  cublasCheck(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB)));
  cublasCheck(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
  if (bias) cublasCheck(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  if (aux) {
    int64_t ld = m;
    cublasCheck(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux)));
    cublasCheck(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof(ld)));
  }
  cublasLtMatrixLayout_t la, lb, ld;
  cublasCheck(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, transA ? k : m, transA ? m : k, transA ? k : m));
  cublasCheck(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, transB ? n : k, transB ? k : n, transB ? n : k));
  cublasCheck(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, m, n, m));
  cublasLtMatmulPreference_t pref;
  cublasCheck(cublasLtMatmulPreferenceCreate(&pref));
  size_t workspace = 0;
  cublasCheck(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                   sizeof(workspace)));
  cublasLtMatmulHeuristicResult_t heuristic;
  int found = 0;
  cublasCheck(cublasLtMatmulAlgoGetHeuristic(cublaslt_handle, desc, la, lb, ld, ld, pref, 1, &heuristic, &found));
  if (found == 0) {
    printf("No cuBLASLt algorithm: m: %d, n: %d, k: %d\n", m, n, k);
    exit(EXIT_FAILURE);
  }
  const float one = 1.0f, zero = 0.0f;
  cublasCheck(cublasLtMatmul(cublaslt_handle, desc, &one, a, la, b, lb, &zero, d, ld, d, ld, &heuristic.algo, NULL, 0,
                             stream));
  cublasCheck(cublasLtMatmulPreferenceDestroy(pref));
  cublasCheck(cublasLtMatmulDescDestroy(desc));
  cublasCheck(cublasLtMatrixLayoutDestroy(la));
  cublasCheck(cublasLtMatrixLayoutDestroy(lb));
  cublasCheck(cublasLtMatrixLayoutDestroy(ld));
}

// d(loss)/d(out) for loss = 0.5 * sum((out - target)^2) / rows.
template <typename T>
__global__ void mse_grad(T *dout, const T *out, const T *target, int n, float inv_rows) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dout[i] = (T)(((float)out[i] - (float)target[i]) * inv_rows);
}

template <typename T>
__device__ float gelu_backward_one(T x) {
  const float s = 0.7978845608028654f, xf = (float)x;
  const float t = tanhf(s * (xf + 0.044715f * xf * xf * xf));
  return 0.5f * (1.0f + t) + 0.5f * xf * (1.0f - t * t) * s * (1.0f + 3.0f * 0.044715f * xf * xf);
}

template <typename T>
__global__ void gelu_backward(T *dinp, const T *pre_gelu, const T *dout, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    dinp[i] = (T)((float)dout[i] * gelu_backward_one(pre_gelu[i]));
}

template <typename T>
__global__ void sgd(T *param, const T *grad, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) param[i] = (T)((float)param[i] - lr * (float)grad[i]);
}

static float input_value(int rank, int row, int col) { return (float)((rank * 37 + row * 11 + col * 5) % 17) / 8.0f - 1.0f; }
static float target_value(int rank, int row, int col) { return (float)((rank * 3 + row * 7 + col) % 13) / 13.0f; }
static float weight_value(int o, int c) { return (float)((o * 7 + c * 3) % 11) / 22.0f - 0.25f; }

static double gelu_ref(double x) { return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
static double gelu_grad_ref(double x) {
  const double s = 0.7978845608028654, t = tanh(s * (x + 0.044715 * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * s * (1 + 3 * 0.044715 * x * x);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks, local_rank, device_count;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_free(&node);
  cudaCheck(cudaGetDeviceCount(&device_count));
  if (local_rank >= device_count) {
    printf("rank %d: local rank %d but only %d devices\n", rank, local_rank, device_count);
    exit(EXIT_FAILURE);
  }
  cudaCheck(cudaSetDevice(local_rank));
  ncclUniqueId id;
  if (rank == 0) ncclCheck(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  ncclCheck(ncclCommInitRank(&comm, nranks, id, rank));
  cudaStream_t stream;
  cudaCheck(cudaStreamCreate(&stream));
  cublasCheck(cublasLtCreate(&cublaslt_handle));

  std::vector<float> h_inp(BT * C), h_target(BT * OC), h_weight(OC * C), h_bias(OC);
  for (int r = 0; r < BT; r++)
    for (int c = 0; c < C; c++) h_inp[r * C + c] = input_value(rank, r, c);
  for (int r = 0; r < BT; r++)
    for (int o = 0; o < OC; o++) h_target[r * OC + o] = target_value(rank, r, o);
  for (int o = 0; o < OC; o++) {
    h_bias[o] = (float)(o % 5) / 10.0f - 0.2f;
    for (int c = 0; c < C; c++) h_weight[o * C + c] = weight_value(o, c);
  }
  float *inp, *target, *weight, *bias, *out, *pre_gelu, *dout, *dpre, *dweight, *dbias;
  cudaCheck(cudaMalloc(&inp, BT * C * sizeof(float)));
  cudaCheck(cudaMalloc(&target, BT * OC * sizeof(float)));
  cudaCheck(cudaMalloc(&weight, OC * C * sizeof(float)));
  cudaCheck(cudaMalloc(&bias, OC * sizeof(float)));
  cudaCheck(cudaMalloc(&out, BT * OC * sizeof(float)));
  cudaCheck(cudaMalloc(&pre_gelu, BT * OC * sizeof(float)));
  cudaCheck(cudaMalloc(&dout, BT * OC * sizeof(float)));
  cudaCheck(cudaMalloc(&dpre, BT * OC * sizeof(float)));
  cudaCheck(cudaMalloc(&dweight, OC * C * sizeof(float)));
  cudaCheck(cudaMalloc(&dbias, OC * sizeof(float)));
  cudaCheck(cudaMemcpyAsync(inp, h_inp.data(), BT * C * sizeof(float), cudaMemcpyHostToDevice, stream));
  cudaCheck(cudaMemcpyAsync(target, h_target.data(), BT * OC * sizeof(float), cudaMemcpyHostToDevice, stream));
  cudaCheck(cudaMemcpyAsync(weight, h_weight.data(), OC * C * sizeof(float), cudaMemcpyHostToDevice, stream));
  cudaCheck(cudaMemcpyAsync(bias, h_bias.data(), OC * sizeof(float), cudaMemcpyHostToDevice, stream));

  // forward: out^T (OC x BT) = weight (C x OC)^T inp^T (C x BT), + bias, GELU
  matmul_cublaslt(out, weight, inp, bias, OC, BT, C, true, false, CUBLASLT_EPILOGUE_GELU_AUX_BIAS, pre_gelu, stream);
  const int block = 128, n = BT * OC;
  mse_grad<<<(n + block - 1) / block, block, 0, stream>>>(dout, out, target, n, 1.0f / BT);
  cudaCheck(cudaGetLastError());
  gelu_backward<<<4, block, 0, stream>>>(dpre, pre_gelu, dout, n);
  cudaCheck(cudaGetLastError());
  // backward: dweight^T (C x OC) = inp^T (C x BT) dpre (BT x OC), dbias = sum over rows of dpre
  matmul_cublaslt(dweight, inp, dpre, dbias, C, OC, BT, false, true, CUBLASLT_EPILOGUE_BGRADB, NULL, stream);
  ncclCheck(ncclGroupStart());
  ncclCheck(ncclAllReduce(dweight, dweight, OC * C, ncclFloat, ncclAvg, comm, stream));
  ncclCheck(ncclAllReduce(dbias, dbias, OC, ncclFloat, ncclAvg, comm, stream));
  ncclCheck(ncclGroupEnd());
  sgd<<<(OC * C + block - 1) / block, block, 0, stream>>>(weight, dweight, LR, OC * C);
  sgd<<<(OC + block - 1) / block, block, 0, stream>>>(bias, dbias, LR, OC);
  cudaCheck(cudaGetLastError());
  std::vector<float> new_weight(OC * C), new_bias(OC);
  cudaCheck(cudaMemcpyAsync(new_weight.data(), weight, OC * C * sizeof(float), cudaMemcpyDeviceToHost, stream));
  cudaCheck(cudaMemcpyAsync(new_bias.data(), bias, OC * sizeof(float), cudaMemcpyDeviceToHost, stream));
  cudaCheck(cudaStreamSynchronize(stream));

  // The reference: every rank's micro-batch, in double.
  std::vector<double> gw(OC * C, 0.0), gb(OC, 0.0);
  for (int q = 0; q < nranks; q++)
    for (int r = 0; r < BT; r++)
      for (int o = 0; o < OC; o++) {
        double pre = h_bias[o];
        for (int c = 0; c < C; c++) pre += (double)input_value(q, r, c) * h_weight[o * C + c];
        const double g = (gelu_ref(pre) - target_value(q, r, o)) / BT * gelu_grad_ref(pre);
        gb[o] += g / nranks;
        for (int c = 0; c < C; c++) gw[o * C + c] += g * input_value(q, r, c) / nranks;
      }
  int errors = 0;
  double worst = 0;
  for (int i = 0; i < OC * C; i++) {
    const double want = h_weight[i] - LR * gw[i], err = fabs(new_weight[i] - want);
    worst = err > worst ? err : worst;
    errors += err > 1e-5;
  }
  for (int o = 0; o < OC; o++) {
    const double want = h_bias[o] - LR * gb[o], err = fabs(new_bias[o] - want);
    worst = err > worst ? err : worst;
    errors += err > 1e-5;
  }
  printf("trainer_step rank %d/%d (device %d of %d): %d parameters, max error %.2e, %d errors\n", rank, nranks,
         local_rank, device_count, OC * C + OC, worst, errors);

  cudaCheck(cudaFree(inp));
  cudaCheck(cudaFree(target));
  cudaCheck(cudaFree(weight));
  cudaCheck(cudaFree(bias));
  cudaCheck(cudaFree(out));
  cudaCheck(cudaFree(pre_gelu));
  cudaCheck(cudaFree(dout));
  cudaCheck(cudaFree(dpre));
  cudaCheck(cudaFree(dweight));
  cudaCheck(cudaFree(dbias));
  cublasCheck(cublasLtDestroy(cublaslt_handle));
  cudaCheck(cudaStreamDestroy(stream));
  ncclCheck(ncclCommDestroy(comm));
  MPI_Finalize();
  return errors != 0;
}
