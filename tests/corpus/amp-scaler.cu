// Style: a mixed-precision trainer's step as files (Inputs/amp/grad_scaler.cuh):
// the fp16 gradient all-reduced, unscaled into fp32 master gradients with a
// count of non-finite values summed into a device scalar (a kernel template in a
// namespace, a grid-stride loop, an atomicAdd per element), then an SGD step that
// skips itself when that count is not 0 (a DIV_UP grid); both through launchers.
// The call site has pragma lines only: split reorder unscales and counts this
// rank's slice, all-reduces the count, and steps on the slice. The nearest
// refusal: the count left without its zeroing, so the schedule would add the
// partial counts to what it held (NO_MEMSET).
// RUN: %coconet --verify=4 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -I%S/Inputs | %FileCheck --check-prefix=CODE %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DNO_MEMSET 2>&1 | %FileCheck --check-prefix=MEMSET %s
#include <nccl.h>

#include "amp/grad_scaler.cuh"

void amp_step(float *params, float *master_grads, __half *grads, const float *inv_scale, float *found_inf,
              size_t n, float lr, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(amp) split reorder replicated(params, inv_scale) scratch(grads, master_grads)
  {
    ncclAllReduce(grads, grads, n, ncclHalf, ncclSum, comm, stream);
#if !defined(NO_MEMSET)
    cudaMemsetAsync(found_inf, 0, sizeof(float), stream);
#endif
    amp::unscale_grads(master_grads, grads, inv_scale, found_inf, n, stream);
    amp::sgd_if_finite(params, master_grads, found_inf, lr, n, stream);
  }
}

// EXEC: verify amp: ok
// CODE: COCONET_NCCL_CHECK(ncclAllReduce(found_inf, found_inf, 1, ncclFloat, ncclSum, comm, stream));
// MEMSET: error: reorder: kernel 'amp::unscale_grads_kernel<__half>' sums into 'found_inf' (atomicAdd), which the region does not zero before it
