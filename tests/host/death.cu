// Host backend: uses that cannot run correctly must stop the program with a
// message naming the problem (never a silent wrong answer).  death.sh runs
// each case and checks the exit status and the message. Also the run-time
// checks of generated code (runtime/include/coconet.h).
#include <cooperative_groups.h>
#include <cub/cub.cuh>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <string.h>

#include "../../runtime/include/coconet.h"

__global__ void barrier_kernel(int *x) {
  __syncthreads();
  x[threadIdx.x] = 1;
}

// Half a warp waits in a shuffle for the other half, which waits at a barrier.
__global__ void deadlock_kernel(int *x) {
  if (threadIdx.x < 16)
    x[threadIdx.x] = __shfl_sync(0xffffffffu, (int)threadIdx.x, 0);
  else
    __syncthreads();
}

// In a 48-thread block, lane 0 of warp 1 reads lane 16, which does not exist.
__global__ void absent_lane_kernel(int *x) { x[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1, 16); }

// Lanes with the same mask at different collectives.
__global__ void mixed_ops_kernel(int *x) {
  if (threadIdx.x % 2)
    x[threadIdx.x] = (int)__ballot_sync(0xffffffffu, 1);
  else
    x[threadIdx.x] = __shfl_sync(0xffffffffu, 1, 0);
}

// A block reduction for 128 threads in a block of 64.
__global__ void cub_block_kernel(int *x) {
  typedef cub::BlockReduce<int, 128> BlockReduce;
  __shared__ typename BlockReduce::TempStorage temp;
  x[threadIdx.x] = BlockReduce(temp).Sum(1);
}

__global__ void trap_kernel(int *x) {
  if (threadIdx.x == 3) __trap();
  x[threadIdx.x] = 0;
}

__global__ void grid_sync_kernel(int *x) {
  cooperative_groups::this_grid().sync();
  x[threadIdx.x] = 0;
}

// Writes or reads elements [from, to) of a buffer of n floats (out of bounds past n).
__global__ void overflow_kernel(float *y, int from, int to) {
  for (int i = from + threadIdx.x; i < to; i += blockDim.x) y[i] = 1.0f;
}

__global__ void overread_kernel(float *out, const float *y, int at) { out[threadIdx.x] = y[at + threadIdx.x]; }

#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN 1
#endif
#endif
#ifndef ASAN
#define ASAN 0
#endif

static ncclComm_t init_comm(int nranks, int rank) {
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  ncclComm_t comm = nullptr;
  ncclCommInitRank(&comm, nranks, id, rank);
  return comm;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  const char *what = argv[1];
  if (!strcmp(what, "build")) {  // which reports the memcheck cases give: ASan's or COCONET_HOST_MEMCHECK's
    printf("%s\n", ASAN ? "asan" : "plain");
    return 0;
  }
  if (!strncmp(what, "memcheck-", 9) && !ASAN) setenv("COCONET_HOST_MEMCHECK", "1", 1);
  int *x;
  cudaMallocManaged(&x, 64 * sizeof(int));
  if (!strcmp(what, "simple-barrier")) coconet_host_launch(COCONET_HOST_SIMPLE, barrier_kernel, 1, 32, 0, 0, x);
  if (!strcmp(what, "deadlock")) coconet_host_launch(COCONET_HOST_SYNC, deadlock_kernel, 1, 32, 0, 0, x);
  if (!strcmp(what, "absent-lane")) coconet_host_launch(COCONET_HOST_SYNC, absent_lane_kernel, 1, 48, 0, 0, x);
  if (!strcmp(what, "mixed-ops")) coconet_host_launch(COCONET_HOST_SYNC, mixed_ops_kernel, 1, 32, 0, 0, x);
  if (!strcmp(what, "trap")) coconet_host_launch(COCONET_HOST_SIMPLE, trap_kernel, 2, 8, 0, 0, x);
  if (!strcmp(what, "cub-block")) coconet_host_launch(COCONET_HOST_SYNC, cub_block_kernel, 1, 64, 0, 0, x);
  if (!strcmp(what, "grid-sync")) coconet_host_launch(COCONET_HOST_SYNC, grid_sync_kernel, 2, 8, 0, 0, x);
  if (!strcmp(what, "attribute")) {
    int v;
    cudaDeviceGetAttribute(&v, cudaDevAttrMaxTexture1DWidth, 0);
  }
  if (!strcmp(what, "init-all")) {
    ncclComm_t comms[2];
    ncclCommInitAll(comms, 2, nullptr);
  }
  if (!strcmp(what, "rank-mismatch")) init_comm(2, 0);
  if (!strcmp(what, "window")) {
    ncclComm_t comm = init_comm(1, 0);
    ncclWindow_t win;
    ncclCommWindowRegister(comm, x, 64 * sizeof(int), &win, NCCL_WIN_DEFAULT);
  }
  if (!strcmp(what, "peer-ptr")) {
    ncclComm_t comm = init_comm(1, 0);
    coconet_host_peer_ptr(comm, x, 0);
  }
  // A warp per row, blocks of 128 threads: 4 rows a block. 25 blocks reach 100 rows, 24 do not;
  // blocks of 48 threads are not whole warps.
  if (!strcmp(what, "rows-reached") || !strcmp(what, "rows-warps")) {
    coconet_check_rows(25, 128, 32, 100, "layernorm_warp", __FILE__, __LINE__);
    coconet_check_rows(2, 64, 1, 100, "layernorm_thread", __FILE__, __LINE__);
    if (coconet_rows_grid(100, 128, 32) != 25 || coconet_rows_grid(101, 128, 32) != 26 ||
        coconet_rows_grid(0, 128, 32) != 1 || coconet_rows_grid(100, 64, 1) != 2)
      return 3;
    if (!strcmp(what, "rows-warps")) coconet_check_rows(100, 48, 32, 100, "layernorm_warp", __FILE__, __LINE__);
    coconet_check_rows(24, 128, 32, 100, "layernorm_warp", __FILE__, __LINE__);
  }
  if (!strcmp(what, "row-stride")) {
    coconet_check_stride(2048, 2048, "in_stride", "rmsnorm", __FILE__, __LINE__);
    coconet_check_stride(4096, 2048, "in_stride", "rmsnorm", __FILE__, __LINE__);
  }
  if (!strcmp(what, "null-buffer")) {
    coconet_require_buffer(x, "rstd", __FILE__, __LINE__);
    coconet_require_buffer(nullptr, "mean", __FILE__, __LINE__);
  }
  if (!strncmp(what, "memcheck-", 9)) {
    float *y, *out;
    cudaMalloc(&y, 1000 * sizeof(float));
    cudaMalloc(&out, 32 * sizeof(float));
    coconet_host_launch(COCONET_HOST_SIMPLE, overflow_kernel, 1, 32, 0, 0, y, 0, 1000);  // in bounds: fine
    if (!strcmp(what, "memcheck-write-far")) coconet_host_launch(COCONET_HOST_SIMPLE, overflow_kernel, 1, 32, 0, 0, y, 0, 1064);
    if (!strcmp(what, "memcheck-write-near")) coconet_host_launch(COCONET_HOST_SIMPLE, overflow_kernel, 1, 1, 0, 0, y, 1000, 1001);
    if (!strcmp(what, "memcheck-read")) coconet_host_launch(COCONET_HOST_SIMPLE, overread_kernel, 1, 32, 0, 0, out, y, 1300);
    if (!strcmp(what, "memcheck-free")) {
      cudaMemset(y, 0, 1001 * sizeof(float));  // host-side, one element too many
      cudaFree(y);
    }
  }
  printf("death: %s did not stop the program\n", what);
  cudaFree(x);
  return 0;
}
