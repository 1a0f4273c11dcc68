// rows_check.cu: a tensor-parallel RMSNorm as inference engines write it (one
// warp per row, the row read at a stride parameter, a null-tested output of
// each row's scale), translated with coconet-cc --target=host and run on MPI
// ranks. `split reorder` runs the kernel on this rank's rows; this program
// checks that the translation computes what the program as written computes,
// and that the run-time checks the translation adds stop it, with the reason,
// where the launch as written would compute something else:
//
//   rows_check ok          every row normalized, compared with a CPU reference
//   rows_check short-grid  a grid that reaches only some rows (rows*32/128,
//                          truncated): coconet_check_rows stops the program
//   rows_check padded      rows read at a stride larger than the row:
//                          coconet_check_stride stops it
//   rows_check no-scale    the row-scale buffer passed as null:
//                          coconet_require_buffer stops it
#include <math.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "programs.h"

#define WARP_SIZE 32

__device__ float warp_sum(float v) {
  for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffff, v, offset);
  return v;
}

// out[row] = in[row] / rms(in[row]) * weight; scale[row] = 1 / rms, when asked for.
__global__ void rmsnorm_warp(float *__restrict__ out, float *__restrict__ scale, const float *__restrict__ in,
                             int in_stride, const float *__restrict__ weight, int rows, int hidden) {
  int lane = threadIdx.x % WARP_SIZE;
  int row = blockIdx.x * (blockDim.x / WARP_SIZE) + threadIdx.x / WARP_SIZE;
  if (row >= rows) return;
  float ss = 0.0f;
  for (int c = lane; c < hidden; c += WARP_SIZE) {
    float x = in[row * in_stride + c];
    ss += x * x;
  }
  ss = warp_sum(ss);
  float s = rsqrtf(ss / hidden + 1e-6f);
  if (lane == 0 && scale != nullptr) scale[row] = s;
  for (int c = lane; c < hidden; c += WARP_SIZE) out[row * hidden + c] = in[row * in_stride + c] * s * weight[c];
}

static void norm_step(float *y, float *out, float *scale, const float *weight, int rows, int hidden, int stride,
                      int grid, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(norm) split reorder replicated(weight) scratch(y)
  {
    NCCL_CHECK(ncclAllReduce(y, y, (size_t)rows * hidden, ncclFloat, ncclSum, comm, stream));
    rmsnorm_warp<<<grid, 128, 0, stream>>>(out, scale, y, stride, weight, rows, hidden);
  }
}


int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const char *mode = argc > 1 ? argv[1] : "ok";
  const int rows = 37, hidden = 96;  // rows do not divide by 2, 3 or 4 ranks
  const int stride = strcmp(mode, "padded") == 0 ? hidden + 8 : hidden;
  const int grid = strcmp(mode, "short-grid") == 0 ? rows * WARP_SIZE / 128 : (rows * WARP_SIZE + 127) / 128;
  const size_t n = (size_t)rows * stride;

  ncclUniqueId id;
  if (rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  NCCL_CHECK(ncclCommInitRank(&comm, nranks, id, rank));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));

  std::vector<float> h_y(n), h_w(hidden);
  for (size_t k = 0; k < n; k++) h_y[k] = input(k, rank);
  for (int c = 0; c < hidden; c++) h_w[c] = 0.5f + (float)(c % 7) / 8.0f;
  float *y, *out, *scale, *weight;
  CUDA_CHECK(cudaMalloc(&y, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&out, (size_t)rows * hidden * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&scale, rows * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&weight, hidden * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(y, h_y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(weight, h_w.data(), hidden * sizeof(float), cudaMemcpyHostToDevice));

  norm_step(y, out, strcmp(mode, "no-scale") == 0 ? nullptr : scale, weight, rows, hidden, stride, grid, comm,
            stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  std::vector<float> h_out((size_t)rows * hidden), h_scale(rows);
  CUDA_CHECK(cudaMemcpy(h_out.data(), out, h_out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(h_scale.data(), scale, rows * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int r = 0; r < rows; r++) {
    double ss = 0;
    std::vector<double> x(hidden);
    for (int c = 0; c < hidden; c++) {
      x[c] = 0;
      for (int q = 0; q < nranks; q++) x[c] += input((size_t)r * stride + c, q);
      ss += x[c] * x[c];
    }
    double s = 1.0 / sqrt(ss / hidden + 1e-6);
    if (fabs(h_scale[r] - s) > 1e-5 * s) bad++;
    for (int c = 0; c < hidden; c++) {
      double want = x[c] * s * h_w[c];
      if (fabs(h_out[(size_t)r * hidden + c] - want) > 1e-5 * (fabs(want) + 1)) bad++;
    }
  }
  if (bad) fprintf(stderr, "rows_check: rank %d: %d values differ from the reference\n", rank, bad);
  else if (rank == 0) printf("rows_check: %s: %d ranks, %d rows of %d: ok\n", mode, nranks, rows, hidden);

  CUDA_CHECK(cudaFree(y));
  CUDA_CHECK(cudaFree(out));
  CUDA_CHECK(cudaFree(scale));
  CUDA_CHECK(cudaFree(weight));
  CUDA_CHECK(cudaStreamDestroy(stream));
  NCCL_CHECK(ncclCommDestroy(comm));
  MPI_Finalize();
  return bad ? 1 : 0;
}
