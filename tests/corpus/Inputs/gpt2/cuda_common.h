// cuda_common.h: the trainer's shared definitions (tests/corpus/ceil-div-launchers.cu):
// the precision, the grid macro every launcher uses, the checks.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#ifdef ROUNDED_UP
#define CEIL_DIV(M, N) ((M) / (N) + 1)
#else
#define CEIL_DIV(M, N) (((M) + (N)-1) / (N))
#endif

#if defined(ENABLE_FP32)
typedef float floatX;
#define ncclFloatX ncclFloat
#else
typedef __nv_bfloat16 floatX;
#define ncclFloatX ncclBfloat16
#endif

inline void cuda_check(cudaError_t error, const char *file, int line) {
  if (error != cudaSuccess) {
    std::printf("[CUDA ERROR] at file %s:%d:\n%s\n", file, line, cudaGetErrorString(error));
    std::exit(EXIT_FAILURE);
  }
}
#define cudaCheck(err) (cuda_check(err, __FILE__, __LINE__))

inline void nccl_check(ncclResult_t status, const char *file, int line) {
  if (status != ncclSuccess) {
    std::printf("[NCCL ERROR] at file %s:%d:\n%s\n", file, line, ncclGetErrorString(status));
    std::exit(EXIT_FAILURE);
  }
}
#define ncclCheck(err) (nccl_check(err, __FILE__, __LINE__))
