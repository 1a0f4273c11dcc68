// Style: NCCL calls as public code writes them, the buffers cast to `const void *`
// and `void *` (C-style, or the C++ casts): the buffer is the typed pointer
// inside the cast, so the schedule splits it and indexes it in elements (not
// bytes of a `void *`), and --explain names it.
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --explain %s | %FileCheck --check-prefix=EXPLAIN %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void scale(float *x, float by, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= by;
}

void c_style(float *grad, float by, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(c_style) split reorder
  {
    ncclAllReduce((const void *)grad, (void *)grad, n, ncclFloat, ncclSum, comm, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(grad, by, n);
  }
}

void cxx_casts(float *grad, float by, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(cxx_casts) split reorder
  {
    ncclAllReduce(static_cast<const void *>(grad), reinterpret_cast<void *>(grad), n, ncclFloat, ncclSum, comm,
                  s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(grad, by, n);
  }
}

// EXEC: verify c_style: ok
// EXEC: verify cxx_casts: ok

// CODE: ncclReduceScatter(grad, grad + coconet_p.slice_lo, coconet_p.s, ncclFloat,
// CODE: ncclAllGather(grad + coconet_p.slice_lo, grad, coconet_p.s, ncclFloat, comm, s)
// CODE: ncclReduceScatter(grad, grad + coconet_p.slice_lo, coconet_p.s, ncclFloat,
// CODE-NOT: {{^[^/]*}}void *)grad +

// EXPLAIN: explain c_style
// EXPLAIN: - split: AllReduce(sum, grad) at
// EXPLAIN: explain cxx_casts
// EXPLAIN: - split: AllReduce(sum, grad) at
