// A count cast where it is passed: to an integer type of 32 bits or more it keeps its value,
// so `(size_t)n`, `static_cast<size_t>(n)` and `(size_t)(n / 2)` are the sizes n and n / 2
// (the collective and the kernel run over the same elements, written differently). A cast to
// a narrower or a floating type may change the value: refused (NARROW, FLOATING), and so is
// a local count of a narrower type or initialized through such a cast (NARROW_LOCAL,
// NARROW_INIT; a count local is read as its initializer only when that keeps the value), and a
// kernel whose count parameter is not an integer of 32 bits or more (FLOAT_BOUND, SHORT_BOUND);
// a standard name a local typedef gives a narrower type is that type (SHADOWED); in a kernel,
// a bound through a narrowing cast or a narrower local runs fewer elements than its count
// (refused: KERNEL_CAST, KERNEL_LOCAL).
// RUN: %coconet --verify=ir:3 %s | %FileCheck --check-prefix=IR %s
// RUN: %expect 1 %coconet --check %s -- -DNARROW 2>&1 | %FileCheck --check-prefix=NARROW %s
// RUN: %expect 1 %coconet --check %s -- -DFLOATING 2>&1 | %FileCheck --check-prefix=FLOATING %s
// RUN: %expect 1 %coconet --check %s -- -DNARROW_LOCAL 2>&1 | %FileCheck --check-prefix=LOCAL %s
// RUN: %expect 1 %coconet --check %s -- -DNARROW_INIT 2>&1 | %FileCheck --check-prefix=LOCAL %s
// RUN: %expect 1 %coconet --check %s -- -DFLOAT_BOUND 2>&1 | %FileCheck --check-prefix=FLOAT_BOUND %s
// RUN: %expect 1 %coconet --check %s -- -DSHORT_BOUND 2>&1 | %FileCheck --check-prefix=SHORT_BOUND %s
// RUN: %expect 1 %coconet --check %s -- -DSHADOWED 2>&1 | %FileCheck --check-prefix=SHADOWED %s
// RUN: %expect 1 %coconet --check %s -- -DKERNEL_CAST 2>&1 | %FileCheck --check-prefix=KERNEL_CAST %s
// RUN: %expect 1 %coconet --check %s -- -DKERNEL_LOCAL 2>&1 | %FileCheck --check-prefix=KERNEL_LOCAL %s
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdint.h>

#if defined(FLOAT_BOUND)
typedef float count_t;
#elif defined(SHORT_BOUND)
typedef short count_t;
#else
typedef int count_t;
#endif
__global__ void scale(float *x, float by, count_t n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if defined(KERNEL_CAST)
  if (i < (uint8_t)n) x[i] *= by;
#elif defined(KERNEL_LOCAL)
  const short m = n;
  if (i < m) x[i] *= by;
#else
  if (i < n) x[i] *= by;
#endif
}

void cast(float *x, float by, int rows, int cols, ncclComm_t comm, cudaStream_t s) {
  size_t n = (size_t)rows * cols;
#pragma coconet region name(cast) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(x, by, (int)n);
  }
}

void named(float *x, float by, int rows, int cols, ncclComm_t comm, cudaStream_t s) {
  int n = rows * cols;
#pragma coconet region name(named) split reorder
  {
#if defined(NARROW)
    ncclAllReduce(x, x, static_cast<uint16_t>(n), ncclFloat, ncclSum, comm, s);
#else
    ncclAllReduce(x, x, static_cast<size_t>(n), ncclFloat, ncclSum, comm, s);
#endif
    scale<<<(n + 255) / 256, 256, 0, s>>>(x, by, (n));
  }
}

void half_of(float *x, float by, int rows, int cols, ncclComm_t comm, cudaStream_t s) {
  int n = rows * cols;
#if defined(SHADOWED)
  typedef uint8_t size_t;  // (size_t)(n / 2) is (n / 2) % 256 here: the type clang reads counts
#endif
#pragma coconet region name(half_of) split reorder
  {
#if defined(FLOATING)
    ncclAllReduce(x, x, (float)(n / 2), ncclFloat, ncclSum, comm, s);
#else
    ncclAllReduce(x, x, (size_t)(n / 2), ncclFloat, ncclSum, comm, s);
#endif
    scale<<<(n / 2 + 255) / 256, 256, 0, s>>>(x, by, n / 2);
  }
}

void local(float *x, float by, int rows, int cols, ncclComm_t comm, cudaStream_t s) {
#if defined(NARROW_LOCAL)
  const uint16_t n = rows * cols;
#elif defined(NARROW_INIT)
  const size_t n = (uint16_t)(rows * cols);
#else
  const size_t n = rows * cols;
#endif
#pragma coconet region name(local) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    scale<<<(rows * cols + 255) / 256, 256, 0, s>>>(x, by, rows * cols);
  }
}

// IR: verify=ir cast: ok
// IR: verify=ir named: ok
// IR: verify=ir half_of: ok
// IR: verify=ir local: ok
// NARROW: count-casts.cu:{{[0-9]+}}:5: error: reorder: kernel 'scale' runs over rows * cols elements but 'x' has static_cast<uint16_t>(n); work on a slice needs the same count
// FLOATING: count-casts.cu:{{[0-9]+}}:5: error: reorder: kernel 'scale' runs over n/2 elements but 'x' has (float)(n/2); work on a slice needs the same count
// LOCAL: count-casts.cu:[[@LINE-10]]:5: error: reorder: kernel 'scale' runs over rows * cols elements but 'x' has n; work on a slice needs the same count
// FLOAT_BOUND: count-casts.cu:{{[0-9]+}}:11: error: kernel 'scale': the element loop's bound 'n' is a float; the count must be an integer of 32 bits or more (a narrower or floating one may not be the count the collective moves)
// SHORT_BOUND: count-casts.cu:{{[0-9]+}}:11: error: kernel 'scale': the element loop's bound 'n' is a short; the count must be an integer of 32 bits or more
// SHADOWED: count-casts.cu:{{[0-9]+}}:5: error: reorder: kernel 'scale' runs over n/2 elements but 'x' has (unsigned char)(n/2); work on a slice needs the same count
// KERNEL_CAST: count-casts.cu:{{[0-9]+}}:11: error: kernel 'scale': the element loop's bound '(uint8_t)n' must be a scalar parameter of the kernel
// KERNEL_LOCAL: count-casts.cu:{{[0-9]+}}:11: error: kernel 'scale': the element loop's bound 'm' must be a scalar parameter of the kernel
