// A kernel with an `if (i < n)` guard computes only the elements that have a
// thread: the launch must be proven to give all n elements one, or the
// region is refused with the launch quoted. A grid-stride loop covers any grid.
// A dim3 block whose x is assigned covers n with a grid of (n + b.x - 1) / b.x
// whatever x holds; one whose y is assigned, or which is assigned whole
// (`lanes = dim3(32);`, its operator=), is not read as one-dimensional (LANE_Y,
// WHOLE).
// RUN: %expect 1 %coconet %s -o %t.cu -- -DCASE_ONE_BLOCK 2>&1 | %FileCheck --check-prefix=ONE %s
// RUN: test ! -e %t.cu
// RUN: %expect 1 %coconet --check %s -- -DCASE_HALF 2>&1 | %FileCheck --check-prefix=HALF %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_MODIFIED 2>&1 | %FileCheck --check-prefix=MODIFIED %s
// RUN: %coconet --verify=3 %s -- -DCASE_FORMS | %FileCheck --check-prefix=FORMS %s
// RUN: %coconet --verify=2 %s -- -DCASE_GRID_STRIDE | %FileCheck --check-prefix=STRIDE %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_LANE_Y 2>&1 | %FileCheck --check-prefix=LANE_Y %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_LANE_Y -DWHOLE 2>&1 | %FileCheck --check-prefix=LANE_Y %s
// An extraction bug planted on purpose (every launch "covers") is missed by the
// IR interpreter, which sees only what extraction saw, and caught by running
// the code:
// RUN: env COCONET_TEST_PLANT_COVERAGE_BUG=1 %coconet --verify=ir:4 %s -- -DCASE_ONE_BLOCK | %FileCheck --check-prefix=PLANT-IR %s
// RUN: env COCONET_TEST_PLANT_COVERAGE_BUG=1 %expect 1 %coconet --verify=2 %s -- -DCASE_ONE_BLOCK | %FileCheck --check-prefix=PLANT-EXEC %s
#include <cuda_runtime.h>
#include <nccl.h>

#define THREADS 128
constexpr int kBlock = 256;

static inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

__global__ void sgd(float *w, const float *g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i];
}

__global__ void decay(float *w, const float *g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  w[i] = 0.5f * w[i] + g[i];
}

__global__ void sgd_stride(float *w, const float *g, float lr, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) w[i] -= lr * g[i];
}

void step(float *w, float *g, float lr, int n, ncclComm_t comm, cudaStream_t s) {
  const int blocks = (n + kBlock - 1) / kBlock;
  int tiles = ceil_div(n, THREADS);
  int grid = (n + 255) / 256;
  dim3 lanes(64);
  if (n > 1000) lanes.x = 128;
#if defined(CASE_LANE_Y) && defined(WHOLE)
  lanes = dim3(32);
#elif defined(CASE_LANE_Y)
  lanes.y = 2;
#endif
#if defined(CASE_ONE_BLOCK)
#pragma coconet region name(one_block) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<1, 256, 0, s>>>(w, g, lr, n);
  }
#elif defined(CASE_HALF)
#pragma coconet region name(half) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 128, 0, s>>>(w, g, lr, n);
  }
#elif defined(CASE_MODIFIED)
  n = 2 * n;  // grid was computed from the old n
#pragma coconet region name(modified) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<grid, 256, 0, s>>>(w, g, lr, n);
  }
#elif defined(CASE_FORMS)
#pragma coconet region name(forms) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<blocks, kBlock, 0, s>>>(w, g, lr, n);
    sgd<<<tiles, THREADS, 0, s>>>(w, g, lr, n);
    decay<<<(n + THREADS - 1) / THREADS, THREADS, 0, s>>>(w, g, n);
    decay<<<n / 64 + 1, 64, 0, s>>>(w, g, n);
    sgd<<<(n - 1) / 32 + 1, dim3(32), 0, s>>>(w, g, lr, n);
    decay<<<(n + lanes.x - 1) / lanes.x, lanes, 0, s>>>(w, g, n);
  }
#elif defined(CASE_LANE_Y)
#pragma coconet region name(lane_y) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    decay<<<(n + lanes.x - 1) / lanes.x, lanes, 0, s>>>(w, g, n);
  }
#elif defined(CASE_GRID_STRIDE)
#pragma coconet region name(grid_stride) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd_stride<<<1, 32, 0, s>>>(w, g, lr, n);
  }
#endif
  (void)blocks, (void)tiles, (void)grid, (void)lanes;
}

// ONE: coverage.cu:59:5: error: kernel 'sgd' computes only the elements that have a thread (its guard against 'n'), and coconet cannot prove that '<<<1, 256>>>' gives every one of the n elements a thread; launch (n + B - 1) / B blocks of B threads, or write the element loop as a grid-stride loop
// ONE-NEXT: {{^}}    sgd<<<1, 256, 0, s>>>(w, g, lr, n);
// ONE: note: region 'one_block' needs this launch to be pointwise for its schedule
// HALF: error: kernel 'sgd' computes only the elements that have a thread (its guard against 'n'), and coconet cannot prove that '<<<(n + 255) / 256, 128>>>' gives every one of the n elements a thread
// MODIFIED: error: kernel 'sgd' computes only the elements that have a thread (its guard against 'n'), and coconet cannot prove that '<<<grid, 256>>>' gives every one of the n elements a thread
// FORMS: verify forms: output 'w' (f32): max 0 ULP apart over 1..3 ranks x 3 inputs
// FORMS: verify forms: ok
// STRIDE: verify grid_stride: ok
// PLANT-IR: verify=ir one_block: ok
// PLANT-EXEC: verify one_block: output 'w' (f32): max {{[1-9][0-9]*}} ULP apart
// PLANT-EXEC: verify one_block: MISMATCH: {{.*}} w[{{[0-9]+}}] is {{.*}} as written and {{.*}} scheduled
// LANE_Y: error: kernel 'decay' is launched with '<<<(n + lanes.x - 1) / lanes.x, lanes>>>', whose grid or block has more than one dimension
