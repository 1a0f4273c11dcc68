// analyze_row.c: row-wise kernels (RMSNorm, LayerNorm, softmax, residual +
// norm). A launch that is not pointwise becomes a row-wise IR op (a pointwise
// op over rows * H elements with IrPointwise.row = H and no body: the kernel
// runs as written) when the kernel can be proven to keep each block in its own
// row of H elements:
//
//   - the row: blockIdx.x, directly or through integer locals initialized
//     from it and never assigned;
//   - columns: loops `for (int j = threadIdx.x; j < H; j += blockDim.x)` (or a
//     positive constant step, whose writes may miss columns), j never assigned
//     or addressed in the body; H one scalar parameter;
//   - global memory only through the kernel's pointer parameters, at
//     [row * H + j] (the block's own row; also through a local pointer
//     `p = x + row * H` or an integer local `off = row * H`), at [j] (a
//     column, read only: gamma, bias) or at [row] (the row's own scalar: a
//     per-row scale read, or a per-row output such as LayerNorm's mean and
//     rstd, whose write under `if (threadIdx.x == 0)` still covers every
//     row); __ldg(&x[...]) reads; nothing else names those pointers (no helper
//     call, atomic, address or dereference), a buffer written is touched only
//     in its own row and in one way ([row * H + j] or [row]);
//   - the row index only to find the row (no `row == 0`, no seed + row, no
//     blockIdx.x in a helper):
//     the schedule launches the kernel on a part of the rows with its row
//     pointers moved to the part's first row ([row] pointers by rows);
//   - the rows: a parameter used only in tests `row < rows` (or >=, >, <=)
//     and the launch's grid equal to it; without one, the grid is the row
//     count;
//   - no gridDim, blockIdx.y/z or grid-wide sync (this_grid) in the kernel or
//     the __device__ helpers it calls, no file-scope variable it could write;
//   - or, for the rows, a grid-stride loop at the kernel's top level,
//     `for (int row = blockIdx.x; row < rows; row += gridDim.x)`: its variable
//     is the row inside it, the launch's grid may be anything (each block runs
//     the loop once in the schedule, which launches a block per row of a part).
//
// A row may also belong to a warp (row = blockIdx.x * (blockDim.x / 32) +
// threadIdx.x / 32, or the cooperative-groups tile's meta_group_rank; columns
// from the lane threadIdx.x % 32 stepping by 32) or to a thread (row =
// blockIdx.x * blockDim.x + threadIdx.x; columns from 0 stepping by 1). Then
// the launch has more warps (threads) than rows: every access comes after the
// rows test that stops the others, no shared memory or __syncthreads (nor, for
// a thread, shuffles) joins two rows, the warp's or thread's place is not a
// value (the lane and blockDim.x may be), and the schedule launches blocks
// enough for a part's rows after checking that the launch as written reaches
// every row. A row pointer tested against null (lane 0 storing mean[row] when
// the caller passed one) is checked to be there when the schedule runs.
//
// Shared memory, __syncthreads, warp shuffles and helpers that take values
// are the block's own business and stay as written. A write that might not
// happen for every column of a row (under a condition, in another loop, after
// an early return, in a loop of another step) counts as a read of the value it
// leaves, so that the layouts say what survives.
#include "analyze.h"

#include <stdlib.h>
#include <string.h>

enum { ROW_MAX = 32 };

typedef enum { USE_ROW, USE_COL, USE_OWN } RowUse;  // [row * H + j], [j], [row]

// Who owns a row: a block (row = blockIdx.x), a warp (blockIdx.x * (blockDim.x
// / 32) + threadIdx.x / 32, columns from the lane threadIdx.x % 32) or a thread
// (blockIdx.x * blockDim.x + threadIdx.x, columns from 0).
typedef enum { GROUP_BLOCK, GROUP_WARP, GROUP_THREAD } RowGroup;


typedef struct Access {
  CXCursor param;    // the kernel's pointer parameter
  RowUse use;
  bool write, read;
  bool partial;      // a write that may not cover the row
  CXCursor at;
} Access;

typedef struct Row {
  Az az;              // fe, kernel, launch, why (az_fail, az_builtin, az_text_of)
  CXCursor h;         // the row length parameter (null until a column loop names it)
  CXCursor rows;      // the row count parameter (null: none)
  CXCursor stride;    // a row stride parameter other than H (`row * input_stride`), null if none: the
                      // generated code checks that it equals H
  RowGroup group;
  bool guarded;       // past `if (row >= rows) return;` at the kernel's top level
  int in_guard;       // > 0 inside `if (row < rows) { ... }`
  CXCursor nulls[ROW_MAX];  // pointer parameters the kernel tests against null
  int nnulls;
  bool row_elements;  // an access at [row * H + j] was seen
  CXCursor cols[ROW_MAX];   // column loop variables
  int ncols;
  CXCursor strided[ROW_MAX];  // variables of loops from threadIdx.x to a constant (over shared memory)
  int nstrided;
  CXCursor rowoffs[ROW_MAX];  // integer locals holding row * H
  int nrowoffs;
  CXCursor aliases[ROW_MAX], alias_of[ROW_MAX];  // pointer locals at the row, and their parameter
  int naliases;
  Access acc[64];
  int nacc;
  int cond;           // > 0 inside a condition, another loop, or a column loop that may skip columns
  int one_thread;     // how many of those conditions are `threadIdx.x == 0` (one thread of every block)
  bool irregular;     // a return (other than the rows test), break, continue or goto
  bool saw_row;       // blockIdx.x appears
  SrcLoc row_loc;
  int helper_depth;   // > 0 while checking a __device__ helper's body
  CXCursor row_loop;  // a grid-stride loop over the rows at the kernel's top level (null: none)
  CXCursor row_var;   // its variable: the row, inside the loop only
  bool in_row_loop;
} Row;

static bool row_failed(const Row *w) { return az_failed(&w->az); }

// The text of c without its blanks ("gridDim . x" -> "gridDim.x"; malloc'd).
static char *compact_text(Row *w, CXCursor c) {
  char *t = az_text_of(&w->az, c), *d = t;
  for (const char *p = t; *p; p++)
    if (*p != ' ' && *p != '\t' && *p != '\n') *d++ = *p;
  *d = '\0';
  return t;
}

static bool in_list(const CXCursor *v, int n, CXCursor c) {
  for (int i = 0; i < n; i++)
    if (same(v[i], c)) return true;
  return false;
}

static CXCursor ref_decl(CXCursor c) {
  c = az_uncast(c);
  return kind(c) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(c) : clang_getNullCursor();
}

static AzPlace row_kind(const Row *w) { return w->group == GROUP_WARP ? PLACE_WARP_ROW : PLACE_THREAD_ROW; }

// A local the kernel's grid position rests on (the lane, the warp, the row).
static bool derived_local(const Row *w, CXCursor d) {
  Kids init = kids(d);
  return kind(d) == CXCursor_VarDecl && az_is_integer_var(d) && init.n && az_place(&w->az, init.last) != PLACE_NONE;
}

static bool is_param(const Row *w, CXCursor d) {
  return kind(d) == CXCursor_ParmDecl && az_param_position(&w->az, d) >= 0;
}
static bool is_pointer_param(const Row *w, CXCursor d) { return is_param(w, d) && az_is_pointer(d); }

static bool is_row(Row *w, CXCursor c) {
  if (!clang_Cursor_isNull(w->row_var)) {
    if (!w->in_row_loop || !same(ref_decl(c), w->row_var)) return false;
  } else if (w->group == GROUP_BLOCK ? az_builtin(&w->az, c) != B_BLOCKIDX_X : az_place(&w->az, c) != row_kind(w)) {
    return false;
  }
  if (!w->saw_row) w->row_loc = fe_loc(w->az.fe, clang_getCursorLocation(c));
  w->saw_row = true;
  return true;
}
static bool is_col(const Row *w, CXCursor c) {
  CXCursor d = ref_decl(c);
  return !clang_Cursor_isNull(d) && in_list(w->cols, w->ncols, d);
}
static int col_index(const Row *w, CXCursor c) {
  CXCursor d = ref_decl(c);
  for (int i = 0; i < w->ncols && !clang_Cursor_isNull(d); i++)
    if (same(w->cols[i], d)) return i;
  return -1;
}

// H, the row length: the parameter every column loop and row offset names.
static bool is_h(Row *w, CXCursor c) {
  CXCursor d = ref_decl(c);
  if (clang_Cursor_isNull(d) || !is_param(w, d) || !az_is_integer_var(d)) return false;
  if (clang_Cursor_isNull(w->h)) w->h = d;
  return same(w->h, d);
}

// A row stride parameter other than the row length (vLLM's input_stride):
// rows split in rows of H are the kernel's rows only when it equals H, which
// the generated code checks.
static bool is_stride(Row *w, CXCursor c) {
  CXCursor d = ref_decl(c);
  if (clang_Cursor_isNull(d) || clang_Cursor_isNull(w->h) || !is_param(w, d) || !az_is_integer_var(d) || same(d, w->h))
    return false;
  if (clang_Cursor_isNull(w->stride)) w->stride = d;
  return same(w->stride, d);
}

// row * H (either order; or row * S, S a row stride), or a local holding it.
static bool is_row_offset(Row *w, CXCursor c) {
  CXCursor d = ref_decl(c);
  if (!clang_Cursor_isNull(d) && in_list(w->rowoffs, w->nrowoffs, d)) return true;
  CXCursor a, b;
  c = az_strip(c);
  while (kind(c) == CXCursor_CStyleCastExpr || kind(c) == CXCursor_CXXStaticCastExpr) c = az_strip(kids(c).last);
  if (!az_is_binary(&w->az, c, "*", &a, &b)) return false;
  return (is_row(w, a) && (is_h(w, b) || is_stride(w, b))) || (is_row(w, b) && (is_h(w, a) || is_stride(w, a)));
}

// An index into a row: row * H + j (either order), or off + j.
static bool is_row_element(Row *w, CXCursor c, int *col) {
  CXCursor a, b;
  if (!az_is_binary(&w->az, c, "+", &a, &b)) return false;
  if (is_col(w, b) && is_row_offset(w, a)) return (*col = col_index(w, b)), true;
  if (is_col(w, a) && is_row_offset(w, b)) return (*col = col_index(w, a)), true;
  return false;
}

static void walk(Row *w, CXCursor c);

static enum CXChildVisitResult walk_child(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Row *w = data;
  if (row_failed(w)) return CXChildVisit_Break;
  walk(w, c);
  return CXChildVisit_Continue;
}

static void walk_kids(Row *w, CXCursor c) { clang_visitChildren(c, walk_child, w); }

static void add_access(Row *w, CXCursor param, RowUse use, bool write, bool read, CXCursor at) {
  if ((int)(sizeof w->acc / sizeof *w->acc) == w->nacc) {
    az_fail(&w->az, at, "kernel '%s': more than %d global accesses", w->az.launch->kernel, w->nacc);
    return;
  }
  if (w->group != GROUP_BLOCK && !w->guarded && !w->in_guard) {
    char *t = az_text_of(&w->az, at);
    az_fail(&w->az, at, "kernel '%s' reaches %s before it tests its row against the row count; with one %s per row "
                        "coconet launches blocks enough for a slice's rows, so every access must come after `if "
                        "(row >= rows) return;` or inside `if (row < rows)`", w->az.launch->kernel, t,
            w->group == GROUP_WARP ? "warp" : "thread");
    free(t);
    return;
  }
  // One thread of each row's owner writes the row's own element: that covers the row.
  int cond = w->cond - (use == USE_OWN ? w->one_thread : 0);
  bool partial = write && (cond > 0 || w->irregular);
  w->acc[w->nacc++] = (Access){param, use, write, read, partial, at};
}

// base[index], written and/or read at s (a subscript, or a cache-hinted load or
// store of its address): the access it is, or the reason it is not one.
static void element_access(Row *w, CXCursor s, CXCursor base, CXCursor index, bool write, bool read) {
  char *t = az_text_of(&w->az, s);
  for (int i = 0; i < w->naliases; i++) {
    if (!same(w->aliases[i], base)) continue;
    w->row_elements |= is_col(w, index);
    if (is_col(w, index)) add_access(w, w->alias_of[i], USE_ROW, write, read, s);
    else az_fail(&w->az, s, "kernel '%s' accesses %s: a pointer to the block's row is read and written only at a "
                            "column of a threadIdx-strided loop below the row length", w->az.launch->kernel, t);
    free(t);
    return;
  }
  int col;
  w->row_elements |= is_row_element(w, index, &col);
  if (is_row_element(w, index, &col)) add_access(w, base, USE_ROW, write, read, s);
  else if (is_col(w, index) && !write) add_access(w, base, USE_COL, false, true, s);
  else if (is_row(w, index)) add_access(w, base, USE_OWN, write, read, s);
  else
    az_fail(&w->az, s, "kernel '%s' %s %s; a row-wise kernel %s global memory only at [row * H + j] (its block's row, "
                       "j from a loop `for (j = threadIdx.x; j < H; j += blockDim.x)`)%s", w->az.launch->kernel,
            write ? "writes" : "reads", t, write ? "writes" : "reads", write ? " or [row]" : ", [j] or [row]");
  free(t);
}

static void subscript(Row *w, CXCursor s, bool write, bool read) {
  Kids k = kids(s);
  element_access(w, s, ref_decl(k.v[0]), k.last, write, read);
}

// A pointer parameter or a pointer to the block's row.
static bool global_pointer(const Row *w, CXCursor c) {
  CXCursor d = ref_decl(c);
  return !clang_Cursor_isNull(d) && (is_pointer_param(w, d) || in_list(w->aliases, w->naliases, d));
}

static bool global_subscript(const Row *w, CXCursor c) {
  c = az_strip(c);
  return kind(c) == CXCursor_ArraySubscriptExpr && kids(c).n == 2 && global_pointer(w, kids(c).v[0]);
}

// &x[k], x + k or k + x for a global pointer x: true, with x's declaration and k.
static bool element_address(const Row *w, CXCursor e, CXCursor *base, CXCursor *index) {
  e = az_strip(e);
  Kids k = kids(e);
  CXCursor a, b;
  if (kind(e) == CXCursor_UnaryOperator && k.n == 1 && global_subscript(w, k.v[0])) {
    Kids s = kids(az_strip(k.v[0]));
    *base = ref_decl(s.v[0]);
    *index = s.last;
    return true;
  }
  if (!az_is_binary(&w->az, e, "+", &a, &b)) return false;
  if (global_pointer(w, b)) {
    CXCursor t = a;
    a = b;
    b = t;
  }
  if (!global_pointer(w, a)) return false;
  *base = ref_decl(a);
  *index = b;
  return true;
}

// p != nullptr, p == NULL, p != 0 (either order) for a pointer parameter p:
// true when c is one (p is recorded: the translation requires a buffer there).
static bool null_test(Row *w, CXCursor c) {
  CXCursor a, b;
  if (!az_is_binary(&w->az, c, "!=", &a, &b) && !az_is_binary(&w->az, c, "==", &a, &b)) return false;
  CXCursor p = ref_decl(a), other = b;
  if (clang_Cursor_isNull(p) || !is_pointer_param(w, p)) {
    p = ref_decl(b);
    other = a;
  }
  other = az_uncast(other);
  bool null = kind(other) == CXCursor_CXXNullPtrLiteralExpr || kind(other) == CXCursor_GNUNullExpr ||
              az_int_is(other, 0);
  if (clang_Cursor_isNull(p) || !is_pointer_param(w, p) || !null) return false;
  if (!in_list(w->nulls, w->nnulls, p) && w->nnulls < ROW_MAX) w->nulls[w->nnulls++] = p;
  return true;
}

// A name the kernel's row ownership rests on: assigning it is refused. A
// local holding a constant the block size equals is not one: it stands for
// blockDim.x only while never assigned (az_builtin).
static bool builtin_local(const Row *w, CXCursor d) {
  Kids init = kids(d);
  long long v;
  return kind(d) == CXCursor_VarDecl && az_is_integer_var(d) && init.n && !az_int_constant(init.last, &v) &&
         !in_list(w->strided, w->nstrided, d) && az_builtin(&w->az, init.last) != B_NONE;
}

// c names (through locals' initial values) the variable of a loop from
// threadIdx.x to a constant, which moves past threadIdx.x.
static bool via_strided(const Row *w, CXCursor c, int depth) {
  c = az_uncast(c);
  if (depth > 8 || kind(c) != CXCursor_DeclRefExpr) return false;
  CXCursor d = clang_getCursorReferenced(c);
  Kids init = kids(d);
  return in_list(w->strided, w->nstrided, d) ||
         (kind(d) == CXCursor_VarDecl && init.n && via_strided(w, init.last, depth + 1));
}

static bool tracked(const Row *w, CXCursor d) {
  return in_list(w->cols, w->ncols, d) || in_list(w->rowoffs, w->nrowoffs, d) ||
         in_list(w->aliases, w->naliases, d) || is_param(w, d) || builtin_local(w, d) ||
         (w->group != GROUP_BLOCK && derived_local(w, d));
}

static void assigned(Row *w, CXCursor lhs, bool read, CXCursor at) {
  CXCursor l = az_strip(lhs);
  if (w->helper_depth == 0 && global_subscript(w, l)) {
    subscript(w, l, true, read);
    return;
  }
  CXCursor d = ref_decl(l);
  if (w->helper_depth == 0 && !clang_Cursor_isNull(d) && tracked(w, d)) {
    char *t = az_text_of(&w->az, at), *name = fe_spelling(d);
    az_fail(&w->az, at, "kernel '%s' assigns '%s' in %s; a row-wise kernel's row, columns, row length, row "
                        "pointers and parameters are not assigned", w->az.launch->kernel, name, t);
    free(t);
    free(name);
    return;
  }
  walk(w, lhs);
}

// A parameter the launch passes the block size it launches with
// (<<<rows, block_size>>>(..., block_size)): blockDim.x, as the kernel runs
// with the launch's block in the schedule too.
static bool block_param(const Row *w, CXCursor c) {
  CXCursor d = ref_decl(c);
  if (clang_Cursor_isNull(d) || !is_param(w, d) || !az_is_integer_var(d)) return false;
  const char *arg = az_launch_arg(&w->az, d), *block = w->az.launch->block.text;
  return arg && block && strcmp(arg, block) == 0 && (az_simple_name(arg) || strspn(arg, "0123456789") == strlen(arg));
}

// for (int j = threadIdx.x; j < H; j += blockDim.x) (any positive step): true
// when it is one; its variable joins the columns.
static bool column_loop(Row *w, CXCursor f) {
  Kids k = kids(f);
  if (k.n != 4 || kind(k.v[0]) != CXCursor_DeclStmt) return false;
  Kids vars = kids(k.v[0]);
  if (vars.n != 1 || !az_is_integer_var(vars.v[0])) return false;
  CXCursor j = vars.v[0];
  Kids init = kids(j);
  if (!init.n) return false;
  bool start = w->group == GROUP_BLOCK ? az_builtin(&w->az, init.last) == B_THREADIDX_X && !via_strided(w, init.last, 0)
               : w->group == GROUP_WARP ? az_place(&w->az, init.last) == PLACE_LANE
                                        : az_int_is(init.last, 0);
  if (!start) return false;
  CXCursor a, b;
  long long bound;
  if (!az_is_binary(&w->az, k.v[1], "<", &a, &b) || !same(ref_decl(a), j)) return false;
  if (!is_h(w, b)) {
    // `for (int k = threadIdx.x; k < 64; k += blockDim.x) tmp[k] = 0.0f;`: not a column loop; k is
    // no longer threadIdx.x once it steps (an index of the row it is not: global accesses by it fail).
    if (w->group == GROUP_BLOCK && az_int_constant(b, &bound) && w->nstrided < ROW_MAX) w->strided[w->nstrided++] = j;
    return false;
  }
  CXCursor inc = az_strip(k.v[2]), lhs, rhs;
  char *op = NULL;
  bool full = false, ok = false;
  if (az_is_assignment(&w->az, inc, &lhs, &rhs, &op)) {
    if (strcmp(op, "+=") == 0 && same(ref_decl(lhs), j)) {
      // blockDim.x (or the constant the launch's block size equals, or a parameter the launch passes
      // its block size; 32 with a warp per row, 1 with a thread) covers every column; another
      // positive constant may skip some; anything else is not a column loop.
      full = w->group == GROUP_BLOCK ? az_builtin(&w->az, rhs) == B_BLOCKDIM_X || block_param(w, rhs)
             : w->group == GROUP_WARP ? az_is_warp_size(rhs) : az_int_is(rhs, 1);
      CXEvalResult e = full ? NULL : clang_Cursor_Evaluate(rhs);
      ok = full || (e && clang_EvalResult_getKind(e) == CXEval_Int && clang_EvalResult_getAsLongLong(e) > 0);
      if (e) clang_EvalResult_dispose(e);
    }
    free(op);
  } else if (kind(inc) == CXCursor_UnaryOperator) {
    Kids u = kids(inc);
    char *o = u.n ? az_unary_op(&w->az, inc, u.v[0]) : strdup("");
    ok = u.n && strstr(o, "++") && same(ref_decl(u.v[0]), j);
    full = ok && w->group == GROUP_THREAD;
    free(o);
  }
  if (!ok) {
    // The shape of a column loop with a step coconet cannot bound: say so where it is.
    char *t = az_text_of(&w->az, k.v[2]);
    az_fail(&w->az, k.v[2], "kernel '%s': the column loop's step '%s' is neither %s nor a positive constant; "
                            "coconet cannot tell which columns of the row it reaches", w->az.launch->kernel, t,
            w->group == GROUP_BLOCK ? "blockDim.x" : w->group == GROUP_WARP ? "32 (the warp)" : "1");
    free(t);
    return true;
  }
  if (w->ncols == ROW_MAX) return false;
  w->cols[w->ncols++] = j;
  w->cond += !full;
  walk(w, k.v[3]);
  w->cond -= !full;
  return true;
}

// `if (row >= rows) return;` or `if (row < rows) { ... }` and the like: a test of
// the row against the rows parameter (true when c is one). *in: 1 when it holds
// exactly for the rows below the count (row < rows), -1 exactly for the others
// (row >= rows), 0 for neither (row <= rows).
static bool rows_test(Row *w, CXCursor c, int *in) {
  static const char *const ops[] = {"<", ">=", ">", "<="};
  static const int row_left[] = {1, -1, 0, 0}, row_right[] = {0, 0, 1, -1};
  for (int i = 0; i < 4; i++) {
    CXCursor a, b;
    if (!az_is_binary(&w->az, c, ops[i], &a, &b)) continue;
    bool left = is_row(w, a);
    CXCursor rows = left ? ref_decl(b) : is_row(w, b) ? ref_decl(a) : clang_getNullCursor();
    if (clang_Cursor_isNull(rows) || !is_param(w, rows) || az_is_pointer(rows)) return false;
    if (!clang_Cursor_isNull(w->rows) && !same(w->rows, rows)) return false;
    w->rows = rows;
    *in = left ? row_left[i] : row_right[i];
    return true;
  }
  return false;
}

static bool returns_only(CXCursor s) {
  s = az_strip(s);
  if (kind(s) == CXCursor_CompoundStmt) {
    Kids k = kids(s);
    return k.n == 1 && kind(k.v[0]) == CXCursor_ReturnStmt && !kids(k.v[0]).n;
  }
  return kind(s) == CXCursor_ReturnStmt && !kids(s).n;
}

// True in one thread of every row's owner: threadIdx.x == 0 with a block per
// row, lane == 0 with a warp (either order), also && tests of pointers
// against null.
static bool first_thread_test(Row *w, CXCursor c) {
  CXCursor a, b;
  if (az_is_binary(&w->az, c, "&&", &a, &b))
    return (first_thread_test(w, a) && null_test(w, b)) || (null_test(w, a) && first_thread_test(w, b));
  return w->group != GROUP_THREAD && az_first_thread(&w->az, c, w->group == GROUP_WARP);
}

static void if_stmt(Row *w, CXCursor s) {
  Kids k = kids(s);
  int in;
  if (k.n == 2 && rows_test(w, k.v[0], &in)) {
    // The rows test: its early return or its body covers the kernel's rows
    // (and with a warp or a thread per row, stops the extra ones).
    if (returns_only(k.v[1])) {
      w->guarded |= in < 0 && w->cond == 0 && w->helper_depth == 0;
    } else {
      w->in_guard += in > 0;
      walk(w, k.v[1]);
      w->in_guard -= in > 0;
    }
    return;
  }
  walk(w, k.v[0]);
  bool first = k.n == 2 && first_thread_test(w, k.v[0]);
  w->cond++;
  w->one_thread += first;
  for (int i = 1; i < k.n; i++) walk(w, k.v[i]);
  w->one_thread -= first;
  w->cond--;
}

static bool helper_of_file(const Row *w, CXCursor def) {
  return !clang_Cursor_isNull(def) && clang_isCursorDefinition(def) &&
         fe_in_main_file(w->az.fe, clang_getCursorLocation(def));
}

// The row index used as a value (not as a row's place): the schedule launches
// the kernel on a part of the rows, where blockIdx.x counts from that part's
// first row.
static void row_value(Row *w, CXCursor c) {
  char *t = az_text_of(&w->az, c);
  az_fail(&w->az, c, "kernel '%s' uses its row index '%s' as a value; a row-wise kernel uses it only to find its "
                     "row (row * H + j, [row], a test against the row count), because the schedule runs the kernel "
                     "on a part of the rows, where blockIdx.x counts from the part's first row",
          w->az.launch->kernel, t);
  free(t);
}

// A thread's place in the block used as a value with a warp or a thread per row.
static void moved_position(Row *w, CXCursor c) {
  char *t = az_text_of(&w->az, c);
  az_fail(&w->az, c, "kernel '%s' uses '%s', which depends on where its row runs; with one %s per row the "
                     "schedule runs the kernel on a part of the rows, where a row's %s sits elsewhere in the grid "
                     "(%sblockDim.x may be used)", w->az.launch->kernel, t, w->group == GROUP_WARP ? "warp" : "thread",
          w->group == GROUP_WARP ? "warp" : "thread",
          w->group == GROUP_WARP ? "the lane threadIdx.x % 32 and " : "");
  free(t);
}

// A grid position used as a value with a warp or a thread per row (true when
// c is one): the lane (with a warp per row) and the warps of a block are the
// same wherever the row runs; the row, the warp and the thread are not.
static bool position(Row *w, CXCursor c) {
  AzPlace d = az_place(&w->az, c);
  Builtin b = az_builtin(&w->az, c);
  if (d == PLACE_NONE && b != B_BLOCKIDX_X && b != B_THREADIDX_X) return false;
  if (d == PLACE_WARPS || (d == PLACE_LANE && w->group == GROUP_WARP)) return true;
  if (d == row_kind(w) || b == B_BLOCKIDX_X) {
    is_row(w, c);
    row_value(w, c);
  } else {
    moved_position(w, c);
  }
  return true;
}

static bool named_in(const char *name, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(name, list[i]) == 0) return true;
  return false;
}

// A call through which threads of a block exchange values: block-wide with a
// warp per row (rows share the block), any with a thread per row.
static bool couples_threads(const Row *w, const char *name) {
  static const char *const block[] = {"__syncthreads", "__syncthreads_count", "__syncthreads_and",
                                      "__syncthreads_or"};
  static const char *const warp[] = {"__ballot_sync", "__any_sync", "__all_sync", "__activemask", "__syncwarp",
                                     "tiled_partition", "coalesced_threads", "reduce"};
  if (w->group == GROUP_BLOCK) return false;
  if (named_in(name, block, sizeof block / sizeof *block)) return true;
  return w->group == GROUP_THREAD && (strncmp(name, "__shfl", 6) == 0 || strncmp(name, "__match_", 8) == 0 ||
                                      strncmp(name, "__reduce_", 9) == 0 || named_in(name, warp, sizeof warp / sizeof *warp));
}

// A helper the file defines is read as part of the kernel (its accesses,
// barriers and shuffles are the kernel's); a library's (a system header's:
// CUDA, cub, cooperative groups) is known by its name (call). A call coconet
// cannot follow (through a pointer, into a user's header, too deep) is
// refused: the function could couple threads that another part of the rows
// no longer shares, or touch other rows.
static void helper(Row *w, CXCursor c, CXCursor callee) {
  CXCursor def = clang_getCursorDefinition(callee);
  if (clang_Cursor_isNull(callee)) {
    char *t = az_text_of(&w->az, c);
    az_fail(&w->az, c, "kernel '%s' calls through a function pointer in %s; coconet reads the functions a row-wise "
                       "kernel calls and cannot tell which one this is: call it by name", w->az.launch->kernel, t);
    free(t);
  } else if (!clang_Cursor_isNull(def) && clang_isCursorDefinition(def) && !helper_of_file(w, def) &&
             !clang_Location_isInSystemHeader(clang_getCursorLocation(def))) {
    char *name = fe_spelling(callee);
    az_fail(&w->az, c, "kernel '%s' calls '%s', defined in a header of yours; coconet reads the functions a row-wise "
                       "kernel calls only in the file it translates (a helper could touch other rows or meet the "
                       "block's other threads): define it in this file", w->az.launch->kernel, name);
    free(name);
  } else if (helper_of_file(w, def) && w->helper_depth == 4) {
    az_fail(&w->az, c, "kernel '%s': __device__ helpers nest more than 4 deep, past what coconet reads of a row-wise "
                       "kernel", w->az.launch->kernel);
  } else if (helper_of_file(w, def)) {
    w->helper_depth++;
    walk(w, kids(def).last);
    w->helper_depth--;
  }
}

static void call(Row *w, CXCursor c) {
  static const char *const loads[] = {"__ldg", "__ldca", "__ldcg", "__ldcs", "__ldlu", "__ldcv"};
  static const char *const stores[] = {"__stcs", "__stcg", "__stwb", "__stwt"};
  CXCursor callee = az_callee(c);
  char *name = fe_spelling(callee);
  int nargs = clang_Cursor_getNumArguments(c);
  CXCursor base, index;
  bool load = nargs == 1 && named_in(name, loads, sizeof loads / sizeof *loads);
  bool store = nargs == 2 && named_in(name, stores, sizeof stores / sizeof *stores);
  if (w->group != GROUP_BLOCK && position(w, c)) {
    // checked there
  } else if (w->group == GROUP_BLOCK && az_place(&w->az, c) == PLACE_MOVED && strstr(name, "index")) {
    row_value(w, c);  // block.group_index(): blockIdx
  } else if (strcmp(name, "this_grid") == 0 || strcmp(name, "sync") == 0) {
    az_fail(&w->az, c, "kernel '%s' calls %s(): a grid-wide operation couples the rows; coconet cannot run the "
                       "kernel on a part of them", w->az.launch->kernel, name);
  } else if (couples_threads(w, name)) {
    az_fail(&w->az, c, "kernel '%s' runs one %s per row and calls %s(), through which %s; coconet runs the kernel "
                       "on a part of the rows, where different rows share them", w->az.launch->kernel,
            w->group == GROUP_WARP ? "warp" : "thread", name,
            w->group == GROUP_WARP ? "the warps of a block meet" : "threads of a warp exchange values");
  } else if ((load || store) && w->helper_depth == 0 &&
             element_address(w, clang_Cursor_getArgument(c, 0), &base, &index)) {
    // __ldcs(&x[k]), __ldcs(x + k): a read of x[k]; __stcs(x + k, v): a write.
    if (store) walk(w, clang_Cursor_getArgument(c, 1));
    element_access(w, c, base, index, store, load);
  } else {
    walk_kids(w, c);
    helper(w, c, callee);
  }
  free(name);
}

static void member(Row *w, CXCursor c) {
  if (clang_getCanonicalType(clang_getCursorType(c)).kind == CXType_Pointer) {
    char *t = az_text_of(&w->az, c);
    az_fail(&w->az, c, "kernel '%s' uses pointer member %s; a row-wise kernel reaches global memory only through its "
                       "pointer parameters, whose accesses coconet checks", w->az.launch->kernel, t);
    free(t);
    return;
  }
  char *t = compact_text(w, c);
  if (w->group != GROUP_BLOCK && strncmp(t, "threadIdx.", 10) == 0)
    moved_position(w, c);
  else if (strncmp(t, "gridDim", 7) == 0 || (strncmp(t, "blockIdx.", 9) == 0 && strcmp(t, "blockIdx.x") != 0))
    az_fail(&w->az, c, "kernel '%s' reads %s; a row-wise kernel is one block per row along blockIdx.x, and the "
                       "schedule changes the grid", w->az.launch->kernel, t);
  else if (strcmp(t, "blockIdx.x") == 0)
    row_value(w, c);  // in a helper too: there it can only be a value
  free(t);
  walk_kids(w, c);
}

static void decl_ref(Row *w, CXCursor c) {
  CXCursor d = clang_getCursorReferenced(c);
  char *name = fe_spelling(d);
  if (w->group != GROUP_BLOCK && position(w, c)) {
    // checked there
  } else if (w->helper_depth == 0 && (is_pointer_param(w, d) || in_list(w->aliases, w->naliases, d))) {
    az_fail(&w->az, c, "kernel '%s' uses pointer '%s' other than by an element of its block's row ([row * H + j]), "
                       "a column ([j]) or the row's own element ([row]); coconet cannot prove which rows it "
                       "touches", w->az.launch->kernel, name);
  } else if (w->helper_depth == 0 && (in_list(w->rowoffs, w->nrowoffs, d) ||
                                      (builtin_local(w, d) && is_row(w, c)))) {
    row_value(w, c);
  } else if (w->helper_depth == 0 && !clang_Cursor_isNull(w->rows) && same(d, w->rows)) {
    az_fail(&w->az, c, "kernel '%s' uses '%s' other than in a test of the row (`row < %s`); the schedule runs the "
                       "kernel on a part of the rows and passes their count there", w->az.launch->kernel, name, name);
  } else if (kind(d) == CXCursor_VarDecl && clang_getCursorSemanticParent(d).kind == CXCursor_TranslationUnit &&
             !clang_isConstQualifiedType(clang_getCursorType(d)) && !az_is_shared(d)) {  // extern __shared__: the block's
    az_fail(&w->az, c, "kernel '%s' uses file-scope variable '%s'; a row-wise kernel keeps to its block's row, "
                       "and blocks sharing a variable are not proven to", w->az.launch->kernel, name);
  }
  free(name);
}

// `T *p = x + row * H;`, `T *p = &x[row * H];`, `int off = row * H;`.
static bool row_local(Row *w, CXCursor var) {
  Kids init = kids(var);
  if (!init.n) return false;
  // With a warp or a thread per row: the lane, the warp, the row, checked where they are used.
  if (w->group != GROUP_BLOCK && (derived_local(w, var) || builtin_local(w, var))) return true;
  CXCursor e = az_strip(init.last);
  if (builtin_local(w, var) && is_row(w, e)) return true;  // int row = blockIdx.x;
  if (az_is_integer_var(var) && w->nrowoffs < ROW_MAX && is_row_offset(w, e)) {
    w->rowoffs[w->nrowoffs++] = var;
    return true;
  }
  if (!az_is_pointer(var) || w->naliases == ROW_MAX) return false;
  CXCursor a, b, base = clang_getNullCursor();
  if (az_is_binary(&w->az, e, "+", &a, &b)) {
    if (is_row_offset(w, b)) base = ref_decl(a);
    else if (is_row_offset(w, a)) base = ref_decl(b);
  } else if (kind(e) == CXCursor_UnaryOperator && kids(e).n == 1 &&
             kind(az_strip(kids(e).v[0])) == CXCursor_ArraySubscriptExpr) {
    Kids s = kids(az_strip(kids(e).v[0]));
    if (s.n == 2 && is_row_offset(w, s.last)) base = ref_decl(s.v[0]);
  }
  if (clang_Cursor_isNull(base) || !is_pointer_param(w, base)) return false;
  w->alias_of[w->naliases] = base;
  w->aliases[w->naliases++] = var;
  return true;
}

// `for (int row = blockIdx.x; row < rows; row += gridDim.x) BODY`: its variable, or null.
static CXCursor row_loop_var(Row *w, CXCursor f) {
  CXCursor none = clang_getNullCursor(), a, b, lhs, rhs;
  Kids k = kids(f);
  if (kind(f) != CXCursor_ForStmt || k.n != 4 || kind(k.v[0]) != CXCursor_DeclStmt) return none;
  Kids d = kids(k.v[0]);
  if (d.n != 1 || !builtin_local(w, d.v[0]) || az_builtin(&w->az, kids(d.v[0]).last) != B_BLOCKIDX_X) return none;
  CXCursor var = d.v[0], rows = clang_getNullCursor();
  if (az_is_binary(&w->az, k.v[1], "<", &a, &b) && same(ref_decl(a), var)) rows = ref_decl(b);
  if (clang_Cursor_isNull(rows) || !is_param(w, rows) || az_is_pointer(rows)) return none;
  char *op = NULL;
  if (!az_is_assignment(&w->az, k.v[2], &lhs, &rhs, &op)) return none;
  char *step = compact_text(w, az_strip(rhs));
  bool stride = strcmp(op, "+=") == 0 && same(ref_decl(lhs), var) && strcmp(step, "gridDim.x") == 0;
  free(op);
  free(step);
  return stride ? var : none;
}

// A block per row through a grid-stride loop over the rows at the kernel's
// top level: inside the loop its variable is the row (blockIdx.x is not); the
// loop's test is the rows test; its step, gridDim.x, is the only gridDim the
// kernel may read. The schedule launches a block per row of a part, so each
// block runs the loop once, as a kernel of one block per row.
static enum CXChildVisitResult row_loop_child(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Row *w = data;
  CXCursor var = row_loop_var(w, c);
  if (clang_Cursor_isNull(var)) return CXChildVisit_Continue;
  w->row_loop = c;
  w->row_var = var;
  return CXChildVisit_Break;
}

static void find_row_loop(Row *w, CXCursor body) {
  if (w->group == GROUP_BLOCK) clang_visitChildren(body, row_loop_child, w);
}

static void row_loop(Row *w, CXCursor f) {
  Kids k = kids(f);
  int in;
  w->in_row_loop = true;
  rows_test(w, k.v[1], &in);
  walk(w, k.v[3]);
  w->in_row_loop = false;
}

static void walk(Row *w, CXCursor c) {
  if (row_failed(w)) return;
  CXCursor lhs, rhs;
  char *op = NULL;
  switch (kind(c)) {
  case CXCursor_VarDecl:
    if (w->group != GROUP_BLOCK && az_is_shared(c)) {
      char *name = fe_spelling(c);
      az_fail(&w->az, c, "kernel '%s' runs one %s per row and declares shared memory '%s', which the rows of a block "
                         "share; coconet runs the kernel on a part of the rows, where different rows share a block",
              w->az.launch->kernel, w->group == GROUP_WARP ? "warp" : "thread", name);
      free(name);
      return;
    }
    if (w->helper_depth == 0 && row_local(w, c)) return;
    walk_kids(w, c);
    return;
  case CXCursor_ForStmt:
    if (w->helper_depth == 0 && !clang_Cursor_isNull(w->row_loop) && same(c, w->row_loop)) {
      row_loop(w, c);
      return;
    }
    if (w->helper_depth == 0 && column_loop(w, c)) return;
    w->cond++;
    walk_kids(w, c);
    w->cond--;
    return;
  case CXCursor_WhileStmt: case CXCursor_DoStmt: case CXCursor_SwitchStmt: case CXCursor_ConditionalOperator:
    w->cond++;
    walk_kids(w, c);
    w->cond--;
    return;
  case CXCursor_IfStmt: if_stmt(w, c); return;
  case CXCursor_ReturnStmt: case CXCursor_BreakStmt: case CXCursor_ContinueStmt: case CXCursor_GotoStmt:
    if (w->helper_depth == 0) w->irregular = true;
    walk_kids(w, c);
    return;
  case CXCursor_ArraySubscriptExpr:
    if (w->helper_depth == 0 && global_subscript(w, c)) subscript(w, c, false, true);
    else walk_kids(w, c);
    return;
  case CXCursor_CallExpr:
    if (az_is_assignment(&w->az, c, &lhs, &rhs, &op)) break;
    call(w, c);
    return;
  case CXCursor_BinaryOperator: case CXCursor_CompoundAssignOperator: {
    if (az_is_assignment(&w->az, c, &lhs, &rhs, &op)) break;
    if (w->group != GROUP_BLOCK && position(w, c)) return;
    if (w->helper_depth == 0 && null_test(w, c)) return;
    int in;
    if (w->helper_depth == 0 && rows_test(w, c, &in)) return;
    CXCursor a, b;
    // The right operand of && and || runs only sometimes.
    bool lazy = az_is_binary(&w->az, c, "&&", &a, &b) || az_is_binary(&w->az, c, "||", &a, &b);
    w->cond += lazy;
    walk_kids(w, c);
    w->cond -= lazy;
    return;
  }
  case CXCursor_UnaryOperator: {
    Kids k = kids(c);
    char *o = k.n ? az_unary_op(&w->az, c, k.v[0]) : strdup("");
    CXCursor operand = k.n == 1 ? ref_decl(k.v[0]) : clang_getNullCursor();
    if (k.n == 1 && (strstr(o, "++") || strstr(o, "--"))) assigned(w, k.v[0], true, c);
    else if (w->helper_depth == 0 && strchr(o, '&') && !clang_Cursor_isNull(operand) && tracked(w, operand)) {
      char *name = fe_spelling(operand);
      az_fail(&w->az, c, "kernel '%s' takes the address of '%s'; a row-wise kernel's row, columns, row length, "
                         "row pointers and parameters are not reached through pointers", w->az.launch->kernel, name);
      free(name);
    }
    else if (k.n == 1 && w->helper_depth == 0 && global_subscript(w, k.v[0]))
      az_fail(&w->az, c, "kernel '%s' takes the address of an element of a global buffer (%s); coconet cannot "
                         "follow where it is used", w->az.launch->kernel, o);
    else walk_kids(w, c);
    free(o);
    return;
  }
  case CXCursor_MemberRefExpr: member(w, c); return;
  case CXCursor_DeclRefExpr: decl_ref(w, c); return;
  default: walk_kids(w, c); return;
  }
  // An assignment: x = e, x op= e.
  bool read = strcmp(op, "=") != 0;
  free(op);
  walk(w, rhs);
  assigned(w, lhs, read, c);
}

// Two accesses of one buffer: the same parameter, or two passed the same pointer.
static bool same_buffer(const Row *w, const Access *a, const Access *b) {
  if (same(a->param, b->param)) return true;
  const char *x = az_launch_arg(&w->az, a->param), *y = az_launch_arg(&w->az, b->param);
  if (!x || !y) return true;
  while (*x || *y) {
    if (*x == ' ') x++;
    else if (*y == ' ') y++;
    else if (*x++ != *y++) return false;
  }
  return true;
}

// The checks that need every access: one buffer not read across rows where it
// is written, the row length known, the rows covered.
static void check_accesses(Row *w, CXCursor kernel) {
  bool writes = false;
  for (int i = 0; i < w->nacc && !row_failed(w); i++) {
    const Access *a = &w->acc[i];
    writes |= a->write;
    if (az_buffer_type(&w->az, a->param, a->at) == IR_VOID) break;
    for (int j = 0; j < i && !a->write; j++) {
      const Access *b = &w->acc[j];
      if (!same_buffer(w, a, b) || b->use == a->use || b->write) continue;
      char *t = az_text_of(&w->az, a->at), *u = az_text_of(&w->az, b->at);
      az_fail(&w->az, a->at, "kernel '%s' reads %s and %s: one buffer both per row and per column (or per row "
                             "element); coconet moves a buffer's pointer to the first row of a slice, or leaves it",
              w->az.launch->kernel, u, t);
      free(t);
      free(u);
      break;
    }
    for (int j = 0; j < w->nacc && a->write; j++) {
      const Access *b = &w->acc[j];
      if (!same_buffer(w, a, b) || b->use == a->use) continue;
      char *t = az_text_of(&w->az, b->at), *u = az_text_of(&w->az, a->at);
      if (b->use == USE_COL)
        az_fail(&w->az, b->at, "kernel '%s' reads %s, outside its block's row, of a buffer it writes (%s): rows "
                               "would depend on each other", w->az.launch->kernel, t, u);
      else
        az_fail(&w->az, b->at, "kernel '%s' %s %s and writes %s: one buffer both per row element ([row * H + j]) "
                               "and per row ([row]); coconet splits a buffer in rows of H elements or of one",
                w->az.launch->kernel, b->write ? "writes" : "reads", t, u);
      free(t);
      free(u);
      break;
    }
  }
  if (!row_failed(w) && (!writes || clang_Cursor_isNull(w->h)))
    az_fail(&w->az, kernel, "kernel '%s' writes no row of a buffer at [row * H + j]; it is not a row-wise kernel",
            w->az.launch->kernel);
}

// The op, built once every check has passed.
static IrOp *row_op(Row *w, IrRegion *ir, const Stmt *s, IrSize *rows) {
  const Launch *l = s->launch;
  const Az *az = &w->az;
  char *kernel = l->template_args ? ir_printf(ir, "%s<%s>", l->kernel, l->template_args) : ir_strdup(ir, l->kernel);
  char *args = ir_strdup(ir, ""), *roles = ir_alloc(ir, (size_t)l->nargs + 1);
  for (int i = 0; i < l->nargs; i++) {
    args = ir_printf(ir, "%s%s%s", args, i ? ", " : "", l->args[i].text);
    roles[i] = 'x';
  }
  int n = clang_Cursor_getNumArguments(az->kernel);
  for (int i = 0; i < n && i < l->nargs; i++)
    if (!clang_Cursor_isNull(w->rows) && same(clang_Cursor_getArgument(az->kernel, (unsigned)i), w->rows)) roles[i] = 'r';
    else if (!clang_Cursor_isNull(w->stride) && same(clang_Cursor_getArgument(az->kernel, (unsigned)i), w->stride))
      roles[i] = 's';
  for (int i = 0; i < w->nacc; i++) {
    const Access *a = &w->acc[i];
    bool null = in_list(w->nulls, w->nnulls, a->param);
    if (a->use != USE_COL) roles[az_param_position(az, a->param)] = a->use == USE_ROW ? (null ? 'P' : 'p') : (null ? 'O' : 'o');
  }
  IrSize *h = ir_size_parse(ir, az_launch_arg(az, w->h));
  IrPointwise info = {
      .kernel = kernel, .grid = l->grid.text, .block = l->block.text,
      .shmem = l->shmem.text ? l->shmem.text : "0", .stream = l->stream.text ? l->stream.text : "0",
      .args_text = args, .count = ir_size_mul(ir, rows, h), .row = h, .row_roles = roles, .row_loc = w->row_loc,
      .row_threads = w->group == GROUP_WARP ? 32 : w->group == GROUP_THREAD ? 1 : 0,
  };
  IrOp *op = ir_op_pointwise(ir, s->range, &info);
  for (int i = 0; i < n && i < l->nargs; i++) {
    CXCursor p = clang_Cursor_getArgument(az->kernel, (unsigned)i);
    if (roles[i] == 'x' && !az_is_pointer(p)) {
      char *name = fe_spelling(p);
      ir_pw_param(ir, op, name, az_type_of(clang_getCursorType(p)), l->args[i].text);
      free(name);
    }
  }
  for (int i = 0; i < w->nacc; i++) {
    const Access *a = &w->acc[i];
    int at = az_param_position(az, a->param);
    SrcLoc loc = fe_loc(az->fe, clang_getCursorLocation(a->at));
    IrIndexKind index = a->use == USE_ROW ? IR_IDX_I : a->use == USE_COL ? IR_IDX_MOD : IR_IDX_DIV;
    IrSize *count = a->use == USE_ROW ? op->pw.count : a->use == USE_COL ? h : rows;
    IrTensor *t = ir_tensor_get_or_add(ir, l->args[at].text, az_buffer_type(&w->az, a->param, a->at), count, loc);
    if (a->read || a->partial) {
      IrUse *u = ir_use_add(ir, &op->reads, t, loc);
      bool first = u->expr == NULL;
      if (first || index > u->index) {
        u->index = index;
        u->expr = index == IR_IDX_I ? ir_expr_read(ir, t, IR_IDX_I, NULL) : ir_expr_read(ir, t, index, h);
      }
    }
    if (a->write) ir_use_add(ir, &op->writes, t, loc)->index = index;
  }
  return op;
}

// Who owns a row, from the first row of a warp or of a thread the body computes (a block if none).
static enum CXChildVisitResult group_child(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Row *w = data;
  if (kind(c) != CXCursor_BinaryOperator) return CXChildVisit_Recurse;
  AzPlace d = az_place(&w->az, c);
  if (d == PLACE_WARP_ROW || d == PLACE_THREAD_ROW) {
    w->group = d == PLACE_WARP_ROW ? GROUP_WARP : GROUP_THREAD;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

static bool top_level_comma(const char *t) {
  int depth = 0;
  for (; *t; t++) {
    depth += *t == '(' || *t == '[' ? 1 : *t == ')' || *t == ']' ? -1 : 0;
    if (*t == ',' && depth == 0) return true;
  }
  return false;
}

// With a warp or a thread per row the launch as written has a grid that
// reaches every row (the generated code checks it, using the grid and block
// as numbers: a dim3 there does not compile), and the translation launches
// blocks enough for a slice's rows: the extra warps or threads stop at the
// rows test (every access is after it, so there is one). A comma inside
// parentheses is a call's (CEIL_DIV(N * 32, 256)).
static void check_group_launch(Row *w) {
  const Launch *l = w->az.launch;
  const char *who = w->group == GROUP_WARP ? "warp" : "thread";
  const char *texts[] = {l->grid.text, l->block.text};
  for (int i = 0; i < 2; i++)
    if (!texts[i] || strchr(texts[i], '{') || top_level_comma(texts[i]) || strstr(texts[i], "dim3"))
      az_fail(&w->az, w->az.kernel, "kernel '%s' runs one %s per row, but the launch's %s '%s' is not a number of "
                                    "%s; coconet computes the grid of a slice from a one-dimensional block",
              l->kernel, who, i ? "block" : "grid", texts[i] ? texts[i] : "", i ? "threads" : "blocks");
  if (!row_failed(w) && w->group == GROUP_WARP && w->az.block_x > 0 && w->az.block_x % 32)
    az_fail(&w->az, w->az.kernel, "kernel '%s' runs one warp per row with blocks of %lld threads, not whole warps; "
                                  "the last warp of every block would share a row with the next block's first",
            l->kernel, w->az.block_x);
}

IrOp *analyze_rowwise(const Frontend *fe, IrRegion *ir, const Stmt *s, bool *rowish, char **why, SrcLoc *why_loc) {
  const Launch *l = s->launch;
  const KernelDef *def = l->def;
  bool instance = def->is_template && def->inst_fe;
  Row w = {.az = {.fe = instance ? def->inst_fe : fe, .region_fe = fe, .ir = ir, .launch = l,
                  .kernel = instance ? def->inst : def->cursor},
           .h = clang_getNullCursor(), .rows = clang_getNullCursor(), .stride = clang_getNullCursor(),
           .row_loop = clang_getNullCursor(), .row_var = clang_getNullCursor()};
  // A constant the launch's block size equals stands for blockDim.x (a column loop's step).
  w.az.block_x = launch_block_x(fe, s);
  *why = NULL;
  Kids k = kids(w.az.kernel);
  CXCursor body = k.n ? k.last : clang_getNullCursor();
  if (def->is_template && !instance) {
    az_fail(&w.az, def->cursor, "%s", def->why ? def->why : "kernel template: no instance");
  } else if (kind(body) != CXCursor_CompoundStmt) {
    az_fail(&w.az, w.az.kernel, "kernel '%s' has no body", l->kernel);
  } else {
    clang_visitChildren(body, group_child, &w);
    find_row_loop(&w, body);
    walk(&w, body);
  }
  if (!row_failed(&w) && !w.saw_row) az_fail(&w.az, w.az.kernel, "kernel '%s' has no row index (blockIdx.x)", l->kernel);
  if (!row_failed(&w)) check_accesses(&w, w.az.kernel);
  if (!row_failed(&w) && !clang_Cursor_isNull(w.rows) && !clang_Cursor_isNull(w.stride) && same(w.rows, w.stride)) {
    char *name = fe_spelling(w.stride);
    az_fail(&w.az, w.rows, "kernel '%s' uses '%s' as both its row count and a row stride; the schedule passes a "
                           "slice's row count, which would change the stride too", l->kernel, name);
    free(name);
  }
  if (!row_failed(&w) && !clang_Cursor_isNull(w.rows) && same(w.rows, w.h)) {
    char *name = fe_spelling(w.h);
    az_fail(&w.az, w.rows, "kernel '%s' uses '%s' as both its row count and its row length; the schedule passes a "
                           "slice's row count, which would change the row length too", l->kernel, name);
    free(name);
  }
  if (!row_failed(&w) && l->wrapper)
    az_fail(&w.az, w.az.kernel, "kernel '%s' is row-wise, but launched through host function '%s'; coconet rewrites a "
                                "row-wise launch only where it is written", l->kernel, l->wrapper);
  IrOp *op = NULL;
  if (!row_failed(&w) && w.group != GROUP_BLOCK) {
    check_group_launch(&w);
    if (!row_failed(&w)) op = row_op(&w, ir, s, ir_size_parse(ir, az_launch_arg(&w.az, w.rows)));
  } else if (!row_failed(&w) && !clang_Cursor_isNull(w.row_loop)) {
    op = row_op(&w, ir, s, ir_size_parse(ir, az_launch_arg(&w.az, w.rows)));  // any grid covers the rows
  } else if (!row_failed(&w)) {
    const char *rows_text = clang_Cursor_isNull(w.rows) ? l->grid.text : az_launch_arg(&w.az, w.rows);
    // Without a rows test the grid is the row count: through a local (`dim3 grid(num_tokens)`), in the
    // terms of the launch argument it equals.
    for (int i = 0; clang_Cursor_isNull(w.rows) && i < l->nargs; i++)
      if (!strchr(l->args[i].text, '(') && launch_grid_is_arg(fe, s, i)) {
        rows_text = l->args[i].text;
        break;
      }
    IrSize *rows = rows_text ? ir_size_parse(ir, rows_text) : NULL;
    // (the grid's text is parsed into the IR only when it names the rows, or it would add a variable)
    bool grid_is_rows = rows && (clang_Cursor_isNull(w.rows) ? rows_text != l->grid.text
                                                             : launch_grid_is_arg(fe, s, az_param_position(&w.az, w.rows)));
    if (rows && !grid_is_rows)
      grid_is_rows = !strchr(l->grid.text, '(') && !strchr(l->grid.text, '{') &&
                     ir_size_equal(rows, ir_size_parse(ir, l->grid.text));
    if (!grid_is_rows)
      az_fail(&w.az, w.az.kernel, "kernel '%s' is row-wise (one block per row), but the launch's grid '%s' is not "
                                  "its row count%s%s%s; coconet runs one block per row of a slice",
              l->kernel, l->grid.text, clang_Cursor_isNull(w.rows) ? "" : " '",
              clang_Cursor_isNull(w.rows) ? "" : rows_text, clang_Cursor_isNull(w.rows) ? "" : "'");
    else
      op = row_op(&w, ir, s, rows);
  }
  // A kernel over threads that fails here may be a pointwise kernel: its rows
  // show only in an access of a row element.
  *rowish = w.group == GROUP_THREAD ? w.row_elements
                                    : w.group == GROUP_WARP || w.ncols > 0 || w.saw_row || !clang_Cursor_isNull(w.row_loop);
  if (row_failed(&w)) {
    *why = w.az.why;
    *why_loc = w.az.why_loc;
    return NULL;
  }
  return op;
}
