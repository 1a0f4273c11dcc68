/* coconet host backend: the driver API's version macro and basic types only;
 * no cu* function is served (a call fails to compile). */
#ifndef COCONET_HOST_CUDA_H
#define COCONET_HOST_CUDA_H

#include "cuda_runtime_api.h"

#define CUDA_VERSION 13000

typedef enum cudaError_enum { CUDA_SUCCESS = 0 } CUresult;
typedef unsigned long long CUdeviceptr;
typedef int CUdevice;
typedef cudaStream_t CUstream;
typedef cudaEvent_t CUevent;

#endif
