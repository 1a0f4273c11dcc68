// Style: launch configurations computed where the launch is, inside the
// region's block, after the collective: `const int n = rows * h;`, the block
// and grid counts (through a `ceil_div` helper), `dim3 block(std::min(n, 256)),
// grid(...)`, a scale as a local. Such declarations read only values nothing
// in the region changes, so the schedule declares them first, as written, and
// the rest runs around them. A declaration after an argument with side effects
// (`seed++`) stays where it is, and so does one whose initializer calls a
// function with side effects (-DEFFECT; its grid is then not proven to cover the
// elements), and one naming what an earlier statement of the region names (a
// local `a` hiding the parameter `a` an earlier launch reads: -DSHADOW). One
// named as coconet's own (`coconet_p`: -DOWN_NAME) is declared first like the
// others: the generated names avoid it (coconet_p_2).
// RUN: %coconet --verify=3 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --verify=3 %s -- -DAFTER_EFFECT | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet %s -- -DAFTER_EFFECT | %FileCheck --check-prefix=AFTER %s
// RUN: %expect 1 %coconet --check %s -- -DEFFECT 2>&1 | %FileCheck --check-prefix=EFFECT %s
// RUN: %coconet --verify=3 %s -- -DSHADOW | %FileCheck --check-prefix=SHADOW %s
// RUN: %coconet --verify=3 %s -- -DOWN_NAME | %FileCheck --check-prefix=OWN_NAME %s
// RUN: %coconet %s -- -DOWN_NAME | %FileCheck --check-prefix=OWN_NAME_CODE %s
#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>
#include <nccl.h>

static inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

__global__ void add_bias(float *out, const float *bias, int n, int h) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += bias[i % h];
}

__global__ void scale(float *out, float a, unsigned seed, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = out[i] * a + 1e-3f * (float)(seed % 7);
}

#ifdef EFFECT
static int launches = 0;
static int pick_blocks(int n) {
  ++launches;
  return ceil_div(n, 256);
}
#endif

void forward(float *out, const float *bias, int rows, int h, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(bias) split reorder replicated(bias)
  {
    ncclAllReduce(out, out, rows * h, ncclFloat, ncclSum, comm, s);
    const int n = rows * h;
    const int threads = 256;
#ifdef EFFECT
    const int blocks = pick_blocks(n);
#else
    const int blocks = ceil_div(n, threads);
#endif
    add_bias<<<blocks, threads, 0, s>>>(out, bias, n, h);
  }
}

// The sizes in a struct passed by value and behind a pointer: the local is the
// collective's count, member chains as written.
struct Shape {
  int rows, h;
};

void forward_shape(float *out, const float *bias, Shape sh, const Shape *dims, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(shape) split reorder replicated(bias)
  {
    ncclAllReduce(out, out, sh.rows * dims->h, ncclFloat, ncclSum, comm, s);
    const int n = sh.rows * dims->h;
    add_bias<<<ceil_div(n, 256), 256, 0, s>>>(out, bias, n, dims->h);
  }
}

void step(float *g, int n, unsigned seed, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(scale) split reorder
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    dim3 block(std::min(n, 256)), grid(std::max(1, std::min(ceil_div(n, 256), 64)));
    const float inv = 1.0f / 8;
#if defined(AFTER_EFFECT)
    scale<<<grid, block, 0, s>>>(g, inv, seed++, n);
    const unsigned used = seed;
    scale<<<grid, block, 0, s>>>(g, inv, used, n);
#elif defined(SHADOW)
    scale<<<grid, block, 0, s>>>(g, inv, seed, n);
    const unsigned seed = 7;  // hides the parameter the launch above reads: kept in place
    scale<<<grid, block, 0, s>>>(g, inv, seed, n);
#elif defined(OWN_NAME)
    const int coconet_p = ceil_div(n, 256);
    scale<<<coconet_p, 256, 0, s>>>(g, inv, seed, n);
#else
    scale<<<grid, block, 0, s>>>(g, inv, seed, n);
#endif
  }
}

// EXEC: verify bias: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify shape: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify scale: ok (the region as written and as scheduled agree within 0 ULP)
// CODE: // coconet: the region's locals first (nothing in the region changes what they read)
// CODE-NEXT: {{^ *}}const int n = rows * h;
// CODE-NEXT: {{^ *}}const int threads = 256;
// CODE-NEXT: {{^ *}}const int blocks = ceil_div(n, threads);
// CODE: coconet_slice(rows * h, coconet_rank, coconet_nranks)
// CODE: } else {
// CODE-NEXT: ncclAllReduce(out, out, rows * h, ncclFloat, ncclSum, comm, s);
// CODE-NEXT: add_bias<<<blocks, threads, 0, s>>>(out, bias, n, h);
// CODE: region name(shape) split reorder replicated(bias) (translated by coconet)
// CODE: // coconet: the region's locals first
// CODE-NEXT: {{^ *}}const int n = sh.rows * dims->h;
// CODE: coconet_slice(sh.rows * dims->h, coconet_rank, coconet_nranks)
// AFTER: region name(scale) split reorder (translated by coconet)
// AFTER: // coconet: the region's locals first
// AFTER-NEXT: {{^ *}}dim3 block(std::min(n, 256)), grid(
// AFTER-NEXT: {{^ *}}const float inv = 1.0f {{/}} 8;
// AFTER-NEXT: // coconet: arguments with side effects
// AFTER-NEXT: const auto coconet_arg1 = seed++;
// AFTER: ncclAllGather(g + coconet_p_2.slice_lo, g, coconet_p_2.s, ncclFloat, comm,
// AFTER-NEXT: {{^ *}}s));
// AFTER-NEXT: {{^ *}}const unsigned used = seed;
// AFTER-NEXT: scale<<<grid, block, 0, s>>>(g, inv, used, n);
// EFFECT: region-locals.cu:[[@LINE-67]]:5: error: kernel 'add_bias' computes only the elements that have a thread
// SHADOW: verify scale: ok (the region as written and as scheduled agree within 0 ULP)
// OWN_NAME: verify scale: ok (the region as written and as scheduled agree within 0 ULP)
// OWN_NAME_CODE: region name(scale) split reorder (translated by coconet)
// OWN_NAME_CODE: // coconet: the region's locals first
// OWN_NAME_CODE: {{^ *}}const int coconet_p = ceil_div(n, 256);
// OWN_NAME_CODE: const coconet_part coconet_p_2 = coconet_slice(n, coconet_rank, coconet_nranks);
