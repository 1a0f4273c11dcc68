// What a project's NCCL function runs besides its collective (its debug log
// lines, a trait that logs, a counter of its calls) runs in the scheduled
// program as in the program as written: once per call, in the order written.
// The program is built as written (--schedule=none) and scheduled, run with
// the log on under mpirun -np 2, and rank 0's lines compared: they differ only
// in __PRETTY_FUNCTION__, which in the schedule names coconet's copy (the
// translation warns; __func__ is the function's own name in both). The logger's
// constructor is in another file: a singleton's, run once, which coconet takes to
// change nothing the region computes with.
// REQUIRES: host-runtime
// RUN: rm -rf %t && mkdir -p %t
// RUN: %coconet-cc --target=host --coconet-flags=--schedule=none -O1 %mpiflags %s %S/Inputs/beside-logger.cpp -o %t/written -lnccl $(mpicxx --showme:link)
// RUN: %coconet-cc --target=host --keep=%t/keep -O1 %mpiflags %s %S/Inputs/beside-logger.cpp -o %t/scheduled -lnccl $(mpicxx --showme:link) 2>&1 | %FileCheck --check-prefix=WARN %s
// RUN: %FileCheck --check-prefix=CODE %s < %t/keep/beside-logs.cu
// RUN: env ENGINE_LOG=debug LSAN_OPTIONS=suppressions=%root/runtime/host/lsan.supp:fast_unwind_on_malloc=0:print_suppressions=0 mpirun --allow-run-as-root --oversubscribe -np 2 %t/written > %t/written.txt
// RUN: env ENGINE_LOG=debug LSAN_OPTIONS=suppressions=%root/runtime/host/lsan.supp:fast_unwind_on_malloc=0:print_suppressions=0 mpirun --allow-run-as-root --oversubscribe -np 2 %t/scheduled > %t/scheduled.txt
// RUN: %FileCheck --check-prefix=WRITTEN %s < %t/written.txt
// RUN: %FileCheck --check-prefix=SCHEDULED %s < %t/scheduled.txt
// RUN: grep -v pretty %t/written.txt > %t/written.rest && grep -v pretty %t/scheduled.txt > %t/scheduled.rest
// RUN: diff %t/written.rest %t/scheduled.rest
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "Inputs/beside-log.h"

#define CHECK(call, ok, what)                                              \
  do {                                                                     \
    if ((call) != (ok)) {                                                  \
      std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, what); \
      std::exit(1);                                                        \
    }                                                                      \
  } while (0)
#define NCCLCHECK(cmd) CHECK(cmd, ncclSuccess, #cmd)

namespace engine {

static int g_calls = 0;
static void count_call(const char *what) { ENGINE_DEBUG("%s call %d", what, ++g_calls); }

template <typename T>
ncclDataType_t nccl_type() {
  ENGINE_DEBUG("nccl_type");
  return ncclFloat;
}

template <typename T>
void all_reduce_sum(T *buf, int n, ncclComm_t comm, cudaStream_t s) {
  ENGINE_DEBUG("all_reduce_sum start");
  ENGINE_DEBUG("pretty %s", __PRETTY_FUNCTION__);
  ncclDataType_t type = nccl_type<T>();
  NCCLCHECK(ncclAllReduce(buf, buf, n, type, ncclSum, comm, s));
  ENGINE_DEBUG("%s stop", __func__);
  count_call("all_reduce_sum");
}

}  // namespace engine

__global__ void fill(float *x, float value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = value + i % 7;
}

__global__ void add_bias(float *x, const float *bias, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.5f + bias[i];
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  engine::g_rank = rank;
  ncclUniqueId id;
  if (rank == 0) CHECK(ncclGetUniqueId(&id), ncclSuccess, "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  CHECK(ncclCommInitRank(&comm, nranks, id, rank), ncclSuccess, "ncclCommInitRank");
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream), cudaSuccess, "cudaStreamCreate");
  const int n = 1000;
  float *x, *bias;
  CHECK(cudaMalloc(&x, n * sizeof(float)), cudaSuccess, "cudaMalloc");
  CHECK(cudaMalloc(&bias, n * sizeof(float)), cudaSuccess, "cudaMalloc");
  fill<<<(n + 255) / 256, 256, 0, stream>>>(x, rank + 1.0f, n);
  fill<<<(n + 255) / 256, 256, 0, stream>>>(bias, 0.25f, n);
  for (int step = 0; step < 2; step++) {
    ENGINE_DEBUG("step %d", step);
#pragma coconet region name(step) split reorder replicated(bias)
    {
      engine::all_reduce_sum(x, n, comm, stream);
      add_bias<<<(n + 255) / 256, 256, 0, stream>>>(x, bias, n);
    }
  }
  float *host = (float *)malloc(n * sizeof(float));
  CHECK(cudaMemcpyAsync(host, x, n * sizeof(float), cudaMemcpyDeviceToHost, stream), cudaSuccess, "cudaMemcpyAsync");
  CHECK(cudaStreamSynchronize(stream), cudaSuccess, "cudaStreamSynchronize");
  double sum = 0;
  for (int i = 0; i < n; i++) sum += host[i];
  ENGINE_DEBUG("sum %.3f", sum);
  free(host);
  CHECK(cudaFree(x), cudaSuccess, "cudaFree");
  CHECK(cudaFree(bias), cudaSuccess, "cudaFree");
  CHECK(cudaStreamDestroy(stream), cudaSuccess, "cudaStreamDestroy");
  CHECK(ncclCommDestroy(comm), ncclSuccess, "ncclCommDestroy");
  MPI_Finalize();
  return 0;
}

// WARN: warning: region 'step': 'all_reduce_sum<float>' runs statements besides its ncclAllReduce that read __PRETTY_FUNCTION__
// CODE: // coconet: region step runs what 'all_reduce_sum<float>'
// CODE: namespace engine {
// CODE-NEXT: namespace coconet_step_1 {
// CODE-NEXT: typedef float T;
// CODE-NEXT: static void all_reduce_sum()
// CODE: ::engine::coconet_step_1::all_reduce_sum();
// WRITTEN: step 0
// WRITTEN-NEXT: all_reduce_sum start
// WRITTEN-NEXT: pretty void engine::all_reduce_sum({{.*}}int, ncclComm_t, cudaStream_t) [{{.*}}T = float
// WRITTEN-NEXT: nccl_type
// WRITTEN-NEXT: all_reduce_sum stop
// WRITTEN-NEXT: all_reduce_sum call 1
// WRITTEN-NEXT: step 1
// WRITTEN-NEXT: all_reduce_sum start
// WRITTEN: all_reduce_sum call 2
// WRITTEN-NEXT: sum
// SCHEDULED: step 0
// SCHEDULED-NEXT: all_reduce_sum start
// SCHEDULED-NEXT: pretty void engine::coconet_step_1::all_reduce_sum()
// SCHEDULED-NEXT: nccl_type
// SCHEDULED-NEXT: all_reduce_sum stop
// SCHEDULED-NEXT: all_reduce_sum call 1
// SCHEDULED-NEXT: step 1
// SCHEDULED: all_reduce_sum call 2
// SCHEDULED-NEXT: sum
