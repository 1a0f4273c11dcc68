// Style: user code that spells names coconet's generated code declares in the
// region's block: a local `coconet_rank` (a scale, its name pasted by a macro
// of a header: the file never spells it) and a count `coconet_p` passed to the
// region, a macro `coconet_nranks`, a region local `coconet_c`, and the
// header's macro `coconet_p_2`. The generated names avoid every name the file
// spells outside comments and literals and every name the translation unit
// declares or defines outside system headers (coconet_rank_2, coconet_p_3,
// ...), so the user's stay visible to the code that names them; so does the
// name of an argument with side effects evaluated once (`coconet_arg2` when the
// file spells `coconet_arg1`: -DARG; or only declares it, pasted: -DPASTED).
// RUN: %coconet --verify=3 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -I%S/Inputs | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --verify=3 %s -- -I%S/Inputs -DARG | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -I%S/Inputs -DARG | %FileCheck --check-prefix=ARG %s
// RUN: %coconet --verify=3 %s -- -I%S/Inputs -DARG -DPASTED | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -I%S/Inputs -DARG -DPASTED | %FileCheck --check-prefix=PASTED %s
#include <cuda_runtime.h>
#include <nccl.h>

#include "own-names.h"

#define coconet_nranks 3.0f

__global__ void scale(float *x, size_t n, float a, unsigned seed) {
  size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * a + (float)(seed % 5);
}

void average(float *grad, size_t n, unsigned seed, ncclComm_t comm, cudaStream_t stream) {
  float PASTE(coconet_, rank) = 0.5f;
  size_t coconet_p = n;
#if defined(ARG) && defined(PASTED)
  unsigned PASTE(coconet_, arg1) = seed;
#elif defined(ARG)
  unsigned coconet_arg1 = seed;
#endif
#pragma coconet region name(mean) split reorder
  {
    ncclAllReduce(grad, grad, coconet_p, ncclFloat, ncclSum, comm, stream);
    const int coconet_c = (int)((coconet_p + 255) / 256);
#if defined(ARG) && defined(PASTED)
    scale<<<coconet_c, 256, 0, stream>>>(grad, coconet_p, PASTE(coconet_, rank) / coconet_nranks,
                                         PASTE(coconet_, arg1)++);
#elif defined(ARG)
    scale<<<coconet_c, 256, 0, stream>>>(grad, coconet_p, PASTE(coconet_, rank) / coconet_nranks, coconet_arg1++);
#else
    scale<<<coconet_c, 256, 0, stream>>>(grad, coconet_p, PASTE(coconet_, rank) / coconet_nranks, seed);
#endif
  }
}

// EXEC: verify mean: ok (the region as written and as scheduled agree within 0 ULP)
// CODE: {{^ *}}const int coconet_c = (int)((coconet_p + 255) {{/}} 256);
// CODE: int coconet_rank_2, coconet_nranks_2;
// CODE-NEXT: coconet_comm_info(comm, &coconet_rank_2, &coconet_nranks_2);
// CODE-NEXT: const coconet_part coconet_p_3 = coconet_slice(coconet_p, coconet_rank_2, coconet_nranks_2);
// CODE: PASTE(coconet_, rank) / coconet_nranks, seed, coconet_p_3.slice_lo,
// The launch's PASTE(...) argument reads like a call: it is evaluated once too, first.
// ARG: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg2 = PASTE(coconet_, rank) / coconet_nranks;
// ARG-NEXT: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg3 = coconet_arg1++;
// PASTED: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg2 = PASTE(coconet_, rank) / coconet_nranks;
// PASTED-NEXT: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg3 = PASTE(coconet_, arg1)++;
