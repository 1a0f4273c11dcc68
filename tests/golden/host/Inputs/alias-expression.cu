// A kernel reads sc[0] where the launch passes an expression, `sc ? sc : g`, and the caller passes
// sc = NULL: the kernel then reads g[0] of the reduced buffer, which the schedule leaves
// unreduced while its kernels run on this rank's slice. Passed as a plain `g` this is refused;
// passed through the expression it was translated without the run-time test that the buffers
// read at other elements are apart from those the region writes (a wrong result at np 2). The
// test now evaluates the expression as the launch does, and the region runs as written.
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <cstdio>
enum { N = 1000 };
__global__ void k1(float *w, const float *g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= 0.5f * g[i];
}
__global__ void k2(float *out, const float *g, const float *sc, int n, int use) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = g[i] * (use ? sc[0] : 1.0f);
}
static void step(const float *sc, float *g, float *out, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(r) split reorder scratch(out)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    k2<<<(n + 255) / 256, 256, 0, s>>>(out, g, sc ? sc : g, n, 1);
  }
}
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  ncclUniqueId id;
  if (rank == 0) ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  ncclCommInitRank(&comm, nranks, id, rank);
  cudaStream_t s;
  cudaStreamCreate(&s);
  static float hg[N], hw[N], hout[N];
  for (int i = 0; i < N; i++) { hg[i] = 1.0f + rank; hw[i] = 10.0f; }
  float *w, *g, *out;
  cudaMalloc(&w, N * 4); cudaMalloc(&g, N * 4); cudaMalloc(&out, N * 4);
  cudaMemcpy(w, hw, N * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(g, hg, N * 4, cudaMemcpyHostToDevice);
  step(nullptr, g, out, N, comm, s);
  cudaStreamSynchronize(s);
  cudaMemcpy(hout, out, N * 4, cudaMemcpyDeviceToHost);
  // as written: g[i] = nranks * (nranks + 1) / 2 everywhere; out[i] = g[i] * g[0]. This rank's slice.
  float sum = nranks * (nranks + 1) / 2.0f, want = sum * sum;
  int lo = rank * (N / nranks), hi = lo + N / nranks, bad = 0;
  for (int i = lo; i < hi; i++) bad += hout[i] != want;
  std::printf("rank %d: %d of slice [%d,%d) wrong (out[%d]=%g, want %g)\n", rank, bad, lo, hi, lo, hout[lo], want);
  cudaFree(w);
  cudaFree(g);
  cudaFree(out);
  cudaStreamDestroy(s);
  ncclCommDestroy(comm);
  MPI_Finalize();
  return bad != 0;
}
