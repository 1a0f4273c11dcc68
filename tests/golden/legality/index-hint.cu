// pointwise(index=VAR) names the element index when coconet cannot find it;
// the variable's value must still be the element index. A hinted `j` of half
// the index or the index plus one was taken as the index, and the schedule computed elements
// the program as written never computes; they are refused. A constant block
// size equal to the launch's (`blockIdx.x * 256 + threadIdx.x` launched with
// 256 threads) is the index, and runs equal.
// RUN: %expect 1 %coconet --check %s -- -DHALF 2>&1 | %FileCheck --check-prefix=HALF %s
// RUN: %expect 1 %coconet --check %s -- -DNEXT 2>&1 | %FileCheck --check-prefix=NEXT %s
// RUN: %expect 1 %coconet --check %s -- -DWRONG_BLOCK 2>&1 | %FileCheck --check-prefix=WRONG_BLOCK %s
// RUN: %coconet --verify=2 %s | %FileCheck --check-prefix=OK %s
#include <cuda_runtime.h>
#include <nccl.h>

#pragma coconet pointwise(index=j, count=n)
__global__ void scale(float *x, float by, int n) {
#if defined(HALF)
  int j = (blockIdx.x * blockDim.x + threadIdx.x) / 2;
#elif defined(NEXT)
  int j = blockIdx.x * blockDim.x + threadIdx.x + 1;
#elif defined(WRONG_BLOCK)
  int j = blockIdx.x * 128 + threadIdx.x;
#else
  int j = blockIdx.x * 256 + threadIdx.x;
#endif
  if (j < n) x[j] *= by;
}

void step(float *x, float by, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(scaled) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(x, by, n);
  }
}

// HALF: error: kernel 'scale': pointwise(index=j) names 'j', whose value is not the element index
// NEXT: error: kernel 'scale': pointwise(index=j) names 'j', whose value is not the element index
// WRONG_BLOCK: error: kernel 'scale': pointwise(index=j) names 'j', whose value is not the element index
// OK: verify scaled: ok
