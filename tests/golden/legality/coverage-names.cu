// The coverage proof reads a count or grid through locals only while they keep
// the value they were declared with at the launch: a const reference to a
// local assigned later, a reference through which the count is assigned, a
// static local (its first call's value), a grid in an `unsigned char` (it
// keeps the low 8 bits), a grid of a parameter `n` and a count
// of an inner `n` that shadows it are not proven (each refused); the count
// over a local assigned on several paths before it is (PATHS runs equal).
// RUN: %expect 1 %coconet --check %s -- -DCONST_REF 2>&1 | %FileCheck --check-prefix=REFUSED %s
// RUN: %expect 1 %coconet --check %s -- -DREF_WRITE 2>&1 | %FileCheck --check-prefix=REFUSED %s
// RUN: %expect 1 %coconet --check %s -- -DSTATIC_GRID 2>&1 | %FileCheck --check-prefix=REFUSED %s
// RUN: %expect 1 %coconet --check %s -- -DSHADOWED 2>&1 | %FileCheck --check-prefix=REFUSED %s
// RUN: %expect 1 %coconet --check %s -- -DNARROW 2>&1 | %FileCheck --check-prefix=REFUSED %s
// RUN: %coconet --verify=3 %s -- -DPATHS | %FileCheck --check-prefix=PATHS %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void halve(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 0.5f;
}

void step(float *x, int n0, int rows, int cols, int layer, ncclComm_t comm, cudaStream_t s) {
#if defined(CONST_REF)
  int c = rows;
  const int &n = c;
  const int grid = (n + 255) / 256;
  c = rows * cols;
#elif defined(REF_WRITE)
  int n = rows;
  const int grid = (n + 255) / 256;
  int &count = n;
  count *= cols;
#elif defined(STATIC_GRID)
  int n = n0;
  static const int grid = (n + 255) / 256;
#elif defined(NARROW)
  int n = n0;
  const unsigned char grid = (n + 255) / 256;
#elif defined(SHADOWED)
  int n = n0;
  const int grid = (n + 255) / 256;
  int c = cols;
  if (layer < 2) c = 1;
  {
    const int n = rows * c;
#else
  int c = cols;
  if (layer < 2) c = 1;
  const int n = rows * c;
  const int grid = (n + 255) / 256;
#endif
#pragma coconet region name(counted) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    halve<<<grid, 256, 0, s>>>(x, n);
  }
#if defined(SHADOWED)
  }
#endif
  (void)n0, (void)rows, (void)cols, (void)layer;
}

// REFUSED: error: kernel 'halve' computes only the elements that have a thread (its guard against 'n'), and coconet cannot prove that '<<<grid, 256>>>' gives every one of the n elements a thread
// PATHS: verify counted: ok
