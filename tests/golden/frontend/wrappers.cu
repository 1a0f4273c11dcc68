// Every kind of statement a region can hold, bare and wrapped, and what is opaque.
// RUN: %coconet --check %s | %FileCheck %s
// RUN: %coconet --dump=json %s | %FileCheck --check-prefix=JSON %s
#include <cuda_runtime.h>
#include <nccl.h>
#include <cstdio>
#include <cstdlib>

#define NCCLCHECK(cmd) do { ncclResult_t r_ = (cmd); if (r_ != ncclSuccess) exit(1); } while (0)
#define CUDACHECK(cmd) do { cudaError_t e_ = (cmd); if (e_ != cudaSuccess) exit(1); } while (0)

static ncclResult_t ncclCheck(ncclResult_t r) {
  if (r != ncclSuccess) fprintf(stderr, "nccl: %s\n", ncclGetErrorString(r));
  return r;
}

__global__ void scale(float *x, float a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) x[i] *= a;
}

void step(float *x, float *y, float *host, int n, int peer, ncclComm_t comm, cudaStream_t s,
          cudaStream_t s2, cudaEvent_t ev) {
#pragma coconet region name(everything)
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    ncclCheck(ncclReduceScatter(x, y, n / 4, ncclFloat, ncclAvg, comm, s));
    NCCLCHECK(ncclAllGather(y, x, n / 4, ncclFloat, comm, s));
    NCCLCHECK(ncclBroadcast(x, x, n, ncclFloat, 0, comm, s));
    NCCLCHECK(ncclReduce(x, y, n, ncclFloat, ncclMax, 0, comm, s));
    NCCLCHECK(ncclGroupStart());
    NCCLCHECK(ncclSend(x, n, ncclFloat, peer, comm, s));
    NCCLCHECK(ncclRecv(y, n, ncclFloat, peer, comm, s));
    NCCLCHECK(ncclGroupEnd());
    CUDACHECK(cudaMemcpyAsync(host, x, n * sizeof(float), cudaMemcpyDeviceToHost, s));
    CUDACHECK(cudaMemsetAsync(y, 0, n * sizeof(float), s));
    cudaEventRecord(ev, s);
    CUDACHECK(cudaStreamWaitEvent(s2, ev, 0));
    scale<<<dim3(32), dim3(256), 0, s2>>>(x, 0.5f, n);
    printf("step done\n");
    ncclResult_t r = ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    if (r != ncclSuccess) exit(1);
    CUDACHECK(cudaStreamSynchronize(s));
  }
}

// CHECK: wrappers.cu: 1 region
// CHECK-NEXT: region everything ({{.*}}wrappers.cu:23) in step: nccl:ncclAllReduce nccl:ncclReduceScatter nccl:ncclAllGather nccl:ncclBroadcast nccl:ncclReduce nccl:ncclGroupStart nccl:ncclSend nccl:ncclRecv nccl:ncclGroupEnd cuda:cudaMemcpyAsync cuda:cudaMemsetAsync cuda:cudaEventRecord cuda:cudaStreamWaitEvent launch:scale opaque opaque opaque opaque{{$}}

// JSON:      "call": "ncclAllReduce",
// JSON-NEXT: "wrapper": null,
// JSON:      "call": "ncclReduceScatter",
// JSON-NEXT: "wrapper": {
// JSON-NEXT:   "name": "ncclCheck",
// JSON-NEXT:   "kind": "function"
// JSON:      "call": "ncclAllGather",
// JSON-NEXT: "wrapper": {
// JSON-NEXT:   "name": "NCCLCHECK",
// JSON-NEXT:   "kind": "macro"
// JSON:      "call": "cudaMemcpyAsync",
// JSON:        "text": "n * sizeof(float)",
// JSON:        "text": "cudaMemcpyDeviceToHost",
// JSON:      "kind": "launch",
// JSON:        "grid": {
// JSON-NEXT:     "text": "dim3(32)",
// JSON:        "stream": {
// JSON-NEXT:     "text": "s2",
// JSON:      "kind": "opaque",
// JSON-NEXT: "range": {
// JSON:      "text": "printf(\"step done\\n\");"
// JSON:      "kind": "opaque",
// JSON:      "text": "ncclResult_t r = ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);"
