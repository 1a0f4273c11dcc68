// A small CUDA + NCCL + MPI program for the host-target tests: each rank
// fills a vector with rank + 1 (a pointwise kernel), the ranks sum it with
// ncclAllReduce, and a block reduction through dynamic shared memory and
// __syncthreads adds it up; rank 0 prints the total. With N ranks and
// COUNT elements the total is COUNT * N * (N + 1) / 2.
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call, ok, what)                                              \
  do {                                                                     \
    if ((call) != (ok)) {                                                  \
      std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, what); \
      std::exit(1);                                                        \
    }                                                                      \
  } while (0)

enum { COUNT = 1000, THREADS = 128 };

__global__ void fill(float *x, float value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = value;
}

__global__ void block_sum(const float *x, float *out, int n) {
  extern __shared__ float partial[];
  float s = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += x[i];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = partial[0];
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
  fill<<<(COUNT + THREADS - 1) / THREADS, THREADS, 0, stream>>>(x, rank + 1.0f, COUNT);
  CHECK(ncclAllReduce(x, x, COUNT, ncclFloat, ncclSum, comm, stream), ncclSuccess, "ncclAllReduce");
  block_sum<<<1, THREADS, THREADS * sizeof(float), stream>>>(x, sum, COUNT);
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
