// A launcher that picks its kernel by a value that differs between ranks (here
// the rank itself): the schedule's ranks would run different collectives. The
// translation cannot know the value; a run with COCONET_CHECK=clauses stops at
// the region's top with the region, the launcher and the rank, before any
// collective. With the value the same on every rank it runs to the end.
// REQUIRES: host-runtime
// RUN: rm -rf %t && mkdir -p %t
// RUN: %coconet-cc --target=host -O1 %mpiflags %s -o %t/path -lnccl $(mpicxx --showme:link)
// RUN: env LSAN_OPTIONS=suppressions=%root/runtime/host/lsan.supp:fast_unwind_on_malloc=0:print_suppressions=0 COCONET_CHECK=clauses mpirun --allow-run-as-root --oversubscribe -np 2 %t/path 1 | %FileCheck --check-prefix=SAME %s
// RUN: env LSAN_OPTIONS=suppressions=%root/runtime/host/lsan.supp:fast_unwind_on_malloc=0:print_suppressions=0 COCONET_CHECK=clauses %not mpirun --allow-run-as-root --oversubscribe -np 2 %t/path 0 2>&1 | %FileCheck --check-prefix=DIFFER %s
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

__global__ void sgd(float *w, const float *g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i];
}

__global__ void sgd_twice(float *w, const float *g, float lr, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) w[i] -= 2.0f * lr * g[i];
}

void launch(float *w, const float *g, float lr, int n, int mode, cudaStream_t s) {
  if (mode == 0) {
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr, n);
    return;
  }
  sgd_twice<<<4, 128, 0, s>>>(w, g, lr, n);
}

void step(float *w, float *g, float lr, int n, int mode, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(step) split reorder replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    launch(w, g, lr, n, mode, s);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  bool same = argc > 1 && atoi(argv[1]) == 1;
  ncclUniqueId id;
  if (rank == 0) ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  ncclCommInitRank(&comm, nranks, id, rank);
  cudaStream_t s;
  cudaStreamCreate(&s);
  const int n = 1000;
  float *w, *g;
  cudaMallocManaged(&w, n * sizeof(float));
  cudaMallocManaged(&g, n * sizeof(float));
  for (int i = 0; i < n; i++) w[i] = 1.0f, g[i] = 1.0f;
  step(w, g, 0.5f, n, same ? 0 : rank, comm, s);
  cudaStreamSynchronize(s);
  if (rank == 0) printf("w[0] %.1f\n", w[0]);
  cudaFree(w);
  cudaFree(g);
  cudaStreamDestroy(s);
  ncclCommDestroy(comm);
  MPI_Finalize();
  return 0;
}
// SAME: w[0] 0.0
// DIFFER: path-check.cu:{{[0-9]+}}: COCONET_CHECK=clauses: region 'step': 'launch' picks its kernel at run time, and rank {{[01]}} of 2 {{(takes|does not take)}} the path the schedule is for
