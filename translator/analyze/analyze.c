// analyze.c: kernel analysis. A launch becomes a pointwise IR op when the
// kernel's body can be proven to compute each element i from elements at i
// (or broadcast reads [i % K], [i / K], [K]) and scalars:
//
//   - the element index: blockIdx.x * blockDim.x + threadIdx.x in any order
//     (blockDim.x may be written as a constant the launch's block size equals),
//     through casts and helper variables;
//   - the element loop: a grid-stride `for (i = INDEX; i < n; i += blockDim.x *
//     gridDim.x)` (or `while (i < n) { ...; i += stride; }`), or `if (i < n) { ... }`,
//     or `if (i >= n) return;` followed by the body; n is a kernel parameter or an
//     expression of them (the count is it in the launch's terms);
//   - the body: locals, stores t[i] = e (also +=, -=, *=, /=), sums
//     atomicAdd(&acc[K], e) into a buffer it does not otherwise touch (or a
//     thread's running sum: `T s = 0;` before a grid-stride loop, `s += e` in
//     it, `atomicAdd(&acc[K], s);` after it), if/else,
//     early returns and constant loops as conditions (analyze_stmt.c),
//     arithmetic, comparisons, ternaries, casts, math functions, half/bf16
//     conversions and operators, bit casts, inlined __device__ helpers,
//     curand Philox draws keyed by the element index (analyze_expr.c).
//
// The launch's grid and block are one-dimensional, or its grid is dim3(X, Y)
// with blockIdx.y selecting a slice of n elements of one flat buffer
// (analyze_slice.c): the op is then over the Y * n elements.
//
// `#pragma coconet pointwise(index=i, count=n)` names the index variable and
// the count parameter when the search cannot find them; the checks stay.
// When the proof fails the reason and its location are returned, so that the
// transformation that needs a pointwise kernel can say exactly why not.
#include "analyze_impl.h"
#include "common/text.h"

#include <stdlib.h>
#include <string.h>

//
// The element loop
//


static bool named(CXCursor c, const char *name) {
  if (!name) return false;
  char *s = fe_spelling(c);
  bool eq = strcmp(s, name) == 0;
  free(s);
  return eq;
}

// blockIdx.x * B + threadIdx.x (either order) with B the launch's constant block size.
static bool fixed_block_index(const Az *az, CXCursor c) {
  CXCursor a, b, x, y;
  long long v;
  if (az->block_x <= 0 || !az_is_binary(az, c, "+", &a, &b)) return false;
  if (az_builtin(az, a) == B_THREADIDX_X) {
    CXCursor t = a;
    a = b;
    b = t;
  }
  if (az_builtin(az, b) != B_THREADIDX_X || !az_is_binary(az, a, "*", &x, &y)) return false;
  if (az_builtin(az, x) != B_BLOCKIDX_X) {
    CXCursor t = x;
    x = y;
    y = t;
  }
  return az_builtin(az, x) == B_BLOCKIDX_X && az_int_constant(y, &v) && v == az->block_x;
}

// `T i = INDEX;` (or the hinted variable): records the index; true if it is one.
static bool index_decl(Az *az, CXCursor s) {
  if (kind(s) != CXCursor_DeclStmt) return false;
  Kids vars = kids(s);
  if (vars.n != 1 || kind(vars.v[0]) != CXCursor_VarDecl) return false;
  Kids init = kids(vars.v[0]);
  bool hinted = az->hint_index && named(vars.v[0], az->hint_index);
  // `for (int i = idx; ...)` after `const int idx = INDEX;`: i is the index, idx its alias.
  bool alias = !hinted && init.n && !clang_Cursor_isNull(az->index) && az_is_index(az, init.last);
  // The hint names the variable; its value must still be the element index.
  if (hinted && !(init.n && (az_is_index_expr(az, init.last) || fixed_block_index(az, init.last) ||
                             (!clang_Cursor_isNull(az->index) && az_is_index(az, init.last))))) {
    az_fail(az, vars.v[0], "kernel '%s': pointwise(index=%s) names '%s', whose value is not the element index "
                           "(blockIdx.x * blockDim.x + threadIdx.x, or blockIdx.x * B + threadIdx.x with B the "
                           "launch's block size); the schedule gives element i of a slice to the thread of that "
                           "index: compute '%s' that way, or drop the hint",
            az->launch->kernel, az->hint_index, az->hint_index, az->hint_index);
    return false;
  }
  if (!hinted && !alias && (init.n == 0 || !az_is_index_expr(az, init.last))) return false;
  if (alias) az->index_alias = az->index;
  az->index = vars.v[0];
  return true;
}

// A declaration of helpers such as `int tid = threadIdx.x;`.
static bool builtin_alias(Az *az, CXCursor s) {
  if (kind(s) != CXCursor_DeclStmt) return false;
  Kids vars = kids(s);
  if (vars.n > FE_KIDS) return false;  // more declarations than kids() keeps: not taken as aliases
  for (int i = 0; i < vars.n; i++) {
    Kids init = kids(vars.v[i]);
    if (init.n == 0 || !az_is_integer_var(vars.v[i]) || az_builtin(az, init.last) == B_NONE) return false;
  }
  return vars.n > 0;
}

// An integer type of 32 bits or more, or a template's type (read in its instances).
static bool wide_integer(CXType t) {
  return wide_integer_type(t) || clang_getCanonicalType(t).kind == CXType_Unexposed;
}

// The host text of a bound written in the kernel's terms: scalar parameters
// become their launch arguments, members of by-value struct parameters
// (`p.n`) the argument's member, locals of the kernel never assigned after
// their initializer their initial values (parameters too must keep theirs);
// with integer literals and + - * / between them. NULL when it is anything else.
static char *bound_text(Az *az, CXCursor c, int depth) {
  c = az_strip(c);
  Kids k = kids(c);
  enum CXCursorKind ck = kind(c);
  if (depth > 8) return NULL;
  if (ck == CXCursor_IntegerLiteral) return az_text_of(az, c);
  if (ck == CXCursor_CStyleCastExpr || ck == CXCursor_CXXStaticCastExpr || ck == CXCursor_CXXFunctionalCastExpr) {
    // Through a cast that keeps the value only: `i < (uint8_t)n` runs n % 256 elements.
    CXType from = k.n ? clang_getCursorType(az_strip(k.last)) : (CXType){0};
    bool kept = k.n && wide_integer(clang_getCursorType(c)) &&
                (integer_type(from) || clang_getCanonicalType(from).kind == CXType_Unexposed);
    return kept ? bound_text(az, k.last, depth + 1) : NULL;
  }
  if (ck == CXCursor_DeclRefExpr) {
    CXCursor d = clang_getCursorReferenced(c);
    if (kind(d) == CXCursor_ParmDecl && !az_is_pointer(d) && never_assigned(az->fe, d)) {
      int at = az_param_position(az, d);
      const char *arg = at >= 0 && at < az->launch->nargs
                            ? extract_size_text(az->region_fe, az->ir, &az->launch->args[at])
                            : az_launch_arg(az, d);
      char *out = NULL;
      if (arg && asprintf(&out, az_simple_name(arg) ? "%s" : "(%s)", arg) < 0) out = NULL;
      return out;
    }
    Kids init = kids(d);
    bool local = kind(d) == CXCursor_VarDecl && same(clang_getCursorSemanticParent(d), az->body_fn) && init.n &&
                 never_assigned(az->fe, d) && wide_integer(clang_getCursorType(d));  // a short's value is its own
    return local ? bound_text(az, init.last, depth + 1) : NULL;
  }
  if (ck == CXCursor_MemberRefExpr && k.n == 1 && kind(az_strip(k.v[0])) == CXCursor_DeclRefExpr) {
    CXCursor d = az_referenced(k.v[0]);
    const char *arg = kind(d) == CXCursor_ParmDecl && !az_is_pointer(d) ? az_launch_arg(az, d) : NULL;
    char *member = fe_spelling(c), *out = NULL;
    if (arg && az_simple_name(arg) && asprintf(&out, "%s.%s", arg, member) < 0) out = NULL;
    free(member);
    return out;
  }
  if (ck == CXCursor_BinaryOperator && k.n == 2) {
    char *op = az_op_between(az, k.v[0], k.v[1]);
    char *a = strlen(op) == 1 && strchr("+-*/", op[0]) ? bound_text(az, k.v[0], depth + 1) : NULL;
    char *b = a ? bound_text(az, k.v[1], depth + 1) : NULL, *out = NULL;
    if (a && b && asprintf(&out, op[0] == '*' ? "%s %s %s" : "(%s %s %s)", a, op, b) < 0) out = NULL;
    free(a);
    free(b);
    free(op);
    return out;
  }
  return NULL;
}

// `i < n` (or `i >= n` when negated) with n a scalar parameter, or an
// expression of them (bound_text): records the count.
static bool bound(Az *az, CXCursor cond, const char *op) {
  CXCursor a, b;
  if (!az_is_binary(az, cond, op, &a, &b) || !az_is_index(az, a)) return false;
  b = az_kernel_terms(az, b);
  CXCursor d = az_referenced(b);
  if (kind(az_strip(b)) == CXCursor_DeclRefExpr && kind(d) == CXCursor_ParmDecl && !az_is_pointer(d) &&
      never_assigned(az->fe, d)) {
    if (az->hint_count && !named(d, az->hint_count)) return false;
    if (!wide_integer(clang_getCursorType(d))) {
      CXString type = clang_getTypeSpelling(clang_getCanonicalType(clang_getCursorType(d)));
      char *name = fe_spelling(d);
      az_fail(az, b, "kernel '%s': the element loop's bound '%s' is a %s; the count must be an integer of 32 bits "
                     "or more (a narrower or floating one may not be the count the collective moves)",
              az->launch->kernel, name, clang_getCString(type));
      free(name);
      clang_disposeString(type);
      return false;
    }
    az->count = d;
    az->bound = b;
    return true;
  }
  char *text = az->hint_count ? NULL : bound_text(az, b, 0);
  if (!text) {
    char *t = az_text_of(az, b);
    az_fail(az, b, "kernel '%s': the element loop's bound '%s' must be a scalar parameter of the kernel or an "
                "expression of them (+ - * / and integer literals, members of struct parameters, locals never assigned after their initializer)",
         az->launch->kernel, t);
    free(t);
    return false;
  }
  size_t len = strlen(text);
  if (len > 2 && text[0] == '(' && text[len - 1] == ')' && strcspn(text + 1, "()") == len - 2) {
    memmove(text, text + 1, len - 2);  // `(rows * cols)` as one name stood for it
    text[len - 2] = 0;
  }
  free(az->count_text);
  az->count_text = text;
  az->bound = b;
  return true;
}

// `const int stride = blockDim.x * gridDim.x;` before the loop. The local is
// bound to nothing: any other use of it (a read, an assignment) is refused.
static bool stride_decl(Az *az, CXCursor s) {
  if (kind(s) != CXCursor_DeclStmt || !clang_Cursor_isNull(az->stride)) return false;
  Kids vars = kids(s);
  if (vars.n != 1 || kind(vars.v[0]) != CXCursor_VarDecl || !az_is_integer_var(vars.v[0])) return false;
  Kids init = kids(vars.v[0]);
  if (init.n == 0 || !az_is_product(az, init.last, B_BLOCKDIM_X, B_GRIDDIM_X)) return false;
  az->stride = vars.v[0];
  return true;
}

// i += blockDim.x * gridDim.x (or the stride local)
static bool grid_stride(Az *az, CXCursor inc) {
  CXCursor lhs, rhs;
  char *op;
  if (!az_is_assignment(az, inc, &lhs, &rhs, &op)) return false;
  CXCursor r = az_strip(rhs);
  while (kind(r) == CXCursor_CStyleCastExpr || kind(r) == CXCursor_CXXStaticCastExpr) r = az_strip(kids(r).last);
  bool via_local = kind(r) == CXCursor_DeclRefExpr && !clang_Cursor_isNull(az->stride) &&
                   same(clang_getCursorReferenced(r), az->stride);
  bool ok = strcmp(op, "+=") == 0 && az_is_index(az, lhs) && (via_local || az_is_product(az, rhs, B_BLOCKDIM_X, B_GRIDDIM_X));
  free(op);
  return ok;
}

// A while loop's body that ends with the grid stride (and has it nowhere else).
static bool while_stride(Az *az, CXCursor body) {
  if (kind(body) != CXCursor_CompoundStmt) return false;
  AzList w = {0};
  clang_visitChildren(body, az_list_add, &w);
  bool ok = w.n >= 1 && grid_stride(az, w.v[w.n - 1]);
  free(w.v);
  return ok;
}

static bool is_return(CXCursor s) {
  if (kind(s) == CXCursor_ReturnStmt) return true;
  if (kind(s) != CXCursor_CompoundStmt) return false;
  Kids k = kids(s);
  return k.n == 1 && kind(k.v[0]) == CXCursor_ReturnStmt;
}

// A declaration of arithmetic locals only (no arrays, no shared memory).
static bool scalar_decls(CXCursor s) {
  Kids vars = kids(s);
  for (int i = 0; i < vars.n && i < FE_KIDS; i++) {
    CXType t = clang_getCanonicalType(clang_getCursorType(vars.v[i]));
    if (kind(vars.v[i]) != CXCursor_VarDecl || az_type_of(t) == IR_VOID || t.kind == CXType_Record) return false;
    Kids attrs = kids(vars.v[i]);
    for (int j = 0; j < attrs.n && j < FE_KIDS; j++)
      if (kind(attrs.v[j]) == CXCursor_CUDASharedAttr) return false;
  }
  return vars.n > 0 && vars.n <= FE_KIDS;
}

// A declaration of a __shared__ variable.
// `__shared__ float tile[256];`, the declaration of the tree array (az->tree).
static char *tree_decl_text(const Az *az) {
  char *t = az_text_of(az, az->tree), *out = NULL;
  if (asprintf(&out, strncmp(t, "__shared__", 10) == 0 ? "%s;" : "__shared__ %s;", t) < 0)
    COCONET_BUG("out of memory");
  free(t);
  return out;
}

static enum CXChildVisitResult find_ref(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  CXCursor *decl = data;
  if (kind(c) == CXCursor_DeclRefExpr && same(clang_getCursorReferenced(c), *decl)) {
    *decl = clang_getNullCursor();
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

// Whether statement s names decl.
static bool mentions(CXCursor s, CXCursor decl) {
  clang_visitChildren(s, find_ref, &decl);
  return clang_Cursor_isNull(decl);
}

static bool shared_decl(CXCursor s) {
  Kids vars = kind(s) == CXCursor_DeclStmt ? kids(s) : (Kids){0};
  for (int i = 0; i < vars.n && i < FE_KIDS; i++)
    if (az_is_shared(vars.v[i])) return true;
  return false;
}

// Declarations a sum over a group of threads after the element loop needs
// (analyze_sum.c), which the element body may not use: a typedef (of
// cub::BlockReduce), the __shared__ TempStorage of a CUB block reduction, a
// cooperative-groups tile or block, the lane (threadIdx.x % 32).
static bool group_sum_decl(Az *az, CXCursor s) {
  Kids vars = kind(s) == CXCursor_DeclStmt ? kids(s) : (Kids){0};
  for (int i = 0; i < vars.n && i < FE_KIDS; i++) {
    CXCursor v = vars.v[i];
    if (kind(v) == CXCursor_TypedefDecl || kind(v) == CXCursor_TypeAliasDecl) continue;
    if (kind(v) != CXCursor_VarDecl) return false;
    Kids init = kids(v);
    bool ok = (az_type_has(v, "cub::") && az_type_has(v, "TempStorage") && shared_decl(s)) ||
              (az_type_has(v, "cooperative_groups::") && az_type_has(v, "thread_block")) ||
              (az_is_integer_var(v) && init.n && az_place(az, init.last) == PLACE_LANE);
    if (!ok) return false;
  }
  return vars.n > 0;
}

// A declaration whose every initializer is a constant clang evaluates.
static bool constant_decls(CXCursor s) {
  Kids vars = kids(s);
  for (int i = 0; i < vars.n && i < FE_KIDS; i++) {
    Kids init = kids(vars.v[i]);
    CXEvalResult r = init.n ? clang_Cursor_Evaluate(init.last) : NULL;
    CXEvalResultKind k = r ? clang_EvalResult_getKind(r) : CXEval_UnExposed;
    if (r) clang_EvalResult_dispose(r);
    if (k != CXEval_Int && k != CXEval_Float) return false;
  }
  return vars.n > 0 && vars.n <= FE_KIDS;
}

// The count of the element loop in the launch's terms (once the bound is found).
static const char *count_in_launch(Az *az) {
  if (az->count_text) return az->count_text;
  return extract_size_text(az->region_fe, az->ir, &az->launch->args[az_param_position(az, az->count)]);
}

// A vector kernel over `n / 4` float4s leaves the last n % 4 elements of n:
// its stores run under e < 4 * (n / 4) (analyze_vector.c).
static void vector_guard(Az *az) {
  bool tail;
  if (az->lanes < 2 || az_failed(az)) return;
  az_vector_elements(az, count_in_launch(az), &tail);
  IrExpr *bound = tail ? az_expr(az, az->bound) : NULL;
  if (!bound) return;
  IrExpr *limit = ir_expr_binary(az->ir, IR_MUL, ir_expr_int(az->ir, az->lanes, IR_I64), az_cast_to(az, IR_I64, bound));
  az->tail_guard = ir_expr_binary(az->ir, IR_LT, ir_expr_index(az->ir), limit);
}

// Text without spaces and without parentheses around the whole (malloc'd).
static char *normalized(const char *t) { return text_unwrap(text_without(t, " ")); }

// INDEX, or the local that holds it (`idx` of `const int idx = INDEX;`).
static bool is_index_value(const Az *az, CXCursor c) {
  CXCursor r = az_strip(c);
  if (kind(r) == CXCursor_DeclRefExpr && !clang_Cursor_isNull(az->index_alias) &&
      same(clang_getCursorReferenced(r), az->index_alias))
    return true;
  return az_is_index_expr(az, c);
}

// After a vector kernel's grid-stride loop over `n / 4` float4s, the loop over
// the elements it leaves: `for (int j = 4 * (n / 4) + INDEX; j < n; j += STRIDE)`.
// Its start must be lanes times the vector loop's count and its bound that
// count's n (in the launch's terms), so that the two loops cover [0, n) once.
static bool remainder_loop(Az *az, CXCursor s, CXCursor *index, CXCursor *body) {
  Kids k = kids(s);
  if (kind(s) != CXCursor_ForStmt || k.n != 4 || kind(k.v[0]) != CXCursor_DeclStmt) return false;
  Kids vars = kids(k.v[0]);
  Kids init = vars.n == 1 ? kids(vars.v[0]) : (Kids){0};
  CXCursor a, b, lhs, rhs, start;
  if (vars.n != 1 || !init.n || !az_is_integer_var(vars.v[0]) || !az_is_binary(az, init.last, "+", &a, &b)) return false;
  if (is_index_value(az, b)) start = a;
  else if (is_index_value(az, a)) start = b;
  else return false;
  CXCursor vindex = az->index;
  az->index = vars.v[0];
  bool loop = az_is_binary(az, k.v[1], "<", &lhs, &rhs) && az_is_index(az, lhs) && grid_stride(az, k.v[2]);
  az->index = vindex;
  if (!loop) return false;
  char *st = bound_text(az, start, 0), *nt = bound_text(az, rhs, 0);
  char *v = normalized(count_in_launch(az)), *x = st ? normalized(st) : NULL, *nn = nt ? normalized(nt) : NULL;
  bool ok = false;
  if (x && nn) {
    char *forms[6] = {0};
    if (asprintf(&forms[0], "%s/%d", nn, az->lanes) < 0 || asprintf(&forms[1], "(%s)/%d", nn, az->lanes) < 0 ||
        asprintf(&forms[2], "%d*%s", az->lanes, v) < 0 || asprintf(&forms[3], "%d*(%s)", az->lanes, v) < 0 ||
        asprintf(&forms[4], "%s*%d", v, az->lanes) < 0 || asprintf(&forms[5], "(%s)*%d", v, az->lanes) < 0)
      COCONET_BUG("out of memory");
    bool count = !strcmp(v, forms[0]) || !strcmp(v, forms[1]);
    bool from = !strcmp(x, forms[2]) || !strcmp(x, forms[3]) || !strcmp(x, forms[4]) || !strcmp(x, forms[5]);
    ok = count && from;
    for (int i = 0; i < 6; i++) free(forms[i]);
  }
  if (!ok) {
    char *t = az_text_of(az, k.v[0]);
    az_fail(az, s, "kernel '%s': the loop after the vector loop ('%s') must start at %d times the vector count and "
                   "end at the element count, with the vector loop over 'n / %d' vectors for 'j < n' (in the launch's "
                   "terms, the vector loop runs over %s)", az->launch->kernel, t, az->lanes, az->lanes, count_in_launch(az));
    free(t);
  }
  free(st);
  free(nt);
  free(v);
  free(x);
  free(nn);
  *index = vars.v[0];
  *body = k.v[3];
  return ok;
}

// The remainder loop's body, analyzed as a scalar kernel on its own: it must
// store what the vector loop's lanes store, element by element.
static void remainder_body(Az *az, CXCursor index, CXCursor body) {
  IrRegion *ir = az->ir;
  IrOp *op = az->op;
  CXCursor vindex = az->index;
  int lanes = az->lanes;
  IrProgram *scratch = ir_program_new();
  az->ir = ir_region_new(scratch, ir->name, ir->loc, ir->range);
  IrPointwise info = {.kernel = op->pw.kernel, .grid = "", .block = "", .shmem = "0", .stream = "0", .args_text = ""};
  az->op = ir_op_pointwise(az->ir, op->range, &info);
  az->index = index;
  az->lanes = 0;
  az_stmt(az, body);
  if (!az_failed(az)) {
    ir_pw_drop_dead_stores(ir, op);
    ir_pw_drop_dead_stores(az->ir, az->op);
  }
  bool same_stores = az_failed(az) || ir_pw_same_stores(op, az->op);
  ir_program_free(scratch);
  az->ir = ir;
  az->op = op;
  az->index = vindex;
  az->lanes = lanes;
  if (!same_stores)
    az_fail(az, body, "kernel '%s': the loop over the elements the vector loop leaves computes them differently from "
                      "the vector loop's lanes; coconet computes the kernel element by element, so both must compute "
                      "alike", az->launch->kernel);
}

static enum CXChildVisitResult find_thread(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  const Az *az = ((const void **)data)[0];
  bool *found = ((void **)data)[1];
  CXCursor d = kind(c) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(c) : clang_getNullCursor();
  if (az_builtin(az, c) != B_NONE || (!clang_Cursor_isNull(d) && (same(d, az->index) || same(d, az->index_alias) ||
                                                                  same(d, az->stride)))) {
    *found = true;
    return CXChildVisit_Break;
  }
  if (kind(c) == CXCursor_MemberRefExpr) {  // threadIdx.y and the like
    char *t = az_text_of(az, c);
    bool thread = strstr(t, "threadIdx") || strstr(t, "blockIdx") || strstr(t, "blockDim") || strstr(t, "gridDim");
    free(t);
    if (thread) {
      *found = true;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

// A declaration whose initializers read the index, its stride or where the thread is.
static bool reads_thread(const Az *az, CXCursor s) {
  bool found = false;
  const void *data[2] = {az, &found};
  clang_visitChildren(s, find_thread, (CXClientData)data);
  return found;
}

// The __device__ function a statement calls that reads the thread's place
// itself (an element loop written in a helper: llm.c's adamw_update), or NULL.
static char *loop_in_helper(const Az *az, CXCursor s) {
  CXCursor call = az_statement_call(s);
  CXCursor fn = clang_Cursor_isNull(call) ? call : clang_getCursorDefinition(clang_getCursorReferenced(call));
  if (clang_Cursor_isNull(fn)) return NULL;
  char *text = fe_cursor_text(az->fe, fn);
  bool reads = strstr(text, "threadIdx") || strstr(text, "blockIdx");
  free(text);
  return reads ? fe_spelling(fn) : NULL;
}

// The element loop is a guard (LOOP_IF ...), statement `at` of the kernel's body.
static void guard_at(Az *az, int at, int form) {
  az->guarded = true;
  vector_guard(az);
  az->loop_at = at;
  az->loop_form = form;
}

// Find the element loop in the kernel body; run `stmt` over the element body.
static void element_loop(Az *az, CXCursor body) {
  AzList l = {0};
  clang_visitChildren(body, az_list_add, &l);
  int j = 0;
  for (; j < l.n && !az_failed(az); j++) {
    CXCursor s = l.v[j];
    if (index_decl(az, s) || builtin_alias(az, s) || stride_decl(az, s) || group_sum_decl(az, s) ||
        az_tree_decl(az, s) || az_slice_decls(az, s) || az_slice_alias_decl(az, s) || az_index_local_decl(az, s))
      continue;
    // Locals before the loop (`const int total = rows * cols;`): values of the parameters;
    // after the index, ones that do not read where the thread is (`const int n4 = n / 4;`).
    if (kind(s) == CXCursor_DeclStmt && (clang_Cursor_isNull(az->index) || constant_decls(s) || !reads_thread(az, s)) &&
        scalar_decls(s)) {
      az_decl_stmt(az, s);
      continue;
    }
    Kids k = kids(s);
    CXCursor conds[8];
    int nand = kind(s) == CXCursor_IfStmt && k.n == 2 ? az_operands(az, k.v[0], "&&", conds, 8) : 0;
    int nor = kind(s) == CXCursor_IfStmt && k.n == 2 && nand == 1 && is_return(k.v[1])
                  ? az_operands(az, k.v[0], "||", conds, 8) : 0;
    if (nand > 1) az_bound_first(az, conds, nand, "<");
    if (nor > 1) az_bound_first(az, conds, nor, ">=");
    if (kind(s) == CXCursor_ForStmt && k.n == 4 && index_decl(az, k.v[0]) && bound(az, k.v[1], "<") &&
        grid_stride(az, k.v[2])) {
      CXCursor rindex, rbody;
      bool rest = az->lanes > 1 && j + 1 < l.n && remainder_loop(az, l.v[j + 1], &rindex, &rbody);
      if (!rest) vector_guard(az);  // the elements the kernel leaves stay as they are
      az->loop_at = j;
      az->loop_form = LOOP_FOR;
      az->carried = az->nlocals;
      az_stmt(az, k.v[3]);
      if (rest && !az_failed(az)) remainder_body(az, rindex, rbody);
      j += rest ? 2 : 1;
    } else if (kind(s) == CXCursor_WhileStmt && k.n == 2 && !clang_Cursor_isNull(az->index) && while_stride(az, k.v[1]) &&
               bound(az, k.v[0], "<")) {
      // while (i < n) { ...; i += blockDim.x * gridDim.x; }: the body without its last statement.
      AzList w = {0};
      clang_visitChildren(k.v[1], az_list_add, &w);
      vector_guard(az);
      az->loop_at = j;
      az->loop_form = LOOP_WHILE;
      az->carried = az->nlocals;
      for (int b = 0; b + 1 < w.n && !az_failed(az); b++) az_stmt(az, w.v[b]);
      free(w.v);
      j++;
    } else if (kind(s) == CXCursor_IfStmt && k.n == 2 && bound(az, k.v[0], "<")) {
      guard_at(az, j++, LOOP_IF);
      az_stmt(az, k.v[1]);
    } else if (kind(s) == CXCursor_IfStmt && k.n == 2 && bound(az, k.v[0], ">=") && is_return(k.v[1])) {
      guard_at(az, j, LOOP_RETURN);
      for (j++; j < l.n && !az_failed(az); j++) az_stmt(az, l.v[j]);
    } else if (nand > 1 && bound(az, conds[0], "<")) {
      // if (i < n && A) BODY: BODY when A, for the elements i < n.
      guard_at(az, j++, LOOP_IF_AND);
      az_if_all(az, conds + 1, nand - 1, IR_LAND, k.v[1]);
    } else if (nor > 1 && bound(az, conds[0], ">=")) {
      // if (i >= n || A) return; BODY...: as `if (i >= n) return; if (A) return; BODY...`.
      guard_at(az, j, LOOP_RETURN_OR);
      az_if_all(az, conds + 1, nor - 1, IR_LOR, k.v[1]);
      for (j++; j < l.n && !az_failed(az); j++) az_stmt(az, l.v[j]);
    } else if (!az_failed(az) && (shared_decl(s) || (!clang_Cursor_isNull(az->tree) && mentions(s, az->tree)))) {
      // Shared memory used otherwise than as a block sum's tree after the loop.
      char *t = shared_decl(s) ? az_text_of(az, s) : tree_decl_text(az);
      az_fail(az, s, "kernel '%s' declares shared memory (%s): its threads work together, so it is not pointwise, and "
                     "a row-wise kernel's block owns one row; a sum is taken as atomicAdd of each element or of each "
                     "thread's running sum after its grid-stride loop, also once a warp's shuffles, cg::reduce, "
                     "cub::BlockReduce or a __device__ helper summing warp by warp through shared slots have summed "
                     "it, or a tree through a __shared__ array in the kernel after its grid-stride loop",
            az->launch->kernel, t);
      free(t);
    } else if (!az_failed(az) && kind(s) == CXCursor_DeclStmt) {
      char *t = az_text_of(az, s);
      char *nl = strchr(t, '\n');
      if (nl) strcpy(nl, " ...");
      az_fail(az, s, "kernel '%s' declares '%s' before its element loop: coconet reads locals there that are "
                     "scalars of the parameters (never assigned where they reach the loop)%s", az->launch->kernel, t,
              az->slices ? ", and, in a launch whose grid's y selects a slice, 'size_t off = blockIdx.y * n;' or "
                           "'T *p = buf + blockIdx.y * n;' never assigned afterwards" : "");
      free(t);
    } else if (!az_failed(az)) {
      char *t = az_text_of(az, s);
      char *nl = strchr(t, '\n');
      if (nl) strcpy(nl, " ...");
      char *helper = loop_in_helper(az, s);
      az_fail(az, s, "kernel '%s': cannot find the element loop (blockIdx.x * blockDim.x + threadIdx.x "
                  "with a grid-stride loop or an 'if (i < n)' guard, 'i < n' in a guard of several "
                  "conditions, after only ones that read no memory) at '%s'%s%s%s", az->launch->kernel, t,
              helper ? "; the element index is computed in __device__ function '" : "", helper ? helper : "",
              helper ? "', which coconet reads for it only when the kernel's body is the one call of it and "
                       "it returns nothing: make the call the kernel's only statement, or write the index and its "
                       "guard in the kernel and call the helper for one element" : "");
      free(helper);
      free(t);
    }
    break;
  }
  // After a grid-stride loop: atomicAdd(acc, s) of the thread's running sums.
  for (; j < l.n && !az_failed(az); j++)
    if (kind(l.v[j]) != CXCursor_NullStmt && !is_return(l.v[j]) && !(az->carried && az_after_loop(az, l.v[j])))
      az_fail(az, l.v[j], "kernel '%s': statements after the element loop are not supported (but atomicAdd(acc, s) "
                          "of a sum s the loop adds to, after a warp's shuffles, cg::reduce, cub::BlockReduce or a "
                          "block sum helper written warp by warp, or a tree through a __shared__ array with a "
                          "barrier per level, have summed it, if one thread of each adds it)",
              az->launch->kernel);
  az_tree_done(az);
  if (!az_failed(az) && clang_Cursor_isNull(az->count) && !az->count_text)
    az_fail(az, body, "kernel '%s': cannot find the element loop (blockIdx.x * blockDim.x + threadIdx.x "
                   "with a grid-stride loop or an 'if (i < n)' guard)", az->launch->kernel);
  free(l.v);
}

// The pointwise op of a launch; its count is set once the loop is found.
// The count divided by one of its factors, or NULL when k is not one.
static IrSize *size_quotient(IrSize *count, const IrSize *k) {
  if (!count || count->kind != IR_SIZE_MUL) return NULL;
  if (ir_size_equal(count->rhs, k)) return count->lhs;
  if (ir_size_equal(count->lhs, k)) return count->rhs;
  return NULL;
}

static IrOp *new_pointwise(IrRegion *ir, const Stmt *s) {
  const Launch *l = s->launch;
  char *kernel = l->template_args ? ir_printf(ir, "%s<%s>", l->kernel, l->template_args) : ir_strdup(ir, l->kernel);
  char *args = ir_strdup(ir, "");
  for (int i = 0; i < l->nargs; i++) args = ir_printf(ir, "%s%s%s", args, i ? ", " : "", l->args[i].text);
  IrPointwise info = {
      .kernel = kernel,
      .grid = l->grid.text,
      .block = l->block.text,
      .shmem = l->shmem.text ? l->shmem.text : "0",
      .stream = l->stream.text ? l->stream.text : "0",
      .args_text = args,
  };
  return ir_op_pointwise(ir, s->range, &info);
}

static CXCursor find_param(CXCursor kernel, const char *name) {
  int n = clang_Cursor_getNumArguments(kernel);
  for (int i = 0; i < n; i++) {
    CXCursor p = clang_Cursor_getArgument(kernel, (unsigned)i);
    if (named(p, name)) return p;
  }
  return clang_getNullCursor();
}

static bool reads_of(const IrExpr *e, const IrTensor *t) {
  if (!e || e->kind == IR_E_LOCAL) return false;
  if (e->kind == IR_E_READ && e->tensor == t) return true;
  return reads_of(e->a, t) || reads_of(e->b, t) || reads_of(e->c, t);
}

// A buffer the kernel sums into (atomicAdd) is touched by nothing else in it:
// an element that read the running sum would see a value that depends on the
// order the threads run in.
static void reduction_alone(Az *az) {
  for (const IrStmt *r = az->op->pw.body; r; r = r->next) {
    if (r->kind != IR_S_REDUCE) continue;
    for (const IrStmt *s = az->op->pw.body; s; s = s->next) {
      bool store = s->kind == IR_S_STORE && s->tensor == r->tensor;
      if (!store && !reads_of(s->value, r->tensor)) continue;
      if (asprintf(&az->why, "kernel '%s' %s '%s', which it also sums into with atomicAdd; coconet takes atomicAdd "
                             "as a sum over the elements only into a buffer the kernel does not otherwise read or "
                             "write", az->launch->kernel, store ? "stores to" : "reads", r->tensor->name) < 0)
        COCONET_BUG("out of memory");
      az->why_loc = s->loc.file ? s->loc : r->loc;
      return;
    }
  }
}

// A buffer the kernel reaches only under a condition may be NULL there (a flag off). Where
// the generated code would reach it for every element (a store: it is loaded and stored
// back, and gathered; a read the IR computes for every element, as a local's value, when
// the element is generated from the IR), the schedule runs when it is not NULL, the
// region as written otherwise. (A read in the kernel's own text stays where it is.)
static void reached_sometimes(Az *az) {
  IrUse *lists[2] = {az->op->reads, az->op->writes};
  for (int l = 0; l < 2; l++)
    for (const IrUse *u = lists[l]; u; u = u->next) {
      const IrTensor *t = u->ref.t;
      if (!t->text || !az_simple_name(t->text) || !ir_pw_reaches_sometimes(az->ir, az->op, t)) continue;
      bool written = false;
      for (const IrUse *w = az->op->writes; w; w = w->next) written |= w->ref.t == t;
      if (written || (!az->op->pw.text && ir_pw_reads_eagerly(az->op, t)))
        ir_region_assume_reached(az->ir, t->text, az->launch->kernel, u->loc);
    }
}

void az_wrapper_note(IrRegion *ir, const Launch *l) {
  char *note = ir_printf(ir, "the call of '%s' (%s:%u:%u) is the launch of kernel '%s' inside it%s%s%s, seen "
                         "through (its parameters stand for the call's arguments)", l->wrapper,
                         l->wrapper_loc.file ? l->wrapper_loc.file : "?", l->wrapper_loc.line, l->wrapper_loc.col,
                         l->kernel, l->wrapper_path ? " (through '" : "", l->wrapper_path ? l->wrapper_path : "",
                         l->wrapper_path ? "')" : "");
  ir_region_note(ir, note);
}

// One pass of the analysis, building into `ir`.
static IrOp *analyze_into(const Frontend *fe, IrRegion *ir, const Stmt *s, const Pragma *hint, int lane,
                          int *lanes, char **why, SrcLoc *why_loc) {
  const Launch *l = s->launch;
  // A template is read in its instance (instantiate.c), where clang has resolved its types.
  const KernelDef *def = l->def;
  bool instance = def->is_template && def->inst_fe;
  Az az = {.fe = instance ? def->inst_fe : fe, .ir = ir, .launch = l, .kernel = instance ? def->inst : def->cursor,
           .index = clang_getNullCursor(), .count = clang_getNullCursor(), .bound = clang_getNullCursor(),
           .philox = clang_getNullCursor(), .stride = clang_getNullCursor(), .index_alias = clang_getNullCursor(),
           .tree = clang_getNullCursor(), .kbody = clang_getNullCursor(), .opaque = clang_getNullCursor(), .region_fe = fe, .lane = lane,
           .slice_off = clang_getNullCursor(), .slice_stride = clang_getNullCursor(),
           .slice_alias = clang_getNullCursor()};
  az.body_fn = az.kernel;
  // One-dimensional, or a multi-tensor launch (analyze_slice.c); anything else is refused below.
  const bool one_d = launch_is_1d(fe, s);
  az.slices = one_d || !launch_block_is_1d(fe, s) ? NULL : az_slices_of(fe, ir, l);
  const PragmaClause *pc = hint ? hint->clauses : NULL;
  const PragmaArg *hi = pragma_find_key(pc, "index"), *hc = pragma_find_key(pc, "count");
  az.hint_index = hi ? hi->text : NULL;
  az.hint_count = hc ? hc->text : NULL;
  az.block_x = launch_block_x(fe, s);
  if (def->is_template && !instance) {
    az_fail(&az, def->cursor, "%s", def->why ? def->why : "kernel template: no instance");
  } else if (!one_d && !az.slices) {
    az_fail(&az, def->cursor, "kernel '%s' is launched with '<<<%s, %s>>>', whose grid or block has more than one "
                              "dimension: each element would be computed by as many threads as the other dimensions "
                              "hold; coconet reads a launch as pointwise when grid and block are one-dimensional, or "
                              "the grid is dim3(X, Y) with blockIdx.y selecting a slice of n elements "
                              "(blockIdx.y * n + i), written in the launch or as a local `dim3 grid(X, Y)` whose X "
                              "and Y are arithmetic on locals and parameters never assigned (no members, elements or "
                              "calls), and the block one-dimensional", l->kernel,
            l->grid.text, l->block.text);
    az.why_loc = s->range.begin;
  } else if (az.hint_count && clang_Cursor_isNull(find_param(az.kernel, az.hint_count))) {
    az_fail(&az, def->cursor, "'pointwise(count=%s)': kernel '%s' has no parameter '%s'", az.hint_count, l->kernel, az.hint_count);
  } else {
    az.op = new_pointwise(ir, s);
    Kids k = kids(az.kernel);
    CXCursor body = k.n ? k.last : clang_getNullCursor();
    az.kbody = body;
    if (kind(body) != CXCursor_CompoundStmt) az_fail(&az, az.kernel, "kernel '%s' has no body", l->kernel);
    else if ((az.lanes = az_kernel_lanes(&az)), !az_failed(&az) && az_loop_helper(&az, body) && !az_failed(&az))
      element_loop(&az, az.kbody);
    else if (!az_failed(&az)) element_loop(&az, body);
  }
  char *uncovered = NULL;
  const char *count = az_failed(&az) ? NULL : az.count_text ? az.count_text : az_launch_arg(&az, az.count);
  if (!az_failed(&az) && az.guarded && !launch_covers(fe, s, az.fe, az.kernel, az.bound, count ? count : "?", &uncovered)) {
    az.why = uncovered;
    az.why_loc = s->range.begin;
  }
  if (!az_failed(&az)) reduction_alone(&az);
  az_slice_done(&az);
  if (!az_failed(&az)) {
    ir_pw_drop_dead_stores(ir, az.op);
    bool tail;
    if (az.lanes > 1) ir_pw_drop_dead_lets(ir, az.op);  // other lanes' values no store of this lane uses
    az.op->pw.count = az.lanes > 1 ? az_vector_elements(&az, count_in_launch(&az), &tail)
                      : az.slices  ? ir_size_mul(ir, ir_size_parse(ir, az.slices), az_slice_count(&az))
                                   : ir_size_parse(ir, count_in_launch(&az));
    for (IrUse *u = az.op->writes; u; u = u->next)
      if (u->index == IR_IDX_I || !u->ref.t->count) ir_tensor_count(u->ref.t, az.op->pw.count);
    // Reads give counts too: t[i] spans the loop, a broadcast t[i % K] K elements.
    for (IrUse *u = az.op->reads; u; u = u->next) {
      if (u->index == IR_IDX_I) ir_tensor_count(u->ref.t, az.op->pw.count);
      if (u->ref.t->count) continue;
      if (u->index == IR_IDX_MOD && u->expr) u->ref.t->count = u->expr->k;
      // t[i / K] over rows * K elements: rows elements (K a factor of the count).
      else if (u->index == IR_IDX_DIV && u->expr && u->expr->k) u->ref.t->count = size_quotient(az.op->pw.count, u->expr->k);
      // A device scalar, t[0] (or t[K] with K constant, the largest read): K + 1 elements.
      else if (u->index == IR_IDX_CONST && u->expr && u->expr->k && u->expr->k->kind == IR_SIZE_CONST)
        u->ref.t->count = ir_size_const(ir, u->expr->k->value + 1);
    }
  }
  if (!az.why) az_text(&az);
  if (!az.why) reached_sometimes(&az);
  if (!az.why && !clang_Cursor_isNull(az.opaque) && !az.op->pw.text) {
    char *name = fe_spelling(az_callee(az.opaque)), *t = az_text_of(&az, az.opaque);
    az_fail(&az, az.opaque, "kernel '%s' calls '%s' (%s), which coconet's IR does not model: the generated code can "
                            "run such a call only in the kernel's own text, and has none for '%s' (%s)",
            l->kernel, name, t, l->kernel, az.op->pw.text_why ? az.op->pw.text_why : "?");
    free(name);
    free(t);
  }
  if (!az.why && l->wrapper) az_wrapper_note(ir, l);
  if (!az.why && az.loop_helper) {
    SrcLoc at = fe_any_loc(az.fe, clang_getCursorLocation(az.body_fn));
    ir_region_note(ir, ir_printf(ir, "kernel '%s' is one call of __device__ helper '%s' (%s:%u:%u), which holds the "
                                     "element loop: its body is read as the kernel's, its parameters bound to the "
                                     "call's arguments", l->kernel, az.loop_helper, at.file ? at.file : "?", at.line,
                                 at.col));
  }
  if (!az.why && instance) {
    SrcLoc at = fe_any_loc(fe, clang_getCursorLocation(def->cursor));
    char *note = ir_printf(ir, "kernel '%s' (%s:%u:%u) is a template: analyzed as its instance for <%s>", def->name,
                           at.file ? at.file : "?", at.line, at.col, def->args);
    ir_region_note(ir, note);
  }
  free(az.locals);
  free(az.count_text);
  *lanes = az.lanes;
  *why = az.why;
  *why_loc = az.why_loc;
  return az.why ? NULL : az.op;
}

IrOp *analyze_launch(const Frontend *fe, IrRegion *ir, const Stmt *s, const Program *prog,
                     char **why, SrcLoc *why_loc) {
  *why = NULL;
  if (!s->launch->def) {
    *why = strdup("the kernel's definition is not in this file or a header it includes");
    *why_loc = s->range.begin;
    return NULL;
  }
  const Pragma *hint = NULL;
  for (const Annotation *a = prog->pointwise; a; a = a->next)
    if ((!s->launch->def->in_header && a->range.begin.offset == s->launch->def->range.begin.offset) ||
        strcmp(a->target, s->launch->def->name) == 0)
      hint = a->pragma;
  // A dry run in a scratch region first: a kernel that is not pointwise must
  // leave no trace (tensors, variables) in the real one.
  IrProgram *scratch = ir_program_new();
  IrRegion *probe = ir_region_new(scratch, ir->name, ir->loc, ir->range);
  int lanes = 0;
  IrOp *ok = analyze_into(fe, probe, s, hint, 0, &lanes, why, why_loc);
  // A vector kernel: every lane's pass must store what lane 0's does, so that
  // one per-element function computes them all.
  for (int lane = 1; ok && lane < lanes; lane++) {
    IrProgram *other = ir_program_new();
    int n;
    IrOp *op = analyze_into(fe, ir_region_new(other, ir->name, ir->loc, ir->range), s, hint, lane, &n, why, why_loc);
    if (!op) ok = NULL;
    if (op && !ir_pw_same_stores(ok, op)) {
      ok = NULL;
      if (asprintf(why, "kernel '%s' computes lane %d of its vectors differently from lane 0 (another constant, "
                        "operation or buffer); coconet computes a vector kernel element by element, so its lanes "
                        "must compute alike", s->launch->kernel, lane) < 0)
        COCONET_BUG("out of memory");
      *why_loc = s->launch->def->range.begin;
    }
    ir_program_free(other);
  }
  ir_program_free(scratch);
  if (!ok) return NULL;
  return analyze_into(fe, ir, s, hint, 0, &lanes, why, why_loc);
}
