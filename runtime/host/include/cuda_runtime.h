/* coconet host backend: what `-include cuda_runtime.h` gives every translated
 * program: the runtime API, the built-in variables, the device intrinsics,
 * the launch interface, and the C++ conveniences of CUDA's cuda_runtime.h
 * (typed cudaMalloc, symbol copies, occupancy helpers). */
#ifndef COCONET_HOST_CUDA_RUNTIME_H
#define COCONET_HOST_CUDA_RUNTIME_H

#include "cuda_runtime_api.h"
#include "device_launch_parameters.h"
#include "vector_functions.h"

#ifdef __cplusplus

#include "coconet_host.h"
#include "coconet_host_device.h"

template <class T>
inline cudaError_t cudaMalloc(T **devPtr, size_t size) {
  return cudaMalloc(reinterpret_cast<void **>(devPtr), size);
}
template <class T>
inline cudaError_t cudaMallocHost(T **ptr, size_t size, unsigned int flags = 0) {
  return cudaHostAlloc(reinterpret_cast<void **>(ptr), size, flags);
}
template <class T>
inline cudaError_t cudaHostAlloc(T **ptr, size_t size, unsigned int flags) {
  return cudaHostAlloc(reinterpret_cast<void **>(ptr), size, flags);
}
template <class T>
inline cudaError_t cudaMallocManaged(T **devPtr, size_t size, unsigned int flags = cudaMemAttachGlobal) {
  return cudaMallocManaged(reinterpret_cast<void **>(devPtr), size, flags);
}
template <class T>
inline cudaError_t cudaMallocPitch(T **devPtr, size_t *pitch, size_t width, size_t height) {
  return cudaMallocPitch(reinterpret_cast<void **>(devPtr), pitch, width, height);
}
template <class T>
inline cudaError_t cudaMallocAsync(T **devPtr, size_t size, cudaStream_t stream) {
  return cudaMallocAsync(reinterpret_cast<void **>(devPtr), size, stream);
}
template <class T>
inline cudaError_t cudaHostGetDevicePointer(T **pDevice, void *pHost, unsigned int flags) {
  return cudaHostGetDevicePointer(reinterpret_cast<void **>(pDevice), pHost, flags);
}

/* A __device__ or __constant__ variable is an ordinary global here. */
template <class T>
inline cudaError_t cudaMemcpyToSymbol(const T &symbol, const void *src, size_t count, size_t offset = 0,
                                      enum cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  return cudaMemcpyToSymbol(static_cast<const void *>(&symbol), src, count, offset, kind);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbol(void *dst, const T &symbol, size_t count, size_t offset = 0,
                                        enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  return cudaMemcpyFromSymbol(dst, static_cast<const void *>(&symbol), count, offset, kind);
}
template <class T>
inline cudaError_t cudaMemcpyToSymbolAsync(const T &symbol, const void *src, size_t count, size_t offset = 0,
                                           enum cudaMemcpyKind kind = cudaMemcpyHostToDevice,
                                           cudaStream_t stream = 0) {
  return cudaMemcpyToSymbolAsync(static_cast<const void *>(&symbol), src, count, offset, kind, stream);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const T &symbol, size_t count, size_t offset = 0,
                                             enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost,
                                             cudaStream_t stream = 0) {
  return cudaMemcpyFromSymbolAsync(dst, static_cast<const void *>(&symbol), count, offset, kind, stream);
}
template <class T>
inline cudaError_t cudaGetSymbolAddress(void **devPtr, const T &symbol) {
  return cudaGetSymbolAddress(devPtr, static_cast<const void *>(&symbol));
}

inline cudaError_t cudaEventCreate(cudaEvent_t *event, unsigned int flags) {
  return cudaEventCreateWithFlags(event, flags);
}

template <class... P>
inline cudaError_t cudaFuncSetAttribute(void (*func)(P...), enum cudaFuncAttribute attr, int value) {
  return cudaFuncSetAttribute(reinterpret_cast<const void *>(func), attr, value);
}
template <class... P>
inline cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, void (*func)(P...)) {
  return cudaFuncGetAttributes(attr, reinterpret_cast<const void *>(func));
}
template <class... P>
inline cudaError_t cudaFuncSetCacheConfig(void (*func)(P...), enum cudaFuncCache config) {
  return cudaFuncSetCacheConfig(reinterpret_cast<const void *>(func), config);
}
template <class... P>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, void (*func)(P...), int blockSize,
                                                                 size_t dynamicSMemSize) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, reinterpret_cast<const void *>(func), blockSize,
                                                       dynamicSMemSize);
}
/* The emulated device reports a 1024-thread block as the best choice and
 * enough blocks for two per multiprocessor. */
template <class F>
inline cudaError_t cudaOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, F func,
                                                      size_t dynamicSMemSize = 0, int blockSizeLimit = 0) {
  (void)func;
  (void)dynamicSMemSize;
  int best = blockSizeLimit > 0 && blockSizeLimit < 1024 ? blockSizeLimit : 1024;
  int sms = 0;
  cudaError_t err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  if (err != cudaSuccess) return err;
  *blockSize = best;
  *minGridSize = sms * (2048 / best);
  return cudaSuccess;
}

#endif

/* Device allocations record their file:line for COCONET_HOST_MEMCHECK's
 * reports (COCONET_HOST_NO_CALLSITES: not). */
#ifndef COCONET_HOST_NO_CALLSITES
#define cudaMalloc(...) (coconet_host_callsite(__FILE__, __LINE__), cudaMalloc(__VA_ARGS__))
#define cudaMallocManaged(...) (coconet_host_callsite(__FILE__, __LINE__), cudaMallocManaged(__VA_ARGS__))
#define cudaMallocAsync(...) (coconet_host_callsite(__FILE__, __LINE__), cudaMallocAsync(__VA_ARGS__))
#define cudaMallocPitch(...) (coconet_host_callsite(__FILE__, __LINE__), cudaMallocPitch(__VA_ARGS__))
#endif

#endif
