// Style: locals that are never assigned after their initializer but are not
// declared const, as most trainers and engines write them: the host's
// `int n = rows * cols;` and grid, a kernel's `int total = n;` as its loop
// bound, a row-wise kernel's `int H = hidden;` as its row length. Each is the
// value it was initialized with wherever it is used; a local or parameter the
// kernel assigns is not (the ASSIGNED variant is refused with the reason).
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet --explain %s | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %expect 1 %coconet --check %s -- -DASSIGNED 2>&1 | %FileCheck --check-prefix=ASSIGNED %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void scale(float *x, float by, int n) {
  int total = n;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += blockDim.x * gridDim.x) {
    x[i] *= by;
#if defined(ASSIGNED)
    total = n / 2;
#endif
  }
}

__global__ void rmsnorm(float *out, const float *x, const float *gamma, int rows, int hidden) {
  int row = blockIdx.x;
  int H = hidden;
  if (row >= rows) return;
  __shared__ float partial[256];
  float s = 0.0f;
  for (int j = threadIdx.x; j < H; j += blockDim.x) s += x[row * H + j] * x[row * H + j];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) partial[threadIdx.x] += partial[threadIdx.x + k];
    __syncthreads();
  }
  float r = rsqrtf(partial[0] / H + 1e-6f);
  for (int j = threadIdx.x; j < H; j += blockDim.x) out[row * H + j] = x[row * H + j] * r * gamma[j];
}

void step(float *x, float by, int rows, int cols, ncclComm_t comm, cudaStream_t s) {
  int n = rows * cols;
  int grid = (n + 255) / 256;
#pragma coconet region name(scaled) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    scale<<<grid, 256, 0, s>>>(x, by, n);
  }
}

void norm(float *out, float *y, const float *gamma, int rows, int hidden, ncclComm_t comm, cudaStream_t s) {
  size_t n = (size_t)rows * hidden;
  int grid = rows;
#pragma coconet region name(normed) split reorder scratch(y) replicated(gamma)
  {
    ncclAllReduce(y, y, n, ncclFloat, ncclSum, comm, s);
    rmsnorm<<<grid, 256, 0, s>>>(out, y, gamma, rows, hidden);
  }
}

// IR: verify=ir scaled: ok
// IR: verify=ir normed: ok
// EXEC: verify scaled: output 'x' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify scaled: ok
// EXEC: verify normed: output 'out' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify normed: ok
// EXPLAIN: explain scaled
// EXPLAIN: reorder: kernel 'scale'
// EXPLAIN: explain normed
// EXPLAIN: reorder: kernel 'rmsnorm'{{.*}} is row-wise (one block per row of hidden elements
// ASSIGNED: plain-locals.cu:[[@LINE-55]]:59: error: kernel 'scale': the element loop's bound 'total' must be a scalar parameter of the kernel or an expression of them (+ - * / and integer literals, members of struct parameters, locals never assigned after their initializer)
// The grid only the replaced launch used, a local that is not const: nvcc warns that a
// variable is set but never used through (void)grid, not through (void)&grid.
// CODE: {{^ *}}(void)&grid;

// A count whose initializer reads a local assigned on several paths before it
// (`c`), never assigned itself: the launch's grid covers it; the datatype comes
// from a trait, as engines that build for several types write it.
template <typename T> struct NcclTypeOf;
template <> struct NcclTypeOf<float> {
  static constexpr ncclDataType_t value = ncclFloat;
};
__global__ void halve(float *x, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 0.5f;
}
void paths(float *x, int rows, int cols, int layer, ncclComm_t comm, cudaStream_t s) {
  int c = cols;
  if (layer < 2) c = 1;
  size_t n = (size_t)rows * c;
#pragma coconet region name(paths) split reorder
  {
    ncclAllReduce((const void *)x, (void *)x, n, NcclTypeOf<float>::value, ncclSum, comm, s);
    halve<<<(n + 255) / 256, 256, 0, s>>>(x, n);
  }
}

// A count cast where the collective takes it, `(size_t)n`: the cast keeps n's value, so the
// collective and the kernel run over the same rows * cols elements.
void cast(float *x, float by, int rows, int cols, ncclComm_t comm, cudaStream_t s) {
  const int n = rows * cols;
#pragma coconet region name(cast) split reorder
  {
    ncclAllReduce(x, x, (size_t)n, ncclFloat, ncclSum, comm, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(x, by, n);
  }
}
// IR: verify=ir paths: ok
// IR: verify=ir cast: ok
// EXEC: verify paths: output 'x' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify paths: ok
// EXEC: verify cast: output 'x' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify cast: ok
// CODE: {{^ *}}// coconet: split reorder: ReduceScatter(x) -> halve on this rank's slice
// CODE: {{^ *}}COCONET_NCCL_CHECK(ncclReduceScatter(x, x + coconet_p.slice_lo, coconet_p.s,
// CODE-NEXT: {{^ *}}NcclTypeOf<float>::value, ncclSum, comm, s));
