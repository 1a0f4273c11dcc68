// Style: a trainer's gradient clipping as files (Inputs/clip/): the squared
// norm's kernel and launcher in global_norm.cuh (a grid-stride sum, the warp sum
// from common.cuh, one atomicAdd per warp), the clipped step in clip.cuh (a
// CEIL_DIV grid), the accumulator zeroed in the region. The call site has pragma
// lines only: split reorder sums this rank's slice, all-reduces the partial
// norm, and steps on the slice. The nearest refusal: the norm over another count
// than the AllReduce's (OTHER_COUNT).
// RUN: %coconet --verify=4 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -I%S/Inputs | %FileCheck --check-prefix=CODE %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DOTHER_COUNT 2>&1 | %FileCheck --check-prefix=COUNT %s
#include <nccl.h>

#include "clip/clip.cuh"
#include "clip/global_norm.cuh"

void clip_and_step(float *params, float *grads, float *norm_squared, size_t num_parameters, float lr,
                   float max_norm, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(clip) split reorder replicated(params) scratch(grads)
  {
    ncclAllReduce(grads, grads, num_parameters, ncclFloat, ncclSum, comm, stream);
    cudaCheck(cudaMemsetAsync(norm_squared, 0, sizeof(float), stream));
#if defined(OTHER_COUNT)
    global_norm_squared(norm_squared, grads, num_parameters / 2, stream);
#else
    global_norm_squared(norm_squared, grads, num_parameters, stream);
#endif
    clipped_sgd(params, grads, norm_squared, lr, max_norm, num_parameters, stream);
  }
}

// EXEC: verify clip: ok
// CODE: COCONET_NCCL_CHECK(ncclAllReduce(norm_squared, norm_squared, 1, ncclFloat, ncclSum, comm,
// COUNT: error: reorder: kernel 'global_norm_squared_kernel' runs over num_parameters/2 elements but 'grads' has num_parameters; work on a slice needs the same count
