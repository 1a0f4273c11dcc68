// clause_check.cu: a momentum-SGD step (split reorder scratch(g) shard(mom)
// replicated(w)) translated with coconet-cc --target=host and run on MPI ranks
// with COCONET_CHECK=clauses, which checks the clauses at run time: the
// region's replicated buffers are compared across ranks at its top, and what
// shard and scratch leave without a value is poisoned (NaN) after it.
//
//   clause_check ok            the clauses hold: every rank agrees with a CPU reference
//   clause_check differ        rank 1's w differs: replicated(w) is false, the check stops it
//   clause_check read-scratch  the program reads g after the region (scratch(g) is false): NaN
//   clause_check read-shard    the program reads another rank's mom (shard(mom) is false): NaN
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "programs.h"

__global__ void momentum(float *w, const float *g, float *mom, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    mom[i] = 0.9f * mom[i] + g[i];
    w[i] -= lr * mom[i];
  }
}

static void step(float *w, float *g, float *mom, float lr, int n, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(sgd) split reorder scratch(g) shard(mom) replicated(w)
  {
    NCCL_CHECK(ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream));
    momentum<<<(n + 255) / 256, 256, 0, stream>>>(w, g, mom, lr, n);
  }
}

int main(int argc, char **argv) {
  int rank, nranks;
  ncclComm_t comm;
  cudaStream_t stream;
  program_start(&argc, &argv, &rank, &nranks, &comm, &stream);
  const char *mode = argc > 1 ? argv[1] : "ok";
  const int n = 1001;  // does not divide by 2, 3 or 4 ranks

  std::vector<float> h_w(n), h_g(n), h_m(n, 0.0f);
  for (int k = 0; k < n; k++) {
    h_w[k] = 0.25f * (float)(k % 13) + (strcmp(mode, "differ") == 0 && rank == 1 ? 1.0f : 0.0f);
    h_g[k] = input(k, rank);
  }
  float *w, *g, *mom;
  CUDA_CHECK(cudaMalloc(&w, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&g, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&mom, n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(w, h_w.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(g, h_g.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(mom, h_m.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  step(w, g, mom, 0.5f, n, comm, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  int bad = 0;
  if (strcmp(mode, "read-scratch") == 0 || strcmp(mode, "read-shard") == 0) {
    // Element 0 is rank 0's; every rank past 0 reads it, which the clause says it may not.
    float x;
    CUDA_CHECK(cudaMemcpy(&x, strcmp(mode, "read-scratch") == 0 ? g : mom, sizeof x, cudaMemcpyDeviceToHost));
    if (rank == nranks - 1)
      printf("clause_check: %s: rank %d reads %s[0] after the region: %s\n", mode, rank,
             strcmp(mode, "read-scratch") == 0 ? "g" : "mom", isnan(x) ? "NaN (poisoned)" : "a number");
  } else {
    std::vector<float> out(n);
    CUDA_CHECK(cudaMemcpy(out.data(), w, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int k = 0; k < n; k++) {
      double sum = 0;
      for (int q = 0; q < nranks; q++) sum += input(k, q);
      double want = h_w[k] - 0.5 * sum;
      if (fabs(out[k] - want) > 1e-5 * (fabs(want) + 1)) bad++;
    }
    if (bad) fprintf(stderr, "clause_check: rank %d: %d values differ from the reference\n", rank, bad);
    else if (rank == 0) printf("clause_check: %s: %d ranks: ok\n", mode, nranks);
  }

  CUDA_CHECK(cudaFree(w));
  CUDA_CHECK(cudaFree(g));
  CUDA_CHECK(cudaFree(mom));
  program_end(comm, stream);
  return bad ? 1 : 0;
}
