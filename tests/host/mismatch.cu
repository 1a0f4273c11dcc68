// Host backend: distributed mistakes that hang or give garbage on GPUs must
// end the job with a report naming every rank's call (mismatch.sh runs each
// case on 2 ranks and checks the exit status and the report).
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(cmd)                                                            \
  do {                                                                        \
    if ((cmd) != cudaSuccess) {                                               \
      fprintf(stderr, "%s failed\n", #cmd);                                   \
      exit(2);                                                                \
    }                                                                         \
  } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const char *what = argc > 1 ? argv[1] : "";
  ncclUniqueId id;
  if (rank == 0) ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  if (ncclCommInitRank(&comm, nranks, id, rank) != ncclSuccess) return 2;
  const size_t n = 1000;
  float *x;
  CHECK(cudaMalloc(&x, n * nranks * sizeof(float)));
  CHECK(cudaMemset(x, 0, n * nranks * sizeof(float)));
  ncclResult_t r = ncclSuccess;
  // A call every rank makes the same way first: the mismatch is the second call.
  if (ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, 0) != ncclSuccess) return 2;
  if (strcmp(what, "kind") == 0) {
    if (rank == 0) r = ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, 0);
    else r = ncclReduceScatter(x, x, n / 2, ncclFloat, ncclSum, comm, 0);
  } else if (strcmp(what, "allgather") == 0) {
    if (rank == 0) r = ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, 0);
    else r = ncclAllGather(x, x + n, n, ncclFloat, comm, 0);
  } else if (strcmp(what, "count") == 0) {
    r = ncclAllReduce(x, x, rank == 0 ? 1000 : 500, ncclFloat, ncclSum, comm, 0);
  } else if (strcmp(what, "dtype") == 0) {
    r = ncclAllReduce(x, x, n, rank == 0 ? ncclFloat : ncclInt32, ncclSum, comm, 0);
  } else if (strcmp(what, "op") == 0) {
    r = ncclAllReduce(x, x, n, ncclFloat, rank == 0 ? ncclSum : ncclMax, comm, 0);
  } else if (strcmp(what, "root") == 0) {
    r = ncclBroadcast(x, x, n, ncclFloat, rank == 0 ? 0 : 1, comm, 0);
  } else if (strcmp(what, "group") == 0) {
    ncclGroupStart();
    if (rank == 0) {
      ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, 0);
      ncclAllGather(x, x + n, n, ncclFloat, comm, 0);
    } else {
      ncclAllGather(x, x + n, n, ncclFloat, comm, 0);
      ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, 0);
    }
    r = ncclGroupEnd();
  } else if (strcmp(what, "group3") == 0) {  // longer groups: the third call differs
    ncclGroupStart();
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, 0);
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, 0);
    ncclAllReduce(x, x, rank == 0 ? 10 : 20, ncclFloat, ncclSum, comm, 0);
    r = ncclGroupEnd();
  } else if (strcmp(what, "long-group") == 0) {  // 20 small calls against one carried 4 KiB call
    ncclGroupStart();
    for (int k = 0; k < (rank == 0 ? 20 : 0); ++k) ncclAllReduce(x, x, 10, ncclFloat, ncclSum, comm, 0);
    if (rank == 1) ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, 0);
    r = ncclGroupEnd();
  } else if (strcmp(what, "group3-same") == 0) {
    ncclGroupStart();
    for (int k = 0; k < 3; ++k) ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, 0);
    r = ncclGroupEnd();
  } else if (strcmp(what, "skip") == 0) {
    if (rank == 0) r = ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, 0);
  } else if (strcmp(what, "late") == 0) {  // rank 1 is busy elsewhere for longer than COCONET_HOST_TIMEOUT
    if (rank == 1) sleep(60);
    r = ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, 0);
  } else if (strcmp(what, "unmatched-send") == 0) {
    if (rank == 0) r = ncclSend(x, n, ncclFloat, 1, comm, 0);
  } else if (strcmp(what, "p2p-count") == 0 || strcmp(what, "p2p-dtype") == 0) {
    const bool count = what[4] == 'c';
    if (rank == 0) r = ncclSend(x, n, ncclFloat, 1, comm, 0);
    else r = ncclRecv(x, count ? n / 2 : n, count ? ncclFloat : ncclInt32, 0, comm, 0);
  } else if (strcmp(what, "p2p-peer") == 0) {  // rank 1 waits for a send from itself; rank 0's goes unreceived
    // Rank 0 then stays out of the communicator past the timeout, so that the report is
    // rank 1's whatever the load (its own wait in ncclCommDestroy would time out too).
    if (rank == 0) r = ncclSend(x, n, ncclFloat, 1, comm, 0);
    else r = ncclRecv(x, n, ncclFloat, 1, comm, 0);
    if (rank == 0) sleep(60);
  } else if (strcmp(what, "p2p-same") == 0) {  // an exchange in a group, then a second pair: must pass
    const int peer = 1 - rank;
    ncclGroupStart();
    ncclSend(x, n, ncclFloat, peer, comm, 0);
    ncclRecv(x + n, n, ncclFloat, peer, comm, 0);
    r = ncclGroupEnd();
    if (r == ncclSuccess && rank == 0) r = ncclSend(x, 10, ncclInt32, 1, comm, 0);
    if (r == ncclSuccess && rank == 1) r = ncclRecv(x, 10, ncclInt32, 0, comm, 0);
  } else if (strcmp(what, "p2p-continue") == 0) {  // with COCONET_HOST_ON_ERROR=continue
    if (rank == 0) r = ncclSend(x, n, ncclFloat, 1, comm, 0);
    else r = ncclRecv(x, n / 2, ncclFloat, 0, comm, 0);
    if (r != (rank == 1 ? ncclInvalidUsage : ncclSuccess)) {
      fprintf(stderr, "rank %d: the send/recv returned %d\n", rank, (int)r);
      return 1;
    }
    // The communicator still works, and nothing of the mismatched send is left.
    r = ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, 0);
    if (r == ncclSuccess) printf("rank %d: continued after the send/recv mismatch\n", rank);
  } else if (strcmp(what, "continue") == 0) {  // with COCONET_HOST_ON_ERROR=continue
    r = ncclAllReduce(x, x, rank == 0 ? 1000 : 500, ncclFloat, ncclSum, comm, 0);
    if (r != ncclInvalidUsage) {
      fprintf(stderr, "rank %d: the mismatched call returned %d, not ncclInvalidUsage\n", rank, (int)r);
      return 1;
    }
    // The communicator still works.
    r = ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, 0);
    if (r == ncclSuccess) printf("rank %d: continued after ncclInvalidUsage\n", rank);
  } else if (strcmp(what, "same") == 0) {  // nothing wrong: must pass
    r = ncclReduceScatter(x, x, n / 2, ncclFloat, ncclSum, comm, 0);
  }
  ncclCommDestroy(comm);
  cudaFree(x);
  MPI_Finalize();
  return r == ncclSuccess ? 0 : 1;
}
