// coconet host backend: the CUDA runtime API.  Device memory is host memory;
// streams and events only check their handles and record times, because work
// runs when it is issued.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <map>
#include <set>
#include <unordered_map>

#include "host.h"

struct CUstream_st {
  unsigned flags;
  int priority;
};

struct CUevent_st {
  unsigned flags;
  bool recorded;
  double seconds;  // CLOCK_MONOTONIC time of the last record
};

namespace coconet_host {

namespace {

struct allocation {
  size_t size;
  cudaMemoryType type;
  bool registered;  // cudaHostRegister'ed user memory (not ours to free)
};

cudaError_t last_error = cudaSuccess;
std::map<const char *, allocation> allocations;  // by start address
std::set<cudaStream_t> streams;
std::set<cudaEvent_t> events;
std::unordered_map<const void *, int> max_dynamic_shared;  // cudaFuncAttributeMaxDynamicSharedMemorySize
unsigned device_flags;
size_t limits[7] = {1024, 1 << 20, 8 << 20, 2, 2048, 64, 0};

const size_t default_dynamic_shared = 48 * 1024;
const size_t optin_dynamic_shared = 232448;

const struct {
  cudaError_t code;
  const char *name;
  const char *text;
} error_table[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorCudartUnloading, "cudaErrorCudartUnloading", "driver shutting down"},
    {cudaErrorProfilerDisabled, "cudaErrorProfilerDisabled", "profiler disabled"},
    {cudaErrorProfilerNotInitialized, "cudaErrorProfilerNotInitialized", "profiler not initialized"},
    {cudaErrorProfilerAlreadyStarted, "cudaErrorProfilerAlreadyStarted", "profiler already started"},
    {cudaErrorProfilerAlreadyStopped, "cudaErrorProfilerAlreadyStopped", "profiler already stopped"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {cudaErrorInvalidPitchValue, "cudaErrorInvalidPitchValue", "invalid pitch argument"},
    {cudaErrorInvalidSymbol, "cudaErrorInvalidSymbol", "invalid device symbol"},
    {cudaErrorInvalidHostPointer, "cudaErrorInvalidHostPointer", "invalid host pointer"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {cudaErrorInvalidTexture, "cudaErrorInvalidTexture", "invalid texture"},
    {cudaErrorInvalidTextureBinding, "cudaErrorInvalidTextureBinding", "invalid texture binding"},
    {cudaErrorInvalidChannelDescriptor, "cudaErrorInvalidChannelDescriptor", "invalid channel descriptor"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {cudaErrorAddressOfConstant, "cudaErrorAddressOfConstant", "address of constant"},
    {cudaErrorTextureFetchFailed, "cudaErrorTextureFetchFailed", "texture fetch failed"},
    {cudaErrorTextureNotBound, "cudaErrorTextureNotBound", "texture not bound"},
    {cudaErrorSynchronizationError, "cudaErrorSynchronizationError", "synchronization error"},
    {cudaErrorInvalidFilterSetting, "cudaErrorInvalidFilterSetting", "invalid filter setting"},
    {cudaErrorInvalidNormSetting, "cudaErrorInvalidNormSetting", "invalid norm setting"},
    {cudaErrorMixedDeviceExecution, "cudaErrorMixedDeviceExecution", "mixed device execution"},
    {cudaErrorNotYetImplemented, "cudaErrorNotYetImplemented", "not yet implemented"},
    {cudaErrorMemoryValueTooLarge, "cudaErrorMemoryValueTooLarge", "memory value too large"},
    {cudaErrorStubLibrary, "cudaErrorStubLibrary", "stub library"},
    {cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver", "CUDA driver version is insufficient for CUDA runtime version"},
    {cudaErrorCallRequiresNewerDriver, "cudaErrorCallRequiresNewerDriver", "call requires newer driver"},
    {cudaErrorInvalidSurface, "cudaErrorInvalidSurface", "invalid surface"},
    {cudaErrorDuplicateVariableName, "cudaErrorDuplicateVariableName", "duplicate variable name"},
    {cudaErrorDuplicateTextureName, "cudaErrorDuplicateTextureName", "duplicate texture name"},
    {cudaErrorDuplicateSurfaceName, "cudaErrorDuplicateSurfaceName", "duplicate surface name"},
    {cudaErrorDevicesUnavailable, "cudaErrorDevicesUnavailable", "devices unavailable"},
    {cudaErrorIncompatibleDriverContext, "cudaErrorIncompatibleDriverContext", "incompatible driver context"},
    {cudaErrorMissingConfiguration, "cudaErrorMissingConfiguration", "__global__ function call is not configured"},
    {cudaErrorPriorLaunchFailure, "cudaErrorPriorLaunchFailure", "prior launch failure"},
    {cudaErrorLaunchMaxDepthExceeded, "cudaErrorLaunchMaxDepthExceeded", "launch max depth exceeded"},
    {cudaErrorLaunchFileScopedTex, "cudaErrorLaunchFileScopedTex", "launch file scoped tex"},
    {cudaErrorLaunchFileScopedSurf, "cudaErrorLaunchFileScopedSurf", "launch file scoped surf"},
    {cudaErrorSyncDepthExceeded, "cudaErrorSyncDepthExceeded", "sync depth exceeded"},
    {cudaErrorLaunchPendingCountExceeded, "cudaErrorLaunchPendingCountExceeded", "launch pending count exceeded"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorDeviceNotLicensed, "cudaErrorDeviceNotLicensed", "device not licensed"},
    {cudaErrorSoftwareValidityNotEstablished, "cudaErrorSoftwareValidityNotEstablished", "software validity not established"},
    {cudaErrorStartupFailure, "cudaErrorStartupFailure", "startup failure"},
    {cudaErrorInvalidKernelImage, "cudaErrorInvalidKernelImage", "invalid kernel image"},
    {cudaErrorDeviceUninitialized, "cudaErrorDeviceUninitialized", "device uninitialized"},
    {cudaErrorMapBufferObjectFailed, "cudaErrorMapBufferObjectFailed", "map buffer object failed"},
    {cudaErrorUnmapBufferObjectFailed, "cudaErrorUnmapBufferObjectFailed", "unmap buffer object failed"},
    {cudaErrorArrayIsMapped, "cudaErrorArrayIsMapped", "array is mapped"},
    {cudaErrorAlreadyMapped, "cudaErrorAlreadyMapped", "already mapped"},
    {cudaErrorNoKernelImageForDevice, "cudaErrorNoKernelImageForDevice", "no kernel image is available for execution on the device"},
    {cudaErrorAlreadyAcquired, "cudaErrorAlreadyAcquired", "already acquired"},
    {cudaErrorNotMapped, "cudaErrorNotMapped", "not mapped"},
    {cudaErrorNotMappedAsArray, "cudaErrorNotMappedAsArray", "not mapped as array"},
    {cudaErrorNotMappedAsPointer, "cudaErrorNotMappedAsPointer", "not mapped as pointer"},
    {cudaErrorECCUncorrectable, "cudaErrorECCUncorrectable", "e c c uncorrectable"},
    {cudaErrorUnsupportedLimit, "cudaErrorUnsupportedLimit", "limit is not supported on this architecture"},
    {cudaErrorDeviceAlreadyInUse, "cudaErrorDeviceAlreadyInUse", "device already in use"},
    {cudaErrorPeerAccessUnsupported, "cudaErrorPeerAccessUnsupported", "peer access is not supported between these two devices"},
    {cudaErrorInvalidPtx, "cudaErrorInvalidPtx", "invalid ptx"},
    {cudaErrorInvalidGraphicsContext, "cudaErrorInvalidGraphicsContext", "invalid graphics context"},
    {cudaErrorNvlinkUncorrectable, "cudaErrorNvlinkUncorrectable", "nvlink uncorrectable"},
    {cudaErrorJitCompilerNotFound, "cudaErrorJitCompilerNotFound", "jit compiler not found"},
    {cudaErrorUnsupportedPtxVersion, "cudaErrorUnsupportedPtxVersion", "unsupported ptx version"},
    {cudaErrorJitCompilationDisabled, "cudaErrorJitCompilationDisabled", "jit compilation disabled"},
    {cudaErrorUnsupportedExecAffinity, "cudaErrorUnsupportedExecAffinity", "unsupported exec affinity"},
    {cudaErrorUnsupportedDevSideSync, "cudaErrorUnsupportedDevSideSync", "unsupported dev side sync"},
    {cudaErrorContained, "cudaErrorContained", "contained"},
    {cudaErrorInvalidSource, "cudaErrorInvalidSource", "invalid source"},
    {cudaErrorFileNotFound, "cudaErrorFileNotFound", "file not found"},
    {cudaErrorSharedObjectSymbolNotFound, "cudaErrorSharedObjectSymbolNotFound", "shared object symbol not found"},
    {cudaErrorSharedObjectInitFailed, "cudaErrorSharedObjectInitFailed", "shared object init failed"},
    {cudaErrorOperatingSystem, "cudaErrorOperatingSystem", "operating system"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorIllegalState, "cudaErrorIllegalState", "illegal state"},
    {cudaErrorLossyQuery, "cudaErrorLossyQuery", "lossy query"},
    {cudaErrorSymbolNotFound, "cudaErrorSymbolNotFound", "named symbol not found"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
    {cudaErrorLaunchTimeout, "cudaErrorLaunchTimeout", "the launch timed out and was terminated"},
    {cudaErrorLaunchIncompatibleTexturing, "cudaErrorLaunchIncompatibleTexturing", "launch incompatible texturing"},
    {cudaErrorPeerAccessAlreadyEnabled, "cudaErrorPeerAccessAlreadyEnabled", "peer access is already enabled"},
    {cudaErrorPeerAccessNotEnabled, "cudaErrorPeerAccessNotEnabled", "peer access has not been enabled"},
    {cudaErrorSetOnActiveProcess, "cudaErrorSetOnActiveProcess", "cannot set while device is active in this process"},
    {cudaErrorContextIsDestroyed, "cudaErrorContextIsDestroyed", "context is destroyed"},
    {cudaErrorAssert, "cudaErrorAssert", "device-side assert triggered"},
    {cudaErrorTooManyPeers, "cudaErrorTooManyPeers", "too many peers"},
    {cudaErrorHostMemoryAlreadyRegistered, "cudaErrorHostMemoryAlreadyRegistered", "part or all of the requested memory range is already mapped"},
    {cudaErrorHostMemoryNotRegistered, "cudaErrorHostMemoryNotRegistered", "pointer does not correspond to a registered memory region"},
    {cudaErrorHardwareStackError, "cudaErrorHardwareStackError", "hardware stack error"},
    {cudaErrorIllegalInstruction, "cudaErrorIllegalInstruction", "an illegal instruction was encountered"},
    {cudaErrorMisalignedAddress, "cudaErrorMisalignedAddress", "misaligned address"},
    {cudaErrorInvalidAddressSpace, "cudaErrorInvalidAddressSpace", "invalid address space"},
    {cudaErrorInvalidPc, "cudaErrorInvalidPc", "invalid pc"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorCooperativeLaunchTooLarge, "cudaErrorCooperativeLaunchTooLarge", "too many blocks in cooperative launch"},
    {cudaErrorTensorMemoryLeak, "cudaErrorTensorMemoryLeak", "tensor memory leak"},
    {cudaErrorNotPermitted, "cudaErrorNotPermitted", "operation not permitted"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorSystemNotReady, "cudaErrorSystemNotReady", "system not ready"},
    {cudaErrorSystemDriverMismatch, "cudaErrorSystemDriverMismatch", "system driver mismatch"},
    {cudaErrorCompatNotSupportedOnDevice, "cudaErrorCompatNotSupportedOnDevice", "compat not supported on device"},
    {cudaErrorMpsConnectionFailed, "cudaErrorMpsConnectionFailed", "mps connection failed"},
    {cudaErrorMpsRpcFailure, "cudaErrorMpsRpcFailure", "mps rpc failure"},
    {cudaErrorMpsServerNotReady, "cudaErrorMpsServerNotReady", "mps server not ready"},
    {cudaErrorMpsMaxClientsReached, "cudaErrorMpsMaxClientsReached", "mps max clients reached"},
    {cudaErrorMpsMaxConnectionsReached, "cudaErrorMpsMaxConnectionsReached", "mps max connections reached"},
    {cudaErrorMpsClientTerminated, "cudaErrorMpsClientTerminated", "mps client terminated"},
    {cudaErrorCdpNotSupported, "cudaErrorCdpNotSupported", "cdp not supported"},
    {cudaErrorCdpVersionMismatch, "cudaErrorCdpVersionMismatch", "cdp version mismatch"},
    {cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported", "stream capture unsupported"},
    {cudaErrorStreamCaptureInvalidated, "cudaErrorStreamCaptureInvalidated", "stream capture invalidated"},
    {cudaErrorStreamCaptureMerge, "cudaErrorStreamCaptureMerge", "stream capture merge"},
    {cudaErrorStreamCaptureUnmatched, "cudaErrorStreamCaptureUnmatched", "stream capture unmatched"},
    {cudaErrorStreamCaptureUnjoined, "cudaErrorStreamCaptureUnjoined", "stream capture unjoined"},
    {cudaErrorStreamCaptureIsolation, "cudaErrorStreamCaptureIsolation", "stream capture isolation"},
    {cudaErrorStreamCaptureImplicit, "cudaErrorStreamCaptureImplicit", "stream capture implicit"},
    {cudaErrorCapturedEvent, "cudaErrorCapturedEvent", "captured event"},
    {cudaErrorStreamCaptureWrongThread, "cudaErrorStreamCaptureWrongThread", "stream capture wrong thread"},
    {cudaErrorTimeout, "cudaErrorTimeout", "timeout expired"},
    {cudaErrorGraphExecUpdateFailure, "cudaErrorGraphExecUpdateFailure", "graph exec update failure"},
    {cudaErrorExternalDevice, "cudaErrorExternalDevice", "external device"},
    {cudaErrorInvalidClusterSize, "cudaErrorInvalidClusterSize", "invalid cluster size"},
    {cudaErrorFunctionNotLoaded, "cudaErrorFunctionNotLoaded", "function not loaded"},
    {cudaErrorInvalidResourceType, "cudaErrorInvalidResourceType", "invalid resource type"},
    {cudaErrorInvalidResourceConfiguration, "cudaErrorInvalidResourceConfiguration", "invalid resource configuration"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

// Logs what failed and why, records it for cudaGetLastError, returns it.
cudaError_t fail(cudaError_t err, const char *fn, const char *why) {
  COCONET_WARN(SUB_CUDA, "%s: %s (%s)", fn, cudaGetErrorString(err), why);
  return set_last_error(err);
}

double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

size_t physical_memory(void) { return (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE); }

// The allocation containing p, or allocations.end().
std::map<const char *, allocation>::iterator find_allocation(const void *p) {
  const char *c = static_cast<const char *>(p);
  auto it = allocations.upper_bound(c);
  if (it == allocations.begin()) return allocations.end();
  --it;
  return c < it->first + (it->second.size ? it->second.size : 1) ? it : allocations.end();
}

cudaError_t allocate(void **p, size_t size, cudaMemoryType type, int fill, const char *fn) {
  if (!p) return fail(cudaErrorInvalidValue, fn, "null result pointer");
  *p = nullptr;
  char site[96];
  take_callsite(site, sizeof site);
  if (size == 0) return cudaSuccess;
  const bool guard = type != cudaMemoryTypeHost && memcheck_enabled();
  void *mem = guard ? memcheck_alloc(size, site) : nullptr;
#ifdef COCONET_HOST_ASAN
  // The exact size: AddressSanitizer then reports an access one byte past the end.
  if (!guard && posix_memalign(&mem, 256, size) != 0) mem = nullptr;
#else
  if (!guard) mem = aligned_alloc(256, (size + 255) / 256 * 256);
#endif
  if (!mem) return fail(cudaErrorMemoryAllocation, fn, "host memory exhausted");
  memset(mem, fill, size);
  allocations[static_cast<char *>(mem)] = allocation{size, type, false};
  *p = mem;
  COCONET_TRACE(SUB_CUDA, "%s: %zu bytes at %p", fn, size, mem);
  return cudaSuccess;
}

cudaError_t release(void *p, bool device_side, const char *fn) {
  if (!p) return cudaSuccess;
  auto it = allocations.find(static_cast<char *>(p));
  const bool ok = it != allocations.end() && !it->second.registered &&
                  (device_side ? it->second.type != cudaMemoryTypeHost : it->second.type == cudaMemoryTypeHost);
  if (!ok) return fail(cudaErrorInvalidValue, fn, "not a pointer this function allocated");
  allocations.erase(it);
  char who[160];
  snprintf(who, sizeof who, "a kernel or copy before this %s", fn);
  if (!memcheck_free(p, who)) free(p);
  return cudaSuccess;
}

bool memcpy_kind_valid(cudaMemcpyKind kind) { return kind >= cudaMemcpyHostToHost && kind <= cudaMemcpyDefault; }

cudaError_t check_stream(cudaStream_t stream, const char *fn) {
  return stream_is_valid(stream) ? cudaSuccess : fail(cudaErrorInvalidResourceHandle, fn, "unknown stream");
}

cudaError_t check_event(cudaEvent_t event, const char *fn) {
  return events.count(event) ? cudaSuccess : fail(cudaErrorInvalidResourceHandle, fn, "unknown event");
}

/* How many devices each rank sees: COCONET_HOST_DEVICES, else the number of
 * ranks on this node (Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE, MPICH's
 * MPI_LOCALNRANKS), so that a program choosing its GPU by node-local rank
 * (cudaSetDevice(local_rank)) runs; else 1. Every device is the same CPU. */
int device_count(void) {
  static int count = 0;
  if (count) return count;
  const char *names[] = {"COCONET_HOST_DEVICES", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"};
  for (const char *name : names) {
    const char *v = getenv(name);
    char *end = nullptr;
    long n = v ? strtol(v, &end, 10) : 0;
    if (v && end != v && *end == '\0' && n >= 1 && n <= 1024) {
      count = (int)n;
      return count;
    }
  }
  count = 1;
  return count;
}

int current_device;

cudaError_t check_device(int device, const char *fn) {
  if (device >= 0 && device < device_count()) return cudaSuccess;
  static char why[160];
  snprintf(why, sizeof why, "device %d: the host backend gives each rank %d device%s (0..%d; COCONET_HOST_DEVICES sets how many)",
           device, device_count(), device_count() == 1 ? "" : "s", device_count() - 1);
  return fail(cudaErrorInvalidDevice, fn, why);
}

void fill_properties(cudaDeviceProp *p) {
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "coconet host backend (CPU emulation of an sm_90 GPU)");
  p->totalGlobalMem = physical_memory();
  p->sharedMemPerBlock = default_dynamic_shared;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->memPitch = 2147483647;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024;
  p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647;
  p->maxGridSize[1] = 65535;
  p->maxGridSize[2] = 65535;
  p->clockRate = 1755000;
  p->totalConstMem = 65536;
  p->major = 9;
  p->minor = 0;
  p->textureAlignment = 512;
  p->texturePitchAlignment = 32;
  p->deviceOverlap = 1;
  p->multiProcessorCount = 132;
  p->canMapHostMemory = 1;
  p->concurrentKernels = 1;
  p->asyncEngineCount = 2;
  p->unifiedAddressing = 1;
  p->memoryClockRate = 2619000;
  p->memoryBusWidth = 5120;
  p->l2CacheSize = 50 << 20;
  p->maxThreadsPerMultiProcessor = 2048;
  p->streamPrioritiesSupported = 1;
  p->globalL1CacheSupported = 1;
  p->localL1CacheSupported = 1;
  p->sharedMemPerMultiprocessor = 233472;
  p->regsPerMultiprocessor = 65536;
  p->managedMemory = 1;
  p->concurrentManagedAccess = 1;
  p->computePreemptionSupported = 1;
  p->canUseHostPointerForRegisteredMem = 1;
  p->sharedMemPerBlockOptin = optin_dynamic_shared;
  p->maxBlocksPerMultiProcessor = 32;
  p->reservedSharedMemPerBlock = 1024;
  p->hostRegisterSupported = 1;
  p->memoryPoolsSupported = 1;
}

}  // namespace

cudaError_t set_last_error(cudaError_t err) {
  if (err != cudaSuccess) last_error = err;
  return err;
}

bool stream_is_valid(cudaStream_t stream) {
  return stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread || streams.count(stream);
}

size_t kernel_max_dynamic_shared(const void *kernel) {
  auto it = max_dynamic_shared.find(kernel);
  return it == max_dynamic_shared.end() ? default_dynamic_shared : (size_t)it->second;
}

}  // namespace coconet_host

using namespace coconet_host;

/* errors */

cudaError_t cudaGetLastError(void) {
  const cudaError_t err = last_error;
  last_error = cudaSuccess;
  return err;
}

cudaError_t cudaPeekAtLastError(void) { return last_error; }

const char *cudaGetErrorString(cudaError_t error) {
  for (const auto &e : error_table)
    if (e.code == error) return e.text;
  return "unrecognized error code";
}

const char *cudaGetErrorName(cudaError_t error) {
  for (const auto &e : error_table)
    if (e.code == error) return e.name;
  return "cudaErrorUnknown";
}

/* the device */

cudaError_t cudaGetDeviceCount(int *count) {
  if (!count) return fail(cudaErrorInvalidValue, "cudaGetDeviceCount", "null count");
  *count = device_count();
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (cudaError_t err = check_device(device, "cudaSetDevice")) return err;
  current_device = device;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device) {
  if (!device) return fail(cudaErrorInvalidValue, "cudaGetDevice", "null device");
  *device = current_device;
  return cudaSuccess;
}

cudaError_t cudaSetDeviceFlags(unsigned int flags) {
  if (flags & ~(unsigned)(cudaDeviceMask)) return fail(cudaErrorInvalidValue, "cudaSetDeviceFlags", "unknown flags");
  device_flags = flags;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceFlags(unsigned int *flags) {
  if (!flags) return fail(cudaErrorInvalidValue, "cudaGetDeviceFlags", "null flags");
  *flags = device_flags;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device) {
  if (!prop) return fail(cudaErrorInvalidValue, "cudaGetDeviceProperties", "null prop");
  if (cudaError_t err = check_device(device, "cudaGetDeviceProperties")) return err;
  fill_properties(prop);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device) {
  if (!value) return fail(cudaErrorInvalidValue, "cudaDeviceGetAttribute", "null value");
  if (cudaError_t err = check_device(device, "cudaDeviceGetAttribute")) return err;
  cudaDeviceProp p;
  fill_properties(&p);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *value = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *value = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *value = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = (int)p.sharedMemPerBlock; break;
    case cudaDevAttrTotalConstantMemory: *value = (int)p.totalConstMem; break;
    case cudaDevAttrWarpSize: *value = p.warpSize; break;
    case cudaDevAttrMaxPitch: *value = (int)p.memPitch; break;
    case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; break;
    case cudaDevAttrClockRate: *value = p.clockRate; break;
    case cudaDevAttrTextureAlignment: *value = (int)p.textureAlignment; break;
    case cudaDevAttrGpuOverlap: *value = p.deviceOverlap; break;
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
    case cudaDevAttrKernelExecTimeout: *value = p.kernelExecTimeoutEnabled; break;
    case cudaDevAttrIntegrated: *value = p.integrated; break;
    case cudaDevAttrCanMapHostMemory: *value = p.canMapHostMemory; break;
    case cudaDevAttrComputeMode: *value = p.computeMode; break;
    case cudaDevAttrConcurrentKernels: *value = p.concurrentKernels; break;
    case cudaDevAttrEccEnabled: *value = p.ECCEnabled; break;
    case cudaDevAttrPciBusId: *value = p.pciBusID; break;
    case cudaDevAttrPciDeviceId: *value = p.pciDeviceID; break;
    case cudaDevAttrPciDomainId: *value = p.pciDomainID; break;
    case cudaDevAttrTccDriver: *value = p.tccDriver; break;
    case cudaDevAttrMemoryClockRate: *value = p.memoryClockRate; break;
    case cudaDevAttrGlobalMemoryBusWidth: *value = p.memoryBusWidth; break;
    case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrAsyncEngineCount: *value = p.asyncEngineCount; break;
    case cudaDevAttrUnifiedAddressing: *value = p.unifiedAddressing; break;
    case cudaDevAttrTexturePitchAlignment: *value = (int)p.texturePitchAlignment; break;
    case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
    case cudaDevAttrStreamPrioritiesSupported: *value = p.streamPrioritiesSupported; break;
    case cudaDevAttrGlobalL1CacheSupported: *value = p.globalL1CacheSupported; break;
    case cudaDevAttrLocalL1CacheSupported: *value = p.localL1CacheSupported; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = (int)p.sharedMemPerMultiprocessor; break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: *value = p.regsPerMultiprocessor; break;
    case cudaDevAttrManagedMemory: *value = p.managedMemory; break;
    case cudaDevAttrIsMultiGpuBoard: *value = p.isMultiGpuBoard; break;
    case cudaDevAttrMultiGpuBoardGroupID: *value = p.multiGpuBoardGroupID; break;
    case cudaDevAttrHostNativeAtomicSupported: *value = p.hostNativeAtomicSupported; break;
    case cudaDevAttrPageableMemoryAccess: *value = p.pageableMemoryAccess; break;
    case cudaDevAttrConcurrentManagedAccess: *value = p.concurrentManagedAccess; break;
    case cudaDevAttrComputePreemptionSupported: *value = p.computePreemptionSupported; break;
    case cudaDevAttrCanUseHostPointerForRegisteredMem: *value = p.canUseHostPointerForRegisteredMem; break;
    case cudaDevAttrCooperativeLaunch: *value = p.cooperativeLaunch; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = (int)p.sharedMemPerBlockOptin; break;
    case cudaDevAttrHostRegisterSupported: *value = p.hostRegisterSupported; break;
    case cudaDevAttrPageableMemoryAccessUsesHostPageTables: *value = p.pageableMemoryAccessUsesHostPageTables; break;
    case cudaDevAttrDirectManagedMemAccessFromHost: *value = p.directManagedMemAccessFromHost; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = p.maxBlocksPerMultiProcessor; break;
    case cudaDevAttrReservedSharedMemoryPerBlock: *value = (int)p.reservedSharedMemPerBlock; break;
    case cudaDevAttrMemoryPoolsSupported: *value = p.memoryPoolsSupported; break;
    case cudaDevAttrClusterLaunch: *value = p.clusterLaunch; break;
    default: fatal("cudaDeviceGetAttribute", "attribute %d is not emulated by the host backend", (int)attr);
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

cudaError_t cudaDeviceReset(void) {
  for (auto &a : allocations)
    if (!a.second.registered && !memcheck_free(const_cast<char *>(a.first), "a kernel or copy before cudaDeviceReset"))
      free(const_cast<char *>(a.first));
  allocations.clear();
  for (cudaStream_t s : streams) delete s;
  streams.clear();
  for (cudaEvent_t e : events) delete e;
  events.clear();
  max_dynamic_shared.clear();
  last_error = cudaSuccess;
  return cudaSuccess;
}

cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value) {
  if ((unsigned)limit >= sizeof limits / sizeof limits[0])
    return fail(cudaErrorUnsupportedLimit, "cudaDeviceSetLimit", "unknown limit");
  limits[limit] = value;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetLimit(size_t *value, cudaLimit limit) {
  if (!value) return fail(cudaErrorInvalidValue, "cudaDeviceGetLimit", "null value");
  if ((unsigned)limit >= sizeof limits / sizeof limits[0])
    return fail(cudaErrorUnsupportedLimit, "cudaDeviceGetLimit", "unknown limit");
  *value = limits[limit];
  return cudaSuccess;
}

cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache config) {
  (void)config;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority) {
  if (leastPriority) *leastPriority = 0;
  if (greatestPriority) *greatestPriority = -5;
  return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice) {
  if (!canAccessPeer) return fail(cudaErrorInvalidValue, "cudaDeviceCanAccessPeer", "null result");
  if (cudaError_t err = check_device(device, "cudaDeviceCanAccessPeer")) return err;
  if (cudaError_t err = check_device(peerDevice, "cudaDeviceCanAccessPeer")) return err;
  *canAccessPeer = 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags) {
  (void)flags;
  if (cudaError_t err = check_device(peerDevice, "cudaDeviceEnablePeerAccess")) return err;
  return fail(cudaErrorInvalidDevice, "cudaDeviceEnablePeerAccess", "a device cannot be its own peer");
}

cudaError_t cudaDeviceDisablePeerAccess(int peerDevice) {
  if (cudaError_t err = check_device(peerDevice, "cudaDeviceDisablePeerAccess")) return err;
  return fail(cudaErrorPeerAccessNotEnabled, "cudaDeviceDisablePeerAccess", "peer access was never enabled");
}

cudaError_t cudaDriverGetVersion(int *driverVersion) {
  if (!driverVersion) return fail(cudaErrorInvalidValue, "cudaDriverGetVersion", "null result");
  *driverVersion = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion) {
  if (!runtimeVersion) return fail(cudaErrorInvalidValue, "cudaRuntimeGetVersion", "null result");
  *runtimeVersion = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total) {
  if (free_bytes) *free_bytes = (size_t)sysconf(_SC_AVPHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
  if (total) *total = physical_memory();
  return cudaSuccess;
}

/* memory */

cudaError_t cudaMalloc(void **devPtr, size_t size) {
  return allocate(devPtr, size, cudaMemoryTypeDevice, 0xff, "cudaMalloc");
}

cudaError_t cudaMallocHost(void **ptr, size_t size) {
  return allocate(ptr, size, cudaMemoryTypeHost, 0, "cudaMallocHost");
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags) {
  if (flags & ~0x7u) return fail(cudaErrorInvalidValue, "cudaHostAlloc", "unknown flags");
  return allocate(pHost, size, cudaMemoryTypeHost, 0, "cudaHostAlloc");
}

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags) {
  if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost)
    return fail(cudaErrorInvalidValue, "cudaMallocManaged", "flags must be cudaMemAttachGlobal or cudaMemAttachHost");
  return allocate(devPtr, size, cudaMemoryTypeManaged, 0, "cudaMallocManaged");
}

cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height) {
  if (!pitch) return fail(cudaErrorInvalidValue, "cudaMallocPitch", "null pitch");
  *pitch = (width + 511) / 512 * 512;
  return allocate(devPtr, *pitch * height, cudaMemoryTypeDevice, 0xff, "cudaMallocPitch");
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream) {
  if (cudaError_t err = check_stream(stream, "cudaMallocAsync")) return err;
  return allocate(devPtr, size, cudaMemoryTypeDevice, 0xff, "cudaMallocAsync");
}

cudaError_t cudaFree(void *devPtr) { return release(devPtr, true, "cudaFree"); }

cudaError_t cudaFreeHost(void *ptr) { return release(ptr, false, "cudaFreeHost"); }

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream) {
  if (cudaError_t err = check_stream(stream, "cudaFreeAsync")) return err;
  return release(devPtr, true, "cudaFreeAsync");
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags) {
  (void)flags;
  if (!ptr || !size) return fail(cudaErrorInvalidValue, "cudaHostRegister", "null pointer or zero size");
  if (find_allocation(ptr) != allocations.end())
    return fail(cudaErrorHostMemoryAlreadyRegistered, "cudaHostRegister", "already registered or allocated");
  allocations[static_cast<char *>(ptr)] = allocation{size, cudaMemoryTypeHost, true};
  return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *ptr) {
  auto it = allocations.find(static_cast<char *>(ptr));
  if (it == allocations.end() || !it->second.registered)
    return fail(cudaErrorHostMemoryNotRegistered, "cudaHostUnregister", "not registered");
  allocations.erase(it);
  return cudaSuccess;
}

cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags) {
  if (!pDevice || flags) return fail(cudaErrorInvalidValue, "cudaHostGetDevicePointer", "null result or flags != 0");
  *pDevice = pHost;
  return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *attributes, const void *ptr) {
  if (!attributes) return fail(cudaErrorInvalidValue, "cudaPointerGetAttributes", "null attributes");
  auto it = find_allocation(ptr);
  void *p = const_cast<void *>(ptr);
  if (it == allocations.end()) {
    *attributes = cudaPointerAttributes{cudaMemoryTypeUnregistered, cudaInvalidDeviceId, nullptr, nullptr};
    return cudaSuccess;
  }
  const cudaMemoryType type = it->second.type;
  *attributes = cudaPointerAttributes{type, 0, p, type == cudaMemoryTypeDevice ? nullptr : p};
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind) {
  if (!memcpy_kind_valid(kind)) return fail(cudaErrorInvalidMemcpyDirection, "cudaMemcpy", "unknown kind");
  if (count == 0) return cudaSuccess;
  if (!dst || !src) return fail(cudaErrorInvalidValue, "cudaMemcpy", "null pointer");
  memmove(dst, src, count);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  if (cudaError_t err = check_stream(stream, "cudaMemcpyAsync")) return err;
  return cudaMemcpy(dst, src, count, kind);
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind) {
  if (!memcpy_kind_valid(kind)) return fail(cudaErrorInvalidMemcpyDirection, "cudaMemcpy2D", "unknown kind");
  if (width > dpitch || width > spitch) return fail(cudaErrorInvalidPitchValue, "cudaMemcpy2D", "width > pitch");
  if (width == 0 || height == 0) return cudaSuccess;
  if (!dst || !src) return fail(cudaErrorInvalidValue, "cudaMemcpy2D", "null pointer");
  for (size_t row = 0; row < height; ++row)
    memmove(static_cast<char *>(dst) + row * dpitch, static_cast<const char *>(src) + row * spitch, width);
  return cudaSuccess;
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t stream) {
  if (cudaError_t err = check_stream(stream, "cudaMemcpy2DAsync")) return err;
  return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}

cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count) {
  if (cudaError_t err = check_device(dstDevice, "cudaMemcpyPeer")) return err;
  if (cudaError_t err = check_device(srcDevice, "cudaMemcpyPeer")) return err;
  return cudaMemcpy(dst, src, count, cudaMemcpyDeviceToDevice);
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
                                cudaStream_t stream) {
  if (cudaError_t err = check_stream(stream, "cudaMemcpyPeerAsync")) return err;
  return cudaMemcpyPeer(dst, dstDevice, src, srcDevice, count);
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count) {
  if (count == 0) return cudaSuccess;
  if (!devPtr) return fail(cudaErrorInvalidValue, "cudaMemset", "null pointer");
  memset(devPtr, value & 0xff, count);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream) {
  if (cudaError_t err = check_stream(stream, "cudaMemsetAsync")) return err;
  return cudaMemset(devPtr, value, count);
}

cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width, size_t height) {
  if (width > pitch) return fail(cudaErrorInvalidPitchValue, "cudaMemset2D", "width > pitch");
  if (width == 0 || height == 0) return cudaSuccess;
  if (!devPtr) return fail(cudaErrorInvalidValue, "cudaMemset2D", "null pointer");
  for (size_t row = 0; row < height; ++row) memset(static_cast<char *>(devPtr) + row * pitch, value & 0xff, width);
  return cudaSuccess;
}

cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                               cudaMemcpyKind kind) {
  if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
    return fail(cudaErrorInvalidMemcpyDirection, "cudaMemcpyToSymbol", "kind must copy to the device");
  if (!symbol) return fail(cudaErrorInvalidSymbol, "cudaMemcpyToSymbol", "null symbol");
  return cudaMemcpy(static_cast<char *>(const_cast<void *>(symbol)) + offset, src, count, kind);
}

cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset, cudaMemcpyKind kind) {
  if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
    return fail(cudaErrorInvalidMemcpyDirection, "cudaMemcpyFromSymbol", "kind must copy from the device");
  if (!symbol) return fail(cudaErrorInvalidSymbol, "cudaMemcpyFromSymbol", "null symbol");
  return cudaMemcpy(dst, static_cast<const char *>(symbol) + offset, count, kind);
}

cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset,
                                    cudaMemcpyKind kind, cudaStream_t stream) {
  if (cudaError_t err = check_stream(stream, "cudaMemcpyToSymbolAsync")) return err;
  return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
}

cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset, cudaMemcpyKind kind,
                                      cudaStream_t stream) {
  if (cudaError_t err = check_stream(stream, "cudaMemcpyFromSymbolAsync")) return err;
  return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind);
}

cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol) {
  if (!devPtr || !symbol) return fail(cudaErrorInvalidSymbol, "cudaGetSymbolAddress", "null symbol or result");
  *devPtr = const_cast<void *>(symbol);
  return cudaSuccess;
}

/* streams and events */

cudaError_t cudaStreamCreate(cudaStream_t *pStream) { return cudaStreamCreateWithPriority(pStream, 0, 0); }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags) {
  return cudaStreamCreateWithPriority(pStream, flags, 0);
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority) {
  if (!pStream || flags > cudaStreamNonBlocking)
    return fail(cudaErrorInvalidValue, "cudaStreamCreate", "bad arguments");
  *pStream = new CUstream_st{flags, priority < -5 ? -5 : priority > 0 ? 0 : priority};
  streams.insert(*pStream);
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (!streams.count(stream)) return fail(cudaErrorInvalidResourceHandle, "cudaStreamDestroy", "unknown stream");
  streams.erase(stream);
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) { return check_stream(stream, "cudaStreamSynchronize"); }

cudaError_t cudaStreamQuery(cudaStream_t stream) { return check_stream(stream, "cudaStreamQuery"); }

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  (void)flags;
  if (cudaError_t err = check_stream(stream, "cudaStreamWaitEvent")) return err;
  return check_event(event, "cudaStreamWaitEvent");
}

cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int *flags) {
  if (cudaError_t err = check_stream(stream, "cudaStreamGetFlags")) return err;
  if (!flags) return fail(cudaErrorInvalidValue, "cudaStreamGetFlags", "null flags");
  *flags = streams.count(stream) ? stream->flags : 0;
  return cudaSuccess;
}

cudaError_t cudaStreamGetPriority(cudaStream_t stream, int *priority) {
  if (cudaError_t err = check_stream(stream, "cudaStreamGetPriority")) return err;
  if (!priority) return fail(cudaErrorInvalidValue, "cudaStreamGetPriority", "null priority");
  *priority = streams.count(stream) ? stream->priority : 0;
  return cudaSuccess;
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData) {
  if (cudaError_t err = check_stream(stream, "cudaLaunchHostFunc")) return err;
  if (!fn) return fail(cudaErrorInvalidValue, "cudaLaunchHostFunc", "null function");
  fn(userData);
  return cudaSuccess;
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *userData,
                                  unsigned int flags) {
  if (cudaError_t err = check_stream(stream, "cudaStreamAddCallback")) return err;
  if (!callback || flags) return fail(cudaErrorInvalidValue, "cudaStreamAddCallback", "null callback or flags != 0");
  callback(stream, cudaSuccess, userData);
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags) {
  if (!event || flags & ~0x7u) return fail(cudaErrorInvalidValue, "cudaEventCreate", "bad arguments");
  *event = new CUevent_st{flags, false, 0.0};
  events.insert(*event);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (cudaError_t err = check_event(event, "cudaEventRecord")) return err;
  if (cudaError_t err = check_stream(stream, "cudaEventRecord")) return err;
  event->recorded = true;
  event->seconds = now_seconds();
  return cudaSuccess;
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags) {
  (void)flags;
  return cudaEventRecord(event, stream);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) { return check_event(event, "cudaEventSynchronize"); }

cudaError_t cudaEventQuery(cudaEvent_t event) { return check_event(event, "cudaEventQuery"); }

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
  if (!ms) return fail(cudaErrorInvalidValue, "cudaEventElapsedTime", "null result");
  if (cudaError_t err = check_event(start, "cudaEventElapsedTime")) return err;
  if (cudaError_t err = check_event(end, "cudaEventElapsedTime")) return err;
  if ((start->flags | end->flags) & cudaEventDisableTiming)
    return fail(cudaErrorInvalidResourceHandle, "cudaEventElapsedTime", "an event was created without timing");
  if (!start->recorded || !end->recorded)
    return fail(cudaErrorInvalidResourceHandle, "cudaEventElapsedTime", "an event was never recorded");
  *ms = (float)((end->seconds - start->seconds) * 1e3);
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (cudaError_t err = check_event(event, "cudaEventDestroy")) return err;
  events.erase(event);
  delete event;
  return cudaSuccess;
}

/* kernels */

cudaError_t cudaFuncSetAttribute(const void *func, cudaFuncAttribute attr, int value) {
  if (!func) return fail(cudaErrorInvalidDeviceFunction, "cudaFuncSetAttribute", "null function");
  switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
      if (value < 0 || (size_t)value > optin_dynamic_shared)
        return fail(cudaErrorInvalidValue, "cudaFuncSetAttribute", "more dynamic shared memory than the device has");
      max_dynamic_shared[func] = value;
      return cudaSuccess;
    case cudaFuncAttributePreferredSharedMemoryCarveout:
    case cudaFuncAttributeNonPortableClusterSizeAllowed:
    case cudaFuncAttributeClusterSchedulingPolicyPreference: return cudaSuccess;
    default:
      fatal("cudaFuncSetAttribute", "attribute %d (thread block clusters) is not supported by the host backend",
            (int)attr);
  }
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attr, const void *func) {
  if (!attr || !func) return fail(cudaErrorInvalidDeviceFunction, "cudaFuncGetAttributes", "null argument");
  memset(attr, 0, sizeof *attr);
  attr->maxThreadsPerBlock = 1024;
  attr->numRegs = 32;
  attr->ptxVersion = 90;
  attr->binaryVersion = 90;
  attr->maxDynamicSharedSizeBytes = (int)kernel_max_dynamic_shared(func);
  attr->preferredShmemCarveout = -1;
  return cudaSuccess;
}

cudaError_t cudaFuncSetCacheConfig(const void *func, cudaFuncCache cacheConfig) {
  (void)cacheConfig;
  return func ? cudaSuccess : fail(cudaErrorInvalidDeviceFunction, "cudaFuncSetCacheConfig", "null function");
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize,
                                                          size_t dynamicSMemSize) {
  if (!numBlocks || !func || blockSize <= 0)
    return fail(cudaErrorInvalidValue, "cudaOccupancyMaxActiveBlocksPerMultiprocessor", "bad arguments");
  int blocks = blockSize > 1024 ? 0 : 2048 / blockSize;
  if (blocks > 32) blocks = 32;
  if (dynamicSMemSize > 0) {
    const int by_shared = (int)(233472 / (dynamicSMemSize + 1024));
    if (by_shared < blocks) blocks = by_shared;
  }
  *numBlocks = blocks;
  return cudaSuccess;
}
