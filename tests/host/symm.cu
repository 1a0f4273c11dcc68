// Host backend: symmetric memory.  ncclMemAlloc + ncclCommWindowRegister give
// every rank the others' buffers through coconet_host_peer_ptr: loads,
// stores, kernels reading all peers (as fused kernels do) and atomics that
// several ranks apply concurrently to one counter.
#include <dirent.h>
#include <fcntl.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

__global__ void sum_peers(float *const *peers, int nranks, float *out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0;
  for (int r = 0; r < nranks; ++r) s += peers[r][i];
  out[i] = s;
}

__global__ void count_up(unsigned long long *counter) { atomicAdd(counter, 1ull); }

// Shared-memory segments of this process still named in /dev/shm.
static int leftover_segments(void) {
  char prefix[64];
  snprintf(prefix, sizeof prefix, "coconet-host.%d.", (int)getpid());
  int n = 0;
  DIR *d = opendir("/dev/shm");
  if (!d) return 0;
  while (struct dirent *e = readdir(d)) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
  closedir(d);
  return n;
}

// Segments named for this pid before it allocated any were left by an earlier
// process that had this pid and died (a killed program): not this test's to count.
static void remove_stale_segments(void) {
  char prefix[64];
  snprintf(prefix, sizeof prefix, "coconet-host.%d.", (int)getpid());
  DIR *d = opendir("/dev/shm");
  if (!d) return;
  while (struct dirent *e = readdir(d))
    if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
      char path[300];
      snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
      unlink(path);
    }
  closedir(d);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  remove_stale_segments();
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  ncclUniqueId id;
  if (rank == 0) ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  CHECK(ncclCommInitRank(&comm, nranks, id, rank) == ncclSuccess);

  // A segment a killed process with this pid left behind has the name the
  // first allocation takes: it is stale, and the allocation replaces it.
  char stale[64];
  snprintf(stale, sizeof stale, "/coconet-host.%d.0", (int)getpid());
  const int stale_fd = shm_open(stale, O_CREAT | O_EXCL | O_RDWR, 0600);
  CHECK(stale_fd >= 0);
  if (stale_fd >= 0) close(stale_fd);

  const int n = 1000;
  float *buf;
  unsigned long long *counter;
  CHECK(ncclMemAlloc((void **)&buf, n * sizeof(float)) == ncclSuccess);
  CHECK(ncclMemAlloc((void **)&counter, sizeof *counter) == ncclSuccess);
  ncclWindow_t win, sub, count_win;
  CHECK(ncclCommWindowRegister(comm, buf, n * sizeof(float), &win, NCCL_WIN_COLL_SYMMETRIC) == ncclSuccess);
  CHECK(ncclCommWindowRegister(comm, buf + 256, 100 * sizeof(float), &sub, NCCL_WIN_DEFAULT) == ncclSuccess);
  CHECK(ncclCommWindowRegister(comm, counter, sizeof *counter, &count_win, NCCL_WIN_DEFAULT) == ncclSuccess);
  for (int i = 0; i < n; ++i) buf[i] = (float)(rank * 10000 + i);
  *counter = 0;
  MPI_Barrier(MPI_COMM_WORLD);

  // Loads from every peer, through the whole window and a sub-window.
  int bad = 0;
  for (int p = 0; p < nranks; ++p) {
    bad += *(float *)coconet_host_peer_ptr(comm, buf + 5, p) != (float)(p * 10000 + 5);
    bad += *(float *)coconet_host_peer_ptr(comm, buf + 259, p) != (float)(p * 10000 + 259);
  }
  CHECK(bad == 0);
  CHECK(coconet_host_peer_ptr(comm, buf + 7, rank) == buf + 7);

  // A kernel that reads all peers' buffers.
  float **peers, *out;
  cudaMallocManaged(&peers, nranks * sizeof(float *));
  cudaMallocManaged(&out, n * sizeof(float));
  for (int p = 0; p < nranks; ++p) peers[p] = (float *)coconet_host_peer_ptr(comm, buf, p);
  coconet_host_launch(COCONET_HOST_SIMPLE, sum_peers, (n + 127) / 128, 128, 0, 0, peers, nranks, out, n);
  bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != (float)(10000 * nranks * (nranks - 1) / 2 + nranks * i);
  CHECK(bad == 0);
  MPI_Barrier(MPI_COMM_WORLD);

  // Stores into peers: rank r writes r into slot r at the end of every buffer.
  for (int p = 0; p < nranks; ++p) *(float *)coconet_host_peer_ptr(comm, buf + n - nranks + rank, p) = (float)rank;
  // Atomics from every rank at once on rank 0's counter.
  unsigned long long *remote = (unsigned long long *)coconet_host_peer_ptr(comm, counter, 0);
  coconet_host_launch(COCONET_HOST_SIMPLE, count_up, 4, 256, 0, 0, remote);
  MPI_Barrier(MPI_COMM_WORLD);
  bad = 0;
  for (int r = 0; r < nranks; ++r) bad += buf[n - nranks + r] != (float)r;
  CHECK(bad == 0);
  if (rank == 0) CHECK_MSG(*counter == 1024ull * nranks, "counter %llu", *counter);
  MPI_Barrier(MPI_COMM_WORLD);

  CHECK(ncclCommWindowDeregister(comm, sub) == ncclSuccess);
  CHECK(ncclCommWindowDeregister(comm, sub) == ncclInvalidArgument);
  CHECK(ncclCommWindowDeregister(comm, win) == ncclSuccess);
  CHECK(ncclMemFree(buf) == ncclSuccess);
  CHECK(ncclMemFree(out) == ncclInvalidArgument);
  CHECK(leftover_segments() == 1);
  CHECK(ncclCommDestroy(comm) == ncclSuccess);  // also releases count_win
  CHECK(ncclMemFree(counter) == ncclSuccess);
  CHECK(leftover_segments() == 0);
  cudaFree(peers);
  cudaFree(out);

  int failures = check_failures, checks = check_count, all_failures = 0, all_checks = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&checks, &all_checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("host symmetric memory, %d ranks: %d checks, %d failed\n", nranks, all_checks, all_failures);
  MPI_Finalize();
  return failures != 0;
}
