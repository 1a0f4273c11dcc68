// The data-parallel Adam step: a wrapped AllReduce and one pointwise kernel.
// RUN: %coconet --dump=json %s | %FileCheck %s
// RUN: %coconet --check %s | %FileCheck --check-prefix=CHECK-REPORT %s
#include <cuda_runtime.h>
#include <nccl.h>
#include <cstdio>
#include <cstdlib>

#define NCCLCHECK(cmd) do {                                  \
    ncclResult_t r_ = (cmd);                                 \
    if (r_ != ncclSuccess) {                                 \
      fprintf(stderr, "NCCL error %s\n", ncclGetErrorString(r_)); \
      exit(1);                                               \
    }                                                        \
  } while (0)

__global__ void adam_update(float *w, const float *g, float *m, float *v, size_t n,
                            float lr, float beta1, float beta2, float eps, float scale) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float gi = g[i] * scale;
    m[i] = beta1 * m[i] + (1.f - beta1) * gi;
    v[i] = beta2 * v[i] + (1.f - beta2) * gi * gi;
    w[i] -= lr * m[i] / (sqrtf(v[i]) + eps);
  }
}

void train_step(float *w, float *g, float *m, float *v, size_t n, float lr, float scale,
                ncclComm_t comm, cudaStream_t stream) {
  int blocks = (int)((n + 255) / 256);
#pragma coconet region name(adam_step) split reorder shard(m, v) scratch(g) replicated(w)
  {
    NCCLCHECK(ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream));
    adam_update<<<blocks, 256, 0, stream>>>(w, g, m, v, n, lr, 0.9f, 0.999f, 1e-8f, scale);
  }
}

// CHECK:      "version": 1,
// CHECK:      "regions": [{
// CHECK-NEXT:   "name": "adam_step",
// CHECK-NEXT:   "function": "train_step",
// CHECK-NEXT:   "function_start": {
// CHECK-NEXT:     "line": 28,
// CHECK-NEXT:     "col": 1,
// CHECK:        "pragma": {
// CHECK-NEXT:     "directive": "region",
// CHECK:          "clauses": [{
// CHECK-NEXT:       "name": "name",
// CHECK:            "args": [{
// CHECK-NEXT:         "key": null,
// CHECK-NEXT:         "text": "adam_step",
// CHECK-NEXT:         "location": {
// CHECK-NEXT:           "line": 31,
// CHECK-NEXT:           "col": 29,
// CHECK:            "name": "split",
// CHECK:            "name": "reorder",
// CHECK:            "name": "shard",
// CHECK:              "text": "m",
// CHECK:              "text": "v",
// CHECK:            "name": "scratch",
// CHECK:              "text": "g",
// CHECK:        "statements": [{
// CHECK-NEXT:     "kind": "nccl",
// CHECK-NEXT:     "range": {
// CHECK-NEXT:       "begin": {
// CHECK-NEXT:         "line": 33,
// CHECK-NEXT:         "col": 5,
// CHECK:          "text": "NCCLCHECK(ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream));",
// CHECK-NEXT:     "call": "ncclAllReduce",
// CHECK-NEXT:     "wrapper": {
// CHECK-NEXT:       "name": "NCCLCHECK",
// CHECK-NEXT:       "kind": "macro"
// CHECK-NEXT:     },
// CHECK-NEXT:     "call_range": {
// CHECK-NEXT:       "begin": {
// CHECK-NEXT:         "line": 33,
// CHECK-NEXT:         "col": 15,
// CHECK:          "args": [{
// CHECK-NEXT:         "text": "g",
// CHECK:              "text": "n",
// CHECK:              "text": "ncclFloat",
// CHECK:              "text": "ncclSum",
// CHECK:              "text": "comm",
// CHECK:              "text": "stream",
// CHECK:          "kind": "launch",
// CHECK:          "call": "adam_update",
// CHECK-NEXT:     "wrapper": null,
// CHECK:          "launch": {
// CHECK-NEXT:       "kernel": "adam_update",
// CHECK-NEXT:       "template_args": null,
// CHECK-NEXT:       "seen_through": null,
// CHECK-NEXT:       "grid": {
// CHECK-NEXT:         "text": "blocks",
// CHECK:            "block": {
// CHECK-NEXT:         "text": "256",
// CHECK:            "shmem": {
// CHECK-NEXT:         "text": "0",
// CHECK:            "stream": {
// CHECK-NEXT:         "text": "stream",
// CHECK:            "definition": {
// CHECK-NEXT:         "name": "adam_update",
// CHECK-NEXT:         "template": false,
// CHECK-NEXT:         "header": false,
// CHECK-NEXT:         "range": {
// CHECK-NEXT:           "begin": {
// CHECK-NEXT:             "line": 17,
// CHECK:              "params": [{
// CHECK-NEXT:             "name": "w",
// CHECK-NEXT:             "type": "float *"
// CHECK:                  "name": "g",
// CHECK-NEXT:             "type": "const float *"
// CHECK:                  "name": "scale",
// CHECK-NEXT:             "type": "float"
// CHECK:        "symmetric": [],
// CHECK-NEXT:   "pointwise": []

// CHECK-REPORT: dump-adam.cu: 1 region
// CHECK-REPORT-NEXT: region adam_step (
// CHECK-REPORT-SAME: dump-adam.cu:31) in train_step: nccl:ncclAllReduce launch:adam_update
