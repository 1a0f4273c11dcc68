// Style: launchers that pick their kernel at run time, as inference engines
// write them (Inputs/dispatch/): invokeNorm chooses by the row length among a
// cached LayerNorm kernel (one or two block widths, which coconet does not read
// as row-wise) and a grid-stride one, after assigning its dim3 block;
// launchScale returns early on an empty tensor and picks one block below 256
// elements. The call sites have pragma lines only. The schedule is for the first
// kernel, in the order written, with which the region schedules; it runs when
// the launcher's path to it is taken (its conditions in the caller's terms,
// tested at the top of the region), the region as written otherwise. --verify
// tries, in its last input, the numbers the conditions compare with, and says how
// many runs took the path. The nearest refusals: a condition with side effects
// (EFFECTS), one read through a pointer (THROUGH), no kernel the region schedules
// with (NONE_FITS), a statement of the region that could change what a condition
// reads first (CHANGED, a call given its address; LAMBDA, a lambda capturing it
// by reference; REF_MEMBER, a struct's reference member bound to it; STRUCTURED,
// a structured binding by reference to the struct the call reads), a launcher
// keeping a static local (STATIC_LOCAL), a condition reading a global through a
// helper (GLOBAL_HELPER), a macro whose body is not in parentheses (UNPAREN). A
// condition the compiler knows picks its branch alone, per template instance (KNOWN).
// A launcher assigning its locals before and on its paths (ASSIGNED, `small =
// small / 2;`, `block.x = 128;`) is read as the paths they make; the grid
// `(n + block.x - 1) / block.x` covers n whatever block.x holds.
// RUN: %coconet --verify=3 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -I%S/Inputs | %FileCheck --check-prefix=CODE %s
// RUN: %coconet --explain %s -- -I%S/Inputs | %FileCheck --check-prefix=EXPLAIN %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DEFFECTS 2>&1 | %FileCheck --check-prefix=EFFECTS %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DTHROUGH 2>&1 | %FileCheck --check-prefix=THROUGH %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DNONE_FITS 2>&1 | %FileCheck --check-prefix=NONE %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DCHANGED 2>&1 | %FileCheck --check-prefix=CHANGED %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DLAMBDA 2>&1 | %FileCheck --check-prefix=LAMBDA %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DREF_MEMBER 2>&1 | %FileCheck --check-prefix=REF_MEMBER %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DSTRUCTURED 2>&1 | %FileCheck --check-prefix=STRUCTURED %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DSTATIC_LOCAL 2>&1 | %FileCheck --check-prefix=STATIC %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DGLOBAL_HELPER 2>&1 | %FileCheck --check-prefix=GLOBAL %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DUNPAREN 2>&1 | %FileCheck --check-prefix=UNPAREN %s
// RUN: %coconet --explain %s -- -I%S/Inputs -DKNOWN | %FileCheck --check-prefix=KNOWN %s
// RUN: %coconet --verify=3 %s -- -I%S/Inputs -DASSIGNED | %FileCheck --check-prefix=ASSIGNED %s
#include <nccl.h>

#include "dispatch/norm.h"
#include "dispatch/scale.h"

int g_calls = 0;
void log_size(int *n);

#if defined(STATIC_LOCAL)
inline void launchScaleOnce(float *x, float a, int n, cudaStream_t s) {
  static int first = 1;
  if (first == 1) {
    first = 0;
    scaleBlock<<<1, 128, 0, s>>>(x, a, n);
    return;
  }
  scaleGrid<<<(n + 255) / 256, 256, 0, s>>>(x, a, n);
}
#elif defined(GLOBAL_HELPER)
int g_small = 256;
inline bool small(int n) { return n < g_small; }
inline void launchScaleSmall(float *x, float a, int n, cudaStream_t s) {
  if (small(n)) scaleBlock<<<1, 128, 0, s>>>(x, a, n);
  else scaleGrid<<<(n + 255) / 256, 256, 0, s>>>(x, a, n);
}
#elif defined(UNPAREN)
#define PLUS(a, b) a + b
inline void launchScalePlus(float *x, float a, int n, cudaStream_t s) {
  if (PLUS(n, 1) > 256) scaleGrid<<<(n + 255) / 256, 256, 0, s>>>(x, a, n);
  else scaleBlock<<<1, 128, 0, s>>>(x, a, n);
}
#elif defined(KNOWN)
template <typename T>
void launchTyped(T *x, float a, int n, cudaStream_t s) {
  if (sizeof(T) == 4) scaleGrid<<<(n + 255) / 256, 256, 0, s>>>(x, a, n);
  else scaleBlock<<<1, 128, 0, s>>>(x, a, n);
}
#endif

void attention_out(float *out, const float *residual, const float *bias, const float *gamma, const float *beta,
                   int tokens, int hidden, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(post_attn) split reorder replicated(residual, bias, gamma, beta)
  {
    ncclAllReduce(out, out, tokens * hidden, ncclFloat, ncclSum, comm, stream);
#if defined(NONE_FITS)
    serve::invokeNormCachedOnly(out, residual, bias, gamma, beta, 1e-5f, tokens, hidden, stream);
#else
    serve::invokeNorm(out, residual, bias, gamma, beta, 1e-5f, tokens, hidden, stream);
#endif
  }
}

void unscale(float *grads, float inv_scale, int n, const ScaleConfig *config, ncclComm_t comm,
             cudaStream_t stream) {
  (void)config;  // read by the -DTHROUGH launcher only
#if defined(LAMBDA)
  auto halve = [&] { n /= 2; };
#elif defined(REF_MEMBER)
  struct Count {
    int &value;
  } count{n};
#elif defined(STRUCTURED)
  struct Sizes {
    int count;
  } sizes{n};
  auto &[count] = sizes;
#endif
#pragma coconet region name(unscale) split reorder
  {
#if defined(STRUCTURED)
    count = count / 2;
    ncclAllReduce(grads, grads, sizes.count, ncclFloat, ncclSum, comm, stream);
#else
    ncclAllReduce(grads, grads, n, ncclFloat, ncclSum, comm, stream);
#endif
#if defined(CHANGED)
    log_size(&n);
#elif defined(LAMBDA)
    halve();
#elif defined(REF_MEMBER)
    count.value /= 2;
#endif
#if defined(EFFECTS)
    launchScaleCounted(grads, inv_scale, n, stream);
#elif defined(THROUGH)
    launchScaleConfigured(grads, inv_scale, n, config, stream);
#elif defined(STATIC_LOCAL)
    launchScaleOnce(grads, inv_scale, n, stream);
#elif defined(GLOBAL_HELPER)
    launchScaleSmall(grads, inv_scale, n, stream);
#elif defined(UNPAREN)
    launchScalePlus(grads, inv_scale, n, stream);
#elif defined(KNOWN)
    launchTyped(grads, inv_scale, n, stream);
#elif defined(STRUCTURED)
    launchScale(grads, inv_scale, sizes.count, stream);
#elif defined(ASSIGNED)
    launchScaleAssigned(grads, inv_scale, n, stream);
#else
    launchScale(grads, inv_scale, n, stream);
#endif
  }
}

// EXEC: verify post_attn: run with !(hidden <= 1024) && !(((int)((hidden + ((unsigned)1024) - 1) / ((unsigned)1024))) == 2) ('invokeNorm<float>' launches 'serve::normGeneral' then: the schedule's branch, taken in {{[1-9][0-9]*}} of 9 runs; the others run the region as written)
// EXEC: verify post_attn: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify unscale: run with !(n == 0) && (n < 256) ('launchScale' launches 'scaleBlock' then: the schedule's branch, taken in {{[1-9][0-9]*}} of 9 runs; the others run the region as written)
// EXEC: verify unscale: ok (the region as written and as scheduled agree within 0 ULP)

// CODE: // coconet: 'invokeNorm<float>' picks its kernel at run time: the schedule is for
// CODE-NEXT: // 'serve::normGeneral', which it launches (norm.h:{{[0-9]+}}:7) when coconet_path holds; the region
// CODE-NEXT: // runs as written otherwise
// CODE-NEXT: const bool coconet_path = !(hidden <= 1024) &&
// CODE-NEXT: !(((int)((hidden + ((unsigned)1024) - 1) / ((unsigned)1024))) == 2);
// CODE: // coconet: COCONET_CHECK=clauses: every rank takes the path or none does
// CODE-NEXT: if (coconet_check_clauses())
// CODE-NEXT: coconet_check_path(coconet_path, comm, stream, "post_attn", "invokeNorm<float>", __FILE__,
// CODE: if (coconet_path && coconet_disjoint(
// CODE: serve::normGeneral<float><<<(unsigned)(coconet_p.s / hidden), 1024, 0, stream>>>(
// CODE: } else {
// CODE-NEXT: ncclAllReduce(out, out, tokens * hidden, ncclFloat, ncclSum, comm, stream);
// CODE-NEXT: serve::invokeNorm(out, residual, bias, gamma, beta, 1e-5f, tokens, hidden, stream);
// CODE: const bool coconet_path = !(n == 0) &&
// CODE-NEXT: (n < 256);
// CODE-NEXT: if (coconet_path) {

// EXPLAIN: explain post_attn
// EXPLAIN: - analysis: 'invokeNorm<float>' launches kernel 'serve::normCached' when (hidden <= 1024) ({{.*}}norm.h:{{[0-9]+}}:5): the region runs as written then: kernel 'serve::normCached' declares shared memory
// EXPLAIN: - analysis: 'invokeNorm<float>' picks its kernel at run time: the schedule is for kernel 'serve::normGeneral', which it launches when !(hidden <= 1024)
// EXPLAIN: explain unscale
// EXPLAIN: - analysis: 'launchScale' launches kernel 'scaleGrid' when !(n == 0) && !(n < 256) ({{.*}}scale.h:{{[0-9]+}}:3): the region runs as written then: the schedule is for one of its kernels, the first written that it fits

// EFFECTS: note: the call of 'launchScaleCounted' ({{.*}}scale.h:{{[0-9]+}}:13) is not seen through as the kernel launch or collective inside it: a condition of its choice of kernel has side effects (a call, ++, an assignment) ('if (next_mode() == 1) scaleBlock<<<1, 128, 0, s>>>(x, a, n);...' at scale.h:{{[0-9]+}})

// THROUGH: note: the call of 'launchScaleConfigured' ({{.*}}scale.h:{{[0-9]+}}:13) is not seen through as the kernel launch or collective inside it: a condition or value of its choice of kernel reads through a pointer (->, *, []), which a statement of the region before the launch could change

// NONE: norm.h:{{[0-9]+}}:3: error: kernel 'serve::normCached' declares shared memory
// NONE: note: 'invokeNormCachedOnly<float>' picks its kernel at run time, and the region schedules with none of those it may launch; the reason above is for the first, 'serve::normCached', which it launches when (hidden <= 1024)
// NONE: norm.h:{{[0-9]+}}:8: note: and 'serve::normCached', which it launches when !(hidden <= 1024): kernel 'serve::normCached' declares shared memory

// CHANGED: dispatch-launchers.cu:114:5: error: region 'unscale': 'launchScale' launches kernel 'scaleBlock' when !(n == 0) && (n < 256), so the schedule, which is for that kernel, runs when it holds at the top of the region; this statement also uses 'n' and could change it first: move the statement out
// LAMBDA: dispatch-launchers.cu:116:5: error: region 'unscale': 'launchScale' launches kernel 'scaleBlock' when !(n == 0) && (n < 256), so the schedule, which is for that kernel, runs when it holds at the top of the region; this statement may change 'n' first (through a call, a reference or a pointer): move the statement out
// REF_MEMBER: error: region 'unscale': 'launchScale' launches kernel 'scaleBlock' when !(n == 0) && (n < 256), so the schedule, which is for that kernel, runs when it holds at the top of the region; this statement may change 'n' first (through a call, a reference or a pointer): move the statement out
// STRUCTURED: dispatch-launchers.cu:108:5: error: region 'unscale': 'launchScale' launches kernel 'scaleBlock' when !(sizes.count == 0) && (sizes.count < 256), so the schedule, which is for that kernel, runs when it holds at the top of the region; this statement may change 'sizes' first (through a call, a reference or a pointer): move the statement out
// STRUCTURED-NEXT: count = count / 2;
// STATIC: note: the call of 'launchScaleOnce' ({{.*}}) is not seen through as the kernel launch or collective inside it: its body has a static local (it keeps its value from call to call)
// GLOBAL: note: the call of 'launchScaleSmall' ({{.*}}) is not seen through as the kernel launch or collective inside it: a condition or value of its choice of kernel reads a variable of the file (a global, a static), which a statement of the region before the launch could change
// UNPAREN: note: the call of 'launchScalePlus' ({{.*}}) is not seen through as the kernel launch or collective inside it: a condition or value of its choice of kernel reads a name that is not the function's parameter or local
// KNOWN: explain unscale
// KNOWN: - analysis: the call of 'launchTyped<float>' ({{.*}}) is the launch of kernel 'scaleGrid' inside it
// KNOWN-NOT: picks its kernel at run time
// ASSIGNED: verify unscale: run with (n < (512 / 2)) && !(n == 0) ('launchScaleAssigned' launches 'scaleGrid' then: the schedule's branch, taken in {{[1-9][0-9]*}} of 9 runs; the others run the region as written)
// ASSIGNED: verify unscale: ok (the region as written and as scheduled agree within 0 ULP)
