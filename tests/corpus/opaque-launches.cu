// Launches inside statements coconet keeps as written (an `if`, a nested block)
// after a scheduled chain: with --target=host they are lowered like the file's
// other launches, so the translated program builds and runs on the host backend.
// RUN: %coconet --target=host %s | %FileCheck --check-prefix=HOST %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void scale(float *x, float by, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= by;
}

__global__ void bump(float *y, float by, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += by;
}

void step(float *x, float *y, float by, int n, int extra, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(scaled) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(x, by, n);
    if (extra > 0) {
      bump<<<(n + 255) / 256, 256, 0, s>>>(y, by, n);
    }
    {
      bump<<<(n + 127) / 128, 128, 0, s>>>(y, 2.0f, n);
    }
  }
}

// HOST: #pragma coconet region name(scaled) split reorder (translated by coconet)
// HOST: coconet_host_launch(COCONET_HOST_SIMPLE, coconet_scaled_slice,
// HOST: if (extra > 0) {
// HOST-NEXT: coconet_host_launch(COCONET_HOST_SIMPLE, bump, (n + 255) / 256, 256, 0, s, y, by, n);
// HOST-NEXT: }
// HOST-NEXT: {
// HOST-NEXT: coconet_host_launch(COCONET_HOST_SIMPLE, bump, (n + 127) / 128, 128, 0, s, y, 2.0f, n);
// HOST-NOT: {{^[^/]*}}bump<<<

// EXEC: verify scaled: ok
