// programs.h: what the translated host-backend test programs (alias_check.cu,
// clause_check.cu, rows_check.cu) share: checks that stop every rank with the
// call and its error, NCCL's communicator over MPI_COMM_WORLD with a stream,
// and the ranks' inputs.
#ifndef COCONET_TEST_PROGRAMS_H
#define COCONET_TEST_PROGRAMS_H

#include <mpi.h>
#include <nccl.h>
#include <stdio.h>

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

// MPI, then NCCL's communicator over MPI_COMM_WORLD and a stream.
static void program_start(int *argc, char ***argv, int *rank, int *nranks, ncclComm_t *comm, cudaStream_t *stream) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, nranks);
  ncclUniqueId id;
  if (*rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  NCCL_CHECK(ncclCommInitRank(comm, *nranks, id, *rank));
  CUDA_CHECK(cudaStreamCreate(stream));
}

static void program_end(ncclComm_t comm, cudaStream_t stream) {
  CUDA_CHECK(cudaStreamDestroy(stream));
  NCCL_CHECK(ncclCommDestroy(comm));
  MPI_Finalize();
}

// Rank r's input: element k is (k % 97 - 48) / 16 + r, exact in float.
static float input(size_t k, int rank) { return (float)((int)(k % 97) - 48) / 16.0f + (float)rank; }

#endif
