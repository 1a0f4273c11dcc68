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
#include "analyze_impl.h"
#include "common/cuda_names.h"

#include <stdlib.h>
#include <string.h>


// The text of c without its blanks ("gridDim . x" -> "gridDim.x"; malloc'd).
static char *compact_text(Row *w, CXCursor c) {
  char *t = az_text_of(&w->az, c), *d = t;
  for (const char *p = t; *p; p++)
    if (*p != ' ' && *p != '\t' && *p != '\n') *d++ = *p;
  *d = '\0';
  return t;
}

bool row_in_list(const CXCursor *v, int n, CXCursor c) {
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
  return !clang_Cursor_isNull(d) && row_in_list(w->cols, w->ncols, d);
}
static int col_index(const Row *w, CXCursor c) {
  CXCursor d = ref_decl(c);
  for (int i = 0; i < w->ncols && !clang_Cursor_isNull(d); i++)
    if (same(w->cols[i], d)) return i;
  return -1;
}

// H, the row length: the parameter every column loop and row offset names.
// The parameter a local of the kernel stands for: `int H = hidden;` (or a
// cast of it), never assigned after; else d itself.
static CXCursor param_alias(const Row *w, CXCursor d) {
  if (clang_Cursor_isNull(d) || kind(d) != CXCursor_VarDecl || !same(clang_getCursorSemanticParent(d), w->az.kernel))
    return d;
  Kids init = kids(d);
  if (!init.n || !never_assigned(w->az.fe, d)) return d;
  CXCursor e = az_strip(init.last);
  while (kind(e) == CXCursor_CStyleCastExpr || kind(e) == CXCursor_CXXStaticCastExpr) e = az_strip(kids(e).last);
  CXCursor p = ref_decl(e);
  return !clang_Cursor_isNull(p) && is_param(w, p) ? p : d;
}

static bool is_h(Row *w, CXCursor c) {
  CXCursor d = param_alias(w, ref_decl(c));
  if (clang_Cursor_isNull(d) || !is_param(w, d) || !az_is_integer_var(d)) return false;
  if (clang_Cursor_isNull(w->h)) w->h = d;
  return same(w->h, d);
}

// A row stride parameter other than the row length (vLLM's input_stride):
// rows split in rows of H are the kernel's rows only when it equals H, which
// the generated code checks.
static bool is_stride(Row *w, CXCursor c) {
  CXCursor d = param_alias(w, ref_decl(c));
  if (clang_Cursor_isNull(d) || clang_Cursor_isNull(w->h) || !is_param(w, d) || !az_is_integer_var(d) || same(d, w->h))
    return false;
  if (clang_Cursor_isNull(w->stride)) w->stride = d;
  return same(w->stride, d);
}

// row * H (either order; or row * S, S a row stride), or a local holding it.
static bool is_row_offset(Row *w, CXCursor c) {
  CXCursor d = ref_decl(c);
  if (!clang_Cursor_isNull(d) && row_in_list(w->rowoffs, w->nrowoffs, d)) return true;
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


static enum CXChildVisitResult walk_child(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Row *w = data;
  if (row_failed(w)) return CXChildVisit_Break;
  row_walk(w, c);
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
  bool element = is_row_element(w, index, &col) || row_in_list(w->rowelems, w->nrowelems, ref_decl(index));
  w->row_elements |= element;
  if (element) add_access(w, base, USE_ROW, write, read, s);
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
  return !clang_Cursor_isNull(d) && (is_pointer_param(w, d) || row_in_list(w->aliases, w->naliases, d));
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
  if (!row_in_list(w->nulls, w->nnulls, p) && w->nnulls < ROW_MAX) w->nulls[w->nnulls++] = p;
  return true;
}

// A name the kernel's row ownership rests on: assigning it is refused. A
// local holding a constant the block size equals is not one: it stands for
// blockDim.x only while never assigned (az_builtin).
static bool builtin_local(const Row *w, CXCursor d) {
  Kids init = kids(d);
  long long v;
  return kind(d) == CXCursor_VarDecl && az_is_integer_var(d) && init.n && !az_int_constant(init.last, &v) &&
         !row_in_list(w->strided, w->nstrided, d) && az_builtin(&w->az, init.last) != B_NONE;
}

// c names (through locals' initial values) the variable of a loop from
// threadIdx.x to a constant, which moves past threadIdx.x.
static bool via_strided(const Row *w, CXCursor c, int depth) {
  c = az_uncast(c);
  if (depth > 8 || kind(c) != CXCursor_DeclRefExpr) return false;
  CXCursor d = clang_getCursorReferenced(c);
  Kids init = kids(d);
  return row_in_list(w->strided, w->nstrided, d) ||
         (kind(d) == CXCursor_VarDecl && init.n && via_strided(w, init.last, depth + 1));
}

static bool tracked(const Row *w, CXCursor d) {
  return row_in_list(w->cols, w->ncols, d) || row_in_list(w->rowoffs, w->nrowoffs, d) ||
         row_in_list(w->rowelems, w->nrowelems, d) ||
         row_in_list(w->aliases, w->naliases, d) || is_param(w, d) || builtin_local(w, d) ||
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
  row_walk(w, lhs);
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
    if (az_int_constant(b, &bound)) return false;
    // A loop over the row's columns to another bound (`j < H - 1`): say so here, not
    // later where its step assigns the column.
    char *t = az_text_of(&w->az, b), *h = clang_Cursor_isNull(w->h) ? NULL : fe_spelling(w->h);
    az_fail(&w->az, b, "kernel '%s': the column loop runs to '%s', not to the row length%s%s%s: a row-wise kernel's "
                       "column loops run to the row length, a parameter (j < H), so that each row is computed whole",
            w->az.launch->kernel, t, h ? " '" : "", h ? h : "", h ? "'" : "");
    free(t);
    free(h);
    return true;
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
  row_walk(w, k.v[3]);
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
      row_walk(w, k.v[1]);
      w->in_guard -= in > 0;
    }
    return;
  }
  row_walk(w, k.v[0]);
  bool first = k.n == 2 && first_thread_test(w, k.v[0]);
  w->cond++;
  w->one_thread += first;
  for (int i = 1; i < k.n; i++) row_walk(w, k.v[i]);
  w->one_thread -= first;
  w->cond--;
}

static bool helper_of_user(const Row *w, CXCursor def) {
  return !clang_Cursor_isNull(def) && clang_isCursorDefinition(def) &&
         fe_in_user_code(w->az.fe, clang_getCursorLocation(def));
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

// A call through which threads of a block exchange values: block-wide with a
// warp per row (rows share the block), any with a thread per row.
static bool couples_threads(const Row *w, const char *name) {
  if (w->group == GROUP_BLOCK) return false;
  if (cuda_name_in(name, CUDA_BLOCK_BARRIERS)) return true;
  return w->group == GROUP_THREAD && (strncmp(name, "__shfl", 6) == 0 || strncmp(name, "__match_", 8) == 0 ||
                                      strncmp(name, "__reduce_", 9) == 0 || cuda_name_in(name, CUDA_WARP_CALLS));
}

// A helper the file defines is read as part of the kernel (its accesses,
// barriers and shuffles are the kernel's); a library's (a system header's:
// CUDA, cub, cooperative groups) is known by its name (call). A call coconet
// cannot follow (through a pointer, too deep) is
// refused: the function could couple threads that another part of the rows
// no longer shares, or touch other rows.
static void helper(Row *w, CXCursor c, CXCursor callee) {
  CXCursor def = clang_getCursorDefinition(callee);
  if (clang_Cursor_isNull(callee)) {
    char *t = az_text_of(&w->az, c);
    az_fail(&w->az, c, "kernel '%s' calls through a function pointer in %s; coconet reads the functions a row-wise "
                       "kernel calls and cannot tell which one this is: call it by name", w->az.launch->kernel, t);
    free(t);
  } else if (helper_of_user(w, def) && w->helper_depth == 4) {
    az_fail(&w->az, c, "kernel '%s': __device__ helpers nest more than 4 deep, past what coconet reads of a row-wise "
                       "kernel", w->az.launch->kernel);
  } else if (helper_of_user(w, def)) {
    w->helper_depth++;
    row_walk(w, kids(def).last);
    w->helper_depth--;
  }
}

static void call(Row *w, CXCursor c) {
  CXCursor callee = az_callee(c);
  char *name = fe_spelling(callee);
  int nargs = clang_Cursor_getNumArguments(c);
  CXCursor base, index;
  bool load = nargs == 1 && cuda_name_in(name, CUDA_CACHE_LOADS);
  bool store = nargs == 2 && cuda_name_in(name, CUDA_CACHE_STORES);
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
    if (store) row_walk(w, clang_Cursor_getArgument(c, 1));
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
  } else if (w->helper_depth == 0 && (is_pointer_param(w, d) || row_in_list(w->aliases, w->naliases, d))) {
    az_fail(&w->az, c, "kernel '%s' uses pointer '%s' other than by an element of its block's row ([row * H + j]), "
                       "a column ([j]) or the row's own element ([row]); coconet cannot prove which rows it "
                       "touches", w->az.launch->kernel, name);
  } else if (w->helper_depth == 0 && (row_in_list(w->rowoffs, w->nrowoffs, d) ||
                                      row_in_list(w->rowelems, w->nrowelems, d) ||
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

// `T *p = x + row * H;`, `T *p = &x[row * H];`, `int off = row * H;`, `int id = row * H + j;`.
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
  int col;
  if (az_is_integer_var(var) && w->nrowelems < ROW_MAX && is_row_element(w, e, &col)) {  // int id = row * H + j;
    w->rowelems[w->nrowelems++] = var;
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

void row_find_loop(Row *w, CXCursor body) {
  if (w->group == GROUP_BLOCK) clang_visitChildren(body, row_loop_child, w);
}

static void row_loop(Row *w, CXCursor f) {
  Kids k = kids(f);
  int in;
  CXCursor carried = row_carried(w, f, k.v[3]);
  if (!clang_Cursor_isNull(carried)) {
    char *name = fe_spelling(carried);
    az_fail(&w->az, carried, "kernel '%s' writes '%s' in its grid-stride loop over the rows and reads it there "
                             "before assigning it: it carries a value from one row to the block's next, and the "
                             "schedule runs each row in a block of its own; compute it from the row alone",
            w->az.launch->kernel, name);
    free(name);
    return;
  }
  w->in_row_loop = true;
  rows_test(w, k.v[1], &in);
  row_walk(w, k.v[3]);
  w->in_row_loop = false;
}

void row_walk(Row *w, CXCursor c) {
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
  row_walk(w, rhs);
  assigned(w, lhs, read, c);
}
