// A statement between two chains that changes the count the second chain
// splits (`n = n / 2 + 1;`): the second chain's slice, rank and rank count are
// computed after it, from the new count, not reused from the first chain by
// their text. (It was reused, and the second buffer was reduced on the wrong
// elements, exit 0; --verify found it.)
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// A count local before the region is read as its initializer only while what
// that reads keeps its value: `const int n = rows * h;` then `rows *= 2;` (or
// a member, `sh.rows *= 2;`), or a file variable any call may change, leaves
// `n` a count of its own, refused against the collective's `rows * h` (it was
// taken as equal, exit 0, and --verify, which recomputes n, could not see it).
// RUN: %expect 1 %coconet --check %s -- -DSTALE 2>&1 | %FileCheck --check-prefix=STALE %s
// RUN: %expect 1 %coconet --check %s -- -DSTALE_MEMBER 2>&1 | %FileCheck --check-prefix=STALE_MEMBER %s
// RUN: %expect 1 %coconet --check %s -- -DSTALE_GLOBAL 2>&1 | %FileCheck --check-prefix=STALE_GLOBAL %s
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

#if defined(STALE)
void stale(float *out, int rows, int h, ncclComm_t comm, cudaStream_t s) {
  const int n = rows * h;
  rows *= 2;
#pragma coconet region name(stale) split reorder
  {
    ncclAllReduce(out, out, rows * h, ncclFloat, ncclSum, comm, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(out, 0.5f, n);
  }
}
#elif defined(STALE_MEMBER)
struct Shape {
  int rows, h;
};
void stale(float *out, Shape sh, ncclComm_t comm, cudaStream_t s) {
  const int n = sh.rows * sh.h;
  sh.rows *= 2;
#pragma coconet region name(stale) split reorder
  {
    ncclAllReduce(out, out, sh.rows * sh.h, ncclFloat, ncclSum, comm, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(out, 0.5f, n);
  }
}
#elif defined(STALE_GLOBAL)
int g_rows = 4, g_h = 8;
void stale(float *out, ncclComm_t comm, cudaStream_t s) {
  const int n = g_rows * g_h;
#pragma coconet region name(stale) split reorder
  {
    ncclAllReduce(out, out, g_rows * g_h, ncclFloat, ncclSum, comm, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(out, 0.5f, n);
  }
}
#endif
// STALE: error: reorder: kernel 'scale' runs over n elements but 'out' has rows * h; work on a slice needs the same count
// STALE_MEMBER: error: reorder: kernel 'scale' runs over n elements but 'out' has sh.rows * sh.h; work on a slice needs the same count
// STALE_GLOBAL: error: reorder: kernel 'scale' runs over n elements but 'out' has g_rows * g_h; work on a slice needs the same count
