/* coconet host backend: the CUDA runtime API subset it serves (README.md lists
 * it).  Device memory is host memory, there is one device (0), and work runs
 * when it is issued, so every stream and event dependency holds trivially. */
#ifndef COCONET_HOST_CUDA_RUNTIME_API_H
#define COCONET_HOST_CUDA_RUNTIME_API_H

#include <stddef.h>

#include "coconet_host_defines.h"
#include "driver_types.h"
#include "vector_types.h"

#define CUDART_VERSION 13000
#define __CUDART_API_VERSION 13000

#ifdef __cplusplus
#define COCONET_HOST_DEFAULT(v) = v
extern "C" {
#else
#define COCONET_HOST_DEFAULT(v)
#endif

/* errors */
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorString(cudaError_t error);
const char *cudaGetErrorName(cudaError_t error);

/* the device */
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaSetDeviceFlags(unsigned int flags);
cudaError_t cudaGetDeviceFlags(unsigned int *flags);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value);
cudaError_t cudaDeviceGetLimit(size_t *value, enum cudaLimit limit);
cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache config);
cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority);
cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice);
cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags);
cudaError_t cudaDeviceDisablePeerAccess(int peerDevice);
cudaError_t cudaDriverGetVersion(int *driverVersion);
cudaError_t cudaRuntimeGetVersion(int *runtimeVersion);
cudaError_t cudaMemGetInfo(size_t *free, size_t *total);

/* memory */
cudaError_t cudaMalloc(void **devPtr, size_t size);
cudaError_t cudaMallocHost(void **ptr, size_t size);
cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags);
cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags COCONET_HOST_DEFAULT(cudaMemAttachGlobal));
cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height);
cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream);
cudaError_t cudaFree(void *devPtr);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream);
cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags);
cudaError_t cudaHostUnregister(void *ptr);
cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags);
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream COCONET_HOST_DEFAULT(0));
cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                         size_t height, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                              size_t height, enum cudaMemcpyKind kind, cudaStream_t stream COCONET_HOST_DEFAULT(0));
cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count);
cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
                                cudaStream_t stream COCONET_HOST_DEFAULT(0));
cudaError_t cudaMemset(void *devPtr, int value, size_t count);
cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream COCONET_HOST_DEFAULT(0));
cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width, size_t height);
cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset COCONET_HOST_DEFAULT(0),
                               enum cudaMemcpyKind kind COCONET_HOST_DEFAULT(cudaMemcpyHostToDevice));
cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset COCONET_HOST_DEFAULT(0),
                                 enum cudaMemcpyKind kind COCONET_HOST_DEFAULT(cudaMemcpyDeviceToHost));
cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset,
                                    enum cudaMemcpyKind kind, cudaStream_t stream COCONET_HOST_DEFAULT(0));
cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind, cudaStream_t stream COCONET_HOST_DEFAULT(0));
cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol);

/* streams and events */
cudaError_t cudaStreamCreate(cudaStream_t *pStream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags COCONET_HOST_DEFAULT(0));
cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int *flags);
cudaError_t cudaStreamGetPriority(cudaStream_t stream, int *priority);
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData);
cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *userData,
                                  unsigned int flags);
cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream COCONET_HOST_DEFAULT(0));
cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream COCONET_HOST_DEFAULT(0),
                                     unsigned int flags COCONET_HOST_DEFAULT(0));
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaEventDestroy(cudaEvent_t event);

/* kernels (launches themselves go through coconet_host_launch) */
cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value);
cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func);
cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache cacheConfig);
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize,
                                                          size_t dynamicSMemSize);

/* the host backend's: where the next allocation (or NCCL call) is made, for error reports */
void coconet_host_callsite(const char *file, int line);

#ifdef __cplusplus
}
#endif

#endif
