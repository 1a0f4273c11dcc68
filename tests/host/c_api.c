/* Host backend: the runtime, NCCL and cuBLAS headers also serve C programs
 * (host code only; kernels need C++). */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  int failures = 0;
  float *d = NULL, h[4] = {1, 2, 3, 4}, back[4] = {0};
  failures += cudaMalloc((void **)&d, sizeof h) != cudaSuccess;
  failures += cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice) != cudaSuccess;
  failures += cudaMemcpy(back, d, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess;
  failures += memcmp(h, back, sizeof h) != 0;
  failures += cudaFree(d) != cudaSuccess;
  int version = 0;
  failures += ncclGetVersion(&version) != ncclSuccess || version != NCCL_VERSION_CODE;
  cublasHandle_t handle;
  failures += cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS;
  failures += cublasDestroy(handle) != CUBLAS_STATUS_SUCCESS;
  printf("host C API: %d failures\n", failures);
  return failures != 0;
}
