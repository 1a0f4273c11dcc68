// bench/host/collectives.cu: ITERS AllReduces of COUNT floats on the host
// backend; prints "us_per_call=T" (rank 0). bench/host-checks.sh runs it with
// the collective checks on and off (COCONET_HOST_CHECK).
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#define NCCL_OK(cmd)                                     \
  do {                                                   \
    if ((cmd) != ncclSuccess) {                          \
      fprintf(stderr, "%s failed\n", #cmd);              \
      return 1;                                          \
    }                                                    \
  } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const size_t count = argc > 1 ? strtoul(argv[1], nullptr, 10) : 1024;
  const int iters = argc > 2 ? atoi(argv[2]) : 1000;
  ncclUniqueId id;
  if (rank == 0) NCCL_OK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  NCCL_OK(ncclCommInitRank(&comm, nranks, id, rank));
  float *x;
  if (cudaMalloc(&x, count * sizeof(float)) != cudaSuccess) return 1;
  cudaMemset(x, 0, count * sizeof(float));
  NCCL_OK(ncclAllReduce(x, x, count, ncclFloat, ncclSum, comm, 0));  // warm-up
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) NCCL_OK(ncclAllReduce(x, x, count, ncclFloat, ncclSum, comm, 0));
  const double t = MPI_Wtime() - t0;
  if (rank == 0) printf("us_per_call=%.2f\n", 1e6 * t / iters);
  NCCL_OK(ncclCommDestroy(comm));
  cudaFree(x);
  MPI_Finalize();
  return 0;
}
