// A buffer the region uses with two element types: a double accumulator zeroed
// with a memset of sizeof(float) and summed into by a kernel as double. The
// generated kernel would have typed it by the first use (float *) and not
// compiled, exit 0; it is refused at the kernel's use, naming both. With one
// type (sizeof(double)) the schedule is taken and runs equal.
// RUN: %expect 1 %coconet --check %s -- -DHALF_SIZE 2>&1 | %FileCheck --check-prefix=TWO-TYPES %s
// RUN: %coconet --verify=2 %s | %FileCheck --check-prefix=ONE-TYPE %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void sumsq(const float *g, double *acc, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(acc, (double)g[i] * g[i]);
}

void step(float *g, double *acc, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(norm) split reorder scratch(g)
  {
#ifdef HALF_SIZE
    cudaMemsetAsync(acc, 0, sizeof(float), s);
#else
    cudaMemsetAsync(acc, 0, sizeof(double), s);
#endif
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sumsq<<<(n + 255) / 256, 256, 0, s>>>(g, acc, n);
  }
}

// TWO-TYPES: element-types.cu:13:14: error: kernel 'sumsq' uses 'acc' as f64 elements, but the region uses it as f32 before (from {{.*}}element-types.cu:20): coconet keeps one element type per buffer
// TWO-TYPES: note: region 'norm' needs this launch to be pointwise for its schedule

// ONE-TYPE: verify norm: ok
