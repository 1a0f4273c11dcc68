// Arguments with side effects are evaluated exactly once, in the order
// written, into const locals at the top of the generated block; every use
// reads the local. Where that would change the program, the region is refused.
// RUN: %coconet %s -- -DCASE_ONCE | %FileCheck --check-prefix=ONCE %s
// RUN: %coconet --verify=exec:3 %s -- -DCASE_ONCE | %FileCheck --check-prefix=ONCE-EXEC %s
// RUN: %expect 1 %coconet %s -o %t.cu -- -DCASE_TWICE 2>&1 | %FileCheck --check-prefix=TWICE %s
// RUN: test ! -e %t.cu
// RUN: %expect 1 %coconet --check %s -- -DCASE_AFTER_OPAQUE 2>&1 | %FileCheck --check-prefix=OPAQUE %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void sgd(float *w, const float *g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i];
}

// A learning-rate schedule that counts its calls.
static float next_lr(int &calls) { return 0.01f * ++calls; }

void step(float *w, float *g, int n, ncclComm_t comm, cudaStream_t s) {
  int calls = 0;
#if defined(CASE_ONCE)
#pragma coconet region name(once) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, next_lr(calls), n);
  }
#elif defined(CASE_TWICE)
#pragma coconet region name(twice) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, next_lr(calls), n);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, next_lr(calls), n);
  }
#elif defined(CASE_AFTER_OPAQUE)
#pragma coconet region name(after_opaque) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    calls += n;
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, next_lr(calls), n);
  }
#endif
}

// The slice kernel is launched twice (slice and tail); next_lr runs once:
// ONCE: // coconet: arguments with side effects, evaluated once, in the order written
// ONCE-NEXT: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg1 = next_lr(calls);
// ONCE: coconet_once_slice<<<coconet_grid_size(coconet_p.s), COCONET_BLOCK_SIZE, 0, s>>>(w, g, coconet_arg1, coconet_p.slice_lo, coconet_p.slice_hi);
// ONCE: coconet_once_slice<<<coconet_grid_size(coconet_p.tail), COCONET_BLOCK_SIZE, 0, s>>>(w, g, coconet_arg1, coconet_p.tail_lo, coconet_p.hi);
// ONCE-EXEC: verify=exec once: output 'w' (f32): max 0 ULP apart over 1..3 ranks x 3 inputs
// ONCE-EXEC: verify=exec once: ok
// TWICE: effects.cu:33:47: error: 'next_lr(calls)' has side effects and is written twice in region 'twice'; the schedule evaluates each argument once and cannot tell the two apart: compute it into a local before the region
// TWICE: effects.cu:32:47: note: it is also written here
// OPAQUE: error: 'next_lr(calls)' has side effects; the schedule evaluates it once at the top of region 'after_opaque', before a statement coconet does not see into: compute it into a local before the region
// OPAQUE: note: this statement comes first
// OPAQUE-NEXT: {{^}}    calls += n;
