// Style: optimizer and activation epilogues scheduled `split reorder fuse`, so
// that each becomes one kernel on NCCL's device API: an averaged out-of-place
// AllReduce whose reduced buffer stays live (gathered to the peers with the
// weights), a max-reduction written in place, an int32 histogram, and a half
// EMA. --verify runs the fused kernels (the harness's buffers are
// symmetric) at 1..4 ranks and then the NCCL-path fallback.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void sgd_avg(float *w, const float *gavg, float lr, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x)
    w[i] -= lr * gavg[i];
}

__global__ void clip_max(float *x, float cap, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = fminf(x[i], cap);
}

__global__ void occupied(int *flag, const int *count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) flag[i] = count[i] > 2 ? 1 : 0;
}

__global__ void ema_half(__half *avg, const __half *g, float decay, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) avg[i] = __float2half_rn(decay * __half2float(avg[i]) + (1.0f - decay) * __half2float(g[i]));
}

void steps(float *grad, float *gavg, float *w, float *x, int *count, int *flag, __half *hg, __half *avg, size_t n,
           int m, float lr, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(avg_sgd) split reorder replicated(w) fuse
  {
    ncclAllReduce(grad, gavg, n, ncclFloat, ncclAvg, comm, s);
    sgd_avg<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(w, gavg, lr, n);
  }
#pragma coconet region name(max_clip) split reorder fuse
  {
    ncclAllReduce(x, x, m, ncclFloat, ncclMax, comm, s);
    clip_max<<<(m + 127) / 128, 128, 0, s>>>(x, 0.5f, m);
  }
#pragma coconet region name(histogram) split reorder scratch(count) fuse
  {
    ncclAllReduce(count, count, m, ncclInt32, ncclSum, comm, s);
    occupied<<<(m + 127) / 128, 128, 0, s>>>(flag, count, m);
  }
#pragma coconet region name(ema) split reorder replicated(avg) scratch(hg) fuse
  {
    ncclAllReduce(hg, hg, m, ncclHalf, ncclSum, comm, s);
    ema_half<<<(m + 127) / 128, 128, 0, s>>>(avg, hg, 0.9f, m);
  }
}

// IR: verify=ir avg_sgd: ok
// IR: verify=ir max_clip: ok
// IR: verify=ir histogram: ok
// IR: verify=ir ema: ok
// EXEC: verify avg_sgd: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify max_clip: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify histogram: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify ema: ok (the region as written and as scheduled agree within 0 ULP)
// CODE: float gavg_v = coconet_reduce<COCONET_AVG, float>(grad_win, grad_off, dev.lsaSize, i);
// CODE: gavg[i] = gavg_v;
// CODE: if (peer != dev.lsaRank) coconet_peer<float>(w_win, w_off, peer)[i] = w[i];
// CODE: if (peer != dev.lsaRank) coconet_peer<float>(gavg_win, gavg_off, peer)[i] = gavg_v;
// CODE: float x_v = coconet_reduce<COCONET_MAX, float>(x_win, x_off, dev.lsaSize, i);
// CODE: coconet_peer<float>(x_win, x_off, peer)[i] = x_v;
// CODE: int count_v = coconet_reduce<COCONET_SUM, int>(count_win, count_off, dev.lsaSize, i);
// CODE: coconet_peer<int>(flag_win, flag_off, peer)[i] = flag[i];
// CODE: __half hg_v = coconet_reduce<COCONET_SUM, __half>(hg_win, hg_off, dev.lsaSize, i);
