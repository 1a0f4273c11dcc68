// bench-host: how fast the COCONET_HOST_SIMPLE path runs a pointwise kernel,
// y[i] = a * x[i] + y[i] over 16M floats, compared with plain C++ loops doing
// the same work.  Prints each variant's best time of 5 runs and its speed
// relative to the sequential loop (1.00 = as fast).
//
// A grid-stride kernel whose threads each cover many elements visits memory
// thread by thread, i.e. with a stride of the whole grid; the last line times
// a plain loop with that same order of accesses, which bounds what any
// thread-by-thread execution can reach on a CPU.
#include <stdio.h>
#include <string.h>

#include <chrono>

__global__ void axpy_guard(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void axpy_grid_stride(float a, const float *x, float *y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}

__attribute__((noinline)) void axpy_plain(float a, const float *x, float *y, int n) {
  for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

__attribute__((noinline)) void axpy_plain_strided(float a, const float *x, float *y, int n, int stride) {
  for (int t = 0; t < stride; ++t)
    for (int i = t; i < n; i += stride) y[i] = a * x[i] + y[i];
}

template <class F>
static double best_ms(F run) {
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (ms < best) best = ms;
  }
  return best;
}

int main() {
  const int n = 16 << 20, block = 256, full_grid = n / block, small_grid = 1024;
  const float a = 0.5f;
  float *x, *y, *expect;
  cudaMallocManaged(&x, sizeof(float) * n);
  cudaMallocManaged(&y, sizeof(float) * n);
  cudaMallocManaged(&expect, sizeof(float) * n);
  for (int i = 0; i < n; ++i) x[i] = (float)(i % 1000);
  memcpy(expect, x, sizeof(float) * n);
  axpy_plain(a, x, expect, n);

  int wrong = 0;
  auto check = [&](const char *what, auto launch) {
    memcpy(y, x, sizeof(float) * n);
    launch();
    if (memcmp(y, expect, sizeof(float) * n)) {
      printf("%s: wrong result\n", what);
      wrong++;
    }
  };
  auto guard = [&] { coconet_host_launch(COCONET_HOST_SIMPLE, axpy_guard, full_grid, block, 0, 0, a, x, y, n); };
  auto stride_full = [&] {
    coconet_host_launch(COCONET_HOST_SIMPLE, axpy_grid_stride, full_grid, block, 0, 0, a, x, y, n);
  };
  auto stride_small = [&] {
    coconet_host_launch(COCONET_HOST_SIMPLE, axpy_grid_stride, small_grid, block, 0, 0, a, x, y, n);
  };
  check("if-guard", guard);
  check("grid-stride, full grid", stride_full);
  check("grid-stride, 1024 blocks", stride_small);

  const double plain = best_ms([&] { axpy_plain(a, x, y, n); });
  const double t_guard = best_ms(guard);
  const double t_full = best_ms(stride_full);
  const double t_small = best_ms(stride_small);
  const double plain_strided = best_ms([&] { axpy_plain_strided(a, x, y, n, small_grid * block); });
  char label[3][64];
  snprintf(label[0], sizeof label[0], "kernel, if-guard, %d blocks", full_grid);
  snprintf(label[1], sizeof label[1], "kernel, grid-stride, %d blocks", full_grid);
  snprintf(label[2], sizeof label[2], "kernel, grid-stride, %d blocks", small_grid);
  printf("axpy over %d floats, best of 5 runs (speed relative to the sequential plain loop):\n", n);
  printf("  %-42s %8.2f ms  1.00\n", "plain C++ loop, sequential", plain);
  printf("  %-42s %8.2f ms  %.2f\n", label[0], t_guard, plain / t_guard);
  printf("  %-42s %8.2f ms  %.2f\n", label[1], t_full, plain / t_full);
  printf("  %-42s %8.2f ms  %.2f\n", label[2], t_small, plain / t_small);
  printf("  %-42s %8.2f ms  %.2f (that kernel relative to this loop: %.2f)\n", "plain C++ loop in that grid-stride order",
         plain_strided, plain / plain_strided, plain_strided / t_small);
  cudaFree(x);
  cudaFree(y);
  cudaFree(expect);
  return wrong != 0;
}
