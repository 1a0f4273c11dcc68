// Templated kernels, launches without shared memory or stream, dim3 configurations.
// RUN: %coconet --dump=json %s | %FileCheck %s
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <nccl.h>

template <typename T, int UNROLL>
__global__ void axpy(T *y, const T *x, T a, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
#pragma unroll
  for (int u = 0; u < UNROLL; u++)
    if (i + u < n) y[i + u] = a * x[i + u] + y[i + u];
}

template <typename T>
void run(T *y, T *x, T a, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(templated)
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    axpy<T, 4><<<dim3((n + 1023) / 1024, 1, 1), dim3(256)>>>(y, x, a, n);
  }
}

template void run<float>(float *, float *, float, int, ncclComm_t, cudaStream_t);

// CHECK:      "kind": "launch",
// CHECK:      "call": "axpy",
// CHECK:      "launch": {
// CHECK-NEXT:   "kernel": "axpy",
// CHECK-NEXT:   "template_args": "T, 4",
// CHECK-NEXT:   "seen_through": null,
// CHECK-NEXT:   "grid": {
// CHECK-NEXT:     "text": "dim3((n + 1023) / 1024, 1, 1)",
// CHECK:        "block": {
// CHECK-NEXT:     "text": "dim3(256)",
// CHECK:        "shmem": null,
// CHECK-NEXT:   "stream": null,
// CHECK-NEXT:   "definition": {
// CHECK-NEXT:     "name": "axpy",
// CHECK-NEXT:     "template": true,
// CHECK:          "params": [{
// CHECK-NEXT:       "name": "y",
// CHECK-NEXT:       "type": "T *"
