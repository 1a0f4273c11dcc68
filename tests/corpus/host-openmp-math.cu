// Style: a kernel test harness as trainers' dev/ directories write them: the
// CPU reference runs under OpenMP (omp.h, #pragma omp, omp_get_max_threads),
// and a host template validates the result with isfinite/isnan/fabs, which
// nvcc's cuda_runtime.h makes visible through <math.h> without an include.
// GCC's omp.h does not parse with clang and clang's own global isfinite is
// device-only; coconet's parse supplies both as nvcc's host compiler sees them.
// The translated file is compiled by nvcc (tests/compile/translated.mk); the
// execution check needs a host compiler with OpenMP (not clang++ without
// libomp, as in the SANITIZE=1 build).
// RUN: %coconet --check %s | %FileCheck --check-prefix=CHECK %s
// RUN: %coconet --target=host %s -o %t.cu
// RUN: %if host-openmp %{ %coconet --verify=4 %s -- -fopenmp | %FileCheck --check-prefix=EXEC %s %}
#include <cuda_runtime.h>
#include <nccl.h>
#include <omp.h>
#include <stdio.h>

__global__ void residual_scale(float *out, const float *res, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = out[i] * s + res[i];
}

void residual_cpu(float *out, const float *res, float s, int n) {
#pragma omp parallel for
  for (int i = 0; i < n; i++) out[i] = out[i] * s + res[i];
}

template <class T>
int validate(const T *got, const T *want, int n, T tolerance) {
  int bad = 0;
  for (int i = 0; i < n; i++) {
    if (!isfinite(want[i]) || isnan(got[i])) continue;
    bad += fabs(got[i] - want[i]) > tolerance;
  }
  printf("%d threads, %d mismatches\n", omp_get_max_threads(), bad);
  return bad;
}

void step(float *out, const float *res, int n, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(omp_harness) split reorder replicated(res)
  {
    ncclAllReduce(out, out, n, ncclFloat, ncclSum, comm, stream);
    residual_scale<<<(n + 255) / 256, 256, 0, stream>>>(out, res, 0.5f, n);
  }
}

int check(const float *got, const float *want, int n) { return validate(got, want, n, 1e-5f); }

// CHECK: region omp_harness ({{.*}}host-openmp-math.cu:{{[0-9]+}}) in step: nccl:ncclAllReduce launch:residual_scale
// EXEC: verify omp_harness: output 'out' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// EXEC: verify omp_harness: ok
