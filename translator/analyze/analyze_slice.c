// analyze_slice.c: multi-tensor launches, whose grid's y picks a slice.
//
// Trainers update many tensors of one flat buffer with one launch: a grid
// dim3(X, Y) whose blockIdx.y selects a tensor of n elements, the element loop
// counting i over n along x:
//
//   __global__ void sgd_multi(float *w, const float *g, float lr, int n) {
//     int i = blockIdx.x * blockDim.x + threadIdx.x;
//     float *wl = w + blockIdx.y * n;             // or w[blockIdx.y * n + i], w[off + i]
//     if (i < n) wl[i] -= lr * g[(size_t)blockIdx.y * n + i];
//   }
//   sgd_multi<<<dim3((n + 255) / 256, layers), 256, 0, s>>>(w, g, lr, n);
//
// With a one-dimensional block and every slice n elements apart (the stride is
// the loop's count: the same parameter, or one the launch passes the same text),
// the launch computes element e = blockIdx.y * n + i of a flat buffer of Y * n
// elements once each: the op is pointwise over e. The kernel's i is e % n and
// blockIdx.y is e / n; a buffer indexed [i] without the slice (a bias shared by
// the tensors) is a broadcast read [e % n], one indexed [blockIdx.y] (a
// per-tensor scale) a read [e / n]. Writes must be at e. Other launches whose
// grid or block has more than one dimension are refused: each element would be
// computed by as many threads as the other dimensions hold.
#include "analyze_impl.h"
#include "common/text.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

// The text of c without blanks is `want` (blockIdx.y, gridDim.y).
static bool text_is(const Az *az, CXCursor c, const char *want) {
  char *t = az_text_of(az, az_uncast(c)), *u = text_without(t, TEXT_BLANKS);
  bool is = strcmp(u, want) == 0;
  free(u);
  free(t);
  return is;
}

// blockIdx.y, or a local of it (`int row = blockIdx.y;`, never assigned), through casts.
bool az_is_slice_number(const Az *az, CXCursor c) {
  if (!az->slices) return false;
  if (text_is(az, c, "blockIdx.y")) return true;
  CXCursor d = az_referenced(az_uncast(c));
  return !clang_Cursor_isNull(az->slice_alias) && same(d, az->slice_alias);
}

// `row < Y` (op "<") or `row >= Y` (op ">="), row the slice's number and Y the grid's y as the
// launch writes it: true, or false, for every element (a guard's test of the row).
bool az_slice_in_grid(const Az *az, CXCursor cond, const char *op) {
  CXCursor a, b;
  if (!az->slices || !az_is_binary(az, cond, op, &a, &b) || !az_is_slice_number(az, a)) return false;
  char *t = az_text_of(az, az_uncast(b)), *u = text_without(t, TEXT_BLANKS), *y = text_without(az->slices, TEXT_BLANKS);
  bool is = strcmp(u, y) == 0;
  free(t);
  free(u);
  free(y);
  return is;
}

// `int row = blockIdx.y;` (any integer type, const or not) never assigned: the slice's number by a name.
bool az_slice_alias_decl(Az *az, CXCursor s) {
  if (!az->slices || kind(s) != CXCursor_DeclStmt || !clang_Cursor_isNull(az->slice_alias)) return false;
  Kids vars = kids(s);
  if (vars.n != 1) return false;
  CXCursor v = vars.v[0];
  Kids init = kids(v);
  if (kind(v) != CXCursor_VarDecl || !init.n || !az_is_integer_var(v) || az_writes(az, az->kbody, v) ||
      !text_is(az, init.last, "blockIdx.y"))
    return false;
  az->slice_alias = v;
  return true;
}

// Is expression e arithmetic on numbers and variables that keep their values:
// locals and parameters of arithmetic type (not references), never assigned in
// their function? Members, elements, dereferences and calls are not read (a
// member function or a pointer may change what they read).
static bool kept_arithmetic(const Frontend *fe, CXCursor e, int depth) {
  if (depth > 16) return false;
  CXType t = clang_getCanonicalType(clang_getCursorType(e));
  bool arith = t.kind >= CXType_Bool && t.kind <= CXType_LongDouble;
  switch (kind(e)) {
  case CXCursor_IntegerLiteral:
    return true;
  case CXCursor_DeclRefExpr: {
    CXCursor d = clang_getCursorReferenced(e);
    CXType dt = clang_getCanonicalType(clang_getCursorType(d));
    return (kind(d) == CXCursor_VarDecl || kind(d) == CXCursor_ParmDecl) && dt.kind >= CXType_Bool &&
           dt.kind <= CXType_LongDouble && never_assigned(fe, d);
  }
  case CXCursor_ParenExpr: case CXCursor_UnexposedExpr: case CXCursor_BinaryOperator: case CXCursor_UnaryOperator:
  case CXCursor_CStyleCastExpr: case CXCursor_CXXStaticCastExpr: case CXCursor_CXXFunctionalCastExpr: {
    if (!arith) return false;
    FeKids k = fe_kids(e);
    if (k.n > FE_KIDS || k.n == 0) return false;
    for (int i = 0; i < k.n; i++)
      if (clang_isExpression(kind(k.v[i])) && !kept_arithmetic(fe, k.v[i], depth + 1)) return false;
    return true;
  }
  default:
    return false;
  }
}

// A grid that is a local `dim3 grid(X, Y)` (or `dim3 grid{X, Y}`) of the region's
// function, never assigned, X and Y arithmetic on variables that keep their values
// (kept_arithmetic): Y's text, where the launch's is read (NULL: not one).
static const char *local_grid_y(const Frontend *fe, IrRegion *ir, const Launch *l) {
  FeKids k = fe_kids(l->call);
  CXCursor config = k.n > 1 ? k.v[1] : clang_getNullCursor();
  CXCursor g = clang_Cursor_isNull(config) ? config : az_uncast(clang_Cursor_getArgument(config, 0));
  if (kind(g) == CXCursor_CallExpr && clang_Cursor_getNumArguments(g) == 1)  // the copy the launch takes
    g = az_uncast(clang_Cursor_getArgument(g, 0));
  CXCursor d = kind(g) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(g) : clang_getNullCursor();
  CXString ts = clang_getTypeSpelling(clang_getCanonicalType(clang_getCursorType(d)));
  bool dim3 = strcmp(clang_getCString(ts), "dim3") == 0 || strcmp(clang_getCString(ts), "const dim3") == 0;
  clang_disposeString(ts);
  if (kind(d) != CXCursor_VarDecl || !dim3 || !never_assigned(fe, d)) return NULL;
  CXCursor init = fe_kids(d).last;
  while (kind(init) == CXCursor_UnexposedExpr && fe_kids(init).n == 1) init = fe_kids(init).last;
  int n = kind(init) == CXCursor_CallExpr ? clang_Cursor_getNumArguments(init) : 0;
  if (n < 2 || n > 3) return NULL;
  for (int i = 0; i < n; i++) {
    CXCursor a = clang_Cursor_getArgument(init, (unsigned)i);
    char *t = fe_cursor_text(fe, a);
    bool written = *t != '\0';  // (not written: the default, 1)
    free(t);
    if (written && !kept_arithmetic(fe, a, 0)) return NULL;
  }
  if (n == 3) {
    char *z = fe_cursor_text(fe, clang_Cursor_getArgument(init, 2));
    bool one = !*z || strcmp(z, "1") == 0;  // not written: the default, 1
    free(z);
    if (!one) return NULL;
  }
  char *y = fe_cursor_text(fe, clang_Cursor_getArgument(init, 1));
  const char *kept = strcmp(y, "1") != 0 && *y ? ir_strdup(ir, y) : NULL;
  free(y);
  return kept;
}

const char *az_slices_of(const Frontend *fe, IrRegion *ir, const Launch *l) {
  if (!l->wrapper && l->grid.text && az_simple_name(l->grid.text)) return local_grid_y(fe, ir, l);
  char *g = text_without(l->grid.text ? l->grid.text : "", TEXT_BLANKS);
  size_t n = strlen(g);
  const char *y = NULL;
  // dim3(X, Y) or dim3{X, Y}
  if ((strncmp(g, "dim3(", 5) == 0 || strncmp(g, "dim3{", 5) == 0) && n > 6 && g[n - 1] == (g[4] == '(' ? ')' : '}')) {
    // Its arguments, at top-level commas.
    const char *arg[4] = {g + 5};
    int nargs = 1, depth = 0;
    g[n - 1] = '\0';
    for (char *p = g + 5; *p && nargs < 4; p++) {
      depth += *p == '(' || *p == '[' || *p == '{' ? 1 : *p == ')' || *p == ']' || *p == '}' ? -1 : 0;
      if (depth == 0 && *p == ',') {
        *p = '\0';
        arg[nargs++] = p + 1;
      }
    }
    if ((nargs == 2 || (nargs == 3 && strcmp(arg[2], "1") == 0)) && *arg[1] && strcmp(arg[1], "1") != 0)
      y = ir_strdup(ir, arg[1]);
  }
  free(g);
  return y;
}

// The loop's count as a value (the count parameter's).

static IrExpr *count_value(Az *az) {
  char *name = fe_spelling(az->count);
  IrExpr *n = az_param(az, name, az_type_of(clang_getCursorType(az->count)), az_launch_arg(az, az->count));
  free(name);
  return ir_expr_cast(az->ir, IR_I64, n);
}

static bool count_known(Az *az, CXCursor at) {
  if (!clang_Cursor_isNull(az->count)) return true;
  az_fail(az, at, "kernel '%s': its launch's grid has a y dimension, read as slices of the element loop's count; "
                  "coconet needs that count to be a scalar parameter of the kernel (write 'i < n')",
          az->launch->kernel);
  return false;
}

IrExpr *az_slice_index(Az *az, CXCursor at) {
  if (!count_known(az, at)) return NULL;
  return ir_expr_binary(az->ir, IR_MOD, ir_expr_cast(az->ir, IR_I64, ir_expr_index(az->ir)), count_value(az));
}

IrExpr *az_slice_number(Az *az, CXCursor at) {
  if (!count_known(az, at)) return NULL;
  return ir_expr_binary(az->ir, IR_DIV, ir_expr_cast(az->ir, IR_I64, ir_expr_index(az->ir)), count_value(az));
}

IrSize *az_slice_count(Az *az) { return ir_size_parse(az->ir, az_launch_arg(az, az->count)); }

// A launch argument's text without blanks, and without a conversion to a 64-bit
// integer type around all of it (a seen-through launcher's `ptrdiff_t stride` given
// a `size_t n` reads `(long)n`: the same count). Malloc'd.
static char *value_text(const char *t) {
  static const char *const wide[] = {"(long)", "(unsignedlong)", "(longlong)", "(unsignedlonglong)"};
  char *v = text_unwrap(text_without(t, TEXT_BLANKS));
  for (size_t i = 0; i < sizeof wide / sizeof *wide; i++) {
    size_t k = strlen(wide[i]);
    if (strncmp(v, wide[i], k) == 0 && v[k]) {
      memmove(v, v + k, strlen(v + k) + 1);
      text_unwrap(v);
      break;
    }
  }
  return v;
}

// `a`, `a.b`, `a->b` (no blanks): a variable or a member the generated test reads.
static bool member_chain(const char *t) {
  for (;;) {
    if (!(isalpha((unsigned char)*t) || *t == '_')) return false;
    while (isalnum((unsigned char)*t) || *t == '_') t++;
    if (!*t) return true;
    if (*t == '.') t++;
    else if (t[0] == '-' && t[1] == '>') t += 2;
    else return false;
  }
}

// Is S the loop's count: its parameter, or one the launch passes the same text,
// of a type that holds every count's value? Or, when the launch passes a variable
// or a member for each (llm.c's `tensor.size` as the stride, `shard.size` as the
// count), a run-time precondition of the schedule that they are equal (the region
// as written otherwise). (Else the reason, at `at`.)
static bool stride_is_count(Az *az, CXCursor s, CXCursor at) {
  if (!count_known(az, at)) return false;
  CXCursor d = az_referenced(az_uncast(s));
  if (same(d, az->count)) return true;
  const char *mine = kind(d) == CXCursor_ParmDecl && !az_is_pointer(d) ? az_launch_arg(az, d) : NULL;
  const char *count = az_launch_arg(az, az->count);
  char *a = mine ? value_text(mine) : NULL, *b = count ? value_text(count) : NULL;
  bool wide = clang_Type_getSizeOf(clang_getCursorType(d)) >= clang_Type_getSizeOf(clang_getCursorType(az->count));
  bool eq = a && b && wide && strcmp(a, b) == 0;
  bool assumed = !eq && a && b && wide && member_chain(a) && member_chain(b);
  if (assumed) {
    char *param = fe_spelling(d);
    ir_region_assume_equal(az->ir, a, b, az->launch->kernel, param, fe_any_loc(az->fe, clang_getCursorLocation(at)));
    free(param);
  }
  bool narrow = a && b && !wide && strcmp(a, b) == 0;
  free(a);
  free(b);
  if (eq || assumed) return true;
  char *st = az_text_of(az, s), *n = fe_spelling(az->count);
  if (narrow) {
    CXString ts = clang_getTypeSpelling(clang_getCanonicalType(clang_getCursorType(d)));
    CXString tc = clang_getTypeSpelling(clang_getCanonicalType(clang_getCursorType(az->count)));
    az_fail(az, at, "kernel '%s' steps from slice to slice by '%s', the value of its count '%s', but as '%s', which "
                    "does not hold every value of the count's type '%s': declare the stride at least as wide as the count",
            az->launch->kernel, st, n, clang_getCString(ts), clang_getCString(tc));
    clang_disposeString(ts);
    clang_disposeString(tc);
    free(st);
    free(n);
    return false;
  }
  az_fail(az, at, "kernel '%s' steps from slice to slice by '%s'%s%s%s, and coconet reads its grid's y as slices "
                  "of one flat buffer only when that step is the element loop's count '%s' (%s): the same "
                  "parameter, one the launch passes the same value, or a variable or member it passes while it "
                  "passes one for the count (their equality is then tested at run time)",
          az->launch->kernel, st, mine ? " (the launch passes '" : "", mine ? mine : "", mine ? "')" : "", n,
          count ? count : "?");
  free(st);
  free(n);
  return false;
}

// blockIdx.y * S or S * blockIdx.y (through casts): S.
static bool slice_offset(const Az *az, CXCursor c, CXCursor *stride) {
  CXCursor a, b;
  if (!az_is_binary(az, az_uncast(c), "*", &a, &b)) return false;
  if (az_is_slice_number(az, a)) *stride = b;
  else if (az_is_slice_number(az, b)) *stride = a;
  else return false;
  return true;
}

// An offset to slice blockIdx.y: blockIdx.y * S, or the local holding it; its S.
static bool offset_of(const Az *az, CXCursor c, CXCursor *stride) {
  if (slice_offset(az, c, stride)) return true;
  CXCursor d = az_referenced(az_uncast(c));
  if (clang_Cursor_isNull(az->slice_off) || !same(d, az->slice_off)) return false;
  *stride = az->slice_stride;
  return true;
}

// A local of the kernel holding an element's index (`size_t idx = (size_t)row * n + i;`),
// never assigned: its initializer (null: not one).
static CXCursor index_local(const Az *az, CXCursor idx) {
  CXCursor d = az_referenced(az_uncast(idx));
  Kids init = kids(d);
  if (kind(d) != CXCursor_VarDecl || !init.n || !az_is_integer_var(d) ||
      !same(clang_getCursorSemanticParent(d), az->body_fn) || az_writes(az, az->kbody, d))
    return clang_getNullCursor();
  return init.last;
}

static bool at_element(Az *az, CXCursor base, CXCursor idx, int depth) {
  if (!az->slices) return az_is_index(az, idx);
  CXCursor held = index_local(az, idx);
  if (!clang_Cursor_isNull(held) && !same(az_referenced(az_uncast(idx)), az->index) && !az_is_slice_number(az, idx))
    return depth < 8 && at_element(az, base, held, depth + 1);
  CXCursor d = az_referenced(az_strip(base));
  Binding *b = clang_Cursor_isNull(d) ? NULL : az_find_local(az, d);
  if (b && b->slice) return az_is_index(az, idx) && stride_is_count(az, b->stride, idx);
  CXCursor x, y, stride;
  if (!az_is_binary(az, az_uncast(idx), "+", &x, &y)) return false;
  if (az_is_index(az, x) && offset_of(az, y, &stride)) return stride_is_count(az, stride, idx);
  if (az_is_index(az, y) && offset_of(az, x, &stride)) return stride_is_count(az, stride, idx);
  return false;
}

bool az_at_element(Az *az, CXCursor base, CXCursor idx) { return at_element(az, base, idx, 0); }

// `const size_t idx = (size_t)row * cols + col;` before the element loop of a
// launch whose grid's y selects a slice, never assigned: the element's index,
// read where it indexes a buffer (index_local); declaring it reads no memory.
bool az_index_local_decl(Az *az, CXCursor s) {
  if (!az->slices || kind(s) != CXCursor_DeclStmt || clang_Cursor_isNull(az->index)) return false;
  Kids vars = kids(s);
  if (vars.n != 1) return false;
  CXCursor v = vars.v[0];
  Kids init = kids(v);
  if (kind(v) != CXCursor_VarDecl || !init.n || !az_is_integer_var(v) || az_writes(az, az->kbody, v)) return false;
  // Its stride is checked where it indexes (at_element), once the loop's count is known.
  CXCursor x, y, stride;
  if (!az_is_binary(az, az_uncast(init.last), "+", &x, &y)) return false;
  return (az_is_index(az, x) && offset_of(az, y, &stride)) || (az_is_index(az, y) && offset_of(az, x, &stride));
}

bool az_slice_decl(Az *az, CXCursor v) {
  Kids init = kids(v);
  if (!az->slices || kind(v) != CXCursor_VarDecl || !init.n || az_writes(az, az->kbody, v)) return false;
  CXCursor e = init.last, stride;
  if (!az_is_pointer(v)) {
    if (!clang_Cursor_isNull(az->slice_off) || !az_is_integer_var(v) || !slice_offset(az, e, &stride)) return false;
    az->slice_off = v;
    az->slice_stride = stride;
    return true;
  }
  return az_slice_pointer(az, v, e);
}

bool az_slice_pointer(Az *az, CXCursor v, CXCursor e) {
  CXCursor stride, a, b, buffer;
  bool element;
  // T *p = buf + OFFSET (either order).
  if (!az->slices || !az_is_binary(az, az_uncast(e), "+", &a, &b)) return false;
  CXCursor base = a, off = b;
  if (!offset_of(az, off, &stride)) {
    base = b;
    off = a;
  }
  if (!offset_of(az, off, &stride) || !az_buffer(az, base, &buffer, &element) || element) return false;
  Binding *from = az_find_local(az, az_referenced(az_strip(base)));
  if (from && from->slice) return false;  // a slice of a slice
  az_bind_pointer(az, v, buffer, false);
  Binding *bound = az_find_local(az, v);
  bound->slice = true;
  bound->stride = stride;
  return true;
}

bool az_slice_decls(Az *az, CXCursor s) {
  if (!az->slices || kind(s) != CXCursor_DeclStmt) return false;
  Kids vars = kids(s);
  for (int i = 0; i < vars.n; i++)
    if (!az_slice_decl(az, vars.v[i])) return false;
  return vars.n > 0;
}

void az_slice_done(Az *az) {
  if (!az->slices || az_failed(az)) return;
  const char *what = az->lanes > 1                  ? "its element is a vector"
                     : !clang_Cursor_isNull(az->philox) ? "it draws Philox random numbers keyed by i"
                                                        : NULL;
  for (const IrStmt *s = az->op->pw.body; s && !what; s = s->next)
    if (s->kind == IR_S_REDUCE) what = "it sums with atomicAdd";
  if (what)
    az_fail(az, az->kernel, "kernel '%s' is launched with a grid whose y selects a slice (%s of them), and %s: "
                            "coconet reads such a launch only for scalar elements computed and stored at "
                            "blockIdx.y * n + i", az->launch->kernel, az->slices, what);
}
