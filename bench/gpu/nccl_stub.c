/* nccl_stub.c: a one-rank stand-in for libnccl.so.2, used by bench/gpu/run.sh only
 * when the GPU machine has no NCCL library. With one rank every collective is a copy
 * (or nothing, in place): AllReduce, ReduceScatter, AllGather, Broadcast, Reduce,
 * AlltoAll, Gather, Scatter copy sendbuff to recvbuff on the stream with
 * cuMemcpyAsync (the driver API: no second CUDA runtime in the process). Any
 * communicator of more than one rank is refused (ncclInvalidUsage). The kernel timings
 * of run.sh do not depend on it; its summary says which NCCL ran. */
#include <cuda.h>
#include <nccl.h>
#include <stdio.h>
#include <string.h>

struct ncclComm {
  int device;
};
static struct ncclComm the_comm;

static size_t type_size(ncclDataType_t t) {
  switch (t) {
  case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
  case ncclFloat16: case ncclBfloat16: return 2;
  case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
  default: return 8;
  }
}

static ncclResult_t copy(const void *src, void *dst, size_t count, ncclDataType_t t, cudaStream_t s) {
  if (src == dst || count == 0) return ncclSuccess;
  return cuMemcpyAsync((CUdeviceptr)dst, (CUdeviceptr)src, count * type_size(t), (CUstream)s) == CUDA_SUCCESS
             ? ncclSuccess : ncclUnhandledCudaError;
}

ncclResult_t ncclGetVersion(int *v) { *v = NCCL_VERSION_CODE; return ncclSuccess; }
ncclResult_t ncclGetUniqueId(ncclUniqueId *id) { memset(id, 0, sizeof *id); return ncclSuccess; }
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
  (void)id;
  if (nranks != 1 || rank != 0) {
    fprintf(stderr, "nccl_stub: only one rank (asked for rank %d of %d)\n", rank, nranks);
    return ncclInvalidUsage;
  }
  *comm = &the_comm;
  return ncclSuccess;
}
ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t *c) {
  (void)c;
  return ncclCommInitRank(comm, nranks, id, rank);
}
ncclResult_t ncclCommFinalize(ncclComm_t comm) { (void)comm; return ncclSuccess; }
ncclResult_t ncclCommDestroy(ncclComm_t comm) { (void)comm; return ncclSuccess; }
ncclResult_t ncclCommAbort(ncclComm_t comm) { (void)comm; return ncclSuccess; }
ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) { (void)comm; *count = 1; return ncclSuccess; }
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) { (void)comm; *rank = 0; return ncclSuccess; }
ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device) {
  (void)comm;
  CUdevice d = 0;
  cuCtxGetDevice(&d);
  *device = (int)d;
  return ncclSuccess;
}
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *e) { (void)comm; *e = ncclSuccess; return ncclSuccess; }
ncclResult_t ncclCommRegister(const ncclComm_t comm, void *b, size_t n, void **h) { (void)comm; (void)b; (void)n; *h = NULL; return ncclSuccess; }
ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *h) { (void)comm; (void)h; return ncclSuccess; }
const char *ncclGetErrorString(ncclResult_t r) { return r == ncclSuccess ? "no error" : "nccl_stub error"; }
const char *ncclGetLastError(ncclComm_t comm) { (void)comm; return ""; }
ncclResult_t ncclGroupStart(void) { return ncclSuccess; }
ncclResult_t ncclGroupEnd(void) { return ncclSuccess; }

ncclResult_t ncclAllReduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op, ncclComm_t c, cudaStream_t st) {
  (void)op; (void)c;
  return copy(s, r, n, t, st);
}
ncclResult_t ncclReduceScatter(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op, ncclComm_t c, cudaStream_t st) {
  (void)op; (void)c;
  return copy(s, r, n, t, st);
}
ncclResult_t ncclAllGather(const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t c, cudaStream_t st) {
  (void)c;
  return copy(s, r, n, t, st);
}
ncclResult_t ncclBroadcast(const void *s, void *r, size_t n, ncclDataType_t t, int root, ncclComm_t c, cudaStream_t st) {
  (void)root; (void)c;
  return copy(s, r, n, t, st);
}
ncclResult_t ncclBcast(void *b, size_t n, ncclDataType_t t, int root, ncclComm_t c, cudaStream_t st) {
  (void)b; (void)n; (void)t; (void)root; (void)c; (void)st;
  return ncclSuccess;
}
ncclResult_t ncclReduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op, int root, ncclComm_t c, cudaStream_t st) {
  (void)op; (void)root; (void)c;
  return copy(s, r, n, t, st);
}
ncclResult_t ncclAlltoAll(const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t c, cudaStream_t st) {
  (void)c;
  return copy(s, r, n, t, st);
}
ncclResult_t ncclGather(const void *s, void *r, size_t n, ncclDataType_t t, int root, ncclComm_t c, cudaStream_t st) {
  (void)root; (void)c;
  return copy(s, r, n, t, st);
}
ncclResult_t ncclScatter(const void *s, void *r, size_t n, ncclDataType_t t, int root, ncclComm_t c, cudaStream_t st) {
  (void)root; (void)c;
  return copy(s, r, n, t, st);
}
