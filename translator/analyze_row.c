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
//     the __device__ helpers it calls, no file-scope variable it could write.
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
  CXCursor cols[ROW_MAX];   // column loop variables
  int ncols;
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
} Row;

static bool row_failed(const Row *w) { return az_failed(&w->az); }

static bool in_list(const CXCursor *v, int n, CXCursor c) {
  for (int i = 0; i < n; i++)
    if (same(v[i], c)) return true;
  return false;
}

static CXCursor ref_decl(CXCursor c) {
  c = az_strip(c);
  while (kind(c) == CXCursor_CStyleCastExpr || kind(c) == CXCursor_CXXStaticCastExpr ||
         kind(c) == CXCursor_CXXFunctionalCastExpr) {
    Kids k = kids(c);
    if (!k.n) break;
    c = az_strip(k.last);
  }
  return kind(c) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(c) : clang_getNullCursor();
}

static bool is_param(const Row *w, CXCursor d) {
  return kind(d) == CXCursor_ParmDecl && az_param_position(&w->az, d) >= 0;
}
static bool is_pointer_param(const Row *w, CXCursor d) { return is_param(w, d) && az_is_pointer(d); }

static bool is_row(Row *w, CXCursor c) {
  if (az_builtin(&w->az, c) != B_BLOCKIDX_X) return false;
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

// row * H (either order), or a local holding it.
static bool is_row_offset(Row *w, CXCursor c) {
  CXCursor d = ref_decl(c);
  if (!clang_Cursor_isNull(d) && in_list(w->rowoffs, w->nrowoffs, d)) return true;
  CXCursor a, b;
  c = az_strip(c);
  while (kind(c) == CXCursor_CStyleCastExpr || kind(c) == CXCursor_CXXStaticCastExpr) c = az_strip(kids(c).last);
  if (!az_is_binary(&w->az, c, "*", &a, &b)) return false;
  return (is_row(w, a) && is_h(w, b)) || (is_row(w, b) && is_h(w, a));
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
  // One thread of each block writes the row's own element: that covers the row.
  int cond = w->cond - (use == USE_OWN ? w->one_thread : 0);
  bool partial = write && (cond > 0 || w->irregular);
  w->acc[w->nacc++] = (Access){param, use, write, read, partial, at};
}

// t[index] (written and/or read): the access it is, or the reason it is not one.
static void subscript(Row *w, CXCursor s, bool write, bool read) {
  Kids k = kids(s);
  CXCursor base = ref_decl(k.v[0]), index = k.last;
  char *t = az_text_of(&w->az, s);
  for (int i = 0; i < w->naliases; i++) {
    if (!same(w->aliases[i], base)) continue;
    if (is_col(w, index)) add_access(w, w->alias_of[i], USE_ROW, write, read, s);
    else az_fail(&w->az, s, "kernel '%s' accesses %s: a pointer to the block's row is read and written only at a "
                            "column of a threadIdx-strided loop below the row length", w->az.launch->kernel, t);
    free(t);
    return;
  }
  int col;
  if (is_row_element(w, index, &col)) add_access(w, base, USE_ROW, write, read, s);
  else if (is_col(w, index) && !write) add_access(w, base, USE_COL, false, true, s);
  else if (is_row(w, index)) add_access(w, base, USE_OWN, write, read, s);
  else
    az_fail(&w->az, s, "kernel '%s' %s %s; a row-wise kernel %s global memory only at [row * H + j] (its block's row, "
                       "j from a loop `for (j = threadIdx.x; j < H; j += blockDim.x)`)%s", w->az.launch->kernel,
            write ? "writes" : "reads", t, write ? "writes" : "reads", write ? " or [row]" : ", [j] or [row]");
  free(t);
}

static bool global_subscript(const Row *w, CXCursor c) {
  c = az_strip(c);
  if (kind(c) != CXCursor_ArraySubscriptExpr || kids(c).n != 2) return false;
  CXCursor base = ref_decl(kids(c).v[0]);
  return !clang_Cursor_isNull(base) && (is_pointer_param(w, base) || in_list(w->aliases, w->naliases, base));
}

// A name the kernel's row ownership rests on: assigning it is refused.
static bool builtin_local(const Row *w, CXCursor d) {
  Kids init = kids(d);
  return kind(d) == CXCursor_VarDecl && az_is_integer_var(d) && init.n && az_builtin(&w->az, init.last) != B_NONE;
}

static bool tracked(const Row *w, CXCursor d) {
  return in_list(w->cols, w->ncols, d) || in_list(w->rowoffs, w->nrowoffs, d) ||
         in_list(w->aliases, w->naliases, d) || is_param(w, d) || builtin_local(w, d);
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

// for (int j = threadIdx.x; j < H; j += blockDim.x) (any positive step): true
// when it is one; its variable joins the columns.
static bool column_loop(Row *w, CXCursor f) {
  Kids k = kids(f);
  if (k.n != 4 || kind(k.v[0]) != CXCursor_DeclStmt) return false;
  Kids vars = kids(k.v[0]);
  if (vars.n != 1 || !az_is_integer_var(vars.v[0])) return false;
  CXCursor j = vars.v[0];
  Kids init = kids(j);
  if (!init.n || az_builtin(&w->az, init.last) != B_THREADIDX_X) return false;
  CXCursor a, b;
  if (!az_is_binary(&w->az, k.v[1], "<", &a, &b) || !same(ref_decl(a), j) || !is_h(w, b)) return false;
  CXCursor inc = az_strip(k.v[2]), lhs, rhs;
  char *op = NULL;
  bool full = false, ok = false;
  if (az_is_assignment(&w->az, inc, &lhs, &rhs, &op)) {
    if (strcmp(op, "+=") == 0 && same(ref_decl(lhs), j)) {
      // blockDim.x (or the constant the launch's block size equals) covers every column; another
      // positive constant may skip some; anything else is not a column loop.
      full = az_builtin(&w->az, rhs) == B_BLOCKDIM_X;
      CXEvalResult e = full ? NULL : clang_Cursor_Evaluate(rhs);
      ok = full || (e && clang_EvalResult_getKind(e) == CXEval_Int && clang_EvalResult_getAsLongLong(e) > 0);
      if (e) clang_EvalResult_dispose(e);
    }
    free(op);
  } else if (kind(inc) == CXCursor_UnaryOperator) {
    Kids u = kids(inc);
    char *o = u.n ? az_unary_op(&w->az, inc, u.v[0]) : strdup("");
    ok = u.n && strstr(o, "++") && same(ref_decl(u.v[0]), j);
    free(o);
  }
  if (!ok) {
    // The shape of a column loop with a step coconet cannot bound: say so where it is.
    char *t = az_text_of(&w->az, k.v[2]);
    az_fail(&w->az, k.v[2], "kernel '%s': the column loop's step '%s' is neither blockDim.x nor a positive constant; "
                            "coconet cannot tell which columns of the row it reaches", w->az.launch->kernel, t);
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
// the row against the rows parameter (true when c is one).
static bool rows_test(Row *w, CXCursor c) {
  static const char *const ops[] = {"<", ">=", ">", "<="};
  for (int i = 0; i < 4; i++) {
    CXCursor a, b;
    if (!az_is_binary(&w->az, c, ops[i], &a, &b)) continue;
    CXCursor rows = is_row(w, a) ? ref_decl(b) : is_row(w, b) ? ref_decl(a) : clang_getNullCursor();
    if (clang_Cursor_isNull(rows) || !is_param(w, rows) || az_is_pointer(rows)) return false;
    if (!clang_Cursor_isNull(w->rows) && !same(w->rows, rows)) return false;
    w->rows = rows;
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

// threadIdx.x == 0 (either order): true in one thread of every block.
static bool first_thread_test(Row *w, CXCursor c) {
  CXCursor a, b;
  long long v;
  if (!az_is_binary(&w->az, az_strip(c), "==", &a, &b)) return false;
  if (az_builtin(&w->az, b) == B_THREADIDX_X) b = a;
  else if (az_builtin(&w->az, a) != B_THREADIDX_X) return false;
  return az_int_constant(b, &v) && v == 0;
}

static void if_stmt(Row *w, CXCursor s) {
  Kids k = kids(s);
  if (k.n == 2 && rows_test(w, k.v[0])) {
    // The rows test: its early return or its body covers the kernel's rows.
    if (!returns_only(k.v[1])) walk(w, k.v[1]);
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

static void call(Row *w, CXCursor c) {
  CXCursor callee = clang_getCursorReferenced(c);
  char *name = fe_spelling(callee);
  int nargs = clang_Cursor_getNumArguments(c);
  if (strcmp(name, "this_grid") == 0 || strcmp(name, "sync") == 0) {
    az_fail(&w->az, c, "kernel '%s' calls %s(): a grid-wide operation couples the rows; coconet cannot run the "
                       "kernel on a part of them", w->az.launch->kernel, name);
  } else if (strcmp(name, "__ldg") == 0 && nargs == 1 && w->helper_depth == 0) {
    CXCursor a = az_strip(clang_Cursor_getArgument(c, 0));
    Kids k = kids(a);
    if (kind(a) == CXCursor_UnaryOperator && k.n == 1 && global_subscript(w, k.v[0])) subscript(w, az_strip(k.v[0]), false, true);
    else walk_kids(w, c);
  } else {
    walk_kids(w, c);
    CXCursor def = clang_getCursorDefinition(callee);
    if (helper_of_file(w, def) && kind(def) == CXCursor_FunctionDecl && w->helper_depth < 4) {
      w->helper_depth++;
      walk(w, kids(def).last);
      w->helper_depth--;
    }
  }
  free(name);
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

static void member(Row *w, CXCursor c) {
  if (clang_getCanonicalType(clang_getCursorType(c)).kind == CXType_Pointer) {
    char *t = az_text_of(&w->az, c);
    az_fail(&w->az, c, "kernel '%s' uses pointer member %s; a row-wise kernel reaches global memory only through its "
                       "pointer parameters, whose accesses coconet checks", w->az.launch->kernel, t);
    free(t);
    return;
  }
  char *t = az_text_of(&w->az, c), *d = t;
  for (const char *p = t; *p; p++)
    if (*p != ' ' && *p != '\t' && *p != '\n') *d++ = *p;
  *d = '\0';
  if (strncmp(t, "gridDim", 7) == 0 || (strncmp(t, "blockIdx.", 9) == 0 && strcmp(t, "blockIdx.x") != 0))
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
  if (w->helper_depth == 0 && (is_pointer_param(w, d) || in_list(w->aliases, w->naliases, d))) {
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
             !clang_isConstQualifiedType(clang_getCursorType(d))) {
    az_fail(&w->az, c, "kernel '%s' uses file-scope variable '%s'; a row-wise kernel keeps to its block's row, "
                       "and blocks sharing a variable are not proven to", w->az.launch->kernel, name);
  }
  free(name);
}

// `T *p = x + row * H;`, `T *p = &x[row * H];`, `int off = row * H;`.
static bool row_local(Row *w, CXCursor var) {
  Kids init = kids(var);
  if (!init.n) return false;
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

static void walk(Row *w, CXCursor c) {
  if (row_failed(w)) return;
  CXCursor lhs, rhs;
  char *op = NULL;
  switch (kind(c)) {
  case CXCursor_VarDecl:
    if (w->helper_depth == 0 && row_local(w, c)) return;
    walk_kids(w, c);
    return;
  case CXCursor_ForStmt:
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
    if (w->helper_depth == 0 && rows_test(w, c)) return;
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
  if (!row_failed(w) && !writes)
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
  for (int i = 0; i < w->nacc; i++)
    if (w->acc[i].use != USE_COL) roles[az_param_position(az, w->acc[i].param)] = w->acc[i].use == USE_ROW ? 'p' : 'o';
  IrSize *h = ir_size_parse(ir, az_launch_arg(az, w->h));
  IrPointwise info = {
      .kernel = kernel, .grid = l->grid.text, .block = l->block.text,
      .shmem = l->shmem.text ? l->shmem.text : "0", .stream = l->stream.text ? l->stream.text : "0",
      .args_text = args, .count = ir_size_mul(ir, rows, h), .row = h, .row_roles = roles, .row_loc = w->row_loc,
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

IrOp *analyze_rowwise(const Frontend *fe, IrRegion *ir, const Stmt *s, bool *rowish, char **why, SrcLoc *why_loc) {
  const Launch *l = s->launch;
  const KernelDef *def = l->def;
  bool instance = def->is_template && def->inst_fe;
  Row w = {.az = {.fe = instance ? def->inst_fe : fe, .region_fe = fe, .ir = ir, .launch = l,
                  .kernel = instance ? def->inst : def->cursor},
           .h = clang_getNullCursor(), .rows = clang_getNullCursor()};
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
    walk(&w, body);
  }
  if (!row_failed(&w) && !w.saw_row) az_fail(&w.az, w.az.kernel, "kernel '%s' has no row index (blockIdx.x)", l->kernel);
  if (!row_failed(&w)) check_accesses(&w, w.az.kernel);
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
  if (!row_failed(&w)) {
    const char *rows_text = clang_Cursor_isNull(w.rows) ? l->grid.text : az_launch_arg(&w.az, w.rows);
    IrSize *rows = rows_text ? ir_size_parse(ir, rows_text) : NULL;
    if (!rows || !ir_size_equal(rows, ir_size_parse(ir, l->grid.text)) || strchr(l->grid.text, '(') ||
        strchr(l->grid.text, '{'))
      az_fail(&w.az, w.az.kernel, "kernel '%s' is row-wise (one block per row), but the launch's grid '%s' is not "
                                  "its row count%s%s%s; coconet runs one block per row of a slice",
              l->kernel, l->grid.text, clang_Cursor_isNull(w.rows) ? "" : " '",
              clang_Cursor_isNull(w.rows) ? "" : rows_text, clang_Cursor_isNull(w.rows) ? "" : "'");
    else
      op = row_op(&w, ir, s, rows);
  }
  *rowish = w.ncols > 0 || w.saw_row;
  if (row_failed(&w)) {
    *why = w.az.why;
    *why_loc = w.az.why_loc;
    return NULL;
  }
  return op;
}
