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
//   - the body: locals, stores t[i] = e (also +=, -=, *=, /=, and under an if
//     as a select), arithmetic, comparisons, ternaries, casts, math functions,
//     half/bf16 conversions and operators, inlined __device__ helpers
//     returning one expression, curand Philox draws keyed by the element index.
//
// `#pragma coconet pointwise(index=i, count=n)` names the index variable and
// the count parameter when the search cannot find them; the checks stay.
// When the proof fails the reason and its location are returned, so that the
// transformation that needs a pointwise kernel can say exactly why not.
#include "translator.h"
#include "ir.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct Binding {
  CXCursor decl;     // a local VarDecl or a helper's ParmDecl
  IrExpr *value;
} Binding;

typedef struct Az {
  const Frontend *fe;
  IrRegion *ir;
  IrOp *op;
  const Launch *launch;
  CXCursor kernel;        // the __global__ definition
  CXCursor index;         // the element index variable
  CXCursor count;         // the count parameter (null when the bound is an expression)
  CXCursor bound;         // the element loop's bound as written (`n`, `rows * cols`, `p.n`)
  char *count_text;       // an expression bound in the launch's terms ("R * C"), else NULL
  bool guarded;           // the element loop is a guard (if (i < n)), not grid-stride
  long long block_x;      // the launch's blockDim.x when it is a constant, else 0
  CXCursor stride;        // a local holding blockDim.x * gridDim.x (null if none); never read otherwise
  const char *hint_index; // from #pragma coconet pointwise
  const char *hint_count;
  Binding *locals;
  int nlocals, cap;
  CXCursor philox;        // the curandStatePhilox4_32_10_t variable (null if none)
  IrExpr *seed, *offset;
  int draws;
  int depth;              // inlining depth of __device__ helpers
  char *why;              // the first reason it is not pointwise
  SrcLoc why_loc;
} Az;

static bool failed(const Az *az) { return az->why != NULL; }

static IrExpr *fail(Az *az, CXCursor at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static IrExpr *fail(Az *az, CXCursor at, const char *fmt, ...) {
  if (az->why) return NULL;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  az->why = strdup(buf);
  az->why_loc = fe_loc(az->fe, clang_getCursorLocation(at));
  return NULL;
}

typedef FeKids Kids;

static Kids kids(CXCursor c) { return fe_kids(c); }

static enum CXCursorKind kind(CXCursor c) { return clang_getCursorKind(c); }

// The source text of a cursor (main file only).
static char *text_of(const Az *az, CXCursor c) {
  return fe_text(az->fe, fe_range(az->fe, clang_getCursorExtent(c)));
}

// Skip implicit nodes and parentheses.
static CXCursor strip(CXCursor c) {
  while (kind(c) == CXCursor_UnexposedExpr || kind(c) == CXCursor_ParenExpr) {
    Kids k = kids(c);
    if (k.n != 1) break;
    c = k.v[0];
  }
  return c;
}

// The operator between two operands, from the tokens between them.
static char *op_between(const Az *az, CXCursor lhs, CXCursor rhs) {
  unsigned b = fe_range(az->fe, clang_getCursorExtent(lhs)).end.offset;
  unsigned e = fe_range(az->fe, clang_getCursorExtent(rhs)).begin.offset;
  SrcRange r = {source_loc(&az->fe->src, b), source_loc(&az->fe->src, e)};
  char *t = fe_text(az->fe, r), *s = t, *d = t;
  for (; *s; s++)
    if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') *d++ = *s;
  *d = '\0';
  return t;
}

// The leading or trailing operator of a unary expression.
static char *unary_op(const Az *az, CXCursor c, CXCursor operand) {
  SrcRange whole = fe_range(az->fe, clang_getCursorExtent(c));
  SrcRange inner = fe_range(az->fe, clang_getCursorExtent(operand));
  SrcRange r = whole;
  if (inner.begin.offset > whole.begin.offset) r.end = inner.begin;
  else r.begin = inner.end;
  return fe_text(az->fe, r);
}

static IrType type_of(CXType t) {
  t = clang_getCanonicalType(t);
  switch (t.kind) {
  case CXType_Float: return IR_F32;
  case CXType_Double: return IR_F64;
  case CXType_Bool:
  case CXType_Char_S: case CXType_SChar: case CXType_Char_U: case CXType_UChar:
  case CXType_Short: case CXType_UShort:
  case CXType_Int: return IR_I32;
  case CXType_UInt: return IR_U32;
  case CXType_Long: case CXType_LongLong: case CXType_ULong: case CXType_ULongLong: return IR_I64;
  case CXType_Record: case CXType_Elaborated: {
    CXString s = clang_getTypeSpelling(clang_getUnqualifiedType(t));
    const char *n = clang_getCString(s);
    IrType r = strstr(n, "__half") ? IR_F16 : strstr(n, "bfloat16") ? IR_BF16 : IR_VOID;
    clang_disposeString(s);
    return r;
  }
  default: return IR_VOID;
  }
}

static IrType expr_type(CXCursor c) { return type_of(clang_getCursorType(c)); }

static bool is_pointer(CXCursor decl) {
  return clang_getCanonicalType(clang_getCursorType(decl)).kind == CXType_Pointer;
}

static bool same(CXCursor a, CXCursor b) { return clang_equalCursors(a, b) != 0; }

static CXCursor referenced(CXCursor ref) {
  return clang_getCursorReferenced(strip(ref));
}

//
// The element index
//

typedef enum { B_NONE, B_BLOCKIDX_X, B_BLOCKDIM_X, B_THREADIDX_X, B_GRIDDIM_X } Builtin;

// A variable of integer type (not an array: `tile[256]`'s last child is its size).
static bool is_integer_var(CXCursor d) {
  IrType t = type_of(clang_getCursorType(d));
  return t == IR_I32 || t == IR_U32 || t == IR_I64;
}

// blockIdx.x and friends, through casts and `int tid = threadIdx.x;` helpers.
static Builtin builtin(const Az *az, CXCursor c) {
  c = strip(c);
  enum CXCursorKind k = kind(c);
  if (k == CXCursor_CStyleCastExpr || k == CXCursor_CXXStaticCastExpr ||
      k == CXCursor_CXXFunctionalCastExpr) {
    Kids ks = kids(c);
    return ks.n ? builtin(az, ks.last) : B_NONE;
  }
  if ((k == CXCursor_IntegerLiteral || k == CXCursor_DeclRefExpr) && az->block_x > 0) {
    // A constant the launch's block size equals (`blockIdx.x * BLOCK` with <<<g, BLOCK>>>).
    CXEvalResult r = clang_Cursor_Evaluate(c);
    bool is = r && clang_EvalResult_getKind(r) == CXEval_Int && clang_EvalResult_getAsLongLong(r) == az->block_x;
    if (r) clang_EvalResult_dispose(r);
    if (is) return B_BLOCKDIM_X;
  }
  if (k == CXCursor_DeclRefExpr) {
    CXCursor d = clang_getCursorReferenced(c);
    if (kind(d) != CXCursor_VarDecl || !is_integer_var(d) ||
        !clang_equalCursors(clang_getCursorSemanticParent(d), az->kernel))
      return B_NONE;
    Kids ks = kids(d);
    return ks.n ? builtin(az, ks.last) : B_NONE;
  }
  if (k != CXCursor_MemberRefExpr) return B_NONE;
  // clang models threadIdx.x as a property with an empty spelling: read the text.
  char *t = text_of(az, c), *d = t;
  for (const char *p = t; *p; p++)
    if (*p != ' ' && *p != '\t' && *p != '\n') *d++ = *p;
  *d = '\0';
  Builtin b = strcmp(t, "blockIdx.x") == 0 ? B_BLOCKIDX_X : strcmp(t, "blockDim.x") == 0 ? B_BLOCKDIM_X
              : strcmp(t, "threadIdx.x") == 0 ? B_THREADIDX_X : strcmp(t, "gridDim.x") == 0 ? B_GRIDDIM_X
              : B_NONE;
  free(t);
  return b;
}

static bool is_binary(const Az *az, CXCursor c, const char *op, CXCursor *lhs, CXCursor *rhs) {
  c = strip(c);
  if (kind(c) != CXCursor_BinaryOperator) return false;
  Kids k = kids(c);
  if (k.n != 2) return false;
  char *o = op_between(az, k.v[0], k.v[1]);
  bool ok = strcmp(o, op) == 0;
  free(o);
  *lhs = k.v[0];
  *rhs = k.v[1];
  return ok;
}

static bool is_product(const Az *az, CXCursor c, Builtin x, Builtin y) {
  CXCursor a, b;
  if (!is_binary(az, c, "*", &a, &b)) return false;
  Builtin p = builtin(az, a), q = builtin(az, b);
  return (p == x && q == y) || (p == y && q == x);
}

// blockIdx.x * blockDim.x + threadIdx.x, in any order.
static bool is_index_expr(const Az *az, CXCursor c) {
  CXCursor a, b;
  while (kind(strip(c)) == CXCursor_CStyleCastExpr || kind(strip(c)) == CXCursor_CXXStaticCastExpr) {
    Kids k = kids(strip(c));
    c = k.last;
  }
  if (!is_binary(az, c, "+", &a, &b)) return false;
  return (is_product(az, a, B_BLOCKIDX_X, B_BLOCKDIM_X) && builtin(az, b) == B_THREADIDX_X) ||
         (is_product(az, b, B_BLOCKIDX_X, B_BLOCKDIM_X) && builtin(az, a) == B_THREADIDX_X);
}

// A reference to the element index variable.
static bool is_index(const Az *az, CXCursor c) {
  c = strip(c);
  while (kind(c) == CXCursor_CStyleCastExpr || kind(c) == CXCursor_CXXStaticCastExpr) {
    Kids k = kids(c);
    c = strip(k.last);
  }
  return kind(c) == CXCursor_DeclRefExpr && !clang_Cursor_isNull(az->index) &&
         same(clang_getCursorReferenced(c), az->index);
}

static int param_position(const Az *az, CXCursor decl) {
  int n = clang_Cursor_getNumArguments(az->kernel);
  for (int i = 0; i < n; i++)
    if (same(clang_Cursor_getArgument(az->kernel, (unsigned)i), decl)) return i;
  return -1;
}

static const char *launch_arg(const Az *az, CXCursor param) {
  int i = param_position(az, param);
  return i >= 0 && i < az->launch->nargs ? az->launch->args[i].text : NULL;
}

// A name or a member chain (a, a.b, a->b): usable before '.' and '*' as it is.
static bool simple_name(const char *t) {
  if (!(*t == '_' || (*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z'))) return false;
  for (; *t; t++)
    if (!(*t == '_' || *t == '.' || (*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') || (*t >= '0' && *t <= '9') ||
          (t[0] == '-' && t[1] == '>') || (t[0] == '>' && t[-1] == '-')))
      return false;
  return true;
}

//
// Expressions
//

static IrExpr *expr(Az *az, CXCursor c);

static Binding *find_local(Az *az, CXCursor decl) {
  for (int i = az->nlocals - 1; i >= 0; i--)
    if (same(az->locals[i].decl, decl)) return &az->locals[i];
  return NULL;
}

static void bind(Az *az, CXCursor decl, IrExpr *value) {
  Binding *b = find_local(az, decl);
  if (b) {
    b->value = value;
    return;
  }
  if (az->nlocals == az->cap) {
    az->cap = az->cap ? 2 * az->cap : 16;
    az->locals = realloc(az->locals, (size_t)az->cap * sizeof *az->locals);
    if (!az->locals) COCONET_BUG("out of memory");
  }
  az->locals[az->nlocals++] = (Binding){decl, value};
}

static IrExpr *cast_to(Az *az, IrType t, IrExpr *e) {
  if (!e || t == IR_VOID || e->type == t) return e;
  return ir_expr_cast(az->ir, t, e);
}

static IrTensor *tensor_of(Az *az, CXCursor base, IrSize *count) {
  CXCursor decl = referenced(base);
  if (kind(decl) != CXCursor_ParmDecl || !is_pointer(decl)) {
    char *t = text_of(az, base);
    fail(az, base, "kernel '%s' indexes '%s', which is not a pointer parameter", az->launch->kernel, t);
    free(t);
    return NULL;
  }
  const char *arg = launch_arg(az, decl);
  IrType et = type_of(clang_getPointeeType(clang_getCursorType(decl)));
  if (!arg || et == IR_VOID) {
    fail(az, base, "kernel '%s': cannot tell the element type of '%s'", az->launch->kernel,
         clang_getCString(clang_getCursorSpelling(decl)));
    return NULL;
  }
  return ir_tensor_get_or_add(az->ir, arg, et, count, fe_loc(az->fe, clang_getCursorLocation(base)));
}

// A size operand K of i % K, i / K, t[K]: a literal or a scalar parameter.
static IrSize *size_operand(Az *az, CXCursor c) {
  c = strip(c);
  if (kind(c) == CXCursor_IntegerLiteral) {
    CXEvalResult r = clang_Cursor_Evaluate(c);
    long v = r ? (long)clang_EvalResult_getAsLongLong(r) : 0;
    if (r) clang_EvalResult_dispose(r);
    return ir_size_const(az->ir, v);
  }
  if (kind(c) == CXCursor_DeclRefExpr) {
    CXCursor d = clang_getCursorReferenced(c);
    if (kind(d) == CXCursor_ParmDecl && !is_pointer(d)) return ir_size_parse(az->ir, launch_arg(az, d));
  }
  return NULL;
}

static IrExpr *read_expr(Az *az, CXCursor c) {
  Kids k = kids(c);
  if (k.n != 2) return fail(az, c, "kernel '%s': unexpected subscript", az->launch->kernel);
  CXCursor idx = k.v[1], a, b;
  IrTensor *t = tensor_of(az, k.v[0], NULL);
  if (!t) return NULL;
  IrExpr *e;
  IrSize *kk;
  SrcLoc loc = fe_loc(az->fe, clang_getCursorLocation(c));
  if (is_index(az, idx)) e = ir_expr_read(az->ir, t, IR_IDX_I, NULL);
  else if (is_binary(az, idx, "%", &a, &b) && is_index(az, a) && (kk = size_operand(az, b)))
    e = ir_expr_read(az->ir, t, IR_IDX_MOD, kk);
  else if (is_binary(az, idx, "/", &a, &b) && is_index(az, a) && (kk = size_operand(az, b)))
    e = ir_expr_read(az->ir, t, IR_IDX_DIV, kk);
  else if ((kk = size_operand(az, idx))) e = ir_expr_read(az->ir, t, IR_IDX_CONST, kk);
  else {
    char *text = text_of(az, idx);
    e = ir_expr_read_other(az->ir, t, text);
    free(text);
  }
  return ir_expr_at(e, loc);
}

static IrExpr *ref_expr(Az *az, CXCursor c) {
  CXCursor d = clang_getCursorReferenced(c);
  if (!clang_Cursor_isNull(az->index) && same(d, az->index))
    return cast_to(az, expr_type(c), ir_expr_index(az->ir));
  Binding *b = find_local(az, d);
  if (b) return b->value;
  if (kind(d) == CXCursor_ParmDecl && same(clang_getCursorSemanticParent(d), az->kernel) && !is_pointer(d)) {
    char *name = fe_spelling(d);
    IrParam *p = NULL;
    for (IrParam *q = az->op->pw.params; q; q = q->next)
      if (strcmp(q->name, name) == 0) p = q;
    if (!p) p = ir_pw_param(az->ir, az->op, name, expr_type(c), launch_arg(az, d));
    free(name);
    return ir_expr_param(az->ir, p);
  }
  if (kind(d) == CXCursor_EnumConstantDecl)
    return ir_expr_int(az->ir, clang_getEnumConstantDeclValue(d), IR_I32);
  char *t = text_of(az, c);
  fail(az, c, "kernel '%s' uses '%s', which is not a scalar parameter or a local of the element loop",
       az->launch->kernel, t);
  free(t);
  return NULL;
}

// p.lr with p a by-value struct parameter: a scalar parameter of its own,
// named p_lr in generated code, bound to the launch argument's member.
static IrExpr *member_expr(Az *az, CXCursor c) {
  Kids k = kids(c);
  CXCursor base = k.n == 1 ? strip(k.v[0]) : clang_getNullCursor();
  CXCursor d = kind(base) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(base) : clang_getNullCursor();
  const char *arg = kind(d) == CXCursor_ParmDecl && same(clang_getCursorSemanticParent(d), az->kernel) && !is_pointer(d)
                        ? launch_arg(az, d) : NULL;
  IrType t = expr_type(c);
  if (!arg || !simple_name(arg) || t == IR_VOID) {
    char *text = text_of(az, c);
    fail(az, c, "kernel '%s': '%s' is not supported in a pointwise kernel (members of by-value struct parameters "
                "are, when the launch passes a variable)", az->launch->kernel, text);
    free(text);
    return NULL;
  }
  char *pname = fe_spelling(d), *member = fe_spelling(c);
  char *name = ir_printf(az->ir, "%s_%s", pname, member), *host = ir_printf(az->ir, "%s.%s", arg, member);
  free(pname);
  free(member);
  IrParam *p = NULL;
  for (IrParam *q = az->op->pw.params; q; q = q->next)
    if (strcmp(q->name, name) == 0) p = q;
  if (!p) p = ir_pw_param(az->ir, az->op, name, t, host);
  return ir_expr_param(az->ir, p);
}

static const struct { const char *op; IrBinaryOp ir; } BINOPS[] = {
    {"+", IR_ADD}, {"-", IR_SUB}, {"*", IR_MUL}, {"/", IR_DIV}, {"%", IR_MOD},
    {"<", IR_LT}, {"<=", IR_LE}, {">", IR_GT}, {">=", IR_GE}, {"==", IR_EQ}, {"!=", IR_NE},
    {"&&", IR_LAND}, {"||", IR_LOR}, {"&", IR_BITAND}, {"|", IR_BITOR}, {"^", IR_BITXOR},
    {"<<", IR_SHL}, {">>", IR_SHR},
};

static bool binop_of(const char *op, IrBinaryOp *out) {
  for (size_t i = 0; i < sizeof BINOPS / sizeof *BINOPS; i++)
    if (strcmp(BINOPS[i].op, op) == 0) {
      *out = BINOPS[i].ir;
      return true;
    }
  return false;
}

// An operator that is not one: written in a macro's body, or really not supported.
static IrExpr *bad_operator(Az *az, CXCursor c, const char *op) {
  char *macro = fe_macro_in(az->fe, fe_range(az->fe, clang_getCursorExtent(c)));
  if (macro) {
    char *t = text_of(az, c);
    fail(az, c, "kernel '%s': '%s' comes from macro '%s', whose body coconet cannot read (libclang 16 reports "
                "code from a macro's body where the macro is used); write the expression out, or make the macro "
                "a __device__ function", az->launch->kernel, t, macro);
    free(t);
    free(macro);
    return NULL;
  }
  return fail(az, c, "kernel '%s': operator '%s' is not supported in a pointwise kernel", az->launch->kernel, op);
}

static IrExpr *binary_expr(Az *az, CXCursor c, CXCursor lhs, CXCursor rhs, const char *op) {
  IrBinaryOp bop;
  if (!binop_of(op, &bop)) return bad_operator(az, c, op);
  IrExpr *a = expr(az, lhs), *b = expr(az, rhs);
  if (!a || !b) return NULL;
  return cast_to(az, expr_type(c), ir_expr_binary(az->ir, bop, a, b));
}

static IrExpr *unary_expr(Az *az, CXCursor c) {
  Kids k = kids(c);
  char *op = unary_op(az, c, k.v[0]);
  int uop = strcmp(op, "-") == 0 ? IR_NEG : strcmp(op, "!") == 0 ? IR_NOT
            : strcmp(op, "~") == 0 ? IR_BITNOT : strcmp(op, "+") == 0 ? -1 : -2;
  if (uop == -2) bad_operator(az, c, op);
  free(op);
  IrExpr *a = uop == -2 ? NULL : expr(az, k.v[0]);
  if (!a) return NULL;
  return cast_to(az, expr_type(c), uop == -1 ? a : ir_expr_unary(az->ir, (IrUnaryOp)uop, a));
}

static IrExpr *call_expr(Az *az, CXCursor c);

static IrExpr *literal(Az *az, CXCursor c, bool is_float) {
  CXEvalResult r = clang_Cursor_Evaluate(c);
  if (!r) return fail(az, c, "kernel '%s': cannot evaluate a literal", az->launch->kernel);
  IrExpr *e = is_float ? ir_expr_float(az->ir, clang_EvalResult_getAsDouble(r), expr_type(c))
                       : ir_expr_int(az->ir, clang_EvalResult_getAsLongLong(r), expr_type(c));
  clang_EvalResult_dispose(r);
  return e;
}

static IrExpr *expr(Az *az, CXCursor c) {
  if (failed(az)) return NULL;
  Kids k = kids(c);
  switch (kind(c)) {
  case CXCursor_UnexposedExpr:
  case CXCursor_ParenExpr:
    if (k.n == 1) return cast_to(az, expr_type(c), expr(az, k.v[0]));
    break;
  case CXCursor_IntegerLiteral:
  case CXCursor_CXXBoolLiteralExpr:
    return literal(az, c, false);
  case CXCursor_FloatingLiteral:
    return literal(az, c, true);
  case CXCursor_DeclRefExpr:
    return ref_expr(az, c);
  case CXCursor_ArraySubscriptExpr:
    return read_expr(az, c);
  case CXCursor_MemberRefExpr:
    if (builtin(az, c) == B_NONE) return member_expr(az, c);
    break;
  case CXCursor_BinaryOperator:
    if (k.n == 2) {
      char *op = op_between(az, k.v[0], k.v[1]);
      IrExpr *e = binary_expr(az, c, k.v[0], k.v[1], op);
      free(op);
      return e;
    }
    break;
  case CXCursor_UnaryOperator:
    if (k.n == 1) return unary_expr(az, c);
    break;
  case CXCursor_ConditionalOperator:
    if (k.n == 3) {
      IrExpr *p = expr(az, k.v[0]), *a = expr(az, k.v[1]), *b = expr(az, k.v[2]);
      return p && a && b ? cast_to(az, expr_type(c), ir_expr_select(az->ir, p, a, b)) : NULL;
    }
    break;
  case CXCursor_CStyleCastExpr:
  case CXCursor_CXXStaticCastExpr:
  case CXCursor_CXXFunctionalCastExpr:
    if (k.n >= 1) return cast_to(az, expr_type(c), expr(az, k.last));
    break;
  case CXCursor_CallExpr:
    return call_expr(az, c);
  default:
    break;
  }
  char *t = text_of(az, c);
  fail(az, c, "kernel '%s': '%s' is not supported in a pointwise kernel", az->launch->kernel, t);
  free(t);
  return NULL;
}

//
// Calls: math, 16-bit conversions and operators, curand, __device__ helpers
//

static const struct { const char *name; IrType to; } CONVERSIONS[] = {
    {"__half2float", IR_F32},     {"__bfloat162float", IR_F32}, {"__float2half", IR_F16},
    {"__float2half_rn", IR_F16},  {"__float2bfloat16", IR_BF16}, {"__float2bfloat16_rn", IR_BF16},
    {"__double2half", IR_F16},    {"__half2bfloat16", IR_BF16}, {"__int2float_rn", IR_F32},
};

static IrExpr *philox_draw(Az *az, CXCursor c, CXCursor state_arg) {
  CXCursor s = strip(state_arg);
  Kids k = kids(s);
  bool ok = kind(s) == CXCursor_UnaryOperator && k.n == 1 && !clang_Cursor_isNull(az->philox) &&
            same(referenced(k.v[0]), az->philox) && az->seed;
  if (!ok) return fail(az, c, "kernel '%s': curand_uniform must draw from the Philox state initialised with curand_init(seed, i, offset, &state) in the element loop", az->launch->kernel);
  return ir_expr_philox(az->ir, az->seed, az->offset, az->draws++);
}

// Inline a __device__ helper whose body is locals and one return.
static IrExpr *inline_helper(Az *az, CXCursor call, CXCursor def) {
  if (az->depth > 8) return fail(az, call, "kernel '%s': __device__ helpers nest too deeply", az->launch->kernel);
  // A call clang resolved names the instantiated helper (its types resolved);
  // should one name a template's pattern (types `T`), it is not read.
  if (kind(def) == CXCursor_FunctionTemplate) {
    char *name = fe_spelling(def);
    fail(az, call, "kernel '%s' calls the __device__ helper template '%s', which coconet does not analyze yet; "
                   "make it a plain __device__ function (one overload per type)", az->launch->kernel, name);
    free(name);
    return NULL;
  }
  int n = clang_Cursor_getNumArguments(call);
  for (int i = 0; i < n; i++) {
    IrExpr *a = expr(az, clang_Cursor_getArgument(call, (unsigned)i));
    if (!a) return NULL;
    CXCursor p = clang_Cursor_getArgument(def, (unsigned)i);
    bind(az, p, cast_to(az, expr_type(p), a));
  }
  Kids k = kids(def);
  CXCursor body = k.n ? k.last : clang_getNullCursor();
  if (kind(body) != CXCursor_CompoundStmt) return fail(az, call, "kernel '%s': cannot inline this helper", az->launch->kernel);
  Kids stmts = kids(body);
  if (stmts.n > 8) return fail(az, call, "kernel '%s': helper '%s' is too long to inline (at most 8 statements)", az->launch->kernel, clang_getCString(clang_getCursorSpelling(def)));
  az->depth++;
  IrExpr *result = NULL;
  for (int i = 0; i < stmts.n && i < 8 && !failed(az); i++) {
    CXCursor s = stmts.v[i];
    if (kind(s) == CXCursor_ReturnStmt) {
      Kids r = kids(s);
      result = r.n == 1 ? cast_to(az, type_of(clang_getResultType(clang_getCursorType(def))), expr(az, r.v[0])) : NULL;
      break;
    }
    if (kind(s) != CXCursor_DeclStmt) {
      fail(az, s, "kernel '%s': helper '%s' must be locals and one return to be inlined",
           az->launch->kernel, clang_getCString(clang_getCursorSpelling(def)));
      break;
    }
    Kids vars = kids(s);
    for (int j = 0; j < vars.n && !failed(az); j++) {
      Kids init = kids(vars.v[j]);
      if (init.n == 0) continue;
      IrExpr *v = expr(az, init.last);
      if (v) bind(az, vars.v[j], cast_to(az, expr_type(vars.v[j]), v));
    }
  }
  az->depth--;
  if (!result && !failed(az)) fail(az, call, "kernel '%s': cannot inline this helper", az->launch->kernel);
  return result;
}

// min(a, b), max(a, b): fminf/fmaxf on floats (as CUDA's overloads), a select on integers.
static IrExpr *min_max(Az *az, CXCursor c, bool is_min) {
  IrExpr *a = expr(az, clang_Cursor_getArgument(c, 0)), *b = a ? expr(az, clang_Cursor_getArgument(c, 1)) : NULL;
  if (!a || !b) return NULL;
  IrType t = ir_type_promote(a->type, b->type);
  if (ir_type_is_float(t)) {
    IrType ft = t == IR_F64 ? IR_F64 : IR_F32;
    return cast_to(az, expr_type(c), ir_expr_call(az->ir, is_min ? IR_FN_FMIN : IR_FN_FMAX, ft, cast_to(az, ft, a),
                                                  cast_to(az, ft, b)));
  }
  a = cast_to(az, t, a);
  b = cast_to(az, t, b);
  return ir_expr_select(az->ir, ir_expr_binary(az->ir, is_min ? IR_LT : IR_GT, a, b), a, b);
}

// The cache-hinted loads: __ldg(&t[i]) and friends read t[i].
// The operator a 16-bit arithmetic intrinsic is (CUDA defines the operators by them), or NULL.
static const char *half_op(const char *name) {
  static const char *const ops[][2] = {{"__hadd", "+"}, {"__hsub", "-"}, {"__hmul", "*"}, {"__hdiv", "/"}};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    if (strcmp(name, ops[i][0]) == 0) return ops[i][1];
  return NULL;
}

static bool is_cache_load(const char *name) {
  static const char *const loads[] = {"__ldg", "__ldca", "__ldcg", "__ldcs", "__ldlu", "__ldcv"};
  for (size_t i = 0; i < sizeof loads / sizeof *loads; i++)
    if (strcmp(name, loads[i]) == 0) return true;
  return false;
}

static IrExpr *cache_load(Az *az, CXCursor c, const char *name) {
  CXCursor p = strip(clang_Cursor_getArgument(c, 0));
  Kids k = kids(p);
  if (kind(p) == CXCursor_UnaryOperator && k.n == 1 && kind(strip(k.v[0])) == CXCursor_ArraySubscriptExpr) {
    char *op = unary_op(az, p, k.v[0]);
    bool address = strchr(op, '&') != NULL;
    free(op);
    if (address) return read_expr(az, strip(k.v[0]));
  }
  // t + i (or i + t) with t a pointer parameter: the address of t[i].
  CXCursor a, b;
  if (is_binary(az, p, "+", &a, &b)) {
    CXCursor base = is_index(az, b) ? strip(a) : is_index(az, a) ? strip(b) : clang_getNullCursor();
    if (kind(base) == CXCursor_DeclRefExpr && kind(referenced(base)) == CXCursor_ParmDecl && is_pointer(referenced(base))) {
      IrTensor *t = tensor_of(az, base, NULL);
      return t ? ir_expr_at(ir_expr_read(az->ir, t, IR_IDX_I, NULL), fe_loc(az->fe, clang_getCursorLocation(p))) : NULL;
    }
  }
  char *t = text_of(az, c);
  fail(az, c, "kernel '%s': %s must load from &t[i] or t + i (%s)", az->launch->kernel, name, t);
  free(t);
  return NULL;
}

static IrExpr *call_expr(Az *az, CXCursor c) {
  CXCursor callee = clang_getCursorReferenced(c);
  char *name = clang_Cursor_isNull(callee) ? strdup("") : fe_spelling(callee);
  int n = clang_Cursor_getNumArguments(c);
  IrExpr *e = NULL;
  IrMathFn fn;
  IrType mt;
  if (kind(callee) == CXCursor_Constructor && n == 1) {  // __half(h), __half(x): copy or convert
    e = cast_to(az, expr_type(c), expr(az, clang_Cursor_getArgument(c, 0)));
  } else if (strncmp(name, "operator", 8) == 0 && n == 2 && strcmp(name, "operator=") != 0) {
    e = binary_expr(az, c, clang_Cursor_getArgument(c, 0), clang_Cursor_getArgument(c, 1), name + 8);
  } else if (strncmp(name, "operator", 8) == 0 && n <= 1) {
    Kids k = kids(c);   // a conversion operator: `(float)h`, called as h.operator float()
    CXCursor object = k.n && kind(k.v[0]) == CXCursor_MemberRefExpr && kids(k.v[0]).n == 1 ? kids(k.v[0]).v[0]
                      : k.n ? k.v[0] : clang_getNullCursor();
    e = k.n ? cast_to(az, expr_type(c), expr(az, object)) : NULL;
    if (!k.n) fail(az, c, "kernel '%s': unsupported conversion", az->launch->kernel);
  } else if (ir_math_lookup(name, &fn, &mt) && n == ir_math_arity(fn)) {
    IrExpr *a = expr(az, clang_Cursor_getArgument(c, 0));
    IrExpr *b = n >= 2 ? expr(az, clang_Cursor_getArgument(c, 1)) : NULL;
    IrExpr *d = n == 3 ? expr(az, clang_Cursor_getArgument(c, 2)) : NULL;
    if (a && n == 3 && b && d) e = ir_expr_fma(az->ir, mt, cast_to(az, mt, a), cast_to(az, mt, b), cast_to(az, mt, d));
    else if (a && n < 3 && (n == 1 || b)) e = ir_expr_call(az->ir, fn, mt, cast_to(az, mt, a), cast_to(az, mt, b));
  } else if ((strcmp(name, "min") == 0 || strcmp(name, "max") == 0) && n == 2) {
    e = min_max(az, c, name[1] == 'i');
  } else if (strcmp(name, "__saturatef") == 0 && n == 1) {
    IrExpr *a = cast_to(az, IR_F32, expr(az, clang_Cursor_getArgument(c, 0)));
    if (a)
      e = ir_expr_call(az->ir, IR_FN_FMIN, IR_F32,
                       ir_expr_call(az->ir, IR_FN_FMAX, IR_F32, a, ir_expr_float(az->ir, 0, IR_F32)),
                       ir_expr_float(az->ir, 1, IR_F32));
  } else if (strcmp(name, "__fdividef") == 0 && n == 2) {
    e = binary_expr(az, c, clang_Cursor_getArgument(c, 0), clang_Cursor_getArgument(c, 1), "/");
  } else if (half_op(name) && n == 2) {  // __hadd(a, b) is a + b on __half and __nv_bfloat16
    e = binary_expr(az, c, clang_Cursor_getArgument(c, 0), clang_Cursor_getArgument(c, 1), half_op(name));
  } else if (strcmp(name, "__hneg") == 0 && n == 1) {
    IrExpr *a = expr(az, clang_Cursor_getArgument(c, 0));
    e = a ? cast_to(az, expr_type(c), ir_expr_unary(az->ir, IR_NEG, a)) : NULL;
  } else if (is_cache_load(name) && n == 1) {
    e = cache_load(az, c, name);
  } else if (strcmp(name, "curand_uniform") == 0 && n == 1) {
    e = philox_draw(az, c, clang_Cursor_getArgument(c, 0));
  } else {
    for (size_t i = 0; i < sizeof CONVERSIONS / sizeof *CONVERSIONS; i++)
      if (strcmp(name, CONVERSIONS[i].name) == 0 && n == 1)
        e = cast_to(az, CONVERSIONS[i].to, expr(az, clang_Cursor_getArgument(c, 0)));
    CXCursor def = clang_getCursorDefinition(callee);
    if (!e && !failed(az) && !clang_Cursor_isNull(def) && fe_in_main_file(az->fe, clang_getCursorLocation(def)))
      e = inline_helper(az, c, def);
    else if (!e && !failed(az)) {
      char *t = text_of(az, c);
      fail(az, c, "kernel '%s' calls '%s', which a pointwise kernel cannot use (%s)", az->launch->kernel, name, t);
      free(t);
    }
  }
  free(name);
  return e;
}

//
// Statements of the element loop
//

static void stmt(Az *az, CXCursor s);

static enum CXChildVisitResult each_stmt(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Az *az = data;
  stmt(az, c);
  return failed(az) ? CXChildVisit_Break : CXChildVisit_Continue;
}

static IrTensor *store_target(Az *az, CXCursor lhs) {
  lhs = strip(lhs);
  if (kind(lhs) != CXCursor_ArraySubscriptExpr) return NULL;
  Kids k = kids(lhs);
  if (k.n != 2 || !is_index(az, k.v[1])) {
    char *t = text_of(az, lhs);
    fail(az, lhs, "kernel '%s' writes %s: a pointwise kernel writes only at [i]", az->launch->kernel, t);
    free(t);
    return NULL;
  }
  return tensor_of(az, k.v[0], az->op->pw.count);
}

static void store(Az *az, CXCursor at, IrTensor *t, IrExpr *value, IrExpr *cond) {
  if (!t || !value) return;
  value = cast_to(az, t->type, value);
  if (cond) value = ir_expr_select(az->ir, cond, value, ir_expr_read(az->ir, t, IR_IDX_I, NULL));
  ir_pw_store(az->ir, az->op, t, value, fe_loc(az->fe, clang_getCursorLocation(at)));
}

// x = e, x op= e: a store to t[i] or a new value of a local.
static void assign(Az *az, CXCursor s, CXCursor lhs, CXCursor rhs, const char *op, IrExpr *cond) {
  IrExpr *value;
  if (strcmp(op, "=") == 0) {
    value = expr(az, rhs);
  } else {
    char bop[3] = {op[0], op[1] == '=' ? '\0' : op[1], '\0'};
    value = binary_expr(az, s, lhs, rhs, bop);
  }
  if (!value) return;  // the reason is recorded
  CXCursor l = strip(lhs);
  if (kind(l) == CXCursor_DeclRefExpr && find_local(az, clang_getCursorReferenced(l))) {
    if (cond) {
      fail(az, s, "kernel '%s': a local assigned under a condition is not supported", az->launch->kernel);
      return;
    }
    CXCursor d = clang_getCursorReferenced(l);
    char *name = fe_spelling(d);
    bind(az, d, ir_pw_let(az->ir, az->op, name, cast_to(az, expr_type(d), value),
                          fe_loc(az->fe, clang_getCursorLocation(s))));
    free(name);
    return;
  }
  IrTensor *t = store_target(az, lhs);
  if (!t && !failed(az)) {
    char *text = text_of(az, lhs);
    fail(az, s, "kernel '%s' assigns to '%s': only t[i] and locals can be assigned", az->launch->kernel, text);
    free(text);
  }
  store(az, s, t, value, cond);
}

// x = e, x op= e; for class types (__half) these are calls of operator=, operator+=, ...
static bool is_assignment(const Az *az, CXCursor s, CXCursor *lhs, CXCursor *rhs, char **op) {
  if (kind(s) == CXCursor_CallExpr && clang_Cursor_getNumArguments(s) == 2) {
    char *name = fe_spelling(clang_getCursorReferenced(s));
    size_t n = strlen(name);
    bool assign = strncmp(name, "operator", 8) == 0 && n > 8 && name[n - 1] == '=' &&
                  strcmp(name + 8, "==") != 0 && strcmp(name + 8, "!=") != 0 &&
                  strcmp(name + 8, "<=") != 0 && strcmp(name + 8, ">=") != 0;
    if (assign) {
      *op = strdup(name + 8);
      *lhs = clang_Cursor_getArgument(s, 0);
      *rhs = clang_Cursor_getArgument(s, 1);
    }
    free(name);
    return assign;
  }
  Kids k = kids(s);
  if ((kind(s) != CXCursor_BinaryOperator && kind(s) != CXCursor_CompoundAssignOperator) || k.n != 2)
    return false;
  *op = op_between(az, k.v[0], k.v[1]);
  size_t n = strlen(*op);
  if (n == 0 || (*op)[n - 1] != '=' || strcmp(*op, "==") == 0 || strcmp(*op, "<=") == 0 ||
      strcmp(*op, ">=") == 0 || strcmp(*op, "!=") == 0) {
    free(*op);
    return false;
  }
  *lhs = k.v[0];
  *rhs = k.v[1];
  return true;
}

static void decl_stmt(Az *az, CXCursor s) {
  Kids vars = kids(s);
  for (int i = 0; i < vars.n && !failed(az); i++) {
    CXCursor v = vars.v[i];
    CXString ts = clang_getTypeSpelling(clang_getCursorType(v));
    bool state = strstr(clang_getCString(ts), "curandStatePhilox4_32_10") != NULL;
    clang_disposeString(ts);
    if (state) {
      az->philox = v;
      continue;
    }
    Kids init = kids(v);
    CXCursor last = init.n ? init.last : clang_getNullCursor();
    if (init.n == 0 || kind(last) == CXCursor_TypeRef) {
      fail(az, v, "kernel '%s': a local without an initial value is not supported", az->launch->kernel);
      return;
    }
    IrExpr *value = expr(az, last);
    if (!value) return;
    char *name = fe_spelling(v);
    bind(az, v, ir_pw_let(az->ir, az->op, name, cast_to(az, expr_type(v), value),
                          fe_loc(az->fe, clang_getCursorLocation(v))));
    free(name);
  }
}

static void curand_init_call(Az *az, CXCursor c) {
  int n = clang_Cursor_getNumArguments(c);
  CXCursor state = n == 4 ? strip(clang_Cursor_getArgument(c, 3)) : clang_getNullCursor();
  Kids k = kids(state);
  if (n != 4 || !is_index(az, clang_Cursor_getArgument(c, 1)) || k.n != 1 ||
      clang_Cursor_isNull(az->philox) || !same(referenced(k.v[0]), az->philox)) {
    fail(az, c, "kernel '%s': curand_init must be keyed by the element index: curand_init(seed, i, offset, &state)", az->launch->kernel);
    return;
  }
  az->seed = cast_to(az, IR_I64, expr(az, clang_Cursor_getArgument(c, 0)));
  az->offset = cast_to(az, IR_I64, expr(az, clang_Cursor_getArgument(c, 2)));
  az->draws = 0;
}

typedef struct CondStores {
  Az *az;
  IrExpr *cond;
} CondStores;

static enum CXChildVisitResult cond_store(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  CondStores *cs = data;
  c = strip(c);
  CXCursor lhs, rhs;
  char *op;
  if (!is_assignment(cs->az, c, &lhs, &rhs, &op)) {
    fail(cs->az, c, "kernel '%s': only stores may be conditional in a pointwise kernel", cs->az->launch->kernel);
    return CXChildVisit_Break;
  }
  assign(cs->az, c, lhs, rhs, op, cs->cond);
  free(op);
  return failed(cs->az) ? CXChildVisit_Break : CXChildVisit_Continue;
}

// if (c) t[i] = e;  becomes  t[i] = c ? e : t[i].
static void if_stmt(Az *az, CXCursor s) {
  Kids k = kids(s);
  if (k.n != 2) {
    fail(az, s, "kernel '%s': 'if' with 'else' in the element loop is not supported", az->launch->kernel);
    return;
  }
  IrExpr *cond = expr(az, k.v[0]);
  if (!cond) return;
  CondStores cs = {az, cond};
  if (kind(k.v[1]) == CXCursor_CompoundStmt) clang_visitChildren(k.v[1], cond_store, &cs);
  else cond_store(k.v[1], s, &cs);
}

static void stmt(Az *az, CXCursor s) {
  if (failed(az)) return;
  s = strip(s);  // expression statements may be wrapped in implicit nodes
  CXCursor lhs, rhs;
  char *op;
  if (is_assignment(az, s, &lhs, &rhs, &op)) {
    assign(az, s, lhs, rhs, op, NULL);
    free(op);
    return;
  }
  switch (kind(s)) {
  case CXCursor_CompoundStmt: clang_visitChildren(s, each_stmt, az); break;
  case CXCursor_DeclStmt: decl_stmt(az, s); break;
  case CXCursor_NullStmt: break;
  case CXCursor_IfStmt: if_stmt(az, s); break;
  case CXCursor_CallExpr: {
    char *name = fe_spelling(clang_getCursorReferenced(s));
    if (strcmp(name, "curand_init") == 0) curand_init_call(az, s);
    else fail(az, s, "kernel '%s' calls '%s' as a statement: not supported in a pointwise kernel", az->launch->kernel, name);
    free(name);
    break;
  }
  default: {
    char *t = text_of(az, s);
    fail(az, s, "kernel '%s': '%s' is not supported in a pointwise kernel", az->launch->kernel, t);
    free(t);
  }
  }
}

//
// The element loop
//

typedef struct StmtList {
  CXCursor *v;
  int n, cap;
} StmtList;

static enum CXChildVisitResult list_stmt(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  StmtList *l = data;
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 16;
    l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
    if (!l->v) COCONET_BUG("out of memory");
  }
  l->v[l->n++] = c;
  return CXChildVisit_Continue;
}

static bool named(CXCursor c, const char *name) {
  if (!name) return false;
  char *s = fe_spelling(c);
  bool eq = strcmp(s, name) == 0;
  free(s);
  return eq;
}

// `T i = INDEX;` (or the hinted variable): records the index; true if it is one.
static bool index_decl(Az *az, CXCursor s) {
  if (kind(s) != CXCursor_DeclStmt) return false;
  Kids vars = kids(s);
  if (vars.n != 1 || kind(vars.v[0]) != CXCursor_VarDecl) return false;
  Kids init = kids(vars.v[0]);
  bool hinted = az->hint_index && named(vars.v[0], az->hint_index);
  if (!hinted && (init.n == 0 || !is_index_expr(az, init.last))) return false;
  az->index = vars.v[0];
  return true;
}

// A declaration of helpers such as `int tid = threadIdx.x;`.
static bool builtin_alias(Az *az, CXCursor s) {
  if (kind(s) != CXCursor_DeclStmt) return false;
  Kids vars = kids(s);
  for (int i = 0; i < vars.n; i++) {
    Kids init = kids(vars.v[i]);
    if (init.n == 0 || !is_integer_var(vars.v[i]) || builtin(az, init.last) == B_NONE) return false;
  }
  return vars.n > 0;
}

// The host text of a bound written in the kernel's terms: scalar parameters
// become their launch arguments, members of by-value struct parameters
// (`p.n`) the argument's member, locals of the kernel their initial values;
// with integer literals and + - * / between them. NULL when it is anything else.
static char *bound_text(Az *az, CXCursor c, int depth) {
  c = strip(c);
  Kids k = kids(c);
  enum CXCursorKind ck = kind(c);
  if (depth > 8) return NULL;
  if (ck == CXCursor_IntegerLiteral) return text_of(az, c);
  if (ck == CXCursor_CStyleCastExpr || ck == CXCursor_CXXStaticCastExpr || ck == CXCursor_CXXFunctionalCastExpr)
    return k.n ? bound_text(az, k.last, depth + 1) : NULL;
  if (ck == CXCursor_DeclRefExpr) {
    CXCursor d = clang_getCursorReferenced(c);
    if (kind(d) == CXCursor_ParmDecl && !is_pointer(d)) {
      const char *arg = launch_arg(az, d);
      char *out = NULL;
      if (arg && asprintf(&out, simple_name(arg) ? "%s" : "(%s)", arg) < 0) out = NULL;
      return out;
    }
    Kids init = kids(d);
    bool local = kind(d) == CXCursor_VarDecl && same(clang_getCursorSemanticParent(d), az->kernel) && init.n &&
                 clang_isConstQualifiedType(clang_getCursorType(d));
    return local ? bound_text(az, init.last, depth + 1) : NULL;
  }
  if (ck == CXCursor_MemberRefExpr && k.n == 1 && kind(strip(k.v[0])) == CXCursor_DeclRefExpr) {
    CXCursor d = referenced(k.v[0]);
    const char *arg = kind(d) == CXCursor_ParmDecl && !is_pointer(d) ? launch_arg(az, d) : NULL;
    char *member = fe_spelling(c), *out = NULL;
    if (arg && simple_name(arg) && asprintf(&out, "%s.%s", arg, member) < 0) out = NULL;
    free(member);
    return out;
  }
  if (ck == CXCursor_BinaryOperator && k.n == 2) {
    char *op = op_between(az, k.v[0], k.v[1]);
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
  if (!is_binary(az, cond, op, &a, &b) || !is_index(az, a)) return false;
  CXCursor d = referenced(b);
  if (kind(strip(b)) == CXCursor_DeclRefExpr && kind(d) == CXCursor_ParmDecl && !is_pointer(d)) {
    if (az->hint_count && !named(d, az->hint_count)) return false;
    az->count = d;
    az->bound = b;
    return true;
  }
  char *text = az->hint_count ? NULL : bound_text(az, b, 0);
  if (!text) {
    char *t = text_of(az, b);
    fail(az, b, "kernel '%s': the element loop's bound '%s' must be a scalar parameter of the kernel or an "
                "expression of them (+ - * / and integer literals, members of struct parameters, const locals)",
         az->launch->kernel, t);
    free(t);
    return false;
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
  if (vars.n != 1 || kind(vars.v[0]) != CXCursor_VarDecl || !is_integer_var(vars.v[0])) return false;
  Kids init = kids(vars.v[0]);
  if (init.n == 0 || !is_product(az, init.last, B_BLOCKDIM_X, B_GRIDDIM_X)) return false;
  az->stride = vars.v[0];
  return true;
}

// i += blockDim.x * gridDim.x (or the stride local)
static bool grid_stride(Az *az, CXCursor inc) {
  CXCursor lhs, rhs;
  char *op;
  if (!is_assignment(az, inc, &lhs, &rhs, &op)) return false;
  CXCursor r = strip(rhs);
  while (kind(r) == CXCursor_CStyleCastExpr || kind(r) == CXCursor_CXXStaticCastExpr) r = strip(kids(r).last);
  bool via_local = kind(r) == CXCursor_DeclRefExpr && !clang_Cursor_isNull(az->stride) &&
                   same(clang_getCursorReferenced(r), az->stride);
  bool ok = strcmp(op, "+=") == 0 && is_index(az, lhs) && (via_local || is_product(az, rhs, B_BLOCKDIM_X, B_GRIDDIM_X));
  free(op);
  return ok;
}

// A while loop's body that ends with the grid stride (and has it nowhere else).
static bool while_stride(Az *az, CXCursor body) {
  if (kind(body) != CXCursor_CompoundStmt) return false;
  StmtList w = {0};
  clang_visitChildren(body, list_stmt, &w);
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
    if (kind(vars.v[i]) != CXCursor_VarDecl || type_of(t) == IR_VOID || t.kind == CXType_Record) return false;
    Kids attrs = kids(vars.v[i]);
    for (int j = 0; j < attrs.n && j < FE_KIDS; j++)
      if (kind(attrs.v[j]) == CXCursor_CUDASharedAttr) return false;
  }
  return vars.n > 0 && vars.n <= FE_KIDS;
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

// Find the element loop in the kernel body; run `stmt` over the element body.
static void element_loop(Az *az, CXCursor body) {
  StmtList l = {0};
  clang_visitChildren(body, list_stmt, &l);
  int j = 0;
  for (; j < l.n && !failed(az); j++) {
    CXCursor s = l.v[j];
    if (index_decl(az, s) || builtin_alias(az, s) || stride_decl(az, s)) continue;
    // Locals before the loop (`const int total = rows * cols;`): values of the parameters;
    // after the index, constants only (`constexpr float one = 1.0f;`).
    if (kind(s) == CXCursor_DeclStmt && (clang_Cursor_isNull(az->index) || constant_decls(s)) && scalar_decls(s)) {
      decl_stmt(az, s);
      continue;
    }
    Kids k = kids(s);
    if (kind(s) == CXCursor_ForStmt && k.n == 4 && index_decl(az, k.v[0]) && bound(az, k.v[1], "<") &&
        grid_stride(az, k.v[2])) {
      stmt(az, k.v[3]);
      j++;
    } else if (kind(s) == CXCursor_WhileStmt && k.n == 2 && !clang_Cursor_isNull(az->index) && while_stride(az, k.v[1]) &&
               bound(az, k.v[0], "<")) {
      // while (i < n) { ...; i += blockDim.x * gridDim.x; }: the body without its last statement.
      StmtList w = {0};
      clang_visitChildren(k.v[1], list_stmt, &w);
      for (int b = 0; b + 1 < w.n && !failed(az); b++) stmt(az, w.v[b]);
      free(w.v);
      j++;
    } else if (kind(s) == CXCursor_IfStmt && k.n == 2 && bound(az, k.v[0], "<")) {
      az->guarded = true;
      stmt(az, k.v[1]);
      j++;
    } else if (kind(s) == CXCursor_IfStmt && k.n == 2 && bound(az, k.v[0], ">=") && is_return(k.v[1])) {
      az->guarded = true;
      for (j++; j < l.n && !failed(az); j++) stmt(az, l.v[j]);
    } else if (!failed(az)) {
      char *t = text_of(az, s);
      char *nl = strchr(t, '\n');
      if (nl) strcpy(nl, " ...");
      fail(az, s, "kernel '%s': cannot find the element loop (blockIdx.x * blockDim.x + threadIdx.x "
                  "with a grid-stride loop or an 'if (i < n)' guard) at '%s'", az->launch->kernel, t);
      free(t);
    }
    break;
  }
  for (; j < l.n && !failed(az); j++)
    if (kind(l.v[j]) != CXCursor_NullStmt && !is_return(l.v[j]))
      fail(az, l.v[j], "kernel '%s': statements after the element loop are not supported", az->launch->kernel);
  if (!failed(az) && clang_Cursor_isNull(az->count) && !az->count_text)
    fail(az, body, "kernel '%s': cannot find the element loop (blockIdx.x * blockDim.x + threadIdx.x "
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

// One pass of the analysis, building into `ir`.
static IrOp *analyze_into(const Frontend *fe, IrRegion *ir, const Stmt *s, const Pragma *hint,
                          char **why, SrcLoc *why_loc) {
  const Launch *l = s->launch;
  // A template is read in its instance (instantiate.c), where clang has resolved its types.
  const KernelDef *def = l->def;
  bool instance = def->is_template && def->inst_fe;
  Az az = {.fe = instance ? def->inst_fe : fe, .ir = ir, .launch = l, .kernel = instance ? def->inst : def->cursor,
           .index = clang_getNullCursor(), .count = clang_getNullCursor(), .bound = clang_getNullCursor(),
           .philox = clang_getNullCursor(), .stride = clang_getNullCursor()};
  const PragmaClause *pc = hint ? hint->clauses : NULL;
  const PragmaArg *hi = pragma_find_key(pc, "index"), *hc = pragma_find_key(pc, "count");
  az.hint_index = hi ? hi->text : NULL;
  az.hint_count = hc ? hc->text : NULL;
  az.block_x = launch_block_x(fe, s);
  if (def->is_template && !instance) {
    fail(&az, def->cursor, "%s", def->why ? def->why : "kernel template: no instance");
  } else if (az.hint_count && clang_Cursor_isNull(find_param(az.kernel, az.hint_count))) {
    fail(&az, def->cursor, "'pointwise(count=%s)': kernel '%s' has no parameter '%s'", az.hint_count, l->kernel, az.hint_count);
  } else {
    az.op = new_pointwise(ir, s);
    Kids k = kids(az.kernel);
    CXCursor body = k.n ? k.last : clang_getNullCursor();
    if (kind(body) != CXCursor_CompoundStmt) fail(&az, az.kernel, "kernel '%s' has no body", l->kernel);
    else element_loop(&az, body);
  }
  char *uncovered = NULL;
  const char *count = failed(&az) ? NULL : az.count_text ? az.count_text : launch_arg(&az, az.count);
  if (!failed(&az) && az.guarded && !launch_covers(fe, s, az.fe, az.kernel, az.bound, count ? count : "?", &uncovered)) {
    az.why = uncovered;
    az.why_loc = s->range.begin;
  }
  if (!failed(&az)) {
    az.op->pw.count = az.count_text ? ir_size_parse(ir, az.count_text)
                                    : ir_size_parse(ir, extract_size_text(fe, ir, &l->args[param_position(&az, az.count)]));
    for (IrUse *u = az.op->writes; u; u = u->next)
      if (!u->ref.t->count) u->ref.t->count = az.op->pw.count;
    // Reads give counts too: t[i] spans the loop, a broadcast t[i % K] K elements.
    for (IrUse *u = az.op->reads; u; u = u->next) {
      if (u->ref.t->count) continue;
      if (u->index == IR_IDX_I) u->ref.t->count = az.op->pw.count;
      else if (u->index == IR_IDX_MOD && u->expr) u->ref.t->count = u->expr->k;
      // t[i / K] over rows * K elements: rows elements (K a factor of the count).
      else if (u->index == IR_IDX_DIV && u->expr && u->expr->k) u->ref.t->count = size_quotient(az.op->pw.count, u->expr->k);
      // A device scalar, t[0] (or t[K] with K constant): K + 1 elements.
      else if (u->index == IR_IDX_CONST && u->expr && u->expr->k && u->expr->k->kind == IR_SIZE_CONST)
        u->ref.t->count = ir_size_const(ir, u->expr->k->value + 1);
    }
  }
  if (!az.why && l->wrapper) {
    char *note = ir_printf(ir, "the call of '%s' (%s:%u:%u) is the launch of kernel '%s' inside it, seen through "
                           "(its parameters stand for the call's arguments)", l->wrapper,
                           l->wrapper_loc.file ? l->wrapper_loc.file : "?", l->wrapper_loc.line, l->wrapper_loc.col,
                           l->kernel);
    ir_region_note(ir, note);
  }
  if (!az.why && instance) {
    SrcLoc at = fe_loc(fe, clang_getCursorLocation(def->cursor));
    char *note = ir_printf(ir, "kernel '%s' (%s:%u:%u) is a template: analyzed as its instance for <%s>", def->name,
                           at.file ? at.file : "?", at.line, at.col, def->args);
    ir_region_note(ir, note);
  }
  free(az.locals);
  free(az.count_text);
  *why = az.why;
  *why_loc = az.why_loc;
  return az.why ? NULL : az.op;
}

IrOp *analyze_launch(const Frontend *fe, IrRegion *ir, const Stmt *s, const Program *prog,
                     char **why, SrcLoc *why_loc) {
  *why = NULL;
  if (!s->launch->def) {
    *why = strdup("the kernel's definition is not in this file");
    *why_loc = s->range.begin;
    return NULL;
  }
  const Pragma *hint = NULL;
  for (const Annotation *a = prog->pointwise; a; a = a->next)
    if (a->range.begin.offset == s->launch->def->range.begin.offset ||
        strcmp(a->target, s->launch->def->name) == 0)
      hint = a->pragma;
  // A dry run in a scratch region first: a kernel that is not pointwise must
  // leave no trace (tensors, variables) in the real one.
  IrProgram *scratch = ir_program_new();
  IrRegion *probe = ir_region_new(scratch, ir->name, ir->loc, ir->range);
  IrOp *ok = analyze_into(fe, probe, s, hint, why, why_loc);
  ir_program_free(scratch);
  if (!ok) return NULL;
  return analyze_into(fe, ir, s, hint, why, why_loc);
}
