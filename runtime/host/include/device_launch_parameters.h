/* coconet host backend: the built-in index variables.  They are ordinary
 * globals that the launcher sets before it runs each CUDA thread (and saves
 * and restores around every fiber switch in COCONET_HOST_SYNC launches). */
#ifndef COCONET_HOST_DEVICE_LAUNCH_PARAMETERS_H
#define COCONET_HOST_DEVICE_LAUNCH_PARAMETERS_H

#include "vector_types.h"

extern uint3 threadIdx;
extern uint3 blockIdx;
extern dim3 blockDim;
extern dim3 gridDim;

#ifdef __cplusplus
constexpr int warpSize = 32;
#else
#define warpSize 32
#endif

#endif
