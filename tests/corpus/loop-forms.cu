// Style: the other element-loop spellings: a for loop with the index and the
// stride written in another order with size_t casts, and a while loop whose
// body ends with the grid stride. A while loop that also changes the index
// elsewhere is refused, and so is a local declared before a grid-stride loop
// and assigned in it (-DCARRIED: a running sum carries from one element to the
// thread's next, which depends on the grid).
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %expect 1 %coconet --check %s -- -DINDEX_CHANGED 2>&1 | %FileCheck --check-prefix=CHANGED %s
// RUN: %expect 1 %coconet --check %s -- -DCARRIED 2>&1 | %FileCheck --check-prefix=CARRIED %s
#include <cuda_runtime.h>
#include <nccl.h>
__global__ void rev(float *x, size_t n) {
#ifdef CARRIED
  float sum = 0.0f;
  for (size_t i = threadIdx.x + blockIdx.x * (size_t)blockDim.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    sum += x[i];
    x[i] = sum;
  }
#else
  for (size_t i = threadIdx.x + blockIdx.x * (size_t)blockDim.x; i < n; i += (size_t)gridDim.x * blockDim.x) x[i] *= 3.0f;
#endif
}
__global__ void wl(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef INDEX_CHANGED
  while (i < n) { x[i] *= 2.0f; i += 1; i += blockDim.x * gridDim.x; }
#else
  while (i < n) { x[i] *= 2.0f; i += blockDim.x * gridDim.x; }
#endif
}
void f(float *x, float *y, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(rev) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    rev<<<64, 128, 0, s>>>(x, n);
  }
#pragma coconet region name(wl) split reorder
  {
    ncclAllReduce(y, y, n, ncclFloat, ncclSum, comm, s);
    wl<<<64, 128, 0, s>>>(y, n);
  }
}

// IR: verify=ir rev: ok
// IR: verify=ir wl: ok
// EXEC: verify rev: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify wl: ok (the region as written and as scheduled agree within 0 ULP)
// CARRIED: loop-forms.cu:{{[0-9]+}}:12: error: kernel 'rev' reads 'sum', its running sum over the elements of the thread: its value there depends on the grid; only 's += e' in the loop and atomicAdd(acc, s) after it are taken as a sum
// CHANGED: loop-forms.cu:{{[0-9]+}}:33: error: kernel 'wl' assigns to 'i': only t[i] and locals can be assigned
