// common.cuh: the trainer's checks and helpers (tests/corpus/trainer-zero.cu).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define cudaCheck(err) cuda_check((err), __FILE__, __LINE__)
inline void cuda_check(cudaError_t error, const char *file, int line) {
  if (error != cudaSuccess) {
    std::fprintf(stderr, "[CUDA ERROR] at file %s:%d: %s\n", file, line, cudaGetErrorString(error));
    std::exit(EXIT_FAILURE);
  }
}
