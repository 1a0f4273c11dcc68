// analyze_row_index.c: the index forms of a row-wise kernel (analyze_row.c
// walks the kernel; these say what an expression or a local of it is): the
// row, the row length H, the columns, row offsets and row elements, and the
// locals pointing into the buffers.
//
// A row may be read through a pointer to wider elements, as vectorized kernels
// do: `T2 *p = (T2 *)x;` (or reinterpret_cast, or of a pointer to the row),
// with sizeof(T2) k times x's element (half2 over half: k = 2), never
// assigned. Its row is then H / k elements long: it is read at
// [row * H / k + j] ((row * H) / k, row * (H / k)), j from a column loop to
// H / k, or at [j] below H / k (a column). Each form has a scale, the elements
// of x one of its units stands for (1 without a view), and an access counts
// only when its pointer's scale and its index's agree. A row of k-wide units
// is the row of H elements only when k divides H: the op records each k, and
// the schedule runs when H % k == 0, the region as written otherwise
// (analyze_row_op.c).
#include "analyze_impl.h"

#include <stdlib.h>
#include <string.h>

AzPlace row_place(const Row *w) { return w->group == GROUP_WARP ? PLACE_WARP_ROW : PLACE_THREAD_ROW; }

// A local the kernel's grid position rests on (the lane, the warp, the row).
bool row_derived_local(const Row *w, CXCursor d) {
  Kids init = kids(d);
  return kind(d) == CXCursor_VarDecl && az_is_integer_var(d) && init.n && az_place(&w->az, init.last) != PLACE_NONE;
}

bool row_is_row(Row *w, CXCursor c) {
  if (!clang_Cursor_isNull(w->row_var)) {
    if (!w->in_row_loop || !same(row_ref_decl(c), w->row_var)) return false;
  } else if (w->group == GROUP_BLOCK ? az_builtin(&w->az, c) != B_BLOCKIDX_X : az_place(&w->az, c) != row_place(w)) {
    return false;
  }
  if (!w->saw_row) w->row_loc = fe_loc(w->az.fe, clang_getCursorLocation(c));
  w->saw_row = true;
  return true;
}

int row_col(const Row *w, CXCursor c) {
  CXCursor d = row_ref_decl(c);
  for (int i = 0; i < w->ncols && !clang_Cursor_isNull(d); i++)
    if (same(w->cols[i], d)) return w->col_scale[i];
  return 0;
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
  CXCursor p = row_ref_decl(e);
  return !clang_Cursor_isNull(p) && row_is_param(w, p) ? p : d;
}

static bool is_h(Row *w, CXCursor c) {
  CXCursor d = param_alias(w, row_ref_decl(c));
  if (clang_Cursor_isNull(d) || !row_is_param(w, d) || !az_is_integer_var(d)) return false;
  if (clang_Cursor_isNull(w->h)) w->h = d;
  return same(w->h, d);
}

static CXCursor uncast(CXCursor c) {
  c = az_strip(c);
  while (kind(c) == CXCursor_CStyleCastExpr || kind(c) == CXCursor_CXXStaticCastExpr) c = az_strip(kids(c).last);
  return c;
}

// e / k for a constant k > 1: k, with e in *num; else 0.
static int divided(Row *w, CXCursor e, CXCursor *num) {
  CXCursor a, b;
  long long k;
  if (!az_is_binary(&w->az, uncast(e), "/", &a, &b) || !az_int_constant(b, &k) || k < 2 || k > 64) return 0;
  *num = a;
  return (int)k;
}

// H (1) or H / k (k), also a local of the kernel holding H / k and never
// assigned (`const int vec_hidden_size = hidden_size / width;`): the row
// length in units of k elements; 0 when c is none of these.
static int h_scale(Row *w, CXCursor c) {
  CXCursor num, d = row_ref_decl(c);
  int k = divided(w, c, &num);
  if (k) return is_h(w, num) ? k : 0;
  if (is_h(w, c)) return 1;
  Kids init = kind(d) == CXCursor_VarDecl && same(clang_getCursorSemanticParent(d), w->az.kernel) ? kids(d)
                                                                                                  : (Kids){0};
  k = init.n && never_assigned(w->az.fe, d) ? divided(w, init.last, &num) : 0;
  return k && is_h(w, num) ? k : 0;
}

// A row stride parameter other than the row length (vLLM's input_stride):
// rows split in rows of H are the kernel's rows only when it equals H, which
// the generated code checks.
static bool is_stride(Row *w, CXCursor c) {
  CXCursor d = param_alias(w, row_ref_decl(c));
  if (clang_Cursor_isNull(d) || clang_Cursor_isNull(w->h) || !row_is_param(w, d) || !az_is_integer_var(d) ||
      same(d, w->h))
    return false;
  if (clang_Cursor_isNull(w->stride)) w->stride = d;
  return same(w->stride, d);
}

static int in_list(const CXCursor *v, const int *scale, int n, CXCursor d) {
  for (int i = 0; i < n && !clang_Cursor_isNull(d); i++)
    if (same(v[i], d)) return scale[i];
  return 0;
}

// row * H (either order; or row * S, S a row stride), row * (H / k),
// (row * H) / k, or a local holding one: its scale (0: none of these).
int row_offset(Row *w, CXCursor c) {
  int local = in_list(w->rowoffs, w->rowoff_scale, w->nrowoffs, row_ref_decl(c));
  if (local) return local;
  CXCursor a, b, num;
  int k = divided(w, c, &num);
  if (k) return row_offset(w, num) == 1 && !az_is_binary(&w->az, uncast(num), "/", &a, &b) ? k : 0;
  if (!az_is_binary(&w->az, uncast(c), "*", &a, &b)) return 0;
  if (!row_is_row(w, a)) {
    CXCursor t = a;
    a = b;
    b = t;
    if (!row_is_row(w, a)) return 0;
  }
  return is_stride(w, b) ? 1 : h_scale(w, b);
}

// c = off + j (either order), j a column: the scales of the row offset (0 if
// off is none) and of the column (0: c is not such a sum).
static void offset_plus_column(Row *w, CXCursor c, int *off, int *col) {
  CXCursor a, b;
  *off = *col = 0;
  if (!az_is_binary(&w->az, c, "+", &a, &b)) return;
  if (!(*col = row_col(w, b))) {
    CXCursor t = a;
    a = b;
    b = t;
    *col = row_col(w, b);
  }
  *off = *col ? row_offset(w, a) : 0;
}

// An index into a row: row * H + j (either order), or off + j, the offset's
// scale the column's: that scale (0: not one); also a local holding one.
int row_element(Row *w, CXCursor c) {
  int local = in_list(w->rowelems, w->rowelem_scale, w->nrowelems, row_ref_decl(c));
  if (local) return local;
  int off, col;
  offset_plus_column(w, c, &off, &col);
  return col && off == col ? col : 0;
}

// A row offset plus a column of another scale (`blockIdx.x * n + j`, j from a
// loop to n / 2): true, with the two scales.
bool row_mixed_units(Row *w, CXCursor c, int *off, int *col) {
  offset_plus_column(w, c, off, col);
  return *off && *col && *off != *col;
}

// A name the kernel's row ownership rests on: assigning it is refused. A
// local holding a constant the block size equals is not one: it stands for
// blockDim.x only while never assigned (az_builtin).
bool row_builtin_local(const Row *w, CXCursor d) {
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

// A parameter the launch passes the block size it launches with
// (<<<rows, block_size>>>(..., block_size)): blockDim.x, as the kernel runs
// with the launch's block in the schedule too.
static bool block_param(const Row *w, CXCursor c) {
  CXCursor d = row_ref_decl(c);
  if (clang_Cursor_isNull(d) || !row_is_param(w, d) || !az_is_integer_var(d)) return false;
  const char *arg = az_launch_arg(&w->az, d), *block = w->az.launch->block.text;
  return arg && block && strcmp(arg, block) == 0 && (az_simple_name(arg) || strspn(arg, "0123456789") == strlen(arg));
}

// for (int j = threadIdx.x; j < H; j += blockDim.x) (any positive step): true
// when it is one; its variable joins the columns.
bool row_column_loop(Row *w, CXCursor f) {
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
  if (az_is_binary(&w->az, k.v[1], "<=", &a, &b) && same(row_ref_decl(a), j) && h_scale(w, b)) {
    char *t = az_text_of(&w->az, k.v[1]);
    az_fail(&w->az, k.v[1], "kernel '%s': the column loop runs while %s, one column past the row; a row-wise "
                            "kernel's column loops run below the row length (j < H)", w->az.launch->kernel, t);
    free(t);
    return true;
  }
  if (!az_is_binary(&w->az, k.v[1], "<", &a, &b) || !same(row_ref_decl(a), j)) return false;
  int scale = h_scale(w, b);
  if (!scale) {
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
    if (strcmp(op, "+=") == 0 && same(row_ref_decl(lhs), j)) {
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
    ok = u.n && strstr(o, "++") && same(row_ref_decl(u.v[0]), j);
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
  w->col_scale[w->ncols] = scale;
  w->cols[w->ncols++] = j;
  w->cond += !full;
  row_walk(w, k.v[3]);
  w->cond -= !full;
  return true;
}


void row_units_fail(Row *w, CXCursor at, int off, int col) {
  char *t = az_text_of(&w->az, at);
  az_fail(&w->az, at, "kernel '%s' adds a row offset in units of %d element%s and a column in units of %d (%s); a row "
                      "read k elements at a time is indexed by row * H / k + j, j from a loop to H / k",
          w->az.launch->kernel, off, off == 1 ? "" : "s", col, t);
  free(t);
}

// sizeof(*to) / sizeof(*from) for two pointer types when sizeof(*to) is a
// whole multiple of sizeof(*from) (1 to 64), else 0.
static int width_ratio(CXType to, CXType from) {
  long long a = clang_Type_getSizeOf(clang_getPointeeType(clang_getCanonicalType(to)));
  long long b = clang_Type_getSizeOf(clang_getPointeeType(clang_getCanonicalType(from)));
  return a > 0 && b > 0 && a % b == 0 && a / b <= 64 ? (int)(a / b) : 0;
}

static bool pointer_cast(CXCursor e) {
  enum CXCursorKind k = kind(e);
  return (k == CXCursor_CStyleCastExpr || k == CXCursor_CXXReinterpretCastExpr || k == CXCursor_CXXStaticCastExpr ||
          k == CXCursor_CXXConstCastExpr) &&
         clang_getCanonicalType(clang_getCursorType(e)).kind == CXType_Pointer;
}

static CXCursor strip_pointer_casts(CXCursor e) {
  e = az_strip(e);
  while (pointer_cast(e) && kids(e).n) e = az_strip(kids(e).last);
  return e;
}

// A pointer parameter, a view of one (`T2 *p = (T2 *)x;`) or a pointer to the row: its parameter; null when d
// is none.
static CXCursor param_of(const Row *w, CXCursor d, bool *at_row) {
  *at_row = false;
  if (clang_Cursor_isNull(d) || row_is_pointer_param(w, d)) return d;
  for (int i = 0; i < w->nviews; i++)
    if (same(w->views[i], d)) return w->view_of[i];
  *at_row = true;
  for (int i = 0; i < w->naliases; i++)
    if (same(w->aliases[i], d)) return w->alias_of[i];
  return clang_getNullCursor();
}

// The scale of a pointer of type t into param's buffer: how many of its elements one of t's holds (0: not a
// whole number).
static int scale_of(CXType t, CXCursor param) { return width_ratio(t, clang_getCursorType(param)); }

CXCursor row_pointer(const Row *w, CXCursor e, int *scale, bool *at_row) {
  e = az_strip(e);
  CXCursor inner = strip_pointer_casts(e);
  CXCursor param = param_of(w, kind(inner) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(inner)
                                                                   : clang_getNullCursor(), at_row);
  *scale = clang_Cursor_isNull(param) ? 0 : scale_of(clang_getCursorType(e), param);
  return *scale ? param : clang_getNullCursor();
}

// A pointer local's initial value e: a view of a parameter (`(T2 *)x`, `x`),
// or a pointer to the row (`x + row * H`, `&x[row * H]`, a view of either):
// true when it is one, recorded with its scale, its elements' size over the
// parameter's.
static bool pointer_local(Row *w, CXCursor var, CXCursor e) {
  int scale = 0;
  bool at_row = false;
  CXCursor a, b, param = clang_getNullCursor();
  e = strip_pointer_casts(e);
  if (kind(e) == CXCursor_DeclRefExpr) {
    param = param_of(w, clang_getCursorReferenced(e), &at_row);
  } else if (az_is_binary(&w->az, e, "+", &a, &b)) {
    bool row_a;
    CXCursor base = row_pointer(w, a, &scale, &row_a), off = b;
    if (clang_Cursor_isNull(base) || row_a) {
      base = row_pointer(w, b, &scale, &row_a);
      off = a;
    }
    at_row = !clang_Cursor_isNull(base) && !row_a && row_offset(w, off) == scale;
    param = at_row ? base : clang_getNullCursor();
  } else if (kind(e) == CXCursor_UnaryOperator && kids(e).n == 1 &&
             kind(az_strip(kids(e).v[0])) == CXCursor_ArraySubscriptExpr) {
    Kids s = kids(az_strip(kids(e).v[0]));
    bool row_a = true;
    CXCursor base = s.n == 2 ? row_pointer(w, s.v[0], &scale, &row_a) : clang_getNullCursor();
    at_row = !clang_Cursor_isNull(base) && !row_a && row_offset(w, s.last) == scale;
    param = at_row ? base : clang_getNullCursor();
  }
  if (clang_Cursor_isNull(param)) return false;
  int width = scale_of(clang_getCursorType(var), param);
  if (!width) {
    char *name = fe_spelling(var), *x = fe_spelling(param);
    az_fail(&w->az, var, "kernel '%s' reads '%s' through '%s', whose elements are not a whole number of '%s''s; "
                         "coconet follows a buffer through pointers to its elements or to k of them at a time "
                         "(half2 over half, float4 over float)", w->az.launch->kernel, x, name, x);
    free(name);
    free(x);
    return true;
  }
  if ((at_row ? w->naliases : w->nviews) == ROW_MAX) return false;
  if (at_row) {
    w->alias_of[w->naliases] = param;
    w->aliases[w->naliases++] = var;
  } else {
    w->view_of[w->nviews] = param;
    w->views[w->nviews++] = var;
  }
  return true;
}

// `T *p = x + row * H;`, `T *p = &x[row * H];`, `T2 *p = (T2 *)x;`, `int off = row * H;`,
// `int id = row * H + j;`: true when var is one of these, recorded.
bool row_local(Row *w, CXCursor var) {
  Kids init = kids(var);
  if (!init.n) return false;
  // With a warp or a thread per row: the lane, the warp, the row, checked where they are used.
  if (w->group != GROUP_BLOCK && (row_derived_local(w, var) || row_builtin_local(w, var))) return true;
  CXCursor e = az_strip(init.last);
  if (row_builtin_local(w, var) && row_is_row(w, e)) return true;  // int row = blockIdx.x;
  int scale;
  if (az_is_integer_var(var) && w->nrowoffs < ROW_MAX && (scale = row_offset(w, e))) {
    w->rowoff_scale[w->nrowoffs] = scale;
    w->rowoffs[w->nrowoffs++] = var;
    return true;
  }
  if (az_is_integer_var(var) && w->nrowelems < ROW_MAX && (scale = row_element(w, e))) {
    w->rowelem_scale[w->nrowelems] = scale;
    w->rowelems[w->nrowelems++] = var;
    return true;
  }
  int off, col;
  if (az_is_integer_var(var) && row_mixed_units(w, e, &off, &col)) {
    row_units_fail(w, var, off, col);
    return true;
  }
  return az_is_pointer(var) && pointer_local(w, var, e);
}
