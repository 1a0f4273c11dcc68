// Style: RMSNorm after a tensor-parallel AllReduce, the row reduced with
// cub::BlockReduce (one block per row, the block size a template argument) and
// the scale broadcast through shared memory. `split reorder` runs the kernel,
// as written, on this rank's whole rows (rowwise.cu has the other row-wise
// forms; cub's headers, the file's first include, are precompiled by coconet's
// parse once per flag set).
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <nccl.h>

// RMSNorm reduced with cub::BlockReduce, the scale broadcast through shared memory.
template <int BLOCK>
__global__ void rmsnorm_cub(float *out, const float *x, const float *g, int rows, int h) {
  typedef cub::BlockReduce<float, BLOCK> BlockReduce;
  __shared__ typename BlockReduce::TempStorage temp;
  __shared__ float scale;
  const int row = blockIdx.x;
  if (row >= rows) return;
  float ss = 0.0f;
  for (int j = threadIdx.x; j < h; j += BLOCK) ss += x[row * h + j] * x[row * h + j];
  const float total = BlockReduce(temp).Sum(ss);
  if (threadIdx.x == 0) scale = rsqrtf(total / h + 1e-6f);
  __syncthreads();
  for (int j = threadIdx.x; j < h; j += BLOCK) out[row * h + j] = x[row * h + j] * scale * g[j];
}

void cub_output(float *y, float *out, const float *g, int rows, int h, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(rmsnorm_cub) split reorder replicated(g) scratch(y)
  {
    ncclAllReduce(y, y, rows * h, ncclFloat, ncclSum, comm, stream);
    rmsnorm_cub<128><<<rows, 128, 0, stream>>>(out, y, g, rows, h);
  }
}

// IR: verify=ir rmsnorm_cub: ok
// EXEC: verify rmsnorm_cub: output 'out' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify rmsnorm_cub: ok
// The user's kernel, launched on this rank's whole rows:
// CODE: const coconet_part coconet_p = coconet_slice_rows(rows * h, h, coconet_rank, coconet_nranks);
// CODE: rmsnorm_cub<128><<<(unsigned)(coconet_p.s / h), 128, 0, stream>>>(out + coconet_p.slice_lo,
// CODE-NEXT: y + coconet_p.slice_lo, g, (int)(coconet_p.s / h), h);
