// Several regions in one file; default names are FUNCTION_LINE; pragmas in
// inactive #if branches are ignored; symmetric and pointwise annotations.
// RUN: %coconet --check %s | %FileCheck %s
// RUN: %coconet --check %s -- -DUSE_SECOND_REGION | %FileCheck --check-prefix=DEFINED %s
#include <cuda_runtime.h>
#include <nccl.h>

#pragma coconet pointwise(index=idx, count=len)
__global__ void relu(float *x, int len) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < len) x[idx] = x[idx] > 0.f ? x[idx] : 0.f;
}

void setup(float **buf, size_t bytes) {
#pragma coconet symmetric
  cudaMalloc((void **)&*buf, bytes);
}

void first(float *x, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    relu<<<(n + 255) / 256, 256, 0, s>>>(x, n);
  }
}

void second(float *x, int n, ncclComm_t comm, cudaStream_t s) {
#if defined(USE_SECOND_REGION)
#pragma coconet region name(second_region)
#endif
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclMax, comm, s);
  }
#if 0
#pragma coconet region name(never) bogus_clause
  { }
#endif
}

// CHECK: multi-region.cu: 1 region
// CHECK-NEXT: region first_20 ({{.*}}multi-region.cu:20) in first: nccl:ncclAllReduce launch:relu
// CHECK-NEXT: symmetric *buf ({{.*}}multi-region.cu:15)
// CHECK-NEXT: pointwise relu ({{.*}}multi-region.cu:8)

// DEFINED: multi-region.cu: 2 regions
// DEFINED-NEXT: region first_20
// DEFINED-NEXT: region second_region ({{.*}}multi-region.cu:29) in second: nccl:ncclAllReduce
