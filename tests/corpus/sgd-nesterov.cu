// Style: PyTorch-like SGD with momentum written as a C++ programmer would:
// pointer arithmetic (`*(w + i)`), options as scalar parameters that choose
// a path with if/else (nesterov or not, weight decay or not), and the
// learning rate read from a one-element device buffer through `*lr`.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void sgd_momentum(float *w, const float *g, float *buf, const float *lr, float momentum, float dampening,
                             float weight_decay, int nesterov, int n) {
  int stride = blockDim.x * gridDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    float d = *(g + i);
    if (weight_decay != 0.0f) d += weight_decay * *(w + i);
    float b = buf[i] * momentum + (1.0f - dampening) * d;
    *(buf + i) = b;
    float step;
    if (nesterov) {
      step = d + momentum * b;
    } else {
      step = b;
    }
    w[i] -= *lr * step;
  }
}

void sgd(float *w, float *g, float *buf, const float *lr, int n, bool nesterov, ncclComm_t comm,
         cudaStream_t stream) {
#pragma coconet region name(sgd) split reorder replicated(w, lr) shard(buf) scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream);
    sgd_momentum<<<128, 256, 0, stream>>>(w, g, buf, lr, 0.9f, 0.0f, 1e-4f, nesterov ? 1 : 0, n);
  }
}

// IR: verify=ir sgd: ok
// EXEC: verify sgd: ok (the region as written and as scheduled agree within 0 ULP)
