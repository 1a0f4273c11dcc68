// A data-parallel SGD-with-momentum step whose AllReduce, update and
// AllGather coconet fuses into one kernel on symmetric memory (split reorder
// fuse), and an activation whose AllReduce and scale + ReLU become a one-shot
// kernel (fuse alone), in f32, f16 (-DELEM_HALF) or bf16 (-DELEM_BF16). The
// program prints every rank's weights, momentum and activations as bits after
// 3 steps, so that the translated program can be compared with the program as
// written, byte for byte. -DPLAIN_MALLOC allocates the weights with cudaMalloc
// (not symmetric): the fused call site must take the NCCL path. Two mistakes
// the host backend must report (tests/fused/run.sh): -DRANK0_PLAIN (rank 0's
// weights not symmetric: rank 0 takes the NCCL path, the others the fused
// kernel) and -DRANK_OFFSET (rank 1's weights at another offset of their
// allocation: the fused kernel would read the wrong elements).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(ELEM_HALF)
typedef __half elem;
#define NCCL_ELEM ncclHalf
__device__ __host__ inline float to_float(elem x) { return __half2float(x); }
__device__ __host__ inline elem from_float(float x) { return __float2half_rn(x); }
#elif defined(ELEM_BF16)
typedef __nv_bfloat16 elem;
#define NCCL_ELEM ncclBfloat16
__device__ __host__ inline float to_float(elem x) { return __bfloat162float(x); }
__device__ __host__ inline elem from_float(float x) { return __float2bfloat16_rn(x); }
#else
typedef float elem;
#define NCCL_ELEM ncclFloat
__device__ __host__ inline float to_float(elem x) { return x; }
__device__ __host__ inline elem from_float(float x) { return x; }
#endif

#define CHECK(call)                                                        \
  do {                                                                     \
    if ((call) != 0) {                                                     \
      fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #call);   \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

__global__ void momentum_step(elem *w, elem *buf, const elem *g, size_t n, float lr, float mu) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    const float b = mu * to_float(buf[i]) + to_float(g[i]);
    buf[i] = from_float(b);
    w[i] = from_float(to_float(w[i]) - lr * b);
  }
}

__global__ void scale_relu(elem *x, float scale, size_t n) {
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) x[i] = from_float(fmaxf(scale * to_float(x[i]), 0.0f));
}

static void activation(elem *x, size_t n, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(act) fuse
  {
    CHECK(ncclAllReduce(x, x, n, NCCL_ELEM, ncclSum, comm, stream));
    scale_relu<<<(unsigned)((n + 127) / 128), 128, 0, stream>>>(x, 0.5f, n);
  }
}

static void step(elem *g, elem *w, elem *buf, size_t n, float lr, float mu, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(sgd) split reorder shard(buf) scratch(g) replicated(w) fuse
  {
    CHECK(ncclAllReduce(g, g, n, NCCL_ELEM, ncclSum, comm, stream));
    momentum_step<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(w, buf, g, n, lr, mu);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  ncclUniqueId id;
  if (rank == 0) CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  CHECK(ncclCommInitRank(&comm, nranks, id, rank));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));

  const size_t n = argc > 1 ? (size_t)atol(argv[1]) : 1003;  // not a multiple of the rank count
  const size_t bytes = n * sizeof(elem);
  elem *g, *w, *buf, *act;
#pragma coconet symmetric
  CHECK(cudaMalloc(&g, bytes));
  elem *wbase = NULL;
#ifdef PLAIN_MALLOC
  CHECK(cudaMalloc(&w, bytes));
#elif defined(RANK0_PLAIN)
  if (rank == 0) {
    CHECK(cudaMalloc(&w, bytes));
  } else {
#pragma coconet symmetric
    CHECK(cudaMalloc(&w, bytes));
  }
#elif defined(RANK_OFFSET)
#pragma coconet symmetric
  CHECK(cudaMalloc(&wbase, bytes + 64 * sizeof(elem)));
  w = wbase + (rank == 1 ? 64 : 0);
#else
#pragma coconet symmetric
  CHECK(cudaMalloc(&w, bytes));
#endif
  CHECK(cudaMalloc(&buf, bytes));
#pragma coconet symmetric
  CHECK(cudaMalloc(&act, bytes));

  elem *h = (elem *)malloc(bytes);
  for (size_t i = 0; i < n; i++) h[i] = from_float(0.01f * (float)(i % 97));
  CHECK(cudaMemcpy(w, h, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(buf, 0, bytes));
  for (int s = 0; s < 3; s++) {
    for (size_t i = 0; i < n; i++) h[i] = from_float(0.001f * (float)((i * 7 + (size_t)rank * 13 + (size_t)s) % 101) - 0.05f);
    CHECK(cudaMemcpy(g, h, bytes, cudaMemcpyHostToDevice));
    step(g, w, buf, n, 0.1f, 0.9f, comm, stream);
    for (size_t i = 0; i < n; i++) h[i] = from_float(0.01f * (float)((i * 5 + (size_t)rank * 3 + (size_t)s) % 41) - 0.2f);
    CHECK(cudaMemcpy(act, h, bytes, cudaMemcpyHostToDevice));
    activation(act, n, comm, stream);
  }
  CHECK(cudaStreamSynchronize(stream));

  // Every rank's w, then this rank's slice and the tail of buf (shard: only those are kept).
  const size_t s = n / (size_t)nranks;
  CHECK(cudaMemcpy(h, w, bytes, cudaMemcpyDeviceToHost));
  const double w0 = (double)to_float(h[0]);
  unsigned long long sum_w = 0, sum_buf = 0, sum_act = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned bits = 0;
    memcpy(&bits, &h[i], sizeof h[i]);
    sum_w = sum_w * 31 + bits;
  }
  CHECK(cudaMemcpy(h, buf, bytes, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i++) {
    if (i / s == (size_t)rank || i >= s * (size_t)nranks) {
      unsigned bits = 0;
      memcpy(&bits, &h[i], sizeof h[i]);
      sum_buf = sum_buf * 31 + bits;
    }
  }
  CHECK(cudaMemcpy(h, act, bytes, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i++) {
    unsigned bits = 0;
    memcpy(&bits, &h[i], sizeof h[i]);
    sum_act = sum_act * 31 + bits;
  }
  printf("rank %d of %d: w %016llx buf %016llx act %016llx w[0] %.6f\n", rank, nranks, sum_w, sum_buf, sum_act, w0);
  free(h);
  CHECK(cudaFree(g));
  CHECK(cudaFree(wbase ? wbase : w));
  CHECK(cudaFree(buf));
  CHECK(cudaFree(act));
  CHECK(ncclCommDestroy(comm));
  MPI_Finalize();
  return 0;
}
