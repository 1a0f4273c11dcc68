// analyze_expr.c: the kernel analysis' expressions and the statements of the
// element body (locals, stores, conditional stores, curand_init), into IR
// expressions; helpers, math functions and intrinsics. See analyze.c.
#include "analyze.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

bool az_failed(const Az *az) { return az->why != NULL; }

IrExpr *az_fail(Az *az, CXCursor at, const char *fmt, ...) {
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


// The source text of a cursor (main file only).
char *az_text_of(const Az *az, CXCursor c) {
  return fe_text(az->fe, fe_range(az->fe, clang_getCursorExtent(c)));
}

// Skip implicit nodes and parentheses.
CXCursor az_strip(CXCursor c) {
  while (kind(c) == CXCursor_UnexposedExpr || kind(c) == CXCursor_ParenExpr) {
    Kids k = kids(c);
    if (k.n != 1) break;
    c = k.v[0];
  }
  return c;
}

// The operator between two operands, from the tokens between them.
char *az_op_between(const Az *az, CXCursor lhs, CXCursor rhs) {
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

IrType az_type_of(CXType t) {
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

static IrType expr_type(CXCursor c) { return az_type_of(clang_getCursorType(c)); }

bool az_is_pointer(CXCursor decl) {
  return clang_getCanonicalType(clang_getCursorType(decl)).kind == CXType_Pointer;
}


CXCursor az_referenced(CXCursor ref) {
  return clang_getCursorReferenced(az_strip(ref));
}

//
// The element index
//

// A variable of integer type (not an array: `tile[256]`'s last child is its size).
bool az_is_integer_var(CXCursor d) {
  IrType t = az_type_of(clang_getCursorType(d));
  return t == IR_I32 || t == IR_U32 || t == IR_I64;
}

// blockIdx.x and friends, through casts and `int tid = threadIdx.x;` helpers.
Builtin az_builtin(const Az *az, CXCursor c) {
  c = az_strip(c);
  enum CXCursorKind k = kind(c);
  if (k == CXCursor_CStyleCastExpr || k == CXCursor_CXXStaticCastExpr ||
      k == CXCursor_CXXFunctionalCastExpr) {
    Kids ks = kids(c);
    return ks.n ? az_builtin(az, ks.last) : B_NONE;
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
    if (kind(d) != CXCursor_VarDecl || !az_is_integer_var(d) ||
        !clang_equalCursors(clang_getCursorSemanticParent(d), az->kernel))
      return B_NONE;
    Kids ks = kids(d);
    return ks.n ? az_builtin(az, ks.last) : B_NONE;
  }
  if (k != CXCursor_MemberRefExpr) return B_NONE;
  // clang models threadIdx.x as a property with an empty spelling: read the text.
  char *t = az_text_of(az, c), *d = t;
  for (const char *p = t; *p; p++)
    if (*p != ' ' && *p != '\t' && *p != '\n') *d++ = *p;
  *d = '\0';
  Builtin b = strcmp(t, "blockIdx.x") == 0 ? B_BLOCKIDX_X : strcmp(t, "blockDim.x") == 0 ? B_BLOCKDIM_X
              : strcmp(t, "threadIdx.x") == 0 ? B_THREADIDX_X : strcmp(t, "gridDim.x") == 0 ? B_GRIDDIM_X
              : B_NONE;
  free(t);
  return b;
}

bool az_is_binary(const Az *az, CXCursor c, const char *op, CXCursor *lhs, CXCursor *rhs) {
  c = az_strip(c);
  if (kind(c) != CXCursor_BinaryOperator) return false;
  Kids k = kids(c);
  if (k.n != 2) return false;
  char *o = az_op_between(az, k.v[0], k.v[1]);
  bool ok = strcmp(o, op) == 0;
  free(o);
  *lhs = k.v[0];
  *rhs = k.v[1];
  return ok;
}

bool az_is_product(const Az *az, CXCursor c, Builtin x, Builtin y) {
  CXCursor a, b;
  if (!az_is_binary(az, c, "*", &a, &b)) return false;
  Builtin p = az_builtin(az, a), q = az_builtin(az, b);
  return (p == x && q == y) || (p == y && q == x);
}

// blockIdx.x * blockDim.x + threadIdx.x, in any order.
bool az_is_index_expr(const Az *az, CXCursor c) {
  CXCursor a, b;
  while (kind(az_strip(c)) == CXCursor_CStyleCastExpr || kind(az_strip(c)) == CXCursor_CXXStaticCastExpr) {
    Kids k = kids(az_strip(c));
    c = k.last;
  }
  if (!az_is_binary(az, c, "+", &a, &b)) return false;
  return (az_is_product(az, a, B_BLOCKIDX_X, B_BLOCKDIM_X) && az_builtin(az, b) == B_THREADIDX_X) ||
         (az_is_product(az, b, B_BLOCKIDX_X, B_BLOCKDIM_X) && az_builtin(az, a) == B_THREADIDX_X);
}

// A reference to the element index variable.
bool az_is_index(const Az *az, CXCursor c) {
  c = az_strip(c);
  while (kind(c) == CXCursor_CStyleCastExpr || kind(c) == CXCursor_CXXStaticCastExpr) {
    Kids k = kids(c);
    c = az_strip(k.last);
  }
  return kind(c) == CXCursor_DeclRefExpr && !clang_Cursor_isNull(az->index) &&
         same(clang_getCursorReferenced(c), az->index);
}

int az_param_position(const Az *az, CXCursor decl) {
  int n = clang_Cursor_getNumArguments(az->kernel);
  for (int i = 0; i < n; i++)
    if (same(clang_Cursor_getArgument(az->kernel, (unsigned)i), decl)) return i;
  return -1;
}

const char *az_launch_arg(const Az *az, CXCursor param) {
  int i = az_param_position(az, param);
  return i >= 0 && i < az->launch->nargs ? az->launch->args[i].text : NULL;
}

// A name or a member chain (a, a.b, a->b): usable before '.' and '*' as it is.
bool az_simple_name(const char *t) {
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
  CXCursor decl = az_referenced(base);
  if (kind(decl) != CXCursor_ParmDecl || !az_is_pointer(decl)) {
    char *t = az_text_of(az, base);
    az_fail(az, base, "kernel '%s' indexes '%s', which is not a pointer parameter", az->launch->kernel, t);
    free(t);
    return NULL;
  }
  const char *arg = az_launch_arg(az, decl);
  IrType et = az_type_of(clang_getPointeeType(clang_getCursorType(decl)));
  if (!arg || et == IR_VOID) {
    az_fail(az, base, "kernel '%s': cannot tell the element type of '%s'", az->launch->kernel,
         clang_getCString(clang_getCursorSpelling(decl)));
    return NULL;
  }
  return ir_tensor_get_or_add(az->ir, arg, et, count, fe_loc(az->fe, clang_getCursorLocation(base)));
}

// A size operand K of i % K, i / K, t[K]: a literal or a scalar parameter.
static IrSize *size_operand(Az *az, CXCursor c) {
  c = az_strip(c);
  if (kind(c) == CXCursor_IntegerLiteral) {
    CXEvalResult r = clang_Cursor_Evaluate(c);
    long v = r ? (long)clang_EvalResult_getAsLongLong(r) : 0;
    if (r) clang_EvalResult_dispose(r);
    return ir_size_const(az->ir, v);
  }
  if (kind(c) == CXCursor_DeclRefExpr) {
    CXCursor d = clang_getCursorReferenced(c);
    if (kind(d) == CXCursor_ParmDecl && !az_is_pointer(d)) return ir_size_parse(az->ir, az_launch_arg(az, d));
  }
  return NULL;
}

static IrExpr *read_expr(Az *az, CXCursor c) {
  Kids k = kids(c);
  if (k.n != 2) return az_fail(az, c, "kernel '%s': unexpected subscript", az->launch->kernel);
  CXCursor idx = k.v[1], a, b;
  IrTensor *t = tensor_of(az, k.v[0], NULL);
  if (!t) return NULL;
  IrExpr *e;
  IrSize *kk;
  SrcLoc loc = fe_loc(az->fe, clang_getCursorLocation(c));
  if (az_is_index(az, idx)) e = ir_expr_read(az->ir, t, IR_IDX_I, NULL);
  else if (az_is_binary(az, idx, "%", &a, &b) && az_is_index(az, a) && (kk = size_operand(az, b)))
    e = ir_expr_read(az->ir, t, IR_IDX_MOD, kk);
  else if (az_is_binary(az, idx, "/", &a, &b) && az_is_index(az, a) && (kk = size_operand(az, b)))
    e = ir_expr_read(az->ir, t, IR_IDX_DIV, kk);
  else if ((kk = size_operand(az, idx))) e = ir_expr_read(az->ir, t, IR_IDX_CONST, kk);
  else {
    char *text = az_text_of(az, idx);
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
  if (kind(d) == CXCursor_ParmDecl && same(clang_getCursorSemanticParent(d), az->kernel) && !az_is_pointer(d)) {
    char *name = fe_spelling(d);
    IrParam *p = NULL;
    for (IrParam *q = az->op->pw.params; q; q = q->next)
      if (strcmp(q->name, name) == 0) p = q;
    if (!p) p = ir_pw_param(az->ir, az->op, name, expr_type(c), az_launch_arg(az, d));
    free(name);
    return ir_expr_param(az->ir, p);
  }
  if (kind(d) == CXCursor_EnumConstantDecl)
    return ir_expr_int(az->ir, clang_getEnumConstantDeclValue(d), IR_I32);
  char *t = az_text_of(az, c);
  az_fail(az, c, "kernel '%s' uses '%s', which is not a scalar parameter or a local of the element loop",
       az->launch->kernel, t);
  free(t);
  return NULL;
}

// p.lr with p a by-value struct parameter: a scalar parameter of its own,
// named p_lr in generated code, bound to the launch argument's member.
static IrExpr *member_expr(Az *az, CXCursor c) {
  Kids k = kids(c);
  CXCursor base = k.n == 1 ? az_strip(k.v[0]) : clang_getNullCursor();
  CXCursor d = kind(base) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(base) : clang_getNullCursor();
  const char *arg = kind(d) == CXCursor_ParmDecl && same(clang_getCursorSemanticParent(d), az->kernel) && !az_is_pointer(d)
                        ? az_launch_arg(az, d) : NULL;
  IrType t = expr_type(c);
  if (!arg || !az_simple_name(arg) || t == IR_VOID) {
    char *text = az_text_of(az, c);
    az_fail(az, c, "kernel '%s': '%s' is not supported in a pointwise kernel (members of by-value struct parameters "
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
    char *t = az_text_of(az, c);
    az_fail(az, c, "kernel '%s': '%s' comes from macro '%s', whose body coconet cannot read (libclang 16 reports "
                "code from a macro's body where the macro is used); write the expression out, or make the macro "
                "a __device__ function", az->launch->kernel, t, macro);
    free(t);
    free(macro);
    return NULL;
  }
  return az_fail(az, c, "kernel '%s': operator '%s' is not supported in a pointwise kernel", az->launch->kernel, op);
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
  if (!r) return az_fail(az, c, "kernel '%s': cannot evaluate a literal", az->launch->kernel);
  IrExpr *e = is_float ? ir_expr_float(az->ir, clang_EvalResult_getAsDouble(r), expr_type(c))
                       : ir_expr_int(az->ir, clang_EvalResult_getAsLongLong(r), expr_type(c));
  clang_EvalResult_dispose(r);
  return e;
}

static IrExpr *expr(Az *az, CXCursor c) {
  if (az_failed(az)) return NULL;
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
    if (az_builtin(az, c) == B_NONE) return member_expr(az, c);
    break;
  case CXCursor_BinaryOperator:
    if (k.n == 2) {
      char *op = az_op_between(az, k.v[0], k.v[1]);
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
  char *t = az_text_of(az, c);
  az_fail(az, c, "kernel '%s': '%s' is not supported in a pointwise kernel", az->launch->kernel, t);
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
  CXCursor s = az_strip(state_arg);
  Kids k = kids(s);
  bool ok = kind(s) == CXCursor_UnaryOperator && k.n == 1 && !clang_Cursor_isNull(az->philox) &&
            same(az_referenced(k.v[0]), az->philox) && az->seed;
  if (!ok) return az_fail(az, c, "kernel '%s': curand_uniform must draw from the Philox state initialised with curand_init(seed, i, offset, &state) in the element loop", az->launch->kernel);
  return ir_expr_philox(az->ir, az->seed, az->offset, az->draws++);
}

// Inline a __device__ helper whose body is locals and one return.
static IrExpr *inline_helper(Az *az, CXCursor call, CXCursor def) {
  if (az->depth > 8) return az_fail(az, call, "kernel '%s': __device__ helpers nest too deeply", az->launch->kernel);
  // A call clang resolved names the instantiated helper (its types resolved);
  // should one name a template's pattern (types `T`), it is not read.
  if (kind(def) == CXCursor_FunctionTemplate) {
    char *name = fe_spelling(def);
    az_fail(az, call, "kernel '%s' calls the __device__ helper template '%s', which coconet does not analyze yet; "
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
  if (kind(body) != CXCursor_CompoundStmt) return az_fail(az, call, "kernel '%s': cannot inline this helper", az->launch->kernel);
  Kids stmts = kids(body);
  if (stmts.n > 8) return az_fail(az, call, "kernel '%s': helper '%s' is too long to inline (at most 8 statements)", az->launch->kernel, clang_getCString(clang_getCursorSpelling(def)));
  az->depth++;
  IrExpr *result = NULL;
  for (int i = 0; i < stmts.n && i < 8 && !az_failed(az); i++) {
    CXCursor s = stmts.v[i];
    if (kind(s) == CXCursor_ReturnStmt) {
      Kids r = kids(s);
      result = r.n == 1 ? cast_to(az, az_type_of(clang_getResultType(clang_getCursorType(def))), expr(az, r.v[0])) : NULL;
      break;
    }
    if (kind(s) != CXCursor_DeclStmt) {
      az_fail(az, s, "kernel '%s': helper '%s' must be locals and one return to be inlined",
           az->launch->kernel, clang_getCString(clang_getCursorSpelling(def)));
      break;
    }
    Kids vars = kids(s);
    for (int j = 0; j < vars.n && !az_failed(az); j++) {
      Kids init = kids(vars.v[j]);
      if (init.n == 0) continue;
      IrExpr *v = expr(az, init.last);
      if (v) bind(az, vars.v[j], cast_to(az, expr_type(vars.v[j]), v));
    }
  }
  az->depth--;
  if (!result && !az_failed(az)) az_fail(az, call, "kernel '%s': cannot inline this helper", az->launch->kernel);
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
  CXCursor p = az_strip(clang_Cursor_getArgument(c, 0));
  Kids k = kids(p);
  if (kind(p) == CXCursor_UnaryOperator && k.n == 1 && kind(az_strip(k.v[0])) == CXCursor_ArraySubscriptExpr) {
    char *op = unary_op(az, p, k.v[0]);
    bool address = strchr(op, '&') != NULL;
    free(op);
    if (address) return read_expr(az, az_strip(k.v[0]));
  }
  // t + i (or i + t) with t a pointer parameter: the address of t[i].
  CXCursor a, b;
  if (az_is_binary(az, p, "+", &a, &b)) {
    CXCursor base = az_is_index(az, b) ? az_strip(a) : az_is_index(az, a) ? az_strip(b) : clang_getNullCursor();
    if (kind(base) == CXCursor_DeclRefExpr && kind(az_referenced(base)) == CXCursor_ParmDecl && az_is_pointer(az_referenced(base))) {
      IrTensor *t = tensor_of(az, base, NULL);
      return t ? ir_expr_at(ir_expr_read(az->ir, t, IR_IDX_I, NULL), fe_loc(az->fe, clang_getCursorLocation(p))) : NULL;
    }
  }
  char *t = az_text_of(az, c);
  az_fail(az, c, "kernel '%s': %s must load from &t[i] or t + i (%s)", az->launch->kernel, name, t);
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
    if (!k.n) az_fail(az, c, "kernel '%s': unsupported conversion", az->launch->kernel);
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
    if (!e && !az_failed(az) && !clang_Cursor_isNull(def) && fe_in_main_file(az->fe, clang_getCursorLocation(def)))
      e = inline_helper(az, c, def);
    else if (!e && !az_failed(az)) {
      char *t = az_text_of(az, c);
      az_fail(az, c, "kernel '%s' calls '%s', which a pointwise kernel cannot use (%s)", az->launch->kernel, name, t);
      free(t);
    }
  }
  free(name);
  return e;
}

//
// Statements of the element loop
//


static enum CXChildVisitResult each_stmt(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Az *az = data;
  az_stmt(az, c);
  return az_failed(az) ? CXChildVisit_Break : CXChildVisit_Continue;
}

static IrTensor *store_target(Az *az, CXCursor lhs) {
  lhs = az_strip(lhs);
  if (kind(lhs) != CXCursor_ArraySubscriptExpr) return NULL;
  Kids k = kids(lhs);
  if (k.n != 2 || !az_is_index(az, k.v[1])) {
    char *t = az_text_of(az, lhs);
    az_fail(az, lhs, "kernel '%s' writes %s: a pointwise kernel writes only at [i]", az->launch->kernel, t);
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
  CXCursor l = az_strip(lhs);
  if (kind(l) == CXCursor_DeclRefExpr && find_local(az, clang_getCursorReferenced(l))) {
    if (cond) {
      az_fail(az, s, "kernel '%s': a local assigned under a condition is not supported", az->launch->kernel);
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
  if (!t && !az_failed(az)) {
    char *text = az_text_of(az, lhs);
    az_fail(az, s, "kernel '%s' assigns to '%s': only t[i] and locals can be assigned", az->launch->kernel, text);
    free(text);
  }
  store(az, s, t, value, cond);
}

// x = e, x op= e; for class types (__half) these are calls of operator=, operator+=, ...
bool az_is_assignment(const Az *az, CXCursor s, CXCursor *lhs, CXCursor *rhs, char **op) {
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
  *op = az_op_between(az, k.v[0], k.v[1]);
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

void az_decl_stmt(Az *az, CXCursor s) {
  Kids vars = kids(s);
  for (int i = 0; i < vars.n && !az_failed(az); i++) {
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
      az_fail(az, v, "kernel '%s': a local without an initial value is not supported", az->launch->kernel);
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
  CXCursor state = n == 4 ? az_strip(clang_Cursor_getArgument(c, 3)) : clang_getNullCursor();
  Kids k = kids(state);
  if (n != 4 || !az_is_index(az, clang_Cursor_getArgument(c, 1)) || k.n != 1 ||
      clang_Cursor_isNull(az->philox) || !same(az_referenced(k.v[0]), az->philox)) {
    az_fail(az, c, "kernel '%s': curand_init must be keyed by the element index: curand_init(seed, i, offset, &state)", az->launch->kernel);
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
  c = az_strip(c);
  CXCursor lhs, rhs;
  char *op;
  if (!az_is_assignment(cs->az, c, &lhs, &rhs, &op)) {
    az_fail(cs->az, c, "kernel '%s': only stores may be conditional in a pointwise kernel", cs->az->launch->kernel);
    return CXChildVisit_Break;
  }
  assign(cs->az, c, lhs, rhs, op, cs->cond);
  free(op);
  return az_failed(cs->az) ? CXChildVisit_Break : CXChildVisit_Continue;
}

// if (c) t[i] = e;  becomes  t[i] = c ? e : t[i].
static void if_stmt(Az *az, CXCursor s) {
  Kids k = kids(s);
  if (k.n != 2) {
    az_fail(az, s, "kernel '%s': 'if' with 'else' in the element loop is not supported", az->launch->kernel);
    return;
  }
  IrExpr *cond = expr(az, k.v[0]);
  if (!cond) return;
  CondStores cs = {az, cond};
  if (kind(k.v[1]) == CXCursor_CompoundStmt) clang_visitChildren(k.v[1], cond_store, &cs);
  else cond_store(k.v[1], s, &cs);
}

void az_stmt(Az *az, CXCursor s) {
  if (az_failed(az)) return;
  s = az_strip(s);  // expression statements may be wrapped in implicit nodes
  CXCursor lhs, rhs;
  char *op;
  if (az_is_assignment(az, s, &lhs, &rhs, &op)) {
    assign(az, s, lhs, rhs, op, NULL);
    free(op);
    return;
  }
  switch (kind(s)) {
  case CXCursor_CompoundStmt: clang_visitChildren(s, each_stmt, az); break;
  case CXCursor_DeclStmt: az_decl_stmt(az, s); break;
  case CXCursor_NullStmt: break;
  case CXCursor_IfStmt: if_stmt(az, s); break;
  case CXCursor_CallExpr: {
    char *name = fe_spelling(clang_getCursorReferenced(s));
    if (strcmp(name, "curand_init") == 0) curand_init_call(az, s);
    else az_fail(az, s, "kernel '%s' calls '%s' as a statement: not supported in a pointwise kernel", az->launch->kernel, name);
    free(name);
    break;
  }
  default: {
    char *t = az_text_of(az, s);
    az_fail(az, s, "kernel '%s': '%s' is not supported in a pointwise kernel", az->launch->kernel, t);
    free(t);
  }
  }
}

