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
//     functor)) with B the launch's block size, or a __device__ helper that
//     sums warp by warp through a __shared__ slot per warp (below) with the
//     launch's block whole warps; then `if (threadIdx.x == 0)`.
//
//   - the block, written in the kernel: `red[threadIdx.x] = s; __syncthreads();`,
//     the tree `for (int k = blockDim.x / 2; k > 0; k >>= 1) { if (threadIdx.x <
//     k) red[threadIdx.x] += red[threadIdx.x + k]; __syncthreads(); }` over a
//     __shared__ array at least the block long, the launch's block a constant
//     power of two; then `if (threadIdx.x == 0) atomicAdd(acc, red[0]);`.
//
// Each adds the same total as every thread adding its own s, so the IR is the
// running sum's (each element's contribution, IR_S_REDUCE), and the generated
// kernel sums as it does for any sum. Anything else (a block reduction through
// shared memory in another form or in the kernel itself, a leader test that is
// not the group's first thread, the reduced value added by every thread) is
// refused.
#include "analyze_impl.h"

#include <stdlib.h>
#include <string.h>

enum { REDUCED_WARP = 32, REDUCED_BLOCK = -1 };

static Binding *running_sum(Az *az, CXCursor e) {
  e = az_uncast(e);
  if (kind(e) != CXCursor_DeclRefExpr) return NULL;
  Binding *b = az_find_local(az, clang_getCursorReferenced(e));
  return b && b->partial ? b : NULL;
}

static char *callee_name(CXCursor call) { return fe_spelling(az_callee(call)); }

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
  CXCursor def = clang_getCursorDefinition(az_callee(call));
  if (clang_Cursor_isNull(def) || kind(def) != CXCursor_FunctionDecl || clang_Cursor_getNumArguments(def) != 1 ||
      !fe_in_user_code(az->fe, clang_getCursorLocation(def)))
    return false;
  CXCursor p = clang_Cursor_getArgument(def, 0);
  Kids body = kids(kids(def).last);
  if (kind(kids(def).last) != CXCursor_CompoundStmt || body.n != 2 || kind(body.v[1]) != CXCursor_ReturnStmt ||
      kids(body.v[1]).n != 1 || !az_refers_to(kids(body.v[1]).v[0], p))
    return false;
  return butterfly(az, body.v[0], p);
}

//
// A block sum written by hand, warp by warp: the form trainers and inference
// engines write (a __device__ helper of the file, one parameter v):
//
//   __shared__ float slots[32];                   // one slot a warp (>= the launch's warps)
//   v = warp_sum(v);                              // (or T w = warp_sum(v); the butterfly)
//   if (lane == 0) slots[warp] = v;               // lane, warp: threadIdx.x % 32, / 32 (& 31, >> 5, or
//   __syncthreads();                              //   integer locals holding them, never assigned)
//   v = lane < nwarps ? slots[lane] : 0.0f;       // (or threadIdx.x < blockDim.x / 32 ? slots[threadIdx.x] : 0)
//   v = warp_sum(v);                              // (or under if (threadIdx.x < 32), if (warp == 0))
//   return v;                                     // (or thread 0 stores it in slots[0] and returns slots[0];
//                                                 //  or return warp_sum(v);)
//
// Thread 0 then holds the sum of v over the block when the block is whole
// warps; extra __syncthreads() anywhere are allowed.
//

enum { HP_NONE, HP_TID, HP_LANE, HP_WARP, HP_NWARPS };

typedef struct HandSum {
  Az *az;
  CXCursor def, call;      // the helper, and the call of it
  CXCursor shared;         // the slots
  CXCursor locals[8];      // integer locals holding a place
  int kinds[8];
  int nlocals;
  CXCursor body;
  bool fenced_before;      // a __syncthreads() before its stores
  bool fenced_after;       // ... after its reads (either lets it run after another)
} HandSum;

static int hand_place(const HandSum *h, CXCursor e) {
  e = az_uncast(e);
  if (kind(e) == CXCursor_DeclRefExpr) {
    CXCursor d = clang_getCursorReferenced(e);
    for (int i = 0; i < h->nlocals; i++)
      if (same(h->locals[i], d)) return h->kinds[i];
    return HP_NONE;
  }
  if (kind(e) == CXCursor_MemberRefExpr) return az_builtin(h->az, e) == B_THREADIDX_X ? HP_TID : HP_NONE;
  switch (az_place(h->az, e)) {
  case PLACE_LANE: return HP_LANE;
  case PLACE_WARP: return HP_WARP;
  case PLACE_WARPS: return HP_NWARPS;
  default: return HP_NONE;
  }
}

// `T x = ...;` of the slots or of a place local (recorded): true when s is one.
static bool hand_decl(HandSum *h, CXCursor s) {
  Kids k = kids(s);
  if (kind(s) != CXCursor_DeclStmt || k.n != 1) return false;
  CXCursor d = k.v[0];
  if (az_is_shared(d)) {
    long long slots = clang_getArraySize(clang_getCursorType(d));
    if (!clang_Cursor_isNull(h->shared) || slots < 1) return false;
    h->shared = d;
    return true;
  }
  Kids init = kids(d);
  if (!az_is_integer_var(d) || !init.n || h->nlocals == 8) return false;
  int place = hand_place(h, init.last);
  if (place == HP_NONE || az_writes(h->az, h->body, d)) return false;
  h->locals[h->nlocals] = d;
  h->kinds[h->nlocals++] = place;
  return true;
}

static bool is_barrier(CXCursor s) {
  s = az_strip(s);
  if (kind(s) != CXCursor_CallExpr || clang_Cursor_getNumArguments(s) != 0) return false;
  char *name = callee_name(s);
  bool b = strcmp(name, "__syncthreads") == 0;
  free(name);
  return b;
}

// e, or the call's argument for e when e names a parameter of the helper
// after its first (`fill` of `blockReduce(v, false, fill = 0.0f)`: the
// caller's value or the default).
static CXCursor hand_arg(const HandSum *h, CXCursor e) {
  CXCursor d = clang_getCursorReferenced(az_uncast(e));
  for (int i = 1; kind(az_uncast(e)) == CXCursor_DeclRefExpr && i < clang_Cursor_getNumArguments(h->def); i++)
    if (same(d, clang_Cursor_getArgument(h->def, i))) return clang_Cursor_getArgument(h->call, i);
  return e;
}

// e (through the helper's parameters) is a constant: its value in *v.
static bool hand_constant(const HandSum *h, CXCursor e, double *v) {
  CXEvalResult r = clang_Cursor_Evaluate(hand_arg(h, e));
  bool known = r && (clang_EvalResult_getKind(r) == CXEval_Int || clang_EvalResult_getKind(r) == CXEval_Float);
  if (known)
    *v = clang_EvalResult_getKind(r) == CXEval_Int ? (double)clang_EvalResult_getAsLongLong(r)
                                                   : clang_EvalResult_getAsDouble(r);
  if (r) clang_EvalResult_dispose(r);
  return known;
}

// The value of a declaration of one variable or of an assignment `x = e`, and x.
static bool assigned_value(const Az *az, CXCursor s, CXCursor *var, CXCursor *value) {
  CXCursor lhs, rhs;
  char *op = NULL;
  Kids k = kids(s);
  if (kind(s) == CXCursor_DeclStmt && k.n == 1 && kids(k.v[0]).n) {
    *var = k.v[0];
    *value = kids(k.v[0]).last;
    return true;
  }
  if (!az_is_assignment(az, s, &lhs, &rhs, &op)) return false;
  bool plain = strcmp(op, "=") == 0 && kind(az_uncast(lhs)) == CXCursor_DeclRefExpr;
  free(op);
  if (plain) {
    *var = clang_getCursorReferenced(az_uncast(lhs));
    *value = rhs;
  }
  return plain;
}

// A warp's sum of `in` (a helper call or the butterfly): its result in *out.
static bool hand_warp_sum(const HandSum *h, CXCursor s, CXCursor in, CXCursor *out) {
  CXCursor var, value;
  if (butterfly(h->az, s, in)) {
    *out = in;
    return true;
  }
  if (!assigned_value(h->az, s, &var, &value)) return false;
  CXCursor call = az_uncast(value);
  if (kind(call) != CXCursor_CallExpr || clang_Cursor_getNumArguments(call) != 1 ||
      !az_refers_to(clang_Cursor_getArgument(call, 0), in) || !warp_sum_helper(h->az, call))
    return false;
  *out = var;
  return true;
}

// `if (COND) BODY` without else, BODY one statement (in *body).
static bool if_only(CXCursor s, CXCursor *cond, CXCursor *body) {
  Kids k = kids(s);
  if (kind(s) != CXCursor_IfStmt || k.n != 2) return false;
  *cond = k.v[0];
  *body = only_stmt(k.v[1]);
  return !clang_Cursor_isNull(*body);
}

// a == 0 (either order) with a at `place`.
static bool is_zero_test(const HandSum *h, CXCursor c, int place) {
  CXCursor a, b;
  if (!az_is_binary(h->az, az_strip(c), "==", &a, &b)) return false;
  return (az_int_is(b, 0) && hand_place(h, a) == place) || (az_int_is(a, 0) && hand_place(h, b) == place);
}

// slots[IDX] with IDX at `place` (HP_NONE: the constant 0).
static bool is_slot(const HandSum *h, CXCursor e, int place) {
  e = az_uncast(e);
  Kids k = kids(e);
  if (kind(e) != CXCursor_ArraySubscriptExpr || k.n != 2 || !az_refers_to(az_uncast(k.v[0]), h->shared)) return false;
  return place == HP_NONE ? az_int_is(k.v[1], 0) : hand_place(h, k.v[1]) == place;
}

enum { HAND_MAX_STMTS = 32 };

typedef struct Stmts {
  CXCursor v[HAND_MAX_STMTS];
  int n;                   // how many there are (past HAND_MAX_STMTS: not kept)
} Stmts;

static enum CXChildVisitResult collect_stmt(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Stmts *l = data;
  if (l->n < HAND_MAX_STMTS) l->v[l->n] = az_strip(c);
  l->n++;
  return CXChildVisit_Continue;
}

// The helper's statements, in order (see above): true when they sum its parameter over the block.
static bool hand_sum_body(HandSum *h, CXCursor param) {
  Stmts all = {.n = 0};
  clang_visitChildren(h->body, collect_stmt, &all);
  if (all.n > HAND_MAX_STMTS) return false;
  int n = all.n;
  CXCursor *stmts = all.v;
  CXCursor cur = param, var, value, cond, body, a, b;
  int step = 0, index = HP_NONE;
  for (int i = 0; i < n; i++) {
    CXCursor s = stmts[i];
    if (kind(s) == CXCursor_NullStmt || hand_decl(h, s)) continue;
    double taken;
    if (if_only(s, &cond, &body) && hand_constant(h, cond, &taken)) {  // if (final_sync) __syncthreads();
      if (taken == 0.0) continue;
      s = body;
    }
    if (is_barrier(s)) {
      if (step == 0) h->fenced_before = true;
      if (step >= 4) h->fenced_after = true;
      if (step == 2) step = 3;
      continue;
    }
    switch (step) {
    case 0:  // the warps' sums
      if (!hand_warp_sum(h, s, cur, &cur)) return false;
      step = 1;
      break;
    case 1: {  // lane 0 of each warp stores its warp's sum in the warp's slot
      char *op = NULL;
      bool ok = if_only(s, &cond, &body) && is_zero_test(h, cond, HP_LANE) &&
                az_is_assignment(h->az, body, &a, &b, &op) && strcmp(op, "=") == 0 && is_slot(h, a, HP_WARP) &&
                az_refers_to(az_uncast(b), cur);
      free(op);
      if (!ok) return false;
      step = 2;
      break;
    }
    case 3:  // after the barrier: the slots, one a lane (0 past the warps)
      if (!assigned_value(h->az, s, &var, &value)) return false;
      value = az_uncast(value);
      {
        Kids k = kids(value);
        if (kind(value) != CXCursor_ConditionalOperator || k.n != 3 ||
            !az_is_binary(h->az, az_strip(k.v[0]), "<", &a, &b) || hand_place(h, b) != HP_NWARPS)
          return false;
        index = hand_place(h, a);
        double fill;
        if ((index != HP_LANE && index != HP_TID) || !is_slot(h, k.v[1], index) || !hand_constant(h, k.v[2], &fill) ||
            fill != 0.0)
          return false;
      }
      cur = var;
      step = 4;
      break;
    case 4:  // the first warp (or every warp) sums the slots
      if (kind(s) == CXCursor_ReturnStmt && kids(s).n == 1) {  // return warp_sum(v);
        CXCursor call = az_uncast(kids(s).v[0]);
        return kind(call) == CXCursor_CallExpr && clang_Cursor_getNumArguments(call) == 1 &&
               az_refers_to(clang_Cursor_getArgument(call, 0), cur) && warp_sum_helper(h->az, call);
      }
      if (if_only(s, &cond, &body)) {
        bool first_warp = is_zero_test(h, cond, HP_WARP) ||
                          (az_is_binary(h->az, az_strip(cond), "<", &a, &b) && hand_place(h, a) == HP_TID &&
                           az_is_warp_size(b));
        if (!first_warp) return false;
        s = body;
      }
      if (!hand_warp_sum(h, s, cur, &cur)) return false;
      step = 5;
      break;
    case 5:  // return it, or thread 0 stores it in slot 0 and every thread returns slot 0
      if (kind(s) == CXCursor_ReturnStmt && kids(s).n == 1) return az_refers_to(az_uncast(kids(s).v[0]), cur);
      if (if_only(s, &cond, &body) && is_zero_test(h, cond, HP_TID)) {
        char *op = NULL;
        bool ok = az_is_assignment(h->az, body, &a, &b, &op) && strcmp(op, "=") == 0 && is_slot(h, a, HP_NONE) &&
                  az_refers_to(az_uncast(b), cur);
        free(op);
        if (!ok) return false;
        step = 6;
        break;
      }
      return false;
    case 6:  // every thread reads slot 0 after the last barrier
      h->fenced_after = false;
      return kind(s) == CXCursor_ReturnStmt && kids(s).n == 1 && is_slot(h, kids(s).v[0], HP_NONE);
    default:
      return false;
    }
  }
  return false;
}

static enum CXChildVisitResult find_shared(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (kind(c) == CXCursor_VarDecl && az_is_shared(c)) *(bool *)data = true;
  return *(bool *)data ? CXChildVisit_Break : CXChildVisit_Recurse;
}

// A call of a hand-written block sum helper (above) on the running sum: its
// binding (NULL: not one; a reason is recorded when the helper has shared
// memory but is not one, when the launch's block is not whole warps, or when
// it is called twice and cannot be).
static Binding *hand_block_sum(Az *az, CXCursor call) {
  CXCursor def = clang_getCursorDefinition(az_callee(call));
  int n = clang_Cursor_getNumArguments(def);
  if (clang_Cursor_isNull(def) || kind(def) != CXCursor_FunctionDecl || n < 1 ||
      clang_Cursor_getNumArguments(call) != n || !fe_in_user_code(az->fe, clang_getCursorLocation(def)) ||
      kind(kids(def).last) != CXCursor_CompoundStmt)
    return NULL;
  Binding *b = running_sum(az, clang_Cursor_getArgument(call, 0));
  HandSum h = {.az = az, .def = def, .call = call, .shared = clang_getNullCursor(), .body = kids(def).last};
  if (!b) return NULL;
  for (int i = 1; i < n; i++)  // the parameters after the first are read as the call's values
    if (az_writes(az, h.body, clang_Cursor_getArgument(def, i))) return NULL;
  char *name = fe_spelling(def);
  if (!hand_sum_body(&h, clang_Cursor_getArgument(def, 0))) {
    bool shared = false;
    clang_visitChildren(h.body, find_shared, &shared);
    if (shared) {
      char *v = fe_spelling(b->decl);
      az_fail(az, call, "kernel '%s' sums '%s' with '%s', whose shared memory coconet does not recognize as a block "
                        "sum: it takes the warp-by-warp form (a warp's sum, lane 0 storing it in the warp's __shared__ "
                        "slot, __syncthreads(), the slots summed by the first warp or every warp, 0 past the warps, "
                        "thread 0 holding the total) and cub::BlockReduce", az->launch->kernel, v, name);
      free(v);
    }
    free(name);
    return NULL;
  }
  long long slots = clang_getArraySize(clang_getCursorType(h.shared));
  if (az->block_x <= 0 || az->block_x % 32 || az->block_x > 1024 || az->block_x / 32 > slots)
    az_fail(az, call, "kernel '%s' sums with '%s', a block sum warp by warp through %lld shared slots, but its "
                      "launch's block is not a constant number of whole warps, at most %lld of them: the sum would "
                      "not cover the block", az->launch->kernel, name, slots, slots < 32 ? slots : 32);
  else if (az->hand_sums++ && !az->hand_fenced && !h.fenced_before)
    az_fail(az, call, "kernel '%s' calls '%s' again; a warp may store its next sum in its slot while the first warp "
                      "still reads the last one (there is no __syncthreads() after the first call's reads or before "
                      "this one's stores): add one to '%s'", az->launch->kernel, name, name);
  az->hand_fenced = h.fenced_after;
  free(name);
  return az_failed(az) ? NULL : b;
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
  } else if (n >= 1 && (b = hand_block_sum(az, call))) {
    *group = REDUCED_BLOCK;
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
// `red[0]` once the tree has summed the block into it: the running sum stored there.
static Binding *tree_total(Az *az, CXCursor e) {
  e = az_uncast(e);
  Kids k = kids(e);
  if (az->tree_stage != 3 || kind(e) != CXCursor_ArraySubscriptExpr || k.n != 2 || !az_refers_to(k.v[0], az->tree) ||
      !az_int_is(az_uncast(k.v[1]), 0))
    return NULL;
  return &az->locals[az->tree_local];
}

static bool add_sum(Az *az, CXCursor s, int leader) {
  s = az_strip(s);
  if (kind(s) != CXCursor_CallExpr || clang_Cursor_getNumArguments(s) != 2) return false;
  char *name = callee_name(s);
  bool atomic = strcmp(name, "atomicAdd") == 0;
  free(name);
  Binding *b = atomic ? running_sum(az, clang_Cursor_getArgument(s, 1)) : NULL;
  if (atomic && !b) b = tree_total(az, clang_Cursor_getArgument(s, 1));
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

bool az_tree_decl(Az *az, CXCursor s) {
  Kids vars = kind(s) == CXCursor_DeclStmt ? kids(s) : (Kids){0};
  if (vars.n != 1 || !az_is_shared(vars.v[0]) || !clang_Cursor_isNull(az->tree)) return false;
  CXType t = clang_getCursorType(vars.v[0]);
  if (t.kind != CXType_ConstantArray || !ir_type_is_float(az_type_of(clang_getArrayElementType(t)))) return false;
  az->tree = vars.v[0];
  return true;
}

static bool is_sync(CXCursor s) {
  s = az_strip(s);
  if (kind(s) != CXCursor_CallExpr || clang_Cursor_getNumArguments(s) != 0) return false;
  char *name = callee_name(s);
  bool sync = strcmp(name, "__syncthreads") == 0;
  free(name);
  return sync;
}

// red[threadIdx.x] (at: the subscript's index, when given, else threadIdx.x itself).
static bool tree_at(Az *az, CXCursor e, CXCursor *index) {
  e = az_uncast(e);
  Kids k = kids(e);
  if (kind(e) != CXCursor_ArraySubscriptExpr || k.n != 2 || !az_refers_to(k.v[0], az->tree)) return false;
  *index = az_uncast(k.v[1]);
  return true;
}

// `if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];` (or `= red[..] + red[..]`).
static bool tree_step(Az *az, CXCursor s, CXCursor k) {
  Kids f = kids(az_strip(s));
  CXCursor a, b, lhs, rhs, i;
  if (kind(az_strip(s)) != CXCursor_IfStmt || f.n != 2 || !az_is_binary(az, f.v[0], "<", &a, &b) ||
      az_builtin(az, a) != B_THREADIDX_X || !az_refers_to(b, k))
    return false;
  CXCursor body = az_strip(f.v[1]);
  if (kind(body) == CXCursor_CompoundStmt && kids(body).n == 1) body = az_strip(kids(body).v[0]);
  char *op = NULL;
  if (!az_is_assignment(az, body, &lhs, &rhs, &op)) return false;
  bool plus = strcmp(op, "+=") == 0, assign = strcmp(op, "=") == 0;
  free(op);
  if (!tree_at(az, lhs, &i) || az_builtin(az, i) != B_THREADIDX_X) return false;
  CXCursor other = rhs;
  if (assign) {
    CXCursor x, y;
    if (!az_is_binary(az, rhs, "+", &x, &y)) return false;
    if (tree_at(az, x, &i) && az_builtin(az, i) == B_THREADIDX_X) other = y;
    else if (tree_at(az, y, &i) && az_builtin(az, i) == B_THREADIDX_X) other = x;
    else return false;
  } else if (!plus) {
    return false;
  }
  return tree_at(az, other, &i) && az_is_binary(az, i, "+", &a, &b) &&
         ((az_builtin(az, a) == B_THREADIDX_X && az_refers_to(b, k)) ||
          (az_builtin(az, b) == B_THREADIDX_X && az_refers_to(a, k)));
}

// `for (int k = blockDim.x / 2; k > 0; k >>= 1) { STEP; __syncthreads(); }` (k /= 2 too).
static bool tree_loop(Az *az, CXCursor s) {
  Kids f = kids(az_strip(s));
  if (kind(az_strip(s)) != CXCursor_ForStmt || f.n != 4 || kind(f.v[0]) != CXCursor_DeclStmt ||
      kids(f.v[0]).n != 1)
    return false;
  CXCursor k = kids(f.v[0]).v[0], a, b, lhs, rhs;
  Kids init = kids(k);
  long long half;
  bool start = init.n && ((az_is_binary(az, init.last, "/", &a, &b) && az_builtin(az, a) == B_BLOCKDIM_X &&
                           az_int_is(az_uncast(b), 2)) ||
                          (az_int_constant(init.last, &half) && 2 * half == az->block_x));
  bool test = az_is_binary(az, f.v[1], ">", &a, &b) && az_refers_to(a, k) && az_int_is(az_uncast(b), 0);
  char *op = NULL;
  bool step = az_is_assignment(az, f.v[2], &lhs, &rhs, &op) && az_refers_to(lhs, k) &&
              ((strcmp(op, ">>=") == 0 || strcmp(op, "/=") == 0) &&
               az_int_is(az_uncast(rhs), strcmp(op, ">>=") == 0 ? 1 : 2));
  free(op);
  Kids body = kids(az_strip(f.v[3]));
  return start && test && step && body.n == 2 && tree_step(az, body.v[0], k) && is_sync(body.v[1]);
}

// One statement of the tree, in order; true when s is one.
static bool tree_stmt(Az *az, CXCursor s) {
  CXCursor lhs, rhs, i;
  char *op = NULL;
  if (clang_Cursor_isNull(az->tree)) return az_tree_decl(az, s);
  if (az->tree_stage == 0 && az_is_assignment(az, s, &lhs, &rhs, &op) && strcmp(op, "=") == 0 &&
      tree_at(az, lhs, &i) && az_builtin(az, i) == B_THREADIDX_X) {
    free(op);
    Binding *b = running_sum(az, rhs);
    if (!b) return false;
    az->tree_local = (int)(b - az->locals);
    az->tree_stage = 1;
    return true;
  }
  free(op);
  if (az->tree_stage == 1 && is_sync(s)) {
    az->tree_stage = 2;
    return true;
  }
  if (az->tree_stage == 2 && tree_loop(az, s)) {
    long long size = clang_getArraySize(clang_getCursorType(az->tree));
    if (az->block_x <= 0 || (az->block_x & (az->block_x - 1)) || az->block_x > size)
      az_fail(az, s, "kernel '%s' sums its running sum with a tree through shared memory, but its launch's block is "
                     "not a constant power of two at most %lld (the array's length): the tree would not sum the "
                     "block", az->launch->kernel, size);
    else
      az->locals[az->tree_local].reduced = REDUCED_BLOCK;
    az->tree_stage = 3;
    return true;
  }
  return false;
}

void az_tree_done(Az *az) {
  if (clang_Cursor_isNull(az->tree) || az_failed(az) || (az->tree_stage == 3 && az->locals[az->tree_local].reduced))
    return;
  char *name = fe_spelling(az->tree);
  az_fail(az, az->tree, "kernel '%s' declares shared memory '%s' that coconet does not recognize as a block sum: after "
                        "the grid-stride loop, red[threadIdx.x] = s; __syncthreads(); the tree for (k = blockDim.x / "
                        "2; k > 0; k >>= 1) { if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k]; "
                        "__syncthreads(); }; then thread 0's atomicAdd of red[0]",
          az->launch->kernel, name);
  free(name);
}

bool az_after_loop(Az *az, CXCursor s) {
  s = az_strip(s);
  if (tree_stmt(az, s)) return true;
  if (add_sum(az, s, 0) || reduction(az, s)) return true;
  Kids k = kids(s);
  if (kind(s) != CXCursor_IfStmt || k.n != 2) return false;
  int leader = az_first_thread(az, k.v[0], false) ? REDUCED_BLOCK
               : az_first_thread(az, k.v[0], true) ? REDUCED_WARP
                                                   : 0;
  CXCursor body = az_strip(k.v[1]);
  Kids adds = kids(body);  // `if (threadIdx.x == 0) { atomicAdd(&n[0], a); atomicAdd(&n[1], b); }`
  if (kind(body) != CXCursor_CompoundStmt) adds = (Kids){.v = {body}, .last = body, .n = 1};
  bool all = leader && adds.n && adds.n <= FE_KIDS;
  for (int i = 0; all && i < adds.n; i++) all = add_sum(az, adds.v[i], leader);
  return all;
}
