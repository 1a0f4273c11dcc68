// symmetric must annotate a cudaMalloc; pointwise a __global__ definition.
// RUN: %expect 1 %coconet --check %s 2>&1 | %FileCheck %s
#include <cuda_runtime.h>

#pragma coconet pointwise(index=i, count=n)
void host_function(float *x, int n) { x[0] = (float)n; }

void alloc(float **p, size_t bytes) {
#pragma coconet symmetric
  *p = (float *)malloc(bytes);
}

// CHECK: symmetric-misuse.cu:5:1: error: '#pragma coconet pointwise' must be followed by a __global__ function definition
// CHECK: symmetric-misuse.cu:9:1: error: '#pragma coconet symmetric' must be followed by a cudaMalloc(&ptr, bytes) call
