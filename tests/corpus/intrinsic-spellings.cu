// Style: the other spellings of the intrinsics: integer min/max (a comparison,
// not fminf), __ldg of &g[i] and of g + i, and the nearest refusal, a cache
// load from an address that is neither (g + i + 1).
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %expect 1 %coconet --check %s -- -DLOAD_OFFSET 2>&1 | %FileCheck --check-prefix=OFFSET %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void clamp_counts(int *c, int lo, int hi, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = max(lo, min(c[i], hi));
}

__global__ void scaled(float *o, const float *g, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if defined(LOAD_OFFSET)
  if (i < n) o[i] = s * __ldg(g + i + 1);
#else
  if (i < n) o[i] = s * (__ldg(&g[i]) + __ldg(g + i)) * 0.5f;
#endif
}

void step(int *c, float *g, float *o, float s, int lo, int hi, int n, ncclComm_t comm, cudaStream_t st) {
#pragma coconet region name(counts) split reorder
  {
    ncclAllReduce(c, c, n, ncclInt32, ncclSum, comm, st);
    clamp_counts<<<(n + 255) / 256, 256, 0, st>>>(c, lo, hi, n);
  }
#pragma coconet region name(scaled) split reorder scratch(g)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, st);
    scaled<<<(n + 255) / 256, 256, 0, st>>>(o, g, s, n);
  }
}

// EXEC: verify counts: output 'c' (i32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify counts: ok
// EXEC: verify scaled: output 'o' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify scaled: ok
// OFFSET: intrinsic-spellings.cu:17:25: error: kernel 'scaled': __ldg must load from &t[i] or t + i (__ldg(g + i + 1))
