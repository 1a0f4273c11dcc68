// analyze_cursor.c: the kernel analysis' words for cursors: their text, the
// operators between tokens, types, callees, CUDA's built-in coordinates and
// the element index, launch arguments, a local's binding, the operands of a
// guard of several conditions (analyze_expr.c reads expressions with them).
#include "analyze_impl.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

bool az_failed(const Az *az) { return az->why != NULL; }

IrExpr *az_fail(Az *az, CXCursor at, const char *fmt, ...) {
  if (az->why) return NULL;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&az->why, fmt, ap) < 0) COCONET_BUG("out of memory");
  va_end(ap);
  az->why_loc = fe_any_loc(az->fe, clang_getCursorLocation(at));
  return NULL;
}


// The source text of a cursor (main file only).
char *az_text_of(const Az *az, CXCursor c) {
  return fe_cursor_text(az->fe, c);
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
  char *t = fe_between(az->fe, clang_getRangeEnd(clang_getCursorExtent(lhs)),
                       clang_getRangeStart(clang_getCursorExtent(rhs)));
  char *s = t, *d = t;
  for (; *s; s++)
    if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') *d++ = *s;
  *d = '\0';
  return t;
}

// The leading or trailing operator of a unary expression.
char *az_unary_op(const Az *az, CXCursor c, CXCursor operand) {
  CXSourceRange whole = clang_getCursorExtent(c), inner = clang_getCursorExtent(operand);
  unsigned w, i;
  clang_getFileLocation(clang_getRangeStart(whole), NULL, NULL, NULL, &w);
  clang_getFileLocation(clang_getRangeStart(inner), NULL, NULL, NULL, &i);
  return i > w ? fe_between(az->fe, clang_getRangeStart(whole), clang_getRangeStart(inner))
               : fe_between(az->fe, clang_getRangeEnd(inner), clang_getRangeEnd(whole));
}

IrType az_type_of(CXType t) {
  t = clang_getCanonicalType(t);
  switch (t.kind) {
  case CXType_Float: return IR_F32;
  case CXType_Double: return IR_F64;
  // Values of the byte types keep theirs (a cast or a local of them wraps, bool is 0 or 1);
  // arithmetic on them is int's (ir_type_promote). A plain char value is computed as signed.
  case CXType_Bool: return IR_BOOL;
  case CXType_UChar: return IR_U8;
  case CXType_Char_S: case CXType_SChar: case CXType_Char_U: return IR_I8;
  case CXType_Short: case CXType_UShort:
  case CXType_Int: return IR_I32;
  case CXType_UInt: return IR_U32;
  case CXType_Long: case CXType_LongLong: case CXType_ULong: case CXType_ULongLong: return IR_I64;
  case CXType_Record: case CXType_Elaborated: {
    CXString s = clang_getTypeSpelling(clang_getUnqualifiedType(t));
    const char *n = clang_getCString(s);
    // __half and __nv_bfloat16 only: __half2 and __nv_bfloat162 are vectors (analyze_vector.c).
    IrType r = !strcmp(n, "__half") ? IR_F16 : !strcmp(n, "__nv_bfloat16") ? IR_BF16 : IR_VOID;
    clang_disposeString(s);
    return r;
  }
  default: return IR_VOID;
  }
}

// A buffer's element type: as az_type_of, but none for plain char (a third
// type to C++: a generated pointer to signed or unsigned char is not one to it).
IrType az_element_type_of(CXType t) {
  enum CXTypeKind k = clang_getCanonicalType(t).kind;
  return k == CXType_Char_U || k == CXType_Char_S ? IR_VOID : az_type_of(t);
}

IrType az_expr_type(CXCursor c) { return az_type_of(clang_getCursorType(c)); }

bool az_is_pointer(CXCursor decl) {
  return clang_getCanonicalType(clang_getCursorType(decl)).kind == CXType_Pointer;
}

CXCursor az_referenced(CXCursor ref) {
  return clang_getCursorReferenced(az_strip(ref));
}

// The function a call calls: its declaration, or the function a template
// argument names when the call is through a template parameter
// (`template <float (*op)(float)> ... op(v)`: clang's instance substitutes
// `&warp_sum`, which libclang shows under the callee). NULL for a call
// through a pointer held at run time.
CXCursor az_callee(CXCursor call) {
  CXCursor r = clang_getCursorReferenced(call);
  if (fe_is_function(kind(r))) return r;
  Kids k = kids(call);
  for (CXCursor c = k.n && clang_Cursor_isNull(r) ? k.v[0] : clang_getNullCursor(); !clang_Cursor_isNull(c);) {
    enum CXCursorKind ck = kind(c);
    CXCursor f = ck == CXCursor_DeclRefExpr ? clang_getCursorReferenced(c) : clang_getNullCursor();
    if (fe_is_function(kind(f))) return f;
    bool passes = ck == CXCursor_DeclRefExpr || ck == CXCursor_UnexposedExpr || ck == CXCursor_ParenExpr ||
                  ck == CXCursor_UnaryOperator;
    c = passes && kids(c).n == 1 ? kids(c).v[0] : clang_getNullCursor();
  }
  return clang_getNullCursor();
}

bool az_refers_to(CXCursor e, CXCursor decl) {
  e = az_strip(e);
  return kind(e) == CXCursor_DeclRefExpr && same(clang_getCursorReferenced(e), decl);
}

static enum CXChildVisitResult shared_attr(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (kind(c) != CXCursor_CUDASharedAttr) return CXChildVisit_Continue;
  *(bool *)data = true;
  return CXChildVisit_Break;
}

// (every child looked at: kids() keeps only the first FE_KIDS)
bool az_is_shared(CXCursor var) {
  bool shared = false;
  clang_visitChildren(var, shared_attr, &shared);
  return shared;
}

char *az_type_spelling(CXCursor c) {
  CXString t = clang_getTypeSpelling(clang_getCanonicalType(clang_getCursorType(c)));
  char *s = strdup(clang_getCString(t));
  clang_disposeString(t);
  if (!s) COCONET_BUG("out of memory");
  return s;
}

bool az_type_has(CXCursor c, const char *part) {
  char *t = az_type_spelling(c);
  bool has = strstr(t, part) != NULL;
  free(t);
  return has;
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
        !clang_equalCursors(clang_getCursorSemanticParent(d), az->body_fn))
      return B_NONE;
    Kids ks = kids(d);
    if (!ks.n) return B_NONE;
    // `int s = 256;` stands for the block only while it holds 256 (a tree reduction halves it).
    long long v;
    if (az_int_constant(ks.last, &v) && az_writes(az, az->body_fn, d)) return B_NONE;
    return az_builtin(az, ks.last);
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
  if (kind(c) != CXCursor_DeclRefExpr || clang_Cursor_isNull(az->index)) return false;
  CXCursor d = clang_getCursorReferenced(c);
  if (same(d, az->index)) return true;
  for (int i = az->nlocals - 1; i >= 0; i--)  // a helper's parameter passed the index
    if (same(az->locals[i].decl, d)) return az->locals[i].index;
  return false;
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

enum CXChildVisitResult az_list_add(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  AzList *l = data;
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 16;
    l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
    if (!l->v) COCONET_BUG("out of memory");
  }
  l->v[l->n++] = c;
  return CXChildVisit_Continue;
}

//
// Guards of several conditions
//

// `A op B op C` (clang nests them to the left) as its operands in order into out
// (at most max); -1 when there are more.
int az_operands(const Az *az, CXCursor c, const char *op, CXCursor *out, int max) {
  CXCursor a, b;
  if (!az_is_binary(az, c, op, &a, &b)) {
    out[0] = c;
    return 1;
  }
  int n = az_operands(az, a, op, out, max);
  if (n < 0 || n >= max) return -1;
  out[n] = b;
  return n + 1;
}

static enum CXChildVisitResult find_effect(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  enum CXCursorKind k = kind(c);
  if (k == CXCursor_CallExpr || k == CXCursor_ArraySubscriptExpr || k == CXCursor_CompoundAssignOperator ||
      k == CXCursor_UnaryOperator) {
    *(bool *)data = true;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

// A condition that reads no memory and changes nothing (`row < rows`): it may be
// tested after the element loop's bound as well as before.
static bool plain_condition(CXCursor c) {
  bool effect = false;
  if (find_effect(c, c, &effect) == CXChildVisit_Recurse) clang_visitChildren(c, find_effect, &effect);
  return !effect;
}

// The guard's operands with the element loop's bound `i OP n` first: where a
// guard of several conditions tests it after plain ones (`row < rows && col <
// cols`), it is moved to the front. False (unchanged) when no operand is that
// bound or one before it is not plain.
bool az_bound_first(const Az *az, CXCursor *conds, int n, const char *op) {
  for (int k = 0; k < n; k++) {
    CXCursor a, b;
    if (az_is_binary(az, conds[k], op, &a, &b) && az_is_index(az, a)) {
      CXCursor found = conds[k];
      memmove(conds + 1, conds, sizeof *conds * (size_t)k);
      conds[0] = found;
      return true;
    }
    if (!plain_condition(conds[k])) return false;
  }
  return false;
}
