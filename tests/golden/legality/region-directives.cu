// Preprocessor lines inside a region with a schedule. The rewrite replaces the
// region's text, so a #define, #undef, #include or #pragma there would be
// dropped: a macro redefined in the region would mean the old value after it
// (here f() would return 1, not 2, with exit 0). They are refused at the line,
// with nothing written. Conditionals are kept as the flags chose them: the
// region with #if/#else translates and runs equal; a #define in a branch the
// flags skip, or outside the region, is fine, as is a region without a schedule.
// RUN: %expect 1 %coconet %s -o %t.cu -- -DCASE_UNDEF 2>&1 | %FileCheck --check-prefix=UNDEF %s
// RUN: test ! -e %t.cu
// RUN: %expect 1 %coconet --check %s -- -DCASE_PRAGMA 2>&1 | %FileCheck --check-prefix=PRAGMA %s
// RUN: %coconet --verify=2 %s -- -DCASE_CONDITIONAL | %FileCheck --check-prefix=CONDITIONAL %s
// RUN: %coconet --verify=2 %s -- -DCASE_CONDITIONAL -DTWICE | %FileCheck --check-prefix=CONDITIONAL %s
// RUN: %coconet --check %s -- -DCASE_NO_SCHEDULE | %FileCheck --check-prefix=NO-SCHEDULE %s
#include <cuda_runtime.h>
#include <nccl.h>

#define SCALE 1.0f

__global__ void scale(float *x, float by, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= by;
}

#if defined(CASE_UNDEF)
float step(float *x, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(redefine) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
#undef SCALE
#define SCALE 2.0f
    scale<<<(n + 255) / 256, 256, 0, s>>>(x, SCALE, n);
  }
  return SCALE;
}
#elif defined(CASE_PRAGMA)
void step(float *x, float *host, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(host_loop) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(x, SCALE, n);
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) host[k] = 0.0f;
  }
}
#elif defined(CASE_CONDITIONAL)
void step(float *x, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(conditional) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
#if defined(TWICE)
    scale<<<(n + 255) / 256, 256, 0, s>>>(x, 2.0f * SCALE, n);
#else
    scale<<<(n + 255) / 256, 256, 0, s>>>(x, SCALE, n);
#endif
#if 0
#define NEVER 1
#endif
  }
}
#elif defined(CASE_NO_SCHEDULE)
void step(float *x, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(as_written)
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
#undef SCALE
#define SCALE 2.0f
    scale<<<(n + 255) / 256, 256, 0, s>>>(x, SCALE, n);
  }
}
#endif

// UNDEF: {{.*}}region-directives.cu:29:1: error: region 'redefine' contains '#undef'; coconet rewrites the region's text, which would drop it (a definition would no longer reach the code after the region, a #pragma its statement): move it before the region
// UNDEF-NEXT: #undef SCALE
// UNDEF-NEXT: ^
// UNDEF-NOT: error:
// PRAGMA: error: region 'host_loop' contains '#pragma'; coconet rewrites the region's text
// CONDITIONAL: verify conditional: ok
// NO-SCHEDULE: region as_written
