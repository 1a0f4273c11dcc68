/* coconet host backend: profiler range markers (accepted, no effect). */
#ifndef COCONET_HOST_CUDA_PROFILER_API_H
#define COCONET_HOST_CUDA_PROFILER_API_H

#include "cuda_runtime_api.h"

static inline cudaError_t cudaProfilerStart(void) { return cudaSuccess; }
static inline cudaError_t cudaProfilerStop(void) { return cudaSuccess; }

#endif
