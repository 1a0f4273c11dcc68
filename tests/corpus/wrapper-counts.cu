// Style: the count computed once into a local never reassigned, then passed to
// the project's NCCL wrapper and to the launch (`const int n = rows * cols;
// all_reduce(x, n, ...); add_bias<<<...>>>(x, b, n)`). The wrapper's count is
// its parameter, which stands for the region's `n`: it is read as the region
// reads its own `n` (its initializer), as the launch's is, so the two counts
// agree. Before, the wrapper's stayed `n` and the region was refused ("runs
// over rows * cols elements but 'x' has n"). The same through a launcher
// (LAUNCHER), through two wrappers (TWO), and to a `size_t` parameter (SIZE_T: a
// conversion that keeps a count's value). A wrapper whose parameter is
// narrower than the count (-DNARROW, `uint16_t n`) reduces another count: refused.
// RUN: %coconet --verify=3 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=3 %s -- -DLAUNCHER | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=3 %s -- -DTWO -DLAUNCHER | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=3 %s -- -DSIZE_T | %FileCheck --check-prefix=EXEC %s
// RUN: %expect 1 %coconet --check %s -- -DNARROW 2>&1 | %FileCheck --check-prefix=NARROW %s
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>

__global__ void add_bias(float *x, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.5f + b[i];
}

template <typename T>
void all_reduce(T *buf, int n, ncclComm_t comm, cudaStream_t s) {
  ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s);
}

void all_reduce16(float *buf, uint16_t n, ncclComm_t comm, cudaStream_t s) {
  ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s);
}

void all_reduce_sz(float *buf, size_t n, ncclComm_t comm, cudaStream_t s) {
  ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s);
}

void all_reduce_outer(float *buf, int count, ncclComm_t comm, cudaStream_t s) { all_reduce(buf, count, comm, s); }

void launch_add_bias(float *x, const float *b, int n, cudaStream_t s) {
  add_bias<<<(n + 255) / 256, 256, 0, s>>>(x, b, n);
}

void layer(float *x, const float *b, int rows, int cols, ncclComm_t comm, cudaStream_t stream) {
  const int n = rows * cols;
#pragma coconet region name(step) split reorder replicated(b)
  {
#if defined(NARROW)
    all_reduce16(x, n, comm, stream);
#elif defined(TWO)
    all_reduce_outer(x, n, comm, stream);
#elif defined(SIZE_T)
    all_reduce_sz(x, n, comm, stream);
#else
    all_reduce(x, n, comm, stream);
#endif
#if defined(LAUNCHER)
    launch_add_bias(x, b, n, stream);
#else
    add_bias<<<(n + 255) / 256, 256, 0, stream>>>(x, b, n);
#endif
  }
}

// EXEC: verify step: ok
// NARROW: error: reorder: kernel 'add_bias' runs over rows * cols elements but 'x' has (unsigned short)n; work on a slice needs the same count
