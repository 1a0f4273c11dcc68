/* mpi_stub.c: a one-process stand-in for Open MPI's libmpi.so.40, used by
 * bench/gpu/run.sh only when the carried Open MPI cannot start a singleton on the GPU
 * machine. It serves the calls the examples make with one process: the world has one
 * rank, collectives copy (or do nothing in place), MPI_Abort exits. Open MPI's
 * predefined objects (MPI_COMM_WORLD is &ompi_mpi_comm_world, ...) are defined, with
 * libmpi's sizes, in mpi_stub_data.c, which prepare.sh generates from `nm` of libmpi.
 * Built against Open MPI's mpi.h, so the programs need no rebuild. */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int initialized, finalized;

static size_t type_size(MPI_Datatype t) {
  if (t == MPI_BYTE || t == MPI_CHAR || t == MPI_SIGNED_CHAR || t == MPI_UNSIGNED_CHAR || t == MPI_INT8_T ||
      t == MPI_UINT8_T || t == MPI_C_BOOL)
    return 1;
  if (t == MPI_SHORT || t == MPI_UNSIGNED_SHORT || t == MPI_INT16_T || t == MPI_UINT16_T) return 2;
  if (t == MPI_INT || t == MPI_UNSIGNED || t == MPI_FLOAT || t == MPI_INT32_T || t == MPI_UINT32_T) return 4;
  if (t == MPI_LONG || t == MPI_UNSIGNED_LONG || t == MPI_LONG_LONG || t == MPI_UNSIGNED_LONG_LONG ||
      t == MPI_DOUBLE || t == MPI_INT64_T || t == MPI_UINT64_T || t == MPI_AINT || t == MPI_OFFSET ||
      t == MPI_COUNT)
    return 8;
  if (t == MPI_LONG_DOUBLE) return 16;
  fprintf(stderr, "mpi_stub: unsupported datatype\n");
  exit(1);
}

static int copy(const void *s, void *r, int count, MPI_Datatype t) {
  if (s != MPI_IN_PLACE && s != r && count > 0) memmove(r, s, (size_t)count * type_size(t));
  return MPI_SUCCESS;
}

int MPI_Init(int *argc, char ***argv) { (void)argc; (void)argv; initialized = 1; return MPI_SUCCESS; }
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  (void)argc; (void)argv;
  *provided = required;
  initialized = 1;
  return MPI_SUCCESS;
}
int MPI_Initialized(int *flag) { *flag = initialized; return MPI_SUCCESS; }
int MPI_Finalized(int *flag) { *flag = finalized; return MPI_SUCCESS; }
int MPI_Finalize(void) { finalized = 1; return MPI_SUCCESS; }
int MPI_Abort(MPI_Comm comm, int code) { (void)comm; fprintf(stderr, "mpi_stub: MPI_Abort(%d)\n", code); exit(code ? code : 1); }
int MPI_Comm_rank(MPI_Comm comm, int *rank) { (void)comm; *rank = 0; return MPI_SUCCESS; }
int MPI_Comm_size(MPI_Comm comm, int *size) { (void)comm; *size = 1; return MPI_SUCCESS; }
int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out) {
  (void)type; (void)key; (void)info;
  *out = comm;
  return MPI_SUCCESS;
}
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out) { (void)color; (void)key; *out = comm; return MPI_SUCCESS; }
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out) { *out = comm; return MPI_SUCCESS; }
int MPI_Comm_free(MPI_Comm *comm) { *comm = MPI_COMM_NULL; return MPI_SUCCESS; }
int MPI_Error_string(int code, char *s, int *len) { *len = snprintf(s, MPI_MAX_ERROR_STRING, "MPI error %d", code); return MPI_SUCCESS; }
int MPI_Barrier(MPI_Comm comm) { (void)comm; return MPI_SUCCESS; }
int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm comm) { (void)b; (void)n; (void)t; (void)root; (void)comm; return MPI_SUCCESS; }
int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm) { (void)op; (void)comm; return copy(s, r, n, t); }
int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm) { (void)op; (void)root; (void)comm; return copy(s, r, n, t); }
int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm comm) { (void)rn; (void)rt; (void)comm; return copy(s, r, sn, st); }
int MPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root, MPI_Comm comm) { (void)rn; (void)rt; (void)root; (void)comm; return copy(s, r, sn, st); }
double MPI_Wtime(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
