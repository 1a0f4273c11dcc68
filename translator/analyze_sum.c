// analyze_sum.c: what may follow a grid-stride loop that keeps a thread's
// running sum s (analyze_stmt.c's partial_add): atomicAdd(acc, s) in every
// thread, or a sum of s over a group of threads and an atomicAdd by one
// thread of each group:
//
//   - a warp: the butterfly `for (int o = 16; o > 0; o >>= 1) s +=
//     __shfl_xor_sync(0xffffffff, s, o);` (or __shfl_down_sync, o from
//     WARP_SIZE / 2, o /= 2), written out or as a __device__ helper `s =
//     warp_sum(s)` whose body is that loop and `return s;`; or cg::reduce(tile,
//     s, cg::plus<T>()) over a thread_block_tile<32>; then `if (lane == 0)`
//     (threadIdx.x % 32, tile.thread_rank());
//   - the block: cub::BlockReduce<T, B>(temp).Sum(s) (or .Reduce(s, a plus
//     functor)) with B the launch's block size; then `if (threadIdx.x == 0)`.
//
// Each adds the same total as every thread adding its own s, so the IR is the
// running sum's (each element's contribution, IR_S_REDUCE), and the generated
// kernel sums as it does for any sum. Anything else (a hand-written block
// reduction through shared memory, a leader test that is not the group's
// first thread, the reduced value added by every thread) is refused.
#include "analyze.h"

#include <stdlib.h>
#include <string.h>

enum { REDUCED_WARP = 32, REDUCED_BLOCK = -1 };

static Binding *running_sum(Az *az, CXCursor e) {
  e = az_uncast(e);
  if (kind(e) != CXCursor_DeclRefExpr) return NULL;
  Binding *b = az_find_local(az, clang_getCursorReferenced(e));
  return b && b->partial ? b : NULL;
}

static char *callee_name(CXCursor call) { return fe_spelling(clang_getCursorReferenced(call)); }

// The one statement of a body (itself, or the only one of a compound).
static CXCursor only_stmt(CXCursor s) {
  s = az_strip(s);
  if (kind(s) != CXCursor_CompoundStmt) return s;
  Kids k = kids(s);
  return k.n == 1 ? az_strip(k.v[0]) : clang_getNullCursor();
}

// `v += SHFL(0xffffffff, v, o)` or `v = v + SHFL(...)`, SHFL __shfl_xor_sync or
// __shfl_down_sync (a fourth argument, if any, 32): lane 0 ends with the warp's sum.
static bool shuffle_add(Az *az, CXCursor s, CXCursor v, CXCursor o) {
  CXCursor lhs, rhs, a, b;
  char *op = NULL;
  if (!az_is_assignment(az, s, &lhs, &rhs, &op)) return false;
  bool plus = strcmp(op, "+=") == 0, assign = strcmp(op, "=") == 0;
  free(op);
  if (!az_refers_to(lhs, v)) return false;
  if (assign) {
    if (!az_is_binary(az, rhs, "+", &a, &b)) return false;
    if (az_refers_to(a, v)) rhs = b;
    else if (az_refers_to(b, v)) rhs = a;
    else return false;
  } else if (!plus) {
    return false;
  }
  CXCursor call = az_uncast(rhs);
  if (kind(call) != CXCursor_CallExpr) return false;
  char *name = callee_name(call);
  int n = clang_Cursor_getNumArguments(call);
  bool shfl = strcmp(name, "__shfl_xor_sync") == 0 || strcmp(name, "__shfl_down_sync") == 0;
  free(name);
  return shfl && (n == 3 || (n == 4 && az_is_warp_size(clang_Cursor_getArgument(call, 3)))) &&
         az_int_is(clang_Cursor_getArgument(call, 0), 0xffffffffLL) && az_refers_to(clang_Cursor_getArgument(call, 1), v) &&
         az_refers_to(clang_Cursor_getArgument(call, 2), o);
}

// 16: as written, WARP_SIZE / 2 or warpSize / 2 (>> 1).
static bool half_warp(Az *az, CXCursor c) {
  CXCursor a, b;
  if (az_int_is(c, 16)) return true;
  return (az_is_binary(az, c, "/", &a, &b) && az_is_warp_size(a) && az_int_is(b, 2)) ||
         (az_is_binary(az, c, ">>", &a, &b) && az_is_warp_size(a) && az_int_is(b, 1));
}

// for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
// (o /= 2, o >= 1, #pragma unroll): the butterfly over a warp's 32 lanes.
static bool butterfly(Az *az, CXCursor f, CXCursor v) {
  f = az_strip(f);
  if (kind(f) == CXCursor_UnexposedStmt && kids(f).n == 1) f = az_strip(kids(f).v[0]);  // #pragma unroll
  Kids k = kids(f);
  if (kind(f) != CXCursor_ForStmt || k.n != 4 || kind(k.v[0]) != CXCursor_DeclStmt || kids(k.v[0]).n != 1) return false;
  CXCursor o = kids(k.v[0]).v[0];
  Kids init = kids(o);
  if (!az_is_integer_var(o) || !init.n || !half_warp(az, init.last)) return false;
  CXCursor a, b, lhs, rhs;
  if (!((az_is_binary(az, k.v[1], ">", &a, &b) && az_int_is(b, 0)) ||
        (az_is_binary(az, k.v[1], ">=", &a, &b) && az_int_is(b, 1))) ||
      !az_refers_to(a, o))
    return false;
  char *op = NULL;
  bool step = false;
  if (az_is_assignment(az, k.v[2], &lhs, &rhs, &op) && az_refers_to(lhs, o)) {
    if (strcmp(op, ">>=") == 0) step = az_int_is(rhs, 1);
    else if (strcmp(op, "/=") == 0) step = az_int_is(rhs, 2);
    else if (strcmp(op, "=") == 0)
      step = (az_is_binary(az, rhs, "/", &a, &b) && az_refers_to(a, o) && az_int_is(b, 2)) ||
             (az_is_binary(az, rhs, ">>", &a, &b) && az_refers_to(a, o) && az_int_is(b, 1));
  }
  free(op);
  CXCursor body = only_stmt(k.v[3]);
  return step && !clang_Cursor_isNull(body) && shuffle_add(az, body, v, o);
}

// A __device__ helper of the file whose body is the butterfly over its one
// parameter and `return` of it (llm.c's warpReduceSum).
static bool warp_sum_helper(Az *az, CXCursor call) {
  CXCursor def = clang_getCursorDefinition(clang_getCursorReferenced(call));
  if (clang_Cursor_isNull(def) || kind(def) != CXCursor_FunctionDecl || clang_Cursor_getNumArguments(def) != 1 ||
      !fe_in_main_file(az->fe, clang_getCursorLocation(def)))
    return false;
  CXCursor p = clang_Cursor_getArgument(def, 0);
  Kids body = kids(kids(def).last);
  if (kind(kids(def).last) != CXCursor_CompoundStmt || body.n != 2 || kind(body.v[1]) != CXCursor_ReturnStmt ||
      kids(body.v[1]).n != 1 || !az_refers_to(kids(body.v[1]).v[0], p))
    return false;
  return butterfly(az, body.v[0], p);
}

// BLOCK_DIM_X, _Y and _Z of a cub::BlockReduce<T, X, ALGORITHM, Y, Z> (its
// canonical spelling; 0 for X when it cannot be read).
static void block_dims(CXCursor c, long long dims[3]) {
  char *t = az_type_spelling(c), *p = strstr(t, "BlockReduce<");
  dims[0] = 0;
  dims[1] = dims[2] = 1;
  for (int arg = 0, depth = 0; p && *p; p++) {
    if (*p == '<' && depth++ == 0) arg = 0;
    else if (*p == '>' && --depth == 0) break;
    else if (*p == ',' && depth == 1 && ++arg && (arg == 1 || arg == 3 || arg == 4))
      dims[arg == 1 ? 0 : arg - 2] = strtoll(p + 1, NULL, 10);
  }
  free(t);
}

// cub::BlockReduce<T, B>(temp).Sum(s), .Reduce(s, plus): B must be the
// launch's block, or the reduction covers other threads than the block's.
static Binding *block_reduce(Az *az, CXCursor call) {
  char *name = callee_name(call);
  int n = clang_Cursor_getNumArguments(call);
  bool sum = strcmp(name, "Sum") == 0 && n == 1;
  bool reduce = strcmp(name, "Reduce") == 0 && n == 2 && az_type_has(clang_Cursor_getArgument(call, 1), "plus<");
  free(name);
  Kids k = kids(call);
  CXCursor callee = k.n ? az_strip(k.v[0]) : clang_getNullCursor();
  if (!(sum || reduce) || kind(callee) != CXCursor_MemberRefExpr || !kids(callee).n) return NULL;
  if (!az_type_has(kids(callee).v[0], "cub::") || !az_type_has(kids(callee).v[0], "BlockReduce<")) return NULL;
  Binding *b = running_sum(az, clang_Cursor_getArgument(call, 0));
  if (!b) return NULL;
  long long dims[3];
  block_dims(kids(callee).v[0], dims);
  long long x = dims[0];
  if (az->block_x <= 0 || x != az->block_x || dims[1] != 1 || dims[2] != 1) {
    char *ts = az_type_spelling(kids(callee).v[0]);
    az_fail(az, call, "kernel '%s' sums with %s, but its launch's block is not %lld threads (one-dimensional, a "
                      "constant): the reduction would not cover the block", az->launch->kernel, ts, x);
    free(ts);
    return NULL;
  }
  return b;
}

// A sum of the running sum s over a group: its binding, and the group's kind
// in *group (NULL: e is not one; a reason may be recorded).
static Binding *group_sum(Az *az, CXCursor e, int *group) {
  CXCursor call = az_uncast(e);
  if (kind(call) != CXCursor_CallExpr) return NULL;
  char *name = callee_name(call);
  int n = clang_Cursor_getNumArguments(call);
  Binding *b = NULL;
  if (strcmp(name, "reduce") == 0 && n == 3 && az_type_has(clang_Cursor_getArgument(call, 0), "thread_block_tile<32") &&
      az_type_has(clang_Cursor_getArgument(call, 2), "plus<")) {
    b = running_sum(az, clang_Cursor_getArgument(call, 1));  // cg::reduce(warp, s, cg::plus<T>())
    *group = REDUCED_WARP;
  } else if (n == 1 && warp_sum_helper(az, call)) {
    b = running_sum(az, clang_Cursor_getArgument(call, 0));
    *group = REDUCED_WARP;
  } else {
    b = block_reduce(az, call);
    *group = REDUCED_BLOCK;
  }
  free(name);
  return b;
}

static void fail_reduced(Az *az, CXCursor s, const Binding *b) {
  char *name = fe_spelling(b->decl);
  az_fail(az, s, "kernel '%s' adds '%s', which holds the sum over %s, in other threads than exactly the first of "
                 "each; coconet takes it as a sum over the elements only when `if (%s == 0)` adds it",
          az->launch->kernel, name, b->reduced == REDUCED_WARP ? "a warp" : "the block",
          b->reduced == REDUCED_WARP ? "lane" : "threadIdx.x");
  free(name);
}

// atomicAdd(acc, s) of a running sum, by every thread (reduced 0) or by the
// first thread of the group it was summed over.
static bool add_sum(Az *az, CXCursor s, int leader) {
  s = az_strip(s);
  if (kind(s) != CXCursor_CallExpr || clang_Cursor_getNumArguments(s) != 2) return false;
  char *name = callee_name(s);
  bool atomic = strcmp(name, "atomicAdd") == 0;
  free(name);
  Binding *b = atomic ? running_sum(az, clang_Cursor_getArgument(s, 1)) : NULL;
  if (!b) return false;
  if (b->reduced != leader) {
    if (b->reduced) fail_reduced(az, s, b);
    else az_fail(az, s, "kernel '%s' adds its running sum only in the first thread of each group; the other "
                        "threads' sums would be lost (sum over the group first: shuffles, cg::reduce, "
                        "cub::BlockReduce)", az->launch->kernel);
    return true;
  }
  long long at = 0;
  IrTensor *acc = b->sum ? az_sum_target(az, s, &at) : NULL;
  if (!b->sum && !az_failed(az)) az_fail(az, s, "kernel '%s' adds a running sum that its loop never adds to",
                                         az->launch->kernel);
  if (!acc) return true;
  ir_pw_reduce(az->ir, az->op, acc, (long)at, az_cast_to(az, acc->type, b->sum),
               fe_loc(az->fe, clang_getCursorLocation(s)));
  return true;
}

// `T r = GROUP_SUM(s);` or `s = GROUP_SUM(s);`, or the butterfly on s itself.
static bool reduction(Az *az, CXCursor s) {
  CXCursor lhs, rhs, target = clang_getNullCursor(), value = clang_getNullCursor();
  char *op = NULL;
  if (kind(s) == CXCursor_DeclStmt && kids(s).n == 1 && kids(kids(s).v[0]).n) {
    target = kids(s).v[0];
    value = kids(target).last;
  } else if (az_is_assignment(az, s, &lhs, &rhs, &op) && strcmp(op, "=") == 0 &&
             kind(az_uncast(lhs)) == CXCursor_DeclRefExpr) {
    target = clang_getCursorReferenced(az_uncast(lhs));
    value = rhs;
  }
  free(op);
  int group = 0;
  Binding *b = NULL;
  if (!clang_Cursor_isNull(value)) b = group_sum(az, value, &group);
  if (!b && kind(az_strip(s)) == CXCursor_ForStmt) {
    for (int i = 0; i < az->nlocals && !b; i++)
      if (az->locals[i].partial && butterfly(az, s, az->locals[i].decl)) b = &az->locals[i];
    group = REDUCED_WARP;
    target = b ? b->decl : target;
  }
  if (!b || az_failed(az)) return b != NULL;
  if (b->reduced) {
    char *name = fe_spelling(b->decl);
    az_fail(az, s, "kernel '%s' sums '%s' over a group of threads twice; coconet takes one warp or block sum "
                   "before the atomicAdd", az->launch->kernel, name);
    free(name);
    return true;
  }
  if (same(target, b->decl)) {
    b->reduced = group;
  } else {
    Binding r = *b;  // a new local holding the group's sum
    r.decl = target;
    r.reduced = group;
    *az_bind(az, target, r.value) = r;
  }
  return true;
}

bool az_after_loop(Az *az, CXCursor s) {
  s = az_strip(s);
  if (add_sum(az, s, 0) || reduction(az, s)) return true;
  Kids k = kids(s);
  if (kind(s) != CXCursor_IfStmt || k.n != 2) return false;
  CXCursor body = only_stmt(k.v[1]);
  if (clang_Cursor_isNull(body)) return false;
  if (az_first_thread(az, k.v[0], false)) return add_sum(az, body, REDUCED_BLOCK);
  if (az_first_thread(az, k.v[0], true)) return add_sum(az, body, REDUCED_WARP);
  return false;
}
