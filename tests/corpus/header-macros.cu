// Style: a short file, its kernels and launchers in Inputs/slices/ops.cuh.
// RUN: %coconet --verify=4 %s -- -I%S/Inputs | %FileCheck %s
// RUN: %coconet %s -- -I%S/Inputs | %FileCheck --check-prefix=CODE %s
#include <nccl.h>

#include "slices/ops.cuh"

void layers_step(float *w, float *g, int n, int layers, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(layers) split reorder replicated(w)
  {
    ncclAllReduce(g, g, layers * n, ncclFloat, ncclSum, comm, s);
    launch_layer_axpy(w, g, n, layers, s);
  }
}

void keyed_step(float *x, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(keyed) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    launch_keyed_scale(x, n, s);
  }
}

// CHECK: verify layers: ok
// CHECK: verify keyed: ok
// The grid macro's value moves to the region; the factor's kernel is printed from the IR:
// CODE: dim3(3).x
// CODE: generated from the IR (its text uses 'OPS_FACTOR', which a file of yours #undefs or #defines again:
