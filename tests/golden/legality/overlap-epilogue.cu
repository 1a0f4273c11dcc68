// overlap with an epilogue kernel that writes the GEMM's input A: chunk c's
// copy of it would run on the second stream before chunk c + 1's GEMM reads A
// on the user's stream (a race on a GPU). The chunk loop takes the epilogue
// kernels before it; that one and what follows run after the loop, as written.
// RUN: %coconet %s | %FileCheck %s
// RUN: %coconet --verify=ir:2 %s | %FileCheck --check-prefix=VERIFY %s
// RUN: %coconet --verify=2 %s | %FileCheck --check-prefix=EXEC %s
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void gelu(float *y, const float *x, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = 0.5f * x[i] * (1.0f + tanhf(0.7978846f * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
}

__global__ void decay(float *a, const float *y, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    a[i] = 0.99f * a[i] + 0.01f * y[i];
}

// A is n x m (k = n), so the epilogue's m * n elements of it are all of it.
void mlp(cublasHandle_t handle, float *a, const float *b, float *c, float *out, int m, int n,
         ncclComm_t comm, cudaStream_t stream) {
  const float one = 1.0f, zero = 0.0f;
#pragma coconet region name(mlp) overlap(chunks=2)
  {
    cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_T, m, n, n, &one, a, n, b, n, &zero, c, m);
    ncclAllReduce(c, c, (size_t)m * n, ncclFloat, ncclSum, comm, stream);
    gelu<<<256, 256, 0, stream>>>(out, c, (size_t)m * n);
    decay<<<256, 256, 0, stream>>>(a, out, (size_t)m * n);
  }
}

// CHECK: for (int coconet_c = 0; coconet_c < 2; coconet_c++) {
// CHECK: cublasSgemm(
// CHECK: coconet_mlp_chunk<<<
// CHECK-NOT: decay<<<
// CHECK: cudaStreamWaitEvent(stream,
// CHECK-NEXT: decay<<<256, 256, 0, stream>>>(a, out, (size_t)m * n);

// VERIFY: verify=ir mlp: ok
// EXEC: verify mlp: ok
