// A statement between two chains that changes the count the second chain
// splits (`n = n / 2 + 1;`): the second chain's slice, rank and rank count are
// computed after it, from the new count, not reused from the first chain by
// their text. (It was reused, and the second buffer was reduced on the wrong
// elements, exit 0; --verify found it.)
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void scale(float *x, float by, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= by;
}

void two_chains(float *g, float *h, float by, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(two) split reorder
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(g, by, n);
    n = n / 2 + 1;
    ncclAllReduce(h, h, n, ncclFloat, ncclSum, comm, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(h, by, n);
  }
}

// EXEC: verify two: output 'g' (f32): max 0 ULP apart
// EXEC: verify two: output 'h' (f32): max 0 ULP apart
// EXEC: verify two: ok

// CODE: const coconet_part coconet_p = coconet_slice(n, coconet_rank, coconet_nranks);
// CODE: ncclAllGather(g + coconet_p.slice_lo, g, coconet_p.s,
// CODE-NEXT: n = n / 2 + 1;
// CODE-NEXT: int coconet_rank_2, coconet_nranks_2;
// CODE-NEXT: coconet_comm_info(comm, &coconet_rank_2, &coconet_nranks_2);
// CODE-NEXT: const coconet_part coconet_p_2 = coconet_slice(n, coconet_rank_2, coconet_nranks_2);
// CODE-NEXT: ncclReduceScatter(h, h + coconet_p_2.slice_lo, coconet_p_2.s,
