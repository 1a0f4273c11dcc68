// alias_check.cu: a bias added after a tensor-parallel AllReduce, the bias read
// at [i % h], translated with coconet-cc --target=host and run on MPI ranks.
// `split reorder` runs the kernel on this rank's slice of the reduced buffer,
// so a bias that is part of that buffer would be read before other ranks'
// slices are reduced; the translation tests at run time that the buffers are
// apart and runs the region as written when they are not. Each mode is compared
// with a CPU reference:
//
//   alias_check apart        bias a buffer of its own
//   alias_check caller       the caller passes the reduced buffer as the bias
//   alias_check local        the function points a local at it (`b = y`)
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "programs.h"

__global__ void add_bias(float *out, const float *x, const float *bias, int n, int h) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + bias[i % h];
}

static void bias_step(float *y, float *out, const float *bias, bool local, int n, int h, ncclComm_t comm,
                      cudaStream_t stream) {
  const float *b = local ? y : bias;
#pragma coconet region name(bias) split reorder replicated(b) scratch(y)
  {
    NCCL_CHECK(ncclAllReduce(y, y, n, ncclFloat, ncclSum, comm, stream));
    add_bias<<<(n + 255) / 256, 256, 0, stream>>>(out, y, b, n, h);
  }
}

int main(int argc, char **argv) {
  int rank, nranks;
  ncclComm_t comm;
  cudaStream_t stream;
  program_start(&argc, &argv, &rank, &nranks, &comm, &stream);
  const char *mode = argc > 1 ? argv[1] : "apart";
  const int n = 1001, h = 24;  // n does not divide by 2, 3 or 4 ranks
  const bool caller = strcmp(mode, "caller") == 0, local = strcmp(mode, "local") == 0;

  std::vector<float> h_y(n), h_b(h);
  for (int k = 0; k < n; k++) h_y[k] = input(k, rank);
  for (int c = 0; c < h; c++) h_b[c] = 0.5f + (float)(c % 7) / 8.0f;
  float *y, *out, *bias;
  CUDA_CHECK(cudaMalloc(&y, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&out, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&bias, h * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(y, h_y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(bias, h_b.data(), h * sizeof(float), cudaMemcpyHostToDevice));

  bias_step(y, out, caller ? y : bias, local, n, h, comm, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  std::vector<float> h_out(n);
  CUDA_CHECK(cudaMemcpy(h_out.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int k = 0; k < n; k++) {
    double sum = 0, at = 0;
    for (int q = 0; q < nranks; q++) sum += input(k, q), at += input(k % h, q);
    double want = sum + (caller || local ? at : h_b[k % h]);
    if (fabs(h_out[k] - want) > 1e-5 * (fabs(want) + 1)) bad++;
  }
  if (bad) fprintf(stderr, "alias_check: rank %d: %s: %d values differ from the reference\n", rank, mode, bad);
  else if (rank == 0) printf("alias_check: %s: %d ranks: ok\n", mode, nranks);

  CUDA_CHECK(cudaFree(y));
  CUDA_CHECK(cudaFree(out));
  CUDA_CHECK(cudaFree(bias));
  program_end(comm, stream);
  return bad ? 1 : 0;
}
