// analyze_expr.c: the kernel analysis' expressions, into IR expressions: reads
// and the addresses of elements, locals, parameters and constants, operators
// (calls are analyze_call.c's). See analyze.c.
#include "analyze_impl.h"
#include "common/cuda_names.h"
#include "common/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//
// Expressions
//

#define expr az_expr
#define cast_to az_cast_to

Binding *az_find_local(Az *az, CXCursor decl) {
  for (int i = az->nlocals - 1; i >= 0; i--)
    if (same(az->locals[i].decl, decl)) return &az->locals[i];
  return NULL;
}

Binding *az_bind(Az *az, CXCursor decl, IrExpr *value) {
  Binding *b = az_find_local(az, decl);
  if (!b) {
    if (az->nlocals == az->cap) {
      az->cap = az->cap ? 2 * az->cap : 16;
      az->locals = realloc(az->locals, (size_t)az->cap * sizeof *az->locals);
      if (!az->locals) COCONET_BUG("out of memory");
    }
    b = &az->locals[az->nlocals++];
  }
  *b = (Binding){.decl = decl, .value = value, .buffer = clang_getNullCursor(), .stride = clang_getNullCursor(),
                 .arg = clang_getNullCursor()};
  return b;
}

void az_bind_pointer(Az *az, CXCursor decl, CXCursor buffer, bool element) {
  Binding *b = az_bind(az, decl, NULL);
  b->buffer = buffer;
  b->element = element;
}

// A value that is 0 or 1 already (a comparison, !, && or ||: bool in C++, int in the IR).
static bool truth_value(const IrExpr *e) {
  return (e->kind == IR_E_UNARY && e->op == IR_NOT) || (e->kind == IR_E_BINARY && e->op >= IR_LT && e->op <= IR_LOR);
}

IrExpr *az_cast_to(Az *az, IrType t, IrExpr *e) {
  if (!e || t == IR_VOID || e->type == t || (t == IR_BOOL && truth_value(e))) return e;
  return ir_expr_cast(az->ir, t, e);
}

// Whether e is a constant, and then whether it is true (through casts).
bool az_constant_truth(const IrExpr *e, bool *truth) {
  if (!e) return false;
  if (e->kind == IR_E_INT) {
    int64_t v = e->ival;
    *truth = e->type == IR_I32 ? (int32_t)(uint32_t)(uint64_t)v != 0 : e->type == IR_U32 ? (uint32_t)(uint64_t)v != 0 : v != 0;
    return true;
  }
  if (e->kind == IR_E_FLOAT) {
    *truth = e->fval != 0;
    return true;
  }
  if (e->kind != IR_E_CAST || !az_constant_truth(e->a, truth)) return false;
  if (e->a->kind == IR_E_INT && (e->type == IR_I32 || e->type == IR_U32)) *truth = (uint32_t)(uint64_t)e->a->ival != 0;
  if (e->a->kind == IR_E_INT && (e->type == IR_U8 || e->type == IR_I8)) *truth = (uint8_t)(uint64_t)e->a->ival != 0;
  return !ir_type_is_float(e->a->type) || ir_type_is_float(e->type);  // float -> int may truncate to 0
}

IrExpr *az_cond(Az *az) {
  IrExpr *live = az->returned ? ir_expr_unary(az->ir, IR_NOT, az->returned) : NULL;
  if (!az->cond) return live;
  return live ? ir_expr_binary(az->ir, IR_LAND, az->cond, live) : az->cond;
}

// A pointer the kernel names: one of its pointer parameters, or a helper's
// pointer parameter bound to one (*element: it points at that buffer's t[i]).
bool az_buffer(Az *az, CXCursor c, CXCursor *buffer, bool *element) {
  c = az_strip(c);
  if (kind(c) != CXCursor_DeclRefExpr) return false;
  CXCursor d = clang_getCursorReferenced(c);
  Binding *b = az_find_local(az, d);
  if (b && !clang_Cursor_isNull(b->buffer)) {
    *buffer = b->buffer;
    *element = b->element;
    return true;
  }
  if (kind(d) != CXCursor_ParmDecl || !az_is_pointer(d) || !same(clang_getCursorSemanticParent(d), az->kernel))
    return false;
  *buffer = d;
  *element = false;
  return true;
}

// The tensor a kernel's pointer parameter is bound to by the launch.
// A launch argument that is a null pointer constant: NULL, nullptr, 0, (T *)NULL.
static bool null_text(const char *t) {
  while (*t == ' ') t++;
  if (*t == '(' && strchr(t, ')') && strchr(t, '*') && strchr(t, '*') < strchr(t, ')')) t = strchr(t, ')') + 1;
  while (*t == ' ') t++;
  size_t n = strcspn(t, " ");
  return (n == 4 && strncmp(t, "NULL", 4) == 0) || (n == 7 && strncmp(t, "nullptr", 7) == 0) ||
         (n == 1 && *t == '0') || (n == 6 && strncmp(t, "__null", 6) == 0);
}

IrType az_buffer_type(Az *az, CXCursor decl, CXCursor at) {
  const char *arg = az_launch_arg(az, decl);
  if (arg && null_text(arg)) {
    char *name = fe_spelling(decl);
    az_fail(az, at, "kernel '%s' uses '%s', which the launch passes as %s", az->launch->kernel, name, arg);
    free(name);
    return IR_VOID;
  }
  CXType pointee = clang_getPointeeType(clang_getCursorType(decl));
  IrType et = az_element_type_of(pointee);
  enum CXTypeKind k = clang_getCanonicalType(pointee).kind;
  bool narrow = k == CXType_Short || k == CXType_UShort, plain_char = k == CXType_Char_S || k == CXType_Char_U;
  if (!arg || et == IR_VOID || narrow) {
    char *name = fe_spelling(decl);
    CXString ts = clang_getTypeSpelling(clang_getCanonicalType(pointee));
    if (narrow)  // computed as int, but stored in 2 bytes: generated code would declare the wrong pointer
      az_fail(az, at, "kernel '%s': buffer '%s' has elements of type '%s'; coconet handles buffers of float, double, "
                   "__half, __nv_bfloat16, int, unsigned, 64-bit integers, bool and 8-bit integers",
              az->launch->kernel, name, clang_getCString(ts));
    else if (plain_char)  // generated code would declare signed char or unsigned char, neither of which it is
      az_fail(az, at, "kernel '%s': buffer '%s' has elements of type 'char', which C++ keeps apart from signed char "
                   "and unsigned char: declare it int8_t or uint8_t (signed char, unsigned char)",
              az->launch->kernel, name);
    else
      az_fail(az, at, "kernel '%s': cannot tell the element type of '%s'", az->launch->kernel, name);
    clang_disposeString(ts);
    free(name);
    return IR_VOID;
  }
  return et;
}

static IrTensor *buffer_tensor(Az *az, CXCursor decl, CXCursor at, IrSize *count) {
  IrType et = az_buffer_type(az, decl, at);
  if (et == IR_VOID) return NULL;
  IrTensor *t = ir_tensor_get_or_add(az->ir, az_launch_arg(az, decl), et, count,
                                     fe_loc(az->fe, clang_getCursorLocation(at)));
  // A bool buffer a collective moves as ncclUint8 (in a wrapper, where extract did not see its type): bool.
  if (t->type == IR_U8 && et == IR_BOOL) t->type = IR_BOOL;
  // One element type per buffer: code written for both would reinterpret its bytes.
  if (t->type != IR_VOID && t->type != et) {
    az_fail(az, at, "kernel '%s' uses '%s' as %s elements, but the region uses it as %s before (from %s:%u): "
                    "coconet keeps one element type per buffer; give it one type (a memset's size in its element "
                    "type, sizeof(T) * n)",
            az->launch->kernel, t->name, ir_type_name(et), ir_type_name(t->type),
            t->first_use.file ? t->first_use.file : "?", t->first_use.line);
    return NULL;
  }
  return t;
}

IrTensor *az_buffer_tensor(Az *az, CXCursor decl, CXCursor at) { return buffer_tensor(az, decl, at, NULL); }

// The buffer of a subscript's base (not a helper's pointer at t[i]).
static IrTensor *tensor_of(Az *az, CXCursor base) {
  CXCursor decl;
  bool element;
  if (!az_buffer(az, base, &decl, &element) || element) {
    char *t = az_text_of(az, base);
    az_fail(az, base, "kernel '%s' indexes '%s', which is not a pointer parameter", az->launch->kernel, t);
    free(t);
    return NULL;
  }
  return buffer_tensor(az, decl, base, NULL);
}

bool az_int_constant(CXCursor c, long long *v) {
  CXEvalResult r = clang_Cursor_Evaluate(az_strip(c));
  bool ok = r && clang_EvalResult_getKind(r) == CXEval_Int;
  if (ok) *v = clang_EvalResult_getAsLongLong(r);
  if (r) clang_EvalResult_dispose(r);
  return ok;
}

static bool is_zero(CXCursor c) {
  long long v;
  return az_int_constant(c, &v) && v == 0;
}

// The address of element i of a buffer: &t[i], t + i, i + t, or a helper's
// pointer at t[i] (p, &p[0], p + 0). NULL, with no reason recorded, when it is not one.
static bool scalar_element_of(Az *az, CXCursor e, CXCursor *decl);

bool az_element_of(Az *az, CXCursor e, CXCursor *decl) {
  if (!scalar_element_of(az, e, decl)) return false;
  if (az->lanes < 2) return true;
  char *t = az_text_of(az, e);
  az_fail(az, e, "kernel '%s' takes the address %s in a kernel whose element is a vector of %d lanes (i counts "
                 "vectors); coconet reads scalar buffers there as s[i] only", az->launch->kernel, t, az->lanes);
  free(t);
  return false;
}

static bool scalar_element_of(Az *az, CXCursor e, CXCursor *decl) {
  e = az_strip(e);
  CXCursor a, b;
  bool element;
  if (az_buffer(az, e, decl, &element)) return element;
  Kids k = kids(e);
  if (kind(e) == CXCursor_UnaryOperator && k.n == 1 && kind(az_strip(k.v[0])) == CXCursor_ArraySubscriptExpr) {
    char *op = az_unary_op(az, e, k.v[0]);
    bool address = strcmp(op, "&") == 0;
    free(op);
    Kids sub = kids(az_strip(k.v[0]));
    return address && sub.n == 2 && az_buffer(az, sub.v[0], decl, &element) &&
           (element ? is_zero(sub.v[1]) : az_at_element(az, sub.v[0], sub.v[1]));
  }
  if (!az_is_binary(az, e, "+", &a, &b)) return false;
  if (az_buffer(az, a, decl, &element) && (element ? is_zero(b) : az_at_element(az, a, b))) return true;
  return az_buffer(az, b, decl, &element) && (element ? is_zero(a) : az_at_element(az, b, a));
}

IrTensor *az_element_address(Az *az, CXCursor e) {
  CXCursor decl;
  return az_element_of(az, e, &decl) ? buffer_tensor(az, decl, e, NULL) : NULL;
}

// The element an assignment writes: t[i], p[0] or *p with p a helper's pointer
// at t[i], *(t + i). NULL with the reason recorded when it is not one.
IrTensor *az_element_target(Az *az, CXCursor lhs) {
  lhs = az_strip(lhs);
  Kids k = kids(lhs);
  CXCursor decl;
  bool element;
  IrTensor *t = NULL;
  if (kind(lhs) == CXCursor_ArraySubscriptExpr && k.n == 2 && az_buffer(az, k.v[0], &decl, &element))
    t = (element ? is_zero(k.v[1]) : az_at_element(az, k.v[0], k.v[1])) ? buffer_tensor(az, decl, lhs, az->op->pw.count)
                                                                         : NULL;
  else if (kind(lhs) == CXCursor_UnaryOperator && k.n == 1 && az_element_of(az, k.v[0], &decl))
    t = buffer_tensor(az, decl, lhs, az->op->pw.count);
  if (!t && !az_failed(az)) {
    char *text = az_text_of(az, lhs);
    bool buffer_write = kind(lhs) == CXCursor_ArraySubscriptExpr || kind(lhs) == CXCursor_UnaryOperator;
    CXCursor base = kind(lhs) == CXCursor_ArraySubscriptExpr && k.n == 2 ? az_uncast(k.v[0]) : clang_getNullCursor();
    CXCursor d = kind(base) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(base) : clang_getNullCursor();
    bool param = !clang_Cursor_isNull(d) && kind(d) == CXCursor_ParmDecl;
    if (buffer_write && !clang_Cursor_isNull(d) && !param && !az_find_local(az, d)) {
      char *name = fe_spelling(d);
      az_fail(az, lhs, "kernel '%s' writes %s, and '%s' is not one of its pointer parameters (a global or a file-scope "
                       "array): coconet sees only the buffers a launch passes; pass it as a parameter",
              az->launch->kernel, text, name);
      free(name);
    } else if (buffer_write && az->slices)
      az_fail(az, lhs, "kernel '%s' writes %s, and its grid's y selects a slice (%s of them): a launch read as slices "
                       "writes only at blockIdx.y * n + i (or p[i] of a pointer p = buf + blockIdx.y * n); written "
                       "otherwise, an element is written by every slice's threads", az->launch->kernel, text,
              az->slices);
    else if (buffer_write)
      az_fail(az, lhs, "kernel '%s' writes %s: a pointwise kernel writes only at [i]", az->launch->kernel, text);
    else
      az_fail(az, lhs, "kernel '%s' assigns to '%s': only t[i] and locals can be assigned", az->launch->kernel, text);
    free(text);
  }
  return t;
}

// A size operand K of i % K, i / K, t[K]: a literal or a scalar parameter.
static IrSize *size_operand(Az *az, CXCursor c) {
  c = az_strip(c);
  CXCursor d = kind(c) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(c) : clang_getNullCursor();
  Binding *b = clang_Cursor_isNull(d) ? NULL : az_find_local(az, d);
  if (b && b->value && b->value->kind == IR_E_INT) return ir_size_const(az->ir, (long)b->value->ival);  // a loop counter
  if (b) return NULL;
  CXEvalResult r = clang_Cursor_Evaluate(c);
  bool known = r && clang_EvalResult_getKind(r) == CXEval_Int;
  long v = known ? (long)clang_EvalResult_getAsLongLong(r) : 0;
  if (r) clang_EvalResult_dispose(r);
  if (known) return ir_size_const(az->ir, v);
  if (kind(d) == CXCursor_ParmDecl && !az_is_pointer(d) && same(clang_getCursorSemanticParent(d), az->kernel))
    return ir_size_parse(az->ir, az_launch_arg(az, d));
  return NULL;
}

IrExpr *az_read(Az *az, IrExpr *read, SrcLoc loc) {
  read->sometimes = az->lazy > 0 || az->cond || az->returned || az->outer;
  return ir_expr_at(read, loc);
}

IrExpr *az_subscript(Az *az, CXCursor c) {
  Kids k = kids(c);
  if (k.n != 2) return az_fail(az, c, "kernel '%s': unexpected subscript", az->launch->kernel);
  CXCursor idx = k.v[1], a, b, decl;
  bool element;
  SrcLoc loc = fe_loc(az->fe, clang_getCursorLocation(c));
  if (az_buffer(az, k.v[0], &decl, &element) && element) {  // p[0] with p = &t[i]
    IrTensor *t = is_zero(idx) ? buffer_tensor(az, decl, c, NULL) : NULL;
    if (!t && !az_failed(az)) {
      char *text = az_text_of(az, c);
      az_fail(az, c, "kernel '%s' reads %s, which is not element i (the pointer points at element i)", az->launch->kernel, text);
      free(text);
    }
    return t ? az_read(az, ir_expr_read(az->ir, t, IR_IDX_I, NULL), loc) : NULL;
  }
  IrTensor *t = tensor_of(az, k.v[0]);
  if (!t) return NULL;
  IrExpr *e;
  IrSize *kk;
  if (az->lanes > 1) {  // i counts vectors: s[i] is s[e / lanes], s[K] is s[K]
    IrSize *lanes = ir_size_const(az->ir, az->lanes);
    if (az_is_index(az, idx)) e = ir_expr_read(az->ir, t, IR_IDX_DIV, lanes);
    else if (az_is_binary(az, idx, "/", &a, &b) && az_is_index(az, a) && (kk = size_operand(az, b)))
      e = ir_expr_read(az->ir, t, IR_IDX_DIV, ir_size_mul(az->ir, lanes, kk));
    else if ((kk = size_operand(az, idx))) e = ir_expr_read(az->ir, t, IR_IDX_CONST, kk);
    else {
      char *text = az_text_of(az, c);
      az_fail(az, c, "kernel '%s' reads %s in a kernel whose element is a vector of %d lanes (i counts vectors); "
                     "coconet reads scalar buffers there as s[i], s[i / K] and s[K]", az->launch->kernel, text, az->lanes);
      free(text);
      return NULL;
    }
  } else if (az->slices) {
    // Element e, a buffer shared by the slices at [i] (e % n), one per slice at [blockIdx.y] (e / n).
    CXCursor d = az_referenced(az_strip(k.v[0]));
    Binding *sliced = clang_Cursor_isNull(d) ? NULL : az_find_local(az, d);
    bool plain = !(sliced && sliced->slice);
    if (az_at_element(az, k.v[0], idx)) e = ir_expr_read(az->ir, t, IR_IDX_I, NULL);
    else if (az_failed(az)) return NULL;
    else if (plain && az_is_index(az, idx)) e = ir_expr_read(az->ir, t, IR_IDX_MOD, az_slice_count(az));
    else if (plain && az_is_slice_number(az, idx)) e = ir_expr_read(az->ir, t, IR_IDX_DIV, az_slice_count(az));
    else if (plain && (kk = size_operand(az, idx))) e = ir_expr_read(az->ir, t, IR_IDX_CONST, kk);
    else {
      char *text = az_text_of(az, c);
      az_fail(az, c, "kernel '%s' reads %s, and its grid's y selects a slice (%s of them): coconet reads buffers "
                     "there at blockIdx.y * n + i (or p[i] of a pointer p = buf + blockIdx.y * n), at [i] and "
                     "[blockIdx.y] of a buffer without slices, and at constants", az->launch->kernel, text,
              az->slices);
      free(text);
      return NULL;
    }
  } else if (az_is_index(az, idx)) e = ir_expr_read(az->ir, t, IR_IDX_I, NULL);
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
  IrExpr *stored = e->index == IR_IDX_I && az->lanes <= 1 ? az_stored(az, t) : NULL;
  return stored ? stored : az_read(az, e, loc);
}

// *e: element i (e = &t[i], t + i, a helper's pointer at it) or element 0 (e = t).
static IrExpr *deref_expr(Az *az, CXCursor c, CXCursor e) {
  SrcLoc loc = fe_loc(az->fe, clang_getCursorLocation(c));
  IrTensor *t = az_element_address(az, e);
  if (t) return az_read(az, ir_expr_read(az->ir, t, IR_IDX_I, NULL), loc);
  CXCursor decl;
  bool element;
  if (!az_failed(az) && az_buffer(az, e, &decl, &element) && (t = buffer_tensor(az, decl, e, NULL)))
    return az_read(az, ir_expr_read(az->ir, t, IR_IDX_CONST, ir_size_const(az->ir, 0)), loc);
  if (az_failed(az)) return NULL;
  char *text = az_text_of(az, c);
  az_fail(az, c, "kernel '%s' reads %s: a pointwise kernel dereferences only &t[i], t + i or a buffer parameter",
          az->launch->kernel, text);
  free(text);
  return NULL;
}

bool az_is_null_constant(CXCursor c) {
  c = az_strip(c);
  while (kind(c) == CXCursor_CStyleCastExpr || kind(c) == CXCursor_CXXStaticCastExpr) {
    Kids k = kids(c);
    if (!k.n) return false;
    c = az_strip(k.last);
  }
  if (kind(c) == CXCursor_GNUNullExpr || kind(c) == CXCursor_CXXNullPtrLiteralExpr) return true;
  return kind(c) == CXCursor_IntegerLiteral && is_zero(c);
}

// A test of a pointer against NULL: `p`, `p != NULL`, `nullptr == p`, `!p`, ...:
// +1 when true for a non-null p, -1 when true for a null one, 0 if not one.
static int null_test(Az *az, CXCursor c, CXCursor *buffer) {
  bool as_bool = clang_getCanonicalType(clang_getCursorType(c)).kind == CXType_Bool;
  c = az_strip(c);
  bool element;
  if (az_buffer(az, c, buffer, &element)) return as_bool && !element ? 1 : 0;
  Kids k = kids(c);
  if (kind(c) == CXCursor_UnaryOperator && k.n == 1) {
    char *op = az_unary_op(az, c, k.v[0]);
    int t = strcmp(op, "!") == 0 ? -null_test(az, k.v[0], buffer) : 0;
    free(op);
    return t;
  }
  if (kind(c) != CXCursor_BinaryOperator || k.n != 2) return 0;
  char *op = az_op_between(az, k.v[0], k.v[1]);
  int sign = strcmp(op, "!=") == 0 ? 1 : strcmp(op, "==") == 0 ? -1 : 0;
  free(op);
  if (!sign) return 0;
  if (az_is_null_constant(k.v[1]) && az_buffer(az, k.v[0], buffer, &element) && !element) return sign;
  if (az_is_null_constant(k.v[0]) && az_buffer(az, k.v[1], buffer, &element) && !element) return sign;
  return 0;
}

// The value of a null test: known when the launch passes a null pointer
// constant (the test is false); for a variable, true under a run-time
// precondition of the schedule.
static IrExpr *null_test_value(Az *az, CXCursor c, CXCursor buffer, int sign) {
  const char *arg = az_launch_arg(az, buffer);
  char *name = fe_spelling(buffer);
  IrExpr *e = NULL;
  if (arg && null_text(arg)) {
    e = ir_expr_int(az->ir, sign < 0, IR_I32);
  } else if (arg && az_simple_name(arg)) {
    // A variable (the caller's, through a launcher seen through: its parameters are
    // never assigned there): the schedule is for a non-null pointer; the region runs
    // as written when it is null (ir_region_assume, codegen.c).
    e = ir_expr_int(az->ir, sign > 0, IR_I32);
    ir_region_assume(az->ir, arg, az->launch->kernel, fe_any_loc(az->fe, clang_getCursorLocation(c)));
  } else
    az_fail(az, c, "kernel '%s' tests '%s' against NULL, and the launch passes '%s', which coconet cannot tell is "
                "NULL or not; it handles a pointer the launch passes as NULL or nullptr (the test is then false and "
                "what it guards is left out), or as a variable (the schedule then runs when it is not null, the region "
                "as written when it is)",
            az->launch->kernel, name, arg ? arg : "?");
  free(name);
  return e;
}

// A named constant: const or constexpr, at file scope or static, with a value clang computes.
static IrExpr *named_constant(Az *az, CXCursor d) {
  IrType t = az_type_of(clang_getCursorType(d));
  if (kind(d) != CXCursor_VarDecl || t == IR_VOID || !clang_isConstQualifiedType(clang_getCursorType(d))) return NULL;
  Kids init = kids(d);
  CXEvalResult r = init.n ? clang_Cursor_Evaluate(init.last) : NULL;
  CXEvalResultKind k = r ? clang_EvalResult_getKind(r) : CXEval_UnExposed;
  IrExpr *e = k == CXEval_Int ? cast_to(az, t, ir_expr_int(az->ir, clang_EvalResult_getAsLongLong(r), IR_I64))
              : k == CXEval_Float ? cast_to(az, t, ir_expr_float(az->ir, clang_EvalResult_getAsDouble(r), IR_F64))
                                  : NULL;
  if (r) clang_EvalResult_dispose(r);
  return e;
}

static IrExpr *ref_expr(Az *az, CXCursor c) {
  CXCursor d = clang_getCursorReferenced(c);
  if (!clang_Cursor_isNull(az->index) && same(d, az->index)) {
    if (az->slices) return cast_to(az, az_expr_type(c), az_slice_index(az, c));
    IrExpr *i = ir_expr_index(az->ir);  // the element's; in a vector kernel i counts vectors
    if (az->lanes > 1) i = ir_expr_binary(az->ir, IR_DIV, i, ir_expr_int(az->ir, az->lanes, IR_I64));
    return cast_to(az, az_expr_type(c), i);
  }
  if (az_is_slice_number(az, c)) {  // `row` of `int row = blockIdx.y;`
    IrExpr *slice = az_slice_number(az, c);
    return slice ? cast_to(az, az_expr_type(c), slice) : NULL;
  }
  Binding *b = az_find_local(az, d);
  if (b && b->partial) {
    char *name = fe_spelling(d);
    az_fail(az, c, "kernel '%s' reads '%s', its running sum over the elements of the thread: its value there depends "
                   "on the grid; only 's += e' in the loop and atomicAdd(acc, s) after it are taken as a sum",
            az->launch->kernel, name);
    free(name);
    return NULL;
  }
  if (b && b - az->locals < az->carried) b->loop_read = true;  // it may not become a running sum then
  if (b && b->value) return b->value;
  IrExpr *k = b ? NULL : named_constant(az, d);
  if (k) return k;
  if (kind(d) == CXCursor_ParmDecl && same(clang_getCursorSemanticParent(d), az->kernel) && !az_is_pointer(d)) {
    char *name = fe_spelling(d);
    if (az_expr_type(c) == IR_VOID) {
      CXString ts = clang_getTypeSpelling(clang_getCursorType(d));
      az_fail(az, c, "kernel '%s': parameter '%s' has type '%s'; coconet handles scalar parameters of arithmetic "
                     "types (pass an enum as an int)", az->launch->kernel, name, clang_getCString(ts));
      clang_disposeString(ts);
      free(name);
      return NULL;
    }
    IrExpr *p = az_param(az, name, az_expr_type(c), az_launch_arg(az, d));
    free(name);
    return p;
  }
  if (kind(d) == CXCursor_EnumConstantDecl)
    return ir_expr_int(az->ir, clang_getEnumConstantDeclValue(d), IR_I32);
  char *t = az_text_of(az, c);
  az_fail(az, c, "kernel '%s' uses '%s', which is not a scalar parameter or a local of the element loop",
       az->launch->kernel, t);
  free(t);
  return NULL;
}

// threadIdx.x, blockIdx.y, warpSize, ...: where the thread is.
static bool builtin_name(const char *text) {
  for (const char *const *name = CUDA_BUILTINS; *name; name++)
    if (strncmp(text, *name, strlen(*name)) == 0) return true;
  return false;
}

IrExpr *az_param(Az *az, const char *name, IrType type, const char *host) {
  IrParam *p = NULL;
  for (IrParam *q = az->op->pw.params; q && !p; q = q->next)
    if (strcmp(q->name, name) == 0) p = q;
  if (!p) p = ir_pw_param(az->ir, az->op, name, type, host);
  return ir_expr_param(az->ir, p);
}

// The launch's gridDim.x or blockDim.x as a scalar parameter bound to its
// configuration as written (`dim3(GRID).x`), evaluated where the launch is.
static IrExpr *launch_dim(Az *az, const char *name, const char *config) {
  return az_param(az, name, IR_U32, ir_printf(az->ir, "dim3(%s).x", config));
}

// Where element i's thread is in the launch as written: threadIdx.x,
// blockIdx.x, blockDim.x and gridDim.x as that launch gives them to the
// thread that computes element i (thread t = i under a guard, t = i %
// (gridDim.x * blockDim.x) in a grid-stride loop; i counts vectors in a
// vector kernel), from the launch's own grid and block. The schedule runs the
// element elsewhere; a value keyed by where the thread is (stochastic
// rounding, a dropout hash) is still the same bits.
static IrExpr *coordinate(Az *az, CXCursor at, Builtin b) {
  IrExpr *block = az->block_x > 0 ? ir_expr_int(az->ir, az->block_x, IR_U32)
                                  : launch_dim(az, "coconet_block_x", az->op->pw.block);
  IrExpr *grid = launch_dim(az, "coconet_grid_x", az->op->pw.grid);
  if (b == B_BLOCKDIM_X) return block;
  if (b == B_GRIDDIM_X) return grid;
  IrExpr *t = az->slices ? az_slice_index(az, at) : ir_expr_index(az->ir);  // slices: i = e % n
  if (!t) return NULL;
  if (az->lanes > 1) t = ir_expr_binary(az->ir, IR_DIV, t, ir_expr_int(az->ir, az->lanes, IR_I64));
  IrExpr *b64 = ir_expr_cast(az->ir, IR_I64, block), *g64 = ir_expr_cast(az->ir, IR_I64, grid);
  if (!az->guarded) t = ir_expr_binary(az->ir, IR_MOD, t, ir_expr_binary(az->ir, IR_MUL, g64, b64));
  return ir_expr_cast(az->ir, IR_U32, ir_expr_binary(az->ir, b == B_THREADIDX_X ? IR_MOD : IR_DIV, t, b64));
}

// threadIdx.y and blockIdx.z are 0, blockDim.y and gridDim.z are 1 (-1 for
// any other text): the launch is one-dimensional, or its grid's y picks a
// slice (blockIdx.y and gridDim.y are read before).
static int y_or_z(const char *text) {
  char *t = text_without(text, TEXT_BLANKS);
  static const char *const zero[] = {"threadIdx", "blockIdx"}, *const one[] = {"blockDim", "gridDim"};
  int v = -1;
  for (int i = 0; i < 2 && v < 0; i++)
    for (const char *lane = "yz"; *lane && v < 0; lane++) {
      char name[16];
      snprintf(name, sizeof name, "%s.%c", zero[i], *lane);
      if (strcmp(t, name) == 0) v = 0;
      snprintf(name, sizeof name, "%s.%c", one[i], *lane);
      if (strcmp(t, name) == 0) v = 1;
    }
  free(t);
  return v;
}

// p.lr with p a by-value struct parameter: a scalar parameter of its own,
// named p_lr in generated code, bound to the launch argument's member.
static IrExpr *member_expr(Az *az, CXCursor c) {
  Kids k = kids(c);
  CXCursor base = k.n == 1 ? az_strip(k.v[0]) : clang_getNullCursor();
  CXCursor d = kind(base) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(base) : clang_getNullCursor();
  const char *arg = kind(d) == CXCursor_ParmDecl && same(clang_getCursorSemanticParent(d), az->kernel) && !az_is_pointer(d)
                        ? az_launch_arg(az, d) : NULL;
  IrType t = az_expr_type(c);
  if (!arg || !az_simple_name(arg) || t == IR_VOID) {
    Builtin b = az_builtin(az, c);
    if (b != B_NONE) return coordinate(az, c, b);
    char *text = az_text_of(az, c);
    if (az->slices && (az_is_slice_number(az, c) || strcmp(text, "gridDim.y") == 0)) {
      bool number = az_is_slice_number(az, c);
      free(text);
      IrExpr *slice = number ? az_slice_number(az, c) : NULL;
      if (number) return slice ? ir_expr_cast(az->ir, IR_U32, slice) : NULL;
      return az_param(az, "coconet_grid_y", IR_U32, az->slices);
    }
    int unit = y_or_z(text);
    if (unit >= 0) {
      free(text);
      return ir_expr_int(az->ir, unit, IR_U32);
    }
    if (builtin_name(text)) {
      az_fail(az, c, "kernel '%s' reads '%s' other than in the element index; coconet rebuilds where the thread of "
                  "element i is along x only (threadIdx.x, blockIdx.x, blockDim.x, gridDim.x)",
              az->launch->kernel, text);
      free(text);
      return NULL;
    }
    az_fail(az, c, "kernel '%s': '%s' is not supported in a pointwise kernel (members of by-value struct parameters "
                "are, when the launch passes a variable)", az->launch->kernel, text);
    free(text);
    return NULL;
  }
  char *pname = fe_spelling(d), *member = fe_spelling(c);
  char *name = ir_printf(az->ir, "%s_%s", pname, member), *host = ir_printf(az->ir, "%s.%s", arg, member);
  free(pname);
  free(member);
  return az_param(az, name, t, host);
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

IrExpr *az_binary_expr(Az *az, CXCursor c, CXCursor lhs, CXCursor rhs, const char *op) {
  IrBinaryOp bop;
  if (!binop_of(op, &bop)) return bad_operator(az, c, op);
  IrExpr *a = expr(az, lhs);
  bool lazy = bop == IR_LAND || bop == IR_LOR;
  bool truth;
  if (lazy && az_constant_truth(a, &truth) && truth == (bop == IR_LOR))  // decided by a constant left side
    return ir_expr_int(az->ir, bop == IR_LOR, IR_I32);
  az->lazy += lazy;
  IrExpr *b = expr(az, rhs);
  az->lazy -= lazy;
  if (!a || !b) return NULL;
  return cast_to(az, az_expr_type(c), ir_expr_binary(az->ir, bop, a, b));
}

static IrExpr *unary_expr(Az *az, CXCursor c) {
  Kids k = kids(c);
  char *op = az_unary_op(az, c, k.v[0]);
  int uop = strcmp(op, "-") == 0 ? IR_NEG : strcmp(op, "!") == 0 ? IR_NOT
            : strcmp(op, "~") == 0 ? IR_BITNOT : strcmp(op, "+") == 0 ? -1 : -2;
  bool deref = strcmp(op, "*") == 0;
  if (uop == -2 && !deref) bad_operator(az, c, op);
  free(op);
  if (deref) return cast_to(az, az_expr_type(c), deref_expr(az, c, k.v[0]));
  IrExpr *a = uop == -2 ? NULL : expr(az, k.v[0]);
  if (!a) return NULL;
  return cast_to(az, az_expr_type(c), uop == -1 ? a : ir_expr_unary(az->ir, (IrUnaryOp)uop, a));
}


static IrExpr *literal(Az *az, CXCursor c, bool is_float) {
  CXEvalResult r = clang_Cursor_Evaluate(c);
  if (!r) return az_fail(az, c, "kernel '%s': cannot evaluate a literal", az->launch->kernel);
  IrExpr *e = is_float ? ir_expr_float(az->ir, clang_EvalResult_getAsDouble(r), az_expr_type(c))
                       : ir_expr_int(az->ir, clang_EvalResult_getAsLongLong(r), az_expr_type(c));
  clang_EvalResult_dispose(r);
  return e;
}

IrExpr *az_expr(Az *az, CXCursor c) {
  if (az_failed(az)) return NULL;
  CXCursor buffer;
  int test = null_test(az, c, &buffer);
  if (test) return null_test_value(az, c, buffer, test);
  if (az->lanes > 1) {
    bool lane;
    IrExpr *e = az_vector_lane(az, c, &lane);
    if (lane || az_failed(az)) return e;
    if (az_vector_type(clang_getCursorType(c), NULL)) {
      char *t = az_text_of(az, c);
      az_fail(az, c, "kernel '%s': the vector '%s' is used as a value coconet does not follow (a helper's argument or "
                     "result, an operator it does not know); it reads vectors in the kernel's body: locals, loads, "
                     "stores, lanes and the functions listed in docs/pragmas.md", az->launch->kernel, t);
      free(t);
      return NULL;
    }
  }
  Kids k = kids(c);
  switch (kind(c)) {
  case CXCursor_UnexposedExpr:
  case CXCursor_ParenExpr:
    if (k.n == 1) return cast_to(az, az_expr_type(c), expr(az, k.v[0]));
    break;
  case CXCursor_IntegerLiteral:
  case CXCursor_CXXBoolLiteralExpr:
    return literal(az, c, false);
  case CXCursor_FloatingLiteral:
    return literal(az, c, true);
  case CXCursor_DeclRefExpr:
    return ref_expr(az, c);
  case CXCursor_ArraySubscriptExpr:
    return az_subscript(az, c);
  case CXCursor_MemberRefExpr:
    return member_expr(az, c);
  case CXCursor_BinaryOperator:
    if (k.n == 2) {
      char *op = az_op_between(az, k.v[0], k.v[1]);
      IrExpr *e = az_binary_expr(az, c, k.v[0], k.v[1], op);
      free(op);
      return e;
    }
    break;
  case CXCursor_UnaryOperator:
    if (k.n == 1) return unary_expr(az, c);
    break;
  case CXCursor_ConditionalOperator:
    if (k.n == 3) {
      IrExpr *p = expr(az, k.v[0]);
      bool truth;
      if (az_constant_truth(p, &truth))  // a constant condition (a template flag, a NULL test): the other branch never runs
        return cast_to(az, az_expr_type(c), expr(az, k.v[truth ? 1 : 2]));
      az->lazy++;
      IrExpr *a = expr(az, k.v[1]), *b = expr(az, k.v[2]);
      az->lazy--;
      return p && a && b ? cast_to(az, az_expr_type(c), ir_expr_select(az->ir, p, a, b)) : NULL;
    }
    break;
  case CXCursor_CStyleCastExpr:
  case CXCursor_CXXStaticCastExpr:
  case CXCursor_CXXFunctionalCastExpr:
    if (k.n >= 1) return cast_to(az, az_expr_type(c), expr(az, k.last));
    break;
  case CXCursor_CallExpr:
    return az_call_expr(az, c);
  default:
    break;
  }
  char *t = az_text_of(az, c);
  az_fail(az, c, "kernel '%s': '%s' is not supported in a pointwise kernel", az->launch->kernel, t);
  free(t);
  return NULL;
}
