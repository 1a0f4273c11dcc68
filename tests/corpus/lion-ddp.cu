// Style: data-parallel training with an optimizer library, as files: the
// gradient bucket averaged through the framework's reducer (Inputs/ddp/reducer.h:
// ncclAvg, the datatype from overloads on the buffer's type), then the Lion step
// from the optimizer library (Inputs/optim/lion.cuh: a kernel template over the
// parameters' type, bf16 or fp32 (-DFP32), its conversions from overloaded helpers
// in optim/math.cuh, a grid capped with std::min and a grid-stride loop). The
// call site has pragma lines only: split reorder steps on this rank's slice and
// gathers the parameters; shard(exp_avg) keeps each rank's slice of the moment.
// The nearest refusal: the moment read again after the step (READ_AFTER).
// RUN: %coconet --verify=4 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=2 %s -- -I%S/Inputs -DFP32 | %FileCheck --check-prefix=EXEC %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DREAD_AFTER 2>&1 | %FileCheck --check-prefix=READ %s
#include "ddp/reducer.h"
#include "optim/lion.cuh"

#ifdef FP32
typedef float param_t;
#else
typedef __nv_bfloat16 param_t;
#endif

void train_step(param_t *params, param_t *grads, float *exp_avg, float *moment_copy, size_t numel, float lr,
                ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(lion) split reorder scratch(grads) replicated(params) shard(exp_avg)
  {
    ddp::all_reduce_bucket(grads, numel, comm, stream);
    optim::lion_step(params, grads, exp_avg, lr, 0.9f, 0.99f, 0.01f, numel, stream);
#if defined(READ_AFTER)
    cudaMemcpyAsync(moment_copy, exp_avg, numel * sizeof(float), cudaMemcpyDeviceToDevice, stream);
#endif
  }
  (void)moment_copy;
}

// EXEC: verify lion: ok
// READ: error: shard: 'exp_avg' is read by 'cudaMemcpyAsync' later in the region, so its slices would have to be gathered
