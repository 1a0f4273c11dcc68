// --target=host lowers a launch written in a macro's body in the #define, once
// for every use of the macro (FasterTransformer's launchers choose among
// kernels in macros of several launches): each becomes
// coconet_host_launch_call, which calls the kernel as written, so that each
// use picks its own overload or instance (a kernel template's arguments
// deduced, two kernel templates of one name for half2 and float2), with
// COCONET_HOST_SYNC, the flag that runs any kernel. A macro of a header of the
// user's is lowered in the header's text, which the kept file holds in place
// of its #include. The program then runs on the host backend and checks every
// result. The nearest refusals: a launch whose '<<<' comes from one macro and
// its '>>>' from another (-DSPLIT), a kernel's name pasted together (-DPASTE),
// an argument that only the kernel's parameter type converts (-DNULL_ARG: NULL
// for a pointer; the lowered launch passes its arguments on as they are), a
// macro giving several configuration values inside a macro's launch
// (-DCONFIG_IN_MACRO: the body is lowered once, for uses that may give any
// number). A launch written out with such a macro (`fill<<<CONFIG_OF(n)>>>`)
// is lowered: only the values it does not give are added.
// REQUIRES: host-runtime
// RUN: rm -rf %t && mkdir -p %t
// RUN: %coconet-cc --target=host --keep=%t/keep -O1 -I%S/Inputs %s -o %t/macros
// RUN: %FileCheck %s < %t/keep/macro-launch.cu
// RUN: %t/macros | %FileCheck --check-prefix=RUNS %s
// RUN: %expect 1 %coconet --target=host %s -o %t/split.cu -- -I%S/Inputs -DSPLIT 2>&1 \
// RUN:   | %FileCheck --check-prefix=SPLIT %s
// RUN: %expect 1 %coconet --target=host %s -o %t/paste.cu -- -I%S/Inputs -DPASTE 2>&1 \
// RUN:   | %FileCheck --check-prefix=PASTE %s
// RUN: %expect 1 %coconet --target=host %s -o %t/null.cu -- -I%S/Inputs -DNULL_ARG 2>&1 \
// RUN:   | %FileCheck --check-prefix=NULL_ARG %s
// RUN: %expect 1 %coconet --target=host %s -o %t/config.cu -- -I%S/Inputs -DCONFIG_IN_MACRO 2>&1 \
// RUN:   | %FileCheck --check-prefix=CONFIG_IN_MACRO %s
#include <cuda_runtime.h>
#include <stdio.h>

#include "macros/launchers.cuh"

__global__ void fill(float *x, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}

// A block sum through shared memory: it needs the barrier-capable launch.
template <int BLOCK>
__global__ void block_sum(const float *x, float *out, int n) {
  __shared__ float part[BLOCK];
  float s = 0;
  for (int i = threadIdx.x; i < n; i += BLOCK) s += x[i];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int k = BLOCK / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = part[0];
}

#define FILL(x, v, n) fill<<<((n) + 255) / 256, 256>>>(x, v, n)

// Two launches in one macro, the kernel chosen at run time as a launcher does.
#define SUM_WITH(B, x, out, n) \
  if ((n) >= 4 * (B)) { \
    block_sum<B><<<1, B>>>(x, out, n); \
  } else { \
    block_sum<32><<<1, 32, 0, 0>>>(x, out, n); \
  }

// A kernel template launched with its arguments deduced, and two kernels of one name.
template <typename T>
__global__ void twice(T *x, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) x[i] *= 2;
}
__global__ void offset(float *x, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) x[i] += 1;
}
__global__ void offset(double *x, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) x[i] += 2;
}
#define TWICE(x, n) twice<<<1, 32>>>(x, n)
// Two configuration values from one macro.
#define CONFIG_OF(n) ((n) + 255) / 256, 256
#define OFFSET(x, n) offset<<<1, 64>>>(x, n)

#if defined(SPLIT)
#define OPEN <<<
#define CLOSE >>>
#elif defined(CONFIG_IN_MACRO)
#define FILL_CONFIGURED(x, v, n) fill<<<CONFIG_OF(n)>>>(x, v, n)
#elif defined(PASTE)
#define LAUNCH_PASTED(name, x, n) name##_twice<<<1, 32>>>(x, n)
__global__ void scale_twice(float *x, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) x[i] *= 2;
}
#endif

int main() {
  const int n = 1000;
  float *x, *sum;
  cudaMallocManaged(&x, n * sizeof(float));
  cudaMallocManaged(&sum, sizeof(float));
  FILL(x, 1.0f, n);
  LAUNCH_ADD_N(float, 2, x, n, 0);
  SUM_WITH(128, x, sum, n);
  cudaDeviceSynchronize();
  printf("sum %.1f\n", *sum);
  SUM_WITH(512, x, sum, n);
  cudaDeviceSynchronize();
  printf("small sum %.1f\n", *sum);
  double *d;
  cudaMallocManaged(&d, 4 * sizeof(double));
  for (int i = 0; i < 4; i++) d[i] = i;
  TWICE(x, n);
  TWICE(d, 4);
  OFFSET(x, n);
  OFFSET(d, 4);
  cudaDeviceSynchronize();
  printf("x[7] %.1f d %.1f %.1f %.1f %.1f\n", x[7], d[0], d[1], d[2], d[3]);
  cudaFree(d);
  fill<<<CONFIG_OF(n)>>>(x, 5.0f, n);
  cudaDeviceSynchronize();
  printf("x[999] %.1f\n", x[999]);
#if defined(SPLIT)
  fill OPEN 1, 1 CLOSE(x, 0.0f, n);
#elif defined(PASTE)
  LAUNCH_PASTED(scale, x, n);
#elif defined(NULL_ARG)
  FILL(NULL, 0.0f, 0);
#elif defined(CONFIG_IN_MACRO)
  FILL_CONFIGURED(x, 0.0f, n);
#endif
  cudaFree(x);
  cudaFree(sum);
  return 0;
}
// CHECK: #line 1 "{{.*}}Inputs/macros/launchers.cuh"
// CHECK: #define LAUNCH_ADD_N(T, N, x, n, s) \
// CHECK-NEXT: coconet_host_launch_call(COCONET_HOST_SYNC, (add_n<T, N>), ((n) + 127) / 128, 128, 0, s, x, \
// CHECK: #define FILL(x, v, n) coconet_host_launch_call(COCONET_HOST_SYNC, (fill), ((n) + 255) / 256, 256, 0, 0, x, v, n)
// CHECK: coconet_host_launch_call(COCONET_HOST_SYNC, (block_sum<B>), 1, B, 0, 0, x, out, n); \
// CHECK: coconet_host_launch_call(COCONET_HOST_SYNC, (block_sum<32>), 1, 32, 0, 0, x, out, n); \
// RUNS: sum 3000.0
// RUNS-NEXT: small sum 3000.0
// RUNS-NEXT: x[7] 7.0 d 2.0 4.0 6.0 8.0
// RUNS-NEXT: x[999] 5.0
// CHECK: #define TWICE(x, n) coconet_host_launch_call(COCONET_HOST_SYNC, (twice), 1, 32, 0, 0, x, n)
// CHECK: #define OFFSET(x, n) coconet_host_launch_call(COCONET_HOST_SYNC, (offset), 1, 64, 0, 0, x, n)
// CHECK: coconet_host_launch(COCONET_HOST_SIMPLE, fill, CONFIG_OF(n), 0, 0, x, 5.0f, n);
// SPLIT: macro-launch.cu:121:3: error: --target=host: cannot lower this kernel launch: its kernel, '<<<', '>>>' and arguments are not all written in the body of the macro it is in (or its kernel's name is pasted together with ##); write the launch out
// SPLIT-NEXT: {{^  fill OPEN 1, 1 CLOSE\(x, 0.0f, n\);$}}
// SPLIT-NEXT: {{^  \^$}}
// PASTE: macro-launch.cu:{{[0-9]+}}:3: error: --target=host: cannot lower this kernel launch: its kernel, '<<<', '>>>' and arguments are not all written in the body of the macro it is in (or its kernel's name is pasted together with ##); write the launch out
// NULL_ARG: macro-launch.cu:{{[0-9]+}}:3: error: --target=host: cannot lower this kernel launch: an argument of it in the macro's use becomes the kernel's parameter only by its type (NULL or 0 for a pointer, {...}), and the lowered launch passes arguments on as they are; write it as that type (nullptr, a cast); write the launch out
// CONFIG_IN_MACRO: macro-launch.cu:{{[0-9]+}}:3: error: --target=host: cannot lower this kernel launch: its configuration's values are not all written out in the macro's body (a macro there gives several of them); write the launch out
// CONFIG_IN_MACRO-NEXT: {{^  FILL_CONFIGURED\(x, 0.0f, n\);$}}
