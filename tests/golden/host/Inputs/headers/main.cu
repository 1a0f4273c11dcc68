// A CUDA + NCCL + MPI program whose kernels and launches live in headers
// (headers.test): ops.cuh -> launch.cuh (#pragma once, launches) ->
// kernels.cuh (kernels only) -> sizes.cuh, and add_one.cuh inside a namespace
// block. Each rank fills a vector with rank + 1, the region all-reduces it and
// doubles it, one is added, a block reduction adds it up; rank 0 prints
// COUNT * N * (N + 1) + COUNT.
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>

#include "ops.cuh"
#include "launch.cuh"
#include "sizes.cuh"

namespace extra {
#include "add_one.cuh"
}

#define CHECK(call, ok, what)                                              \
  do {                                                                     \
    if ((call) != (ok)) {                                                  \
      std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, what); \
      std::exit(1);                                                        \
    }                                                                      \
  } while (0)

static void step(float *x, int n, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(doubled) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, stream);
    scale<<<(n + THREADS - 1) / THREADS, THREADS, 0, stream>>>(x, 2.0f, n);
  }
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
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream), cudaSuccess, "cudaStreamCreate");
  float *x, *sum;
  CHECK(cudaMalloc(&x, COUNT * sizeof(float)), cudaSuccess, "cudaMalloc");
  CHECK(cudaMalloc(&sum, sizeof(float)), cudaSuccess, "cudaMalloc");
  fill_and_check(x, rank + 1.0f, COUNT, stream);
  step(x, COUNT, comm, stream);
  extra::launch_add_one(x, COUNT, stream);
  launch_sum(x, sum, COUNT, stream);
  float host = 0;
  CHECK(cudaMemcpyAsync(&host, sum, sizeof host, cudaMemcpyDeviceToHost, stream), cudaSuccess, "cudaMemcpyAsync");
  CHECK(cudaStreamSynchronize(stream), cudaSuccess, "cudaStreamSynchronize");
  if (rank == 0) std::printf("ranks %d total %.1f\n", nranks, host);
  CHECK(cudaFree(x), cudaSuccess, "cudaFree");
  CHECK(cudaFree(sum), cudaSuccess, "cudaFree");
  CHECK(cudaStreamDestroy(stream), cudaSuccess, "cudaStreamDestroy");
  CHECK(ncclCommDestroy(comm), ncclSuccess, "ncclCommDestroy");
  MPI_Finalize();
  return 0;
}
