// Style: optional buffers. A GPT-2 trainer's AdamW reads and writes fp32
// master weights only when it keeps them (`master != NULL ? master[i] :
// (float)params[i]`, `if (master != NULL) master[i] = p;`), and launches it
// with NULL when it does not; an epilogue template takes a bias only when its
// flag says so and is launched with nullptr otherwise. The test is then known
// false and what it guards is left out. -DMASTER_VARIABLE passes a pointer
// that may be NULL at run time, as llm.c's trainer does: the schedule is for a
// non-null pointer, tested at the top of the region, and the region runs as
// written when it is null. -DMASTER_CHANGED changes the pointer inside the
// region before the launch: refused (the test at the top would be stale); so does
// -DMASTER_LAMBDA, through a lambda capturing it by reference.
// RUN: %coconet --verify=ir:4 %s | %FileCheck --check-prefix=IR %s
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --verify=4 %s -- -DMASTER_VARIABLE | %FileCheck --check-prefix=VARIABLE %s
// RUN: %coconet %s -- -DMASTER_VARIABLE | %FileCheck --check-prefix=VARCODE %s
// RUN: %coconet --explain %s -- -DMASTER_VARIABLE | %FileCheck --check-prefix=VAREXPLAIN %s
// RUN: %expect 1 %coconet --check %s -- -DMASTER_VARIABLE -DMASTER_CHANGED 2>&1 | %FileCheck --check-prefix=CHANGED %s
// RUN: %expect 1 %coconet --check %s -- -DMASTER_VARIABLE -DMASTER_LAMBDA 2>&1 | %FileCheck --check-prefix=LAMBDA %s
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void adamw(__nv_bfloat16 *params, float *master, const float *grads, float *m, float *v, size_t n,
                      float lr, float beta1, float beta2, float eps, float wd) {
  size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float g = grads[i];
  float mi = beta1 * m[i] + (1.0f - beta1) * g;
  float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
  m[i] = mi;
  v[i] = vi;
  float old = (master != NULL) ? master[i] : (float)params[i];
  float p = old - lr * (mi / (sqrtf(vi) + eps) + wd * old);
  params[i] = __float2bfloat16(p);
  if (master != NULL) master[i] = p;
}

template <bool HAS_BIAS>
__global__ void scale_bias(float *out, const float *x, const float *bias, float alpha, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols) {
    float y = alpha * x[i];
    if (HAS_BIAS && bias) y += bias[i % cols];
    out[i] = y;
  }
}

void keep_master(float **master, bool keep);

void step(__nv_bfloat16 *params, float *master, float *grads, float *m, float *v, size_t n, ncclComm_t comm,
          cudaStream_t stream) {
#ifndef MASTER_VARIABLE
  (void)master;  // this build keeps no master weights
#endif
#ifdef MASTER_LAMBDA
  auto drop_master = [&] { master = nullptr; };
#endif
#ifdef MASTER_VARIABLE
#pragma coconet region name(adamw) split reorder replicated(params, master) shard(m, v) scratch(grads)
#else
#pragma coconet region name(adamw) split reorder replicated(params) shard(m, v) scratch(grads)
#endif
  {
    ncclAllReduce(grads, grads, n, ncclFloat, ncclSum, comm, stream);
#ifdef MASTER_CHANGED
    keep_master(&master, n > 1000);
#elif defined(MASTER_LAMBDA)
    drop_master();
#endif
#ifdef MASTER_VARIABLE
    adamw<<<(n + 255) / 256, 256, 0, stream>>>(params, master, grads, m, v, n, 3e-4f, 0.9f, 0.95f, 1e-8f, 0.1f);
#else
    adamw<<<(n + 255) / 256, 256, 0, stream>>>(params, NULL, grads, m, v, n, 3e-4f, 0.9f, 0.95f, 1e-8f, 0.1f);
#endif
  }
}

void project(float *out, float *x, int rows, int cols, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(project) split reorder scratch(x)
  {
    ncclAllReduce(x, x, rows * cols, ncclFloat, ncclSum, comm, stream);
    scale_bias<false><<<(rows * cols + 127) / 128, 128, 0, stream>>>(out, x, nullptr, 0.5f, rows, cols);
  }
}

// IR: verify=ir adamw: ok
// IR: verify=ir project: ok
// EXEC: verify adamw: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify project: ok (the region as written and as scheduled agree within 0 ULP)
// CODE: const float old = __bfloat162float(params);
// CODE-NOT: master
// CODE: // coconet: end generated code for region adamw
// VARIABLE: verify adamw: output 'master' (f32): max 0 ULP apart
// VARIABLE: verify adamw: run with master != nullptr (the schedule's branch; the other runs the region as written)
// VARIABLE: verify adamw: ok (the region as written and as scheduled agree within 0 ULP)
// VARCODE: // coconet: kernel 'adamw' tests 'master' against NULL (optional-pointers.cu:{{[0-9]+}}:15): the
// VARCODE-NEXT: // schedule is for master != nullptr; the region runs as written otherwise
// VARCODE-NEXT: if (master != nullptr) {
// VARCODE: ncclAllGather(master + coconet_p.slice_lo, master, coconet_p.s, ncclFloat, comm, stream)
// VARCODE-NEXT: } else {
// VARCODE-NEXT: ncclAllReduce(grads, grads, n, ncclFloat, ncclSum, comm, stream);
// VARCODE-NEXT: adamw<<<(n + 255) / 256, 256, 0, stream>>>(params, master, grads, m, v, n, 3e-4f, 0.9f, 0.95f, 1e-8f, 0.1f);
// VARCODE-NEXT: }
// VAREXPLAIN: - analysis: kernel 'adamw' tests 'master' against NULL ({{.*}}optional-pointers.cu:{{[0-9]+}}:15) and the launch passes a variable: the schedule is for master != nullptr, tested at the top of the region; the region runs as written otherwise
// CHANGED: optional-pointers.cu:67:5: error: region 'adamw': kernel 'adamw' tests 'master' against NULL, so the schedule runs when master != nullptr at the top of the region; this statement also uses 'master' and could change it first
// CHANGED: note: kernel 'adamw' tests it here
// LAMBDA: optional-pointers.cu:69:5: error: region 'adamw': the schedule runs when master != nullptr at the top of the region (kernel 'adamw' tests it against NULL); this statement may change 'master' first (through a call, a reference or a pointer): move the statement out
