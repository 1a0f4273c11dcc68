// cuBLAS GEMMs inside a region: every argument kept, the _v2 names reported as written.
// RUN: %coconet --check %s | %FileCheck %s
// RUN: %coconet --dump=json %s | %FileCheck --check-prefix=JSON %s
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <cstdlib>

#define CUBLASCHECK(cmd) do { if ((cmd) != CUBLAS_STATUS_SUCCESS) abort(); } while (0)

void forward(cublasHandle_t h, const __half *x, const __half *w, __half *y, const float *a,
             const float *b, float *c, int m, int n, int k, ncclComm_t comm, cudaStream_t s) {
  const float one = 1.f, zero = 0.f;
  const __half hone = __float2half(1.f), hzero = __float2half(0.f);
#pragma coconet region name(gemms)
  {
    CUBLASCHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, w, CUDA_R_16F, m, x,
                             CUDA_R_16F, k, &zero, y, CUDA_R_16F, m, CUBLAS_COMPUTE_32F,
                             CUBLAS_GEMM_DEFAULT));
    cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, a, k, b, k, &zero, c, m);
    CUBLASCHECK(cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &hone, w, m, x, k, &hzero, y, m));
    ncclAllReduce(y, y, (size_t)m * n, ncclHalf, ncclSum, comm, s);
  }
}

// CHECK: region gemms ({{.*}}gemm.cu:16) in forward: gemm:cublasGemmEx gemm:cublasSgemm gemm:cublasHgemm nccl:ncclAllReduce{{$}}

// JSON:      "call": "cublasGemmEx",
// JSON-NEXT: "wrapper": {
// JSON-NEXT:   "name": "CUBLASCHECK",
// JSON:      "args": [{
// JSON-NEXT:   "text": "h",
// JSON:        "text": "CUBLAS_OP_N",
// JSON:        "text": "CUBLAS_COMPUTE_32F",
// JSON:        "text": "CUBLAS_GEMM_DEFAULT",
// JSON:      "call": "cublasSgemm",
// JSON-NEXT: "wrapper": null,
