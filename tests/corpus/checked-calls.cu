// Style: every call checked as production trainers check them: NCCLCHECK and
// CUDACHECK macros around the calls, a checking function around another, and
// cudaGetLastError after the launch, inside the region.
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=exec:4 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_runtime.h>
#include <nccl.h>
#include <cstdio>
#include <cstdlib>

#define NCCLCHECK(cmd)                                                                       \
  do {                                                                                       \
    ncclResult_t r = cmd;                                                                    \
    if (r != ncclSuccess) {                                                                  \
      printf("Failed, NCCL error %s:%d '%s'\n", __FILE__, __LINE__, ncclGetErrorString(r));  \
      exit(EXIT_FAILURE);                                                                    \
    }                                                                                        \
  } while (0)
#define CUDACHECK(cmd)                                                                       \
  do {                                                                                       \
    cudaError_t e = cmd;                                                                     \
    if (e != cudaSuccess) {                                                                  \
      printf("Failed: Cuda error %s:%d '%s'\n", __FILE__, __LINE__, cudaGetErrorString(e));  \
      exit(EXIT_FAILURE);                                                                    \
    }                                                                                        \
  } while (0)

static void cuda_check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    exit(1);
  }
}

__global__ void scale_shift(float *x, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + b;
}

void step(float *x, float *tmp, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(checked) split reorder
  {
    CUDACHECK(cudaMemsetAsync(tmp, 0, n * sizeof(float), s));
    NCCLCHECK(ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s));
    scale_shift<<<(n + 255) / 256, 256, 0, s>>>(x, 0.5f, 1.0f, n);
    CUDACHECK(cudaGetLastError());
    cuda_check(cudaMemcpyAsync(tmp, x, n * sizeof(float), cudaMemcpyDeviceToDevice, s), "copy");
  }
}

// IR: verify checked: ok
// EXEC: verify=exec checked: ok (the region as written and as scheduled agree within 0 ULP)
