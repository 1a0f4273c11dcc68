// Style: an inference engine's RMSNorm launch: the grid and block held in
// dim3 locals (`dim3 grid(num_tokens); dim3 block(std::min(hidden, 1024));`),
// the row's input read at a row stride passed apart from the hidden size (the
// output written at the hidden size), reduced with cub::BlockReduce<float,
// 1024> over blockDim.x valid threads with cuda::std::plus. `split reorder`
// runs it on this rank's rows; the generated code checks that the stride
// equals the hidden size (rows coconet splits are contiguous). Each -D variant
// is a launch coconet must refuse, with its reason.
//
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %expect 1 %coconet --check %s -- -DHALF_GRID 2>&1 | %FileCheck --check-prefix=HALF_GRID %s
// RUN: %expect 1 %coconet --check %s -- -DSTRIDE_ROWS 2>&1 | %FileCheck --check-prefix=STRIDE_ROWS %s
// RUN: %expect 1 %coconet --check %s -- -DGRID_Y 2>&1 | %FileCheck --check-prefix=HALF_GRID %s

#include <cub/cub.cuh>
#include <cuda/std/functional>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>

template <typename T>
__global__ void rmsnorm_strided(T *__restrict__ out, const T *__restrict__ in, const int64_t in_stride,
                                const T *__restrict__ weight, const float eps, const int tokens, const int hidden) {
  __shared__ float inv_rms;
  float ss = 0.0f;
  for (int c = threadIdx.x; c < hidden; c += blockDim.x) {
    const float x = (float)in[blockIdx.x * in_stride + c];
    ss += x * x;
  }
  using Reduce = cub::BlockReduce<float, 1024>;
  __shared__ typename Reduce::TempStorage storage;
  ss = Reduce(storage).Reduce(ss, cuda::std::plus<>{}, blockDim.x);
  if (threadIdx.x == 0) inv_rms = rsqrtf(ss / hidden + eps);
  __syncthreads();
  for (int c = threadIdx.x; c < hidden; c += blockDim.x)
    out[blockIdx.x * hidden + c] = (T)((float)in[blockIdx.x * in_stride + c] * inv_rms) * weight[c];
}

#if defined(STRIDE_ROWS)
// The row count doubles as the row stride.
__global__ void rows_as_stride(float *out, const float *in, int rows, int hidden) {
  int r = blockIdx.x;
  if (r >= rows) return;
  for (int c = threadIdx.x; c < hidden; c += blockDim.x) out[r * hidden + c] = in[r * rows + c];
}
#endif

void block_output(float *y, float *out, const float *weight, int num_tokens, int hidden, ncclComm_t comm,
                  cudaStream_t stream) {
  const int64_t stride = hidden;
#if defined(HALF_GRID)
  dim3 grid(num_tokens / 2);
#elif defined(GRID_Y)
  dim3 grid(num_tokens, 2);  // every row twice
#else
  dim3 grid(num_tokens);
#endif
  dim3 block(std::min(hidden, 1024));
#pragma coconet region name(rms) split reorder replicated(weight) scratch(y)
  {
    ncclAllReduce(y, y, (size_t)num_tokens * hidden, ncclFloat, ncclSum, comm, stream);
#if defined(STRIDE_ROWS)
    rows_as_stride<<<num_tokens, 128, 0, stream>>>(out, y, num_tokens, hidden);
#else
    rmsnorm_strided<float><<<grid, block, 0, stream>>>(out, y, stride, weight, 1e-6f, num_tokens, hidden);
#endif
  }
}

// EXEC: verify rms: output 'out' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify rms: ok
// CODE: coconet_part_rows((size_t)num_tokens * hidden, 1, hidden, 0, 1, coconet_rank, coconet_nranks);
// CODE: coconet_check_stride(stride, hidden, "stride", "rmsnorm_strided<float>", __FILE__, __LINE__);
// CODE-NEXT: if (coconet_p.s > 0) {
// CODE-NEXT: rmsnorm_strided<float><<<(unsigned)(coconet_p.s / hidden), block, 0, stream>>>(out + coconet_p.slice_lo, y + coconet_p.slice_lo, stride, weight, 1e-6f, num_tokens, hidden);
// HALF_GRID: error: reorder: kernel 'rmsnorm_strided<float>' runs over grid * hidden elements but 'y' has num_tokens * hidden; work on a slice needs the same count
// STRIDE_ROWS: error: kernel 'rows_as_stride' uses 'rows' as both its row count and a row stride
