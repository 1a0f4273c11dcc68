// Style: other element types: a double-precision accumulator reduced with
// ncclDouble, and int32 counters reduced with ncclInt32 then scaled into
// floats (a histogram normalised after the AllReduce).
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void ema_double(double *acc, const double *x, double decay, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) acc[i] = decay * acc[i] + (1.0 - decay) * x[i];
}

__global__ void normalise(float *freq, const int *counts, float inv_total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) freq[i] = (float)counts[i] * inv_total;
}

void step(double *acc, double *x, float *freq, int *counts, float inv_total, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(ema_double) split reorder shard(acc) scratch(x)
  {
    ncclAllReduce(x, x, n, ncclDouble, ncclSum, comm, s);
    ema_double<<<(n + 255) / 256, 256, 0, s>>>(acc, x, 0.99, n);
  }
#pragma coconet region name(histogram) split reorder
  {
    ncclAllReduce(counts, counts, n, ncclInt32, ncclSum, comm, s);
    normalise<<<(n + 127) / 128, 128, 0, s>>>(freq, counts, inv_total, n);
  }
}

// IR: verify=ir ema_double: ok
// IR: verify=ir histogram: ok
// EXEC: verify ema_double: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify histogram: ok (the region as written and as scheduled agree within 0 ULP)
