// Style: user code that spells names coconet's generated code declares in the
// region's block: a local `coconet_rank` (a scale) and a count `coconet_p`
// passed to the region, a macro `coconet_nranks`, a region local `coconet_c`.
// The generated names avoid every name the file spells outside comments and
// literals (coconet_rank_2, coconet_p_2, ...), so the user's stay visible to
// the code that names them. The one generated name the analysis fixes before
// code generation, an argument with side effects evaluated once
// (`coconet_arg1`), is refused when the file spells it (-DARG).
// RUN: %coconet --verify=3 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %expect 1 %coconet --check %s -- -DARG 2>&1 | %FileCheck --check-prefix=ARG %s
#include <cuda_runtime.h>
#include <nccl.h>

#define coconet_nranks 3.0f

__global__ void scale(float *x, size_t n, float a, unsigned seed) {
  size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * a + (float)(seed % 5);
}

void average(float *grad, size_t n, unsigned seed, ncclComm_t comm, cudaStream_t stream) {
  float coconet_rank = 0.5f;
  size_t coconet_p = n;
#if defined(ARG)
  unsigned coconet_arg1 = seed;
#endif
#pragma coconet region name(mean) split reorder
  {
    ncclAllReduce(grad, grad, coconet_p, ncclFloat, ncclSum, comm, stream);
    const int coconet_c = (int)((coconet_p + 255) / 256);
#if defined(ARG)
    scale<<<coconet_c, 256, 0, stream>>>(grad, coconet_p, coconet_rank / coconet_nranks, coconet_arg1++);
#else
    scale<<<coconet_c, 256, 0, stream>>>(grad, coconet_p, coconet_rank / coconet_nranks, seed);
#endif
  }
}

// EXEC: verify mean: ok (the region as written and as scheduled agree within 0 ULP)
// CODE: {{^ *}}const int coconet_c = (int)((coconet_p + 255) {{/}} 256);
// CODE: int coconet_rank_2, coconet_nranks_2;
// CODE-NEXT: coconet_comm_info(comm, &coconet_rank_2, &coconet_nranks_2);
// CODE-NEXT: const coconet_part coconet_p_2 = coconet_slice(coconet_p, coconet_rank_2, coconet_nranks_2);
// CODE: coconet_rank / coconet_nranks, seed, coconet_p_2.slice_lo, coconet_p_2.slice_hi);
// ARG: own-names.cu:{{[0-9]+}}:1: error: region 'mean': the file names 'coconet_arg1', which coconet's code for the region declares; rename it
