// softmax_hist.host.cu: softmax_hist.cu lowered by hand exactly as the
// translator lowers it for the host backend (coconet --target=host): only
// the launches and the extern __shared__ declaration differ (checked by
// tests/host/lowering-check.sh).
//
// softmax_hist.cu: one data-parallel analytics step, written as ordinary
// CUDA + NCCL.  Each rank owns a shard of rows of logits; it computes
//   - the softmax of every row (one block per row, shared-memory and warp
//     shuffle reductions),
//   - a histogram of the probabilities (per-block bins in dynamic shared
//     memory, merged with atomics),
//   - the sum of all logits (grid-stride loop, warp shuffles, atomicAdd),
// then all-reduces the histogram and the sum with NCCL and checks everything
// against a reference computed on the CPU.
#include <math.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#include <vector>

#define CUDA_CHECK(call)                                                                              \
  do {                                                                                                \
    cudaError_t err_ = (call);                                                                        \
    if (err_ != cudaSuccess) {                                                                        \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_));       \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                   \
    }                                                                                                 \
  } while (0)

#define NCCL_CHECK(call)                                                                              \
  do {                                                                                                \
    ncclResult_t res_ = (call);                                                                       \
    if (res_ != ncclSuccess) {                                                                        \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, ncclGetErrorString(res_));       \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                   \
    }                                                                                                 \
  } while (0)

#define BLOCK 256
#define NBINS 64

__inline__ __device__ float warp_max(float v) {
  for (int offset = warpSize / 2; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, offset));
  return v;
}

__inline__ __device__ float warp_sum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffff, v, offset);
  return v;
}

// Every thread gets the block-wide maximum.
__device__ float block_max(float v) {
  __shared__ float partial[32];
  __shared__ float result;
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  v = warp_max(v);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (int)(blockDim.x / warpSize) ? partial[lane] : -INFINITY;
    v = warp_max(v);
    if (lane == 0) result = v;
  }
  __syncthreads();
  return result;
}

// Every thread gets the block-wide sum.
__device__ float block_sum(float v) {
  __shared__ float partial[32];
  __shared__ float result;
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  v = warp_sum(v);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (int)(blockDim.x / warpSize) ? partial[lane] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) result = v;
  }
  __syncthreads();
  return result;
}

__global__ void __launch_bounds__(BLOCK) softmax_rows(const float *__restrict__ logits, float *__restrict__ probs,
                                                      int cols) {
  const float *row = logits + (size_t)blockIdx.x * cols;
  float *out = probs + (size_t)blockIdx.x * cols;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
  m = block_max(m);
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += __expf(row[c] - m);
  s = block_sum(s);
  const float inv = 1.0f / s;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = __expf(row[c] - m) * inv;
}

__global__ void histogram(const float *__restrict__ probs, int n, float scale, unsigned *__restrict__ bins) {
  unsigned *local_bins = (unsigned *)coconet_host_dynamic_shared();
  for (int b = threadIdx.x; b < NBINS; b += blockDim.x) local_bins[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    int b = (int)(probs[i] * scale);
    atomicAdd(&local_bins[b < NBINS ? b : NBINS - 1], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < NBINS; b += blockDim.x)
    if (local_bins[b]) atomicAdd(&bins[b], local_bins[b]);
}

__global__ void total(const float *__restrict__ x, int n, float *__restrict__ sum) {
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += x[i];
  v = warp_sum(v);
  if (threadIdx.x % warpSize == 0) atomicAdd(sum, v);
}

static float logit(int row, int col) { return (float)((row * 131 + col * 71) % 997) / 97.0f - 5.0f; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks, ndev;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  CUDA_CHECK(cudaGetDeviceCount(&ndev));
  CUDA_CHECK(cudaSetDevice(rank % ndev));
  ncclUniqueId id;
  if (rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  NCCL_CHECK(ncclCommInitRank(&comm, nranks, id, rank));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));

  const int cols = 300, rows = 37 + rank, first_row = 37 * rank + rank * (rank - 1) / 2, n = rows * cols;
  std::vector<float> h_logits(n);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) h_logits[(size_t)r * cols + c] = logit(first_row + r, c);

  float *d_logits, *d_probs, *d_sum;
  unsigned *d_bins;
  CUDA_CHECK(cudaMalloc(&d_logits, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_probs, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_sum, sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_bins, NBINS * sizeof(unsigned)));
  CUDA_CHECK(cudaMemcpyAsync(d_logits, h_logits.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemsetAsync(d_bins, 0, NBINS * sizeof(unsigned), stream));
  CUDA_CHECK(cudaMemsetAsync(d_sum, 0, sizeof(float), stream));

  const float scale = NBINS / 0.05f;
  coconet_host_launch(COCONET_HOST_SYNC, softmax_rows, rows, BLOCK, 0, stream, d_logits, d_probs, cols);
  CUDA_CHECK(cudaGetLastError());
  coconet_host_launch(COCONET_HOST_SYNC, histogram, 8, BLOCK, NBINS * sizeof(unsigned), stream, d_probs, n, scale, d_bins);
  CUDA_CHECK(cudaGetLastError());
  coconet_host_launch(COCONET_HOST_SYNC, total, 4, BLOCK, 0, stream, d_logits, n, d_sum);
  CUDA_CHECK(cudaGetLastError());

  std::vector<float> h_probs(n);
  std::vector<unsigned> h_bins(NBINS), ref_bins(NBINS, 0), all_ref_bins(NBINS);
  CUDA_CHECK(cudaMemcpyAsync(h_probs.data(), d_probs, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaMemcpyAsync(h_bins.data(), d_bins, NBINS * sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));

  int errors = 0;
  double local_sum = 0;
  for (int r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (int c = 0; c < cols; ++c) m = fmax(m, h_logits[(size_t)r * cols + c]);
    for (int c = 0; c < cols; ++c) s += exp(h_logits[(size_t)r * cols + c] - m);
    for (int c = 0; c < cols; ++c) {
      const size_t i = (size_t)r * cols + c;
      const double p = exp(h_logits[i] - m) / s;
      if (fabs(h_probs[i] - p) > 1e-6 + 1e-5 * p) errors++;
      const int b = (int)(h_probs[i] * scale);
      ref_bins[b < NBINS ? b : NBINS - 1]++;
      local_sum += h_logits[i];
    }
  }
  for (int b = 0; b < NBINS; ++b) errors += h_bins[b] != ref_bins[b];

  NCCL_CHECK(ncclAllReduce(d_bins, d_bins, NBINS, ncclUint32, ncclSum, comm, stream));
  NCCL_CHECK(ncclAllReduce(d_sum, d_sum, 1, ncclFloat32, ncclSum, comm, stream));
  float h_sum;
  CUDA_CHECK(cudaMemcpyAsync(h_bins.data(), d_bins, NBINS * sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaMemcpyAsync(&h_sum, d_sum, sizeof(float), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  MPI_Allreduce(ref_bins.data(), all_ref_bins.data(), NBINS, MPI_UNSIGNED, MPI_SUM, MPI_COMM_WORLD);
  double global_sum = 0;
  MPI_Allreduce(&local_sum, &global_sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (int b = 0; b < NBINS; ++b) errors += h_bins[b] != all_ref_bins[b];
  if (fabs(h_sum - global_sum) > 1e-4 * (1 + fabs(global_sum))) errors++;

  printf("softmax_hist rank %d/%d: %d rows, sum %.3f (reference %.3f), %d errors\n", rank, nranks, rows, h_sum,
         global_sum, errors);
  CUDA_CHECK(cudaFree(d_logits));
  CUDA_CHECK(cudaFree(d_probs));
  CUDA_CHECK(cudaFree(d_sum));
  CUDA_CHECK(cudaFree(d_bins));
  CUDA_CHECK(cudaStreamDestroy(stream));
  NCCL_CHECK(ncclCommDestroy(comm));
  MPI_Finalize();
  return errors != 0;
}
