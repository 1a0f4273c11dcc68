// Arguments with side effects are evaluated exactly once, in the order
// written, into const locals at the top of the generated block; every use
// reads the local. A kernel's scalar argument written before one that changes
// what it reads (`lr`, then `lr *= 0.25f`) is evaluated there too, first (it
// was not, and the first launch read the changed value, exit 0). Where that
// would change the program, the region is refused: a count, buffer or grid
// written before the change reads it, or an argument of the same call does.
// RUN: %coconet %s -- -DCASE_ONCE | %FileCheck --check-prefix=ONCE %s
// RUN: %coconet --verify=3 %s -- -DCASE_ONCE | %FileCheck --check-prefix=ONCE-EXEC %s
// RUN: %expect 1 %coconet %s -o %t.cu -- -DCASE_TWICE 2>&1 | %FileCheck --check-prefix=TWICE %s
// RUN: test ! -e %t.cu
// RUN: %expect 1 %coconet --check %s -- -DCASE_AFTER_OPAQUE 2>&1 | %FileCheck --check-prefix=OPAQUE %s
// RUN: %coconet %s -- -DCASE_READ_BEFORE | %FileCheck --check-prefix=READ %s
// RUN: %coconet --verify=4 %s -- -DCASE_READ_BEFORE | %FileCheck --check-prefix=READ-EXEC %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_COUNT_BEFORE 2>&1 | %FileCheck --check-prefix=COUNT %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_COUNT_CALL 2>&1 | %FileCheck --check-prefix=COUNT_CALL %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_SAME_CALL 2>&1 | %FileCheck --check-prefix=SAME %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void sgd(float *w, const float *g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i];
}

__global__ void sgdw(float *w, const float *g, float lr, float decay, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i] + decay * w[i];
}

// A learning-rate schedule that counts its calls.
static float next_lr(int &calls) { return 0.01f * ++calls; }

void step(float *w, float *g, float lr, int n, ncclComm_t comm, cudaStream_t s) {
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
#elif defined(CASE_READ_BEFORE)
#pragma coconet region name(read_before) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr, n);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr *= 0.25f, n);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr, n);
  }
#elif defined(CASE_COUNT_BEFORE)
#pragma coconet region name(count_before) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr * n--, n);
  }
#elif defined(CASE_COUNT_CALL)
#pragma coconet region name(count_call) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n + (next_lr(calls) > 1.0f), ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr, n);
  }
#elif defined(CASE_SAME_CALL)
#pragma coconet region name(same_call) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgdw<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr *= 0.5f, lr * 0.01f, n);
  }
#endif
}

// The slice kernel is launched twice (slice and tail); next_lr runs once:
// ONCE: // coconet: arguments with side effects, evaluated once, in the order written
// ONCE-NEXT: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg1 = next_lr(calls);
// ONCE: coconet_once_slice<<<coconet_grid_size(coconet_p.s), COCONET_BLOCK_SIZE, 0, s>>>(w, g, coconet_arg1, coconet_p.slice_lo, coconet_p.slice_hi);
// ONCE: coconet_once_slice<<<coconet_grid_size(coconet_p.tail), COCONET_BLOCK_SIZE, 0, s>>>(w, g, coconet_arg1, coconet_p.tail_lo, coconet_p.hi);
// ONCE-EXEC: verify once: output 'w' (f32): max 0 ULP apart over 1..3 ranks x 3 inputs
// ONCE-EXEC: verify once: ok
// TWICE: effects.cu:[[@LINE-45]]:47: error: 'next_lr(calls)' has side effects and is written twice in region 'twice'; the schedule evaluates each argument once and cannot tell the two apart: compute it into a local before the region
// TWICE: effects.cu:[[@LINE-47]]:47: note: it is also written here
// OPAQUE: error: 'next_lr(calls)' has side effects; the schedule evaluates it once at the top of region 'after_opaque', before a statement coconet does not see into: compute it into a local before the region
// OPAQUE: note: this statement comes first
// OPAQUE-NEXT: {{^}}    calls += n;
// The first launch's lr is evaluated before the change, the third reads the changed one:
// READ: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg1 = lr;
// READ-NEXT: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg2 = lr *= 0.25f;
// READ: coconet_read_before_slice<<<coconet_grid_size(coconet_p.s), COCONET_BLOCK_SIZE, 0, s>>>(w, g,
// READ-NEXT: coconet_arg1, coconet_arg2, lr, coconet_p.slice_lo, coconet_p.slice_hi);
// READ-EXEC: verify read_before: output 'w' (f32): max 0 ULP apart over 1..4 ranks x 3 inputs
// READ-EXEC: verify read_before: ok
// COUNT: effects.cu:[[@LINE-37]]:25: error: region 'count_before': 'lr * n--' changes 'n', and this argument, written before it, reads it; the schedule evaluates the change at the top of the generated block: compute 'lr * n--' into a local before the region
// COUNT: note: 'n' is changed here
// A hoisted count is named as written, not by its generated local:
// COUNT_CALL: effects.cu:[[@LINE-33]]:5: error: reorder: kernel 'sgd' runs over n elements but 'g' has n + (next_lr(calls) > 1.0f); work on a slice needs the same count
// SAME: effects.cu:[[@LINE-28]]:60: error: region 'same_call': 'lr *= 0.5f' changes 'lr', and this argument, in the same call, reads it in an order C++ leaves unspecified

// A launch argument the kernel never reads (`unused`) written before a change
// to it is captured too, so that the launch, kept as written by `split`, sees
// the value written (it was refused).
// RUN: %coconet --verify=3 %s -- -DCASE_UNREAD | %FileCheck --check-prefix=UNREAD %s
#if defined(CASE_UNREAD)
__global__ void scale_g(float *g, float unused, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) g[i] *= 0.5f;
}

void step_unread(float *w, float *g, float lr, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(unread) split
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    scale_g<<<(n + 255) / 256, 256, 0, s>>>(g, lr, n);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr *= 0.5f, n);
  }
}
#endif
// UNREAD: verify unread: ok

// A call of the C library's math as its headers declare it (a bias correction,
// `1.0f - powf(beta1, t)`) changes nothing: it is not a side effect beside
// `beta1`. A function of the user's named like one is (USER_POW).
// RUN: %coconet --verify=3 %s -- -DCASE_POWF | %FileCheck --check-prefix=POWF %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_POWF -DUSER_POW 2>&1 | %FileCheck --check-prefix=USER_POW %s
#if defined(CASE_POWF)
#include <cmath>
#if defined(USER_POW)
namespace u {
inline float powf(float &b, int e) { return b *= (float)e; }
}
using u::powf;
#endif
__global__ void adam_bias(float *w, const float *g, float lr, float b1c, float beta1, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i] / b1c * beta1;
}

void step_powf(float *w, float *g, float lr, float beta1, int t, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(powf) split reorder replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    adam_bias<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr, 1.0f - powf(beta1, t), beta1, n);
  }
}
#endif
// POWF: verify powf: ok

// A macro in a launch argument (here from a header) is pure when its body is an
// expression of its arguments; one that assigns an argument is a side effect
// beside another argument reading it (IMPURE_MACRO).
// RUN: %coconet --verify=3 %s -- -I%S/Inputs -DCASE_MACRO | %FileCheck --check-prefix=MACRO %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DCASE_MACRO -DIMPURE_MACRO 2>&1 | %FileCheck --check-prefix=IMPURE %s
#if defined(CASE_MACRO)
#include "effect-macros.h"
__global__ void macro_bias(float *w, const float *g, float b1c, float beta1, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= g[i] / b1c * beta1;
}

void step_macro(float *w, float *g, float beta1, int t, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(macro) split reorder replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
#if defined(IMPURE_MACRO)
    macro_bias<<<(n + 255) / 256, 256, 0, s>>>(w, g, DECAYED(beta1), beta1, n);
#else
    macro_bias<<<(n + 255) / 256, 256, 0, s>>>(w, g, CORRECTED(beta1, t), beta1, n);
#endif
  }
}
#endif
// MACRO: verify macro: ok
// IMPURE: error: region 'macro': 'DECAYED(beta1)' changes 'beta1', and this argument, in the same call, reads it in an order C++ leaves unspecified
// USER_POW: error: region 'powf': '1.0f - powf(beta1, t)' calls a function that may change 'beta1', and this argument, in the same call, reads it in an order C++ leaves unspecified

// What a function an argument calls changes is read in its body (and the
// bodies it calls): a kernel's scalar argument written before it that reads a
// variable of the file the function assigns is captured first (`g_lr`), one
// it does not assign is not (`g_decay`), and so is one whose own call reads
// one (`lr_of(n)` reads `g_steps`; it read the changed value, MISMATCH); a
// count passed by value to a call (`lr_of(n)`) is not changed by it (it was
// refused). A count written before it that reads
// such a variable is refused (-DCOUNT; the generated block evaluated the call
// first and all-reduced the changed count, exit 0), and so is one reading a
// variable of the file when a function it calls has no body coconet can see
// (UNSEEN).
// RUN: %coconet --verify=3 %s -- -DCASE_CALLS | %FileCheck --check-prefix=CALLS %s
// RUN: %coconet %s -- -DCASE_CALLS | %FileCheck --check-prefix=CALLS-CODE %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_CALLS -DCOUNT 2>&1 | %FileCheck --check-prefix=CALLS-COUNT %s
// RUN: %expect 1 %coconet --check %s -- -DCASE_CALLS -DUNSEEN 2>&1 | %FileCheck --check-prefix=UNSEEN %s
#if defined(CASE_CALLS)
float g_lr = 0.01f, g_decay = 0.001f;
int g_steps = 0, g_rows = 1000;
static void count_step() { ++g_steps; }
static float lr_step() {
  count_step();
  g_lr *= 0.5f;
  return g_lr;
}
static float lr_of(int steps) { return 0.01f / (float)(steps + g_steps); }
static float lr_shrink() {
  g_rows -= 8;
  return 0.01f;
}
float lr_unseen(int step);  // defined in another file

void step_calls(float *w, float *g, int n, ncclComm_t comm, cudaStream_t s) {
#if defined(COUNT)
#pragma coconet region name(calls) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, g_rows, ncclFloat, ncclSum, comm, s);
    sgd<<<(g_rows + 255) / 256, 256, 0, s>>>(w, g, lr_shrink(), g_rows);
  }
#elif defined(UNSEEN)
#pragma coconet region name(calls) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, g_rows, ncclFloat, ncclSum, comm, s);
    sgd<<<(g_rows + 255) / 256, 256, 0, s>>>(w, g, lr_unseen(g_steps), g_rows);
  }
#else
#pragma coconet region name(calls) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgdw<<<(n + 255) / 256, 256, 0, s>>>(w, g, g_lr, g_decay, n);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr_of(n), n);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr_step(), n);
  }
#endif
}
#endif
// CALLS: verify calls: ok
// CALLS-CODE: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg1 = g_lr;
// CALLS-CODE-NEXT: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg2 = lr_of(n);
// CALLS-CODE-NEXT: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg3 = lr_step();
// CALLS-CODE: coconet_arg1, g_decay, coconet_arg2, coconet_arg3, coconet_p.slice_lo, coconet_p.slice_hi);
// CALLS-COUNT: effects.cu:[[@LINE-25]]:25: error: region 'calls': 'lr_shrink()' calls a function that may change 'g_rows', and this argument, written before it, reads it; the schedule evaluates the change at the top of the generated block: compute 'lr_shrink()' into a local before the region
// CALLS-COUNT: effects.cu:[[@LINE-35]]:3: note: 'g_rows' may be changed here
// UNSEEN: effects.cu:[[@LINE-21]]:25: error: region 'calls': 'lr_unseen(g_steps)' calls a function that may change 'g_rows', and this argument, written before it, reads it
// UNSEEN: effects.cu:[[@LINE-21]]:52: note: 'lr_unseen' is called here: coconet does not see its body

// Aliases: a variable written through a pointer (`*p_lr`), read through a
// reference (`r_mom`), a local whose address escaped (`t`, through `rt`), a
// call through a function pointer (`(*g_sched)()`, which reads as no call) and
// an object's operator(): each reader before the change is captured first (each
// read the changed value, MISMATCH, exit 0 without --verify).
// RUN: %coconet --verify=2 %s -- -DCASE_ALIASES | %FileCheck --check-prefix=ALIASES %s
// RUN: %coconet %s -- -DCASE_ALIASES | %FileCheck --check-prefix=ALIASES-CODE %s
#if defined(CASE_ALIASES)
float g_lr = 0.01f, g_mom = 0.9f;
float *p_lr = &g_lr;
float &r_mom = g_mom;
static float lr_alias() {
  *p_lr *= 0.5f;
  return 0.02f;
}
float (*g_sched)() = lr_alias;
struct Decay {
  float operator()() const {
    g_mom *= 0.5f;
    return g_mom;
  }
} g_decay;

void step_aliases(float *w, float *g, int n, ncclComm_t comm, cudaStream_t s) {
  int calls = 3;
  int &rc = calls;
#pragma coconet region name(aliases) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, g_lr, n);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, r_mom * 0.01f, n);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, 0.001f * calls, n);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, (*g_sched)(), n);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, g_decay(), n);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, next_lr(rc), n);
  }
}
#endif
// ALIASES: verify aliases: ok
// ALIASES-CODE: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg1 = g_lr;
// ALIASES-CODE-NEXT: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg2 = r_mom * 0.01f;
// ALIASES-CODE-NEXT: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg3 = 0.001f * calls;
// ALIASES-CODE-NEXT: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg4 = (*g_sched)();
// ALIASES-CODE-NEXT: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg5 = g_decay();
// ALIASES-CODE-NEXT: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg6 = next_lr(rc);

// What the C and C++ libraries' functions change is what they are given by
// non-const pointer or reference (and a stream, a FILE, is the library's): a
// function that logs, or builds a local vector or string, changes nothing a
// count reads; neither does a call inside sizeof, which is not evaluated. Each
// was refused.
// RUN: %coconet --check %s -- -DCASE_LIBRARY | %FileCheck --check-prefix=LIBRARY %s
#if defined(CASE_LIBRARY)
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>
int g_rows = 1000, g_step = 0;
static float lr_logged() {
  ++g_step;
  fprintf(stderr, "step %d\n", g_step);
  std::cout << "step " << g_step << std::endl;
  std::vector<float> v(4, 0.01f);
  std::string name = "lr";
  name += std::to_string(g_step);
  return v[0] * (float)name.size();
}
static float shrink() {
  g_rows -= 8;
  return 0.01f;
}

void step_library(float *w, float *g, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(library) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, g_rows, ncclFloat, ncclSum, comm, s);
    sgd<<<(g_rows + 255) / 256, 256, 0, s>>>(w, g, lr_logged() + sizeof(shrink()) * 0.0f, g_rows);
  }
}
#endif
// LIBRARY: region library ({{.*}}effects.cu:[[@LINE-7]]) in step_library: nccl:ncclAllReduce launch:sgd

// Calls the text does not show as calls: a conversion operator (`g_conv` read as
// a float), an operator of a class (`g_sched + 1`), a default argument (`lr_d()`
// runs `bump()`), a function of the user's passed to the C library (`qsort`
// calls `by_eps`). Each is evaluated once and what it changes is read (the first
// two were evaluated in both the slice and the tail launch; each reader before
// them read the changed value: MISMATCH); the object is converted once, into
// the kernel parameter's type.
// RUN: %coconet --verify=2 %s -- -DCASE_HIDDEN | %FileCheck --check-prefix=HIDDEN %s
// RUN: %coconet %s -- -DCASE_HIDDEN | %FileCheck --check-prefix=HIDDEN-CODE %s
#if defined(CASE_HIDDEN)
#include <cstdlib>
float g_lr = 0.01f, g_mom = 0.9f, g_beta = 0.5f, g_eps = 0.1f;
struct Conv {
  operator float() const {
    g_lr *= 0.5f;
    return 0.02f;
  }
} g_conv;
struct Sched {
  float base;
};
static float operator+(Sched a, int k) {
  g_mom *= 0.5f;
  return a.base * (float)k;
}
Sched g_sched = {0.01f};
static float bump() {
  g_beta *= 0.5f;
  return 1.0f;
}
static float lr_d(float x = bump()) { return 0.02f * x; }
static int by_eps(const void *a, const void *b) {
  g_eps *= 0.5f;
  return *(const int *)a - *(const int *)b;
}
static float lr_sorted() {
  int v[3] = {3, 1, 2};
  qsort(v, 3, sizeof(int), by_eps);
  return 0.01f * (float)v[0];
}

void step_hidden(float *w, float *g, int n, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(hidden) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, g_lr, n);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, g_conv, n);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, g_mom, n);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, g_sched + 1, n);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, g_beta, n);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr_d(), n);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, g_eps, n);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr_sorted(), n);
  }
}
#endif
// HIDDEN: verify hidden: ok
// HIDDEN-CODE: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg1 = g_lr;
// HIDDEN-CODE-NEXT: {{\[\[}}maybe_unused{{\]\]}} const float coconet_arg2 = g_conv;
// HIDDEN-CODE-NEXT: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg3 = g_mom;
// HIDDEN-CODE-NEXT: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg4 = g_sched + 1;
// HIDDEN-CODE-NEXT: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg5 = g_beta;
// HIDDEN-CODE-NEXT: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg6 = lr_d();
// HIDDEN-CODE-NEXT: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg7 = g_eps;
// HIDDEN-CODE-NEXT: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg8 = lr_sorted();
