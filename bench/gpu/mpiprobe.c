/* mpiprobe.c: the MPI calls the examples make, in one process; bench/gpu/run.sh runs
 * it first to see whether the carried Open MPI starts (prints "mpiprobe ok"). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = -1, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  char id[128] = {1};
  MPI_Bcast(id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  double s[2] = {1, 2}, lo[2] = {0, 0};
  MPI_Allreduce(s, lo, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Comm_free(&node);
  MPI_Finalize();
  if (rank == 0 && size == 1 && lo[0] == 1 && lo[1] == 2 && id[0] == 1) {
    printf("mpiprobe ok\n");
    return 0;
  }
  printf("mpiprobe: unexpected rank %d of %d\n", rank, size);
  return 1;
}
