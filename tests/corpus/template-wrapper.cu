// Style: an integer kernel template (integer division and modulo) with its
// block size from a macro, launched through host wrappers whose parameters
// come in another order than the kernel's.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_runtime.h>
#include <nccl.h>
#define BLK 128
template <typename T> __global__ void halve(T *x, int n) {
  int i = blockIdx.x * BLK + threadIdx.x;
  if (i < n) x[i] = x[i] / 2 + (x[i] % 3 == 0 ? 1 : 0);
}
static void launch_halve(int *x, int n, cudaStream_t st) { halve<<<(n + BLK - 1) / BLK, BLK, 0, st>>>(x, n); }
static void launch_swapped(int n, cudaStream_t st, int *x) { halve<<<(n + BLK - 1) / BLK, BLK, 0, st>>>(x, n); }
void f(int *x, int *y, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(int_template) split reorder
  {
    ncclAllReduce(x, x, n, ncclInt32, ncclSum, comm, s);
    launch_halve(x, n, s);
  }
#pragma coconet region name(swapped) split reorder
  {
    ncclAllReduce(y, y, n, ncclInt32, ncclSum, comm, s);
    launch_swapped(n, s, y);
  }
}

// IR: verify=ir int_template: ok
// IR: verify=ir swapped: ok
// EXEC: verify int_template: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify swapped: ok (the region as written and as scheduled agree within 0 ULP)
