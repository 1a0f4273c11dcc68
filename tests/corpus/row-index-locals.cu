// Style: FasterTransformer's row-wise kernels, which name each element's index in a local:
// `int id = blockIdx.x * n + idx;` inside the column loop, then out[id], input[id] and
// bias[idx]. A local holding row * H + j (never assigned) indexes the block's row as the
// expression does; the kernel runs as written on this rank's rows, fused too. The nearest
// refusals: the local used as a value (ID_VALUE), an access next to it (ID_SHIFTED).
// RUN: %coconet --verify=3 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %expect 1 %coconet --check %s -- -DID_VALUE 2>&1 | %FileCheck --check-prefix=ID_VALUE %s
// RUN: %expect 1 %coconet --check %s -- -DID_SHIFTED 2>&1 | %FileCheck --check-prefix=ID_SHIFTED %s
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>

template <typename T>
__device__ __forceinline__ T block_reduce_sum(T val) {
  static __shared__ T shared[32];
  int lane = threadIdx.x & 0x1f;
  int wid = threadIdx.x >> 5;
  for (int mask = 16; mask > 0; mask >>= 1) val += __shfl_xor_sync(0xffffffff, val, mask, 32);
  if (lane == 0) shared[wid] = val;
  __syncthreads();
  val = (threadIdx.x < (blockDim.x / 32.f)) ? shared[lane] : (T)(0.0f);
  for (int mask = 16; mask > 0; mask >>= 1) val += __shfl_xor_sync(0xffffffff, val, mask, 32);
  return val;
}

__global__ void add_bias_residual_center(half *out, const half *input, const half *bias, int n) {
  __shared__ float s_mean;
  float local_out = 0.0f;
  for (int idx = threadIdx.x; idx < n; idx += blockDim.x) {
    int id = blockIdx.x * n + idx;
    half tmp = __hadd(__hadd(out[id], input[id]), bias[idx]);
#ifdef ID_VALUE
    local_out += (float)id;
#endif
    local_out += __half2float(tmp);
    out[id] = tmp;
  }
  float mean = block_reduce_sum<float>(local_out);
  if (threadIdx.x == 0) s_mean = mean / n;
  __syncthreads();
  for (int idx = threadIdx.x; idx < n; idx += blockDim.x) {
    const int id = blockIdx.x * n + idx;
#ifdef ID_SHIFTED
    out[id + 1] = __float2half_rn(__half2float(out[id]) - s_mean);
#else
    out[id] = __float2half_rn(__half2float(out[id]) - s_mean);
#endif
  }
}

void post_attention(half *x, const half *residual, const half *bias, int m, int n, ncclComm_t comm,
                    cudaStream_t s) {
#pragma coconet region name(rows) split reorder replicated(residual, bias)
  {
    ncclAllReduce(x, x, m * n, ncclHalf, ncclSum, comm, s);
    add_bias_residual_center<<<m, 256, 0, s>>>(x, residual, bias, n);
  }
}

void post_attention_fused(half *x, const half *residual, const half *bias, int m, int n, ncclComm_t comm,
                          cudaStream_t s) {
#pragma coconet region name(fused) split reorder fuse replicated(residual, bias)
  {
    ncclAllReduce(x, x, m * n, ncclHalf, ncclSum, comm, s);
    add_bias_residual_center<<<m, 256, 0, s>>>(x, residual, bias, n);
  }
}
// EXEC: verify rows: ok
// EXEC: verify fused: ok
// ID_VALUE: row-index-locals.cu:[[@LINE-37]]:25: error: kernel 'add_bias_residual_center' uses its row index 'id' as a value
// ID_SHIFTED: row-index-locals.cu:[[@LINE-27]]:5: error: kernel 'add_bias_residual_center' writes out[id + 1]; a row-wise kernel writes global memory only at [row * H + j]
