// --target=host launch forms that take more than the kernel's name (found on
// llm.c's dev/cuda kernels): a kernel overloaded with a host wrapper of the
// same name is cast to its pointer type; deduced bool and enum template
// arguments are written as such (`true`, not -1); a kernel template launched
// with arguments that depend on an enclosing template is called through
// coconet_host_launch_call, which deduces them at each instantiation. The
// program then runs on the host backend and checks every result.
// REQUIRES: host-runtime
// RUN: rm -rf %t && mkdir -p %t
// RUN: %coconet-cc --target=host --keep=%t/keep -O1 %s -o %t/forms
// RUN: %FileCheck %s < %t/keep/launch-forms.cu
// RUN: %t/forms | %FileCheck --check-prefix=RUNS %s
#include <cuda_runtime.h>
#include <stdio.h>

#include <type_traits>

enum class Mode { add = 1, twice = 2 };

__global__ void scale(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}

// The host wrapper has the kernel's name (nvcc picks the __global__ one at <<<>>>).
void scale(float *x, float s, int n, int block) {
  // CHECK: coconet_host_launch(COCONET_HOST_SIMPLE, static_cast<void (*)(float *, float, int)>(scale), (n + block - 1) / block, block, 0, 0, x, s, n);
  scale<<<(n + block - 1) / block, block>>>(x, s, n);
}

template <typename T, bool Negate, Mode M>
__global__ void update(T *x, int n, std::bool_constant<Negate>, std::integral_constant<Mode, M>) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    T v = M == Mode::twice ? x[i] * 2 : x[i] + 1;
    x[i] = Negate ? -v : v;
  }
}

template <typename T>
__global__ void fill(T *x, T value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = value;
}

// A host template: fill's T comes from the enclosing T.
template <typename T>
void fill_all(T *x, T value, int n) {
  // CHECK: coconet_host_launch_call(COCONET_HOST_SYNC, fill, (n + 63) / 64, 64, 0, 0, x, value, n);
  fill<<<(n + 63) / 64, 64>>>(x, value, n);
}

int main() {
  const int n = 100;
  float *x;
  double *y;
  cudaMallocManaged(&x, n * sizeof(float));
  cudaMallocManaged(&y, n * sizeof(double));
  fill_all(x, 3.0f, n);
  fill_all(y, 0.5, n);
  scale(x, 2.0f, n, 32);
  // CHECK: coconet_host_launch(COCONET_HOST_SIMPLE, update<float, true, static_cast<Mode>(2)>, 1, 128, 0, 0, x, n, std::bool_constant<true>{}, std::integral_constant<Mode, Mode::twice>{});
  update<<<1, 128>>>(x, n, std::bool_constant<true>{}, std::integral_constant<Mode, Mode::twice>{});
  // CHECK: coconet_host_launch(COCONET_HOST_SIMPLE, update<double, false, static_cast<Mode>(1)>, 1, 128, 0, 0, y, n, std::false_type{}, std::integral_constant<Mode, Mode::add>{});
  update<<<1, 128>>>(y, n, std::false_type{}, std::integral_constant<Mode, Mode::add>{});
  cudaDeviceSynchronize();
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += x[i] != -12.0f || y[i] != 1.5;
  // RUNS: launch forms: x[0] = -12, y[0] = 1.5, 0 wrong
  printf("launch forms: x[0] = %g, y[0] = %g, %d wrong\n", x[0], y[0], bad);
  cudaFree(x);
  cudaFree(y);
  return bad != 0;
}
