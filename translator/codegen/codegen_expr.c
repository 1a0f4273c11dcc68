// codegen_expr.c: IR expressions (ir.h) as CUDA C++ text.
//
// Every value is computed exactly as the IR (and its interpreter) defines it:
// operands are converted to the operation's type first; __half and
// __nv_bfloat16 arithmetic is done in float and rounded back after every
// operation (__float2half_rn, as CUDA's operators do); conversions to and
// from 16-bit types use CUDA's intrinsics (__half2float, __int2half_rn,
// __half2int_rz, ...); other conversions are C casts. Parentheses follow C's
// precedence, plus the ones g++ -Wparentheses asks for.
#include "codegen_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Ex {
  Buf *b;
  const ExprNames *nm;
} Ex;

enum { PREC_SELECT = 3, PREC_UNARY = 14, PREC_PRIMARY = 16 };

static bool is16(IrType t) { return t == IR_F16 || t == IR_BF16; }

static bool is_compare(int op) { return op >= IR_LT && op <= IR_LOR; }

//
// Conversions
//

static const char *to_float_fn(IrType t16) { return t16 == IR_F16 ? "__half2float" : "__bfloat162float"; }

static const char *from_float_fn(IrType t16) { return t16 == IR_F16 ? "__float2half_rn" : "__float2bfloat16_rn"; }

// The intrinsic converting from -> to when either is 16-bit (NULL: go through float).
static const char *conv16_fn(IrType from, IrType to) {
  bool h = to == IR_F16 || from == IR_F16;
  if (is16(to)) {
    switch (from) {
    case IR_F32: return h ? "__float2half_rn" : "__float2bfloat16_rn";
    case IR_F64: return h ? "__double2half" : "__double2bfloat16";
    case IR_I32: case IR_U8: case IR_I8: case IR_BOOL: return h ? "__int2half_rn" : "__int2bfloat16_rn";
    case IR_I64: return h ? "__ll2half_rn" : "__ll2bfloat16_rn";
    case IR_U32: return h ? "__uint2half_rn" : "__uint2bfloat16_rn";
    default: return NULL;
    }
  }
  switch (to) {
  case IR_F32: return h ? "__half2float" : "__bfloat162float";
  case IR_I32: return h ? "__half2int_rz" : "__bfloat162int_rz";
  case IR_I64: return h ? "__half2ll_rz" : "__bfloat162ll_rz";
  case IR_U32: return h ? "__half2uint_rz" : "__bfloat162uint_rz";
  case IR_U8: return h ? "__half2uchar_rz" : "__bfloat162uchar_rz";
  case IR_I8: return h ? "__half2char_rz" : "__bfloat162char_rz";
  default: return NULL;
  }
}

static void emit_node(Ex *x, const IrExpr *e, int min);
static void emit_as(Ex *x, const IrExpr *e, IrType t, int min);

// A 16-bit value (e converted to t16) as float: exact.
static void emit_float16(Ex *x, const IrExpr *e, IrType t16) {
  buf_printf(x->b, "%s(", to_float_fn(t16));
  emit_as(x, e, t16, 0);
  buf_puts(x->b, ")");
}

//
// Constants
//

static int64_t wrap_int(int64_t v, IrType t) {
  switch (t) {
  case IR_I32: return (int32_t)(uint32_t)(uint64_t)v;
  case IR_U32: return (uint32_t)(uint64_t)v;
  case IR_U8: return (uint8_t)(uint64_t)v;
  case IR_I8: return (int8_t)(uint8_t)(uint64_t)v;
  case IR_BOOL: return v != 0;
  default: return v;
  }
}

static void float_literal(Buf *b, double v, IrType t) {
  if (isnan(v)) {
    buf_puts(b, t == IR_F64 ? "(double)NAN" : "NAN");
    return;
  }
  if (isinf(v)) {
    buf_printf(b, "%s%s", v < 0 ? "-" : "", t == IR_F64 ? "(double)INFINITY" : "INFINITY");
    return;
  }
  char text[64];
  for (int digits = t == IR_F64 ? 15 : 6; digits <= (t == IR_F64 ? 17 : 9); digits++) {  // the shortest exact text
    snprintf(text, sizeof text, "%.*g", digits, t == IR_F64 ? v : (double)(float)v);
    if (t == IR_F64 ? strtod(text, NULL) == v : strtof(text, NULL) == (float)v) break;
  }
  bool plain = strspn(text, "-0123456789") == strlen(text);
  buf_printf(b, "%s%s%s", text, plain ? ".0" : "", t == IR_F64 ? "" : "f");
}

static void int_literal(Buf *b, int64_t v, IrType t) {
  if (t == IR_U32) {
    buf_printf(b, "%lluu", (unsigned long long)(uint32_t)v);
  } else if (t == IR_I64) {
    if (v == INT64_MIN) buf_puts(b, "(-9223372036854775807LL - 1)");
    else buf_printf(b, "%lldLL", (long long)v);
  } else if (v == INT32_MIN) {
    buf_puts(b, "(-2147483647 - 1)");
  } else {
    buf_printf(b, "%lld", (long long)v);
  }
}

// The value of a constant node in its own type.
static double const_value(const IrExpr *e) {
  if (e->kind == IR_E_FLOAT) return e->fval;
  return (double)wrap_int(e->ival, e->type);
}

static bool const_negative(const IrExpr *e) {
  if (e->kind == IR_E_INT) return ir_type_is_float(e->type) ? e->ival < 0 : wrap_int(e->ival, e->type) < 0;
  return e->kind == IR_E_FLOAT && signbit(e->fval);
}

// A constant written directly as a literal of type t (not 16-bit).
static void emit_const(Ex *x, const IrExpr *e, IrType t, int min) {
  bool paren = const_negative(e) && min > PREC_UNARY;
  if (paren) buf_puts(x->b, "(");
  double own = e->kind == IR_E_FLOAT ? (double)ir_round(e->type, e->fval) : const_value(e);
  if (ir_type_is_float(t)) float_literal(x->b, own, t);
  else int_literal(x->b, wrap_int(wrap_int(e->ival, e->type), t), t);
  if (paren) buf_puts(x->b, ")");
}

static bool is_const(const IrExpr *e) { return e->kind == IR_E_INT || e->kind == IR_E_FLOAT; }

// Constants that can be written in type t without a conversion call.
static bool literal_ok(const IrExpr *e, IrType t) {
  if (!is_const(e) || is16(t) || is16(e->type)) return false;
  if (ir_type_is_float(e->type) && !ir_type_is_float(t)) return false;
  return true;
}

//
// Conversion of any expression to type t
//

static void emit_as(Ex *x, const IrExpr *e, IrType t, int min) {
  if (e->type == t && !(is_const(e) && !is16(t))) {
    emit_node(x, e, min);
    return;
  }
  if (literal_ok(e, t)) {
    emit_const(x, e, t, min);
    return;
  }
  if (is16(e->type) || is16(t)) {
    const char *fn = conv16_fn(e->type, t);
    if (fn) {
      buf_printf(x->b, "%s(", fn);
      emit_node(x, e, 0);
      buf_puts(x->b, ")");
    } else if (is16(t)) {  // the other 16-bit type: through float (exact)
      buf_printf(x->b, "%s(", from_float_fn(t));
      emit_float16(x, e, e->type);
      buf_puts(x->b, ")");
    } else {  // 16-bit to double or bool: through float (exact)
      bool paren = min > PREC_UNARY;
      buf_printf(x->b, "%s(%s)", paren ? "(" : "", codegen_ctype(t));
      emit_float16(x, e, e->type);
      if (paren) buf_puts(x->b, ")");
    }
    return;
  }
  bool paren = min > PREC_UNARY;
  buf_printf(x->b, "%s(%s)", paren ? "(" : "", codegen_ctype(t));
  emit_node(x, e, PREC_UNARY);
  if (paren) buf_puts(x->b, ")");
}

//
// Nodes
//

static void emit_read(Ex *x, const IrExpr *e) {
  bool elementwise = false;
  const char *name = x->nm->tensor(x->nm->ctx, e->tensor, &elementwise);
  buf_puts(x->b, name);
  if (elementwise) return;
  const char *k = e->k && e->k->kind != IR_SIZE_CONST ? x->nm->size(x->nm->ctx, e->k) : NULL;
  char lit[32];
  if (e->k && !k) snprintf(lit, sizeof lit, "%ld", e->k->value);
  switch (e->index) {
  case IR_IDX_I: buf_puts(x->b, "[i]"); break;
  case IR_IDX_MOD: buf_printf(x->b, "[i %% %s]", k ? k : lit); break;
  case IR_IDX_DIV: buf_printf(x->b, "[i / %s]", k ? k : lit); break;
  case IR_IDX_CONST: buf_printf(x->b, "[%s]", k ? k : lit); break;
  case IR_IDX_OTHER: COCONET_BUG("generated kernel reads %s[%s]", e->tensor->name, e->text);
  }
}

// g++ -Wparentheses wants parentheses around mixed bitwise, shift and logical operands.
static int operand_min(int op, const IrExpr *child, int min) {
  if (child->kind != IR_E_BINARY || ir_binary_prec(child->op) == ir_binary_prec(op)) return min;
  bool bitwise = op == IR_BITAND || op == IR_BITOR || op == IR_BITXOR || op == IR_SHL || op == IR_SHR ||
                 op == IR_LAND || op == IR_LOR;
  bool relational = (op >= IR_LT && op <= IR_NE) && ir_binary_prec(child->op) <= 10;
  return bitwise || relational ? PREC_PRIMARY : min;
}

static void emit_binary16(Ex *x, const IrExpr *e) {
  buf_printf(x->b, "%s(", from_float_fn(e->type));
  if (e->op == IR_MOD) buf_puts(x->b, "fmodf(");
  emit_float16(x, e->a, e->type);
  buf_puts(x->b, e->op == IR_MOD ? ", " : (e->op == IR_ADD ? " + " : e->op == IR_SUB ? " - " : e->op == IR_MUL ? " * " : " / "));
  emit_float16(x, e->b, e->type);
  buf_puts(x->b, e->op == IR_MOD ? "))" : ")");
}

static void emit_binary(Ex *x, const IrExpr *e) {
  int op = e->op, p = ir_binary_prec(op);
  IrType t = is_compare(op) ? ir_type_promote(e->a->type, e->b->type) : e->type;
  if (!is_compare(op) && is16(t)) {
    emit_binary16(x, e);
    return;
  }
  if (op == IR_MOD && ir_type_is_float(t)) {
    buf_puts(x->b, t == IR_F64 ? "fmod(" : "fmodf(");
    emit_as(x, e->a, t, 0);
    buf_puts(x->b, ", ");
    emit_as(x, e->b, t, 0);
    buf_puts(x->b, ")");
    return;
  }
  if (is16(t)) emit_float16(x, e->a, t);
  else emit_as(x, e->a, t, operand_min(op, e->a, p));
  buf_printf(x->b, " %s ", ir_binary_text(op));
  if (op == IR_SHL || op == IR_SHR) emit_node(x, e->b, operand_min(op, e->b, p + 1));
  else if (is16(t)) emit_float16(x, e->b, t);
  else emit_as(x, e->b, t, operand_min(op, e->b, p + 1));
}

static void emit_unary(Ex *x, const IrExpr *e) {
  if (e->op == IR_NOT) {
    buf_puts(x->b, "!");
    if (is16(e->a->type)) emit_float16(x, e->a, e->a->type);
    else emit_node(x, e->a, PREC_UNARY);
    return;
  }
  if (is16(e->type)) {  // -h: exact in float
    buf_printf(x->b, "%s(-", from_float_fn(e->type));
    emit_float16(x, e->a, e->type);
    buf_puts(x->b, ")");
    return;
  }
  buf_puts(x->b, e->op == IR_NEG ? "-" : "~");
  emit_as(x, e->a, e->type, PREC_UNARY + 1);
}

static void emit_call(Ex *x, const IrExpr *e) {
  bool h = is16(e->type);
  if (h) buf_printf(x->b, "%s(", from_float_fn(e->type));
  buf_printf(x->b, "%s(", ir_math_name(e->fn, h ? IR_F32 : e->type));
  const IrExpr *args[3] = {e->a, e->b, e->c};
  for (int i = 0; i < 3 && args[i]; i++) {
    if (i) buf_puts(x->b, ", ");
    if (h) emit_float16(x, args[i], e->type);
    else emit_as(x, args[i], e->type, 0);
  }
  buf_puts(x->b, h ? "))" : ")");
}

// __float_as_uint(a) and friends: the operand is f32 for an integer result, else the integer type.
static void emit_bitcast(Ex *x, const IrExpr *e) {
  bool to_float = e->type == IR_F32;
  IrType from = to_float ? e->a->type : IR_F32;
  buf_printf(x->b, "%s(", to_float ? (from == IR_U32 ? "__uint_as_float" : "__int_as_float")
                                   : (e->type == IR_U32 ? "__float_as_uint" : "__float_as_int"));
  emit_as(x, e->a, from, 0);
  buf_puts(x->b, ")");
}

static void emit_select(Ex *x, const IrExpr *e) {
  if (is16(e->a->type)) emit_float16(x, e->a, e->a->type);
  else emit_node(x, e->a, PREC_SELECT + 1);
  buf_puts(x->b, " ? ");
  emit_as(x, e->b, e->type, PREC_SELECT);
  buf_puts(x->b, " : ");
  emit_as(x, e->c, e->type, PREC_SELECT);
}

static int node_prec(const IrExpr *e) {
  switch (e->kind) {
  case IR_E_INT: case IR_E_FLOAT: return const_negative(e) ? PREC_UNARY : PREC_PRIMARY;
  case IR_E_INDEX: return PREC_UNARY;
  case IR_E_UNARY: return is16(e->type) && e->op != IR_NOT ? PREC_PRIMARY : PREC_UNARY;
  case IR_E_BINARY:
    if (!is_compare(e->op) && (is16(e->type) || (e->op == IR_MOD && ir_type_is_float(e->type)))) return PREC_PRIMARY;
    return ir_binary_prec(e->op);
  case IR_E_SELECT: return PREC_SELECT;
  default: return PREC_PRIMARY;
  }
}

static void emit_node(Ex *x, const IrExpr *e, int min) {
  if (e->kind == IR_E_CAST) {
    emit_as(x, e->a, e->type, min);
    return;
  }
  if (is_const(e) && is16(e->type)) {  // a 16-bit constant: rounded from its value
    buf_printf(x->b, "%s(", e->type == IR_F16 ? "__double2half" : "__double2bfloat16");
    float_literal(x->b, const_value(e), IR_F64);
    buf_puts(x->b, ")");
    return;
  }
  bool paren = node_prec(e) < min;
  if (paren) buf_puts(x->b, "(");
  switch (e->kind) {
  case IR_E_INT: case IR_E_FLOAT: emit_const(x, e, e->type, 0); break;
  case IR_E_INDEX: buf_puts(x->b, "(int64_t)i"); break;
  case IR_E_READ: emit_read(x, e); break;
  case IR_E_PARAM: buf_puts(x->b, x->nm->param(x->nm->ctx, e->param)); break;
  case IR_E_LOCAL: buf_puts(x->b, x->nm->local(x->nm->ctx, e->let)); break;
  case IR_E_UNARY: emit_unary(x, e); break;
  case IR_E_BINARY: emit_binary(x, e); break;
  case IR_E_SELECT: emit_select(x, e); break;
  case IR_E_CALL: emit_call(x, e); break;
  case IR_E_PHILOX: buf_puts(x->b, x->nm->draw(x->nm->ctx, e)); break;
  case IR_E_BITCAST: emit_bitcast(x, e); break;
  case IR_E_OPAQUE: COCONET_BUG("call '%s' is not in the IR: the kernel's own text computes it", e->text);
  case IR_E_CAST: break;
  }
  if (paren) buf_puts(x->b, ")");
}

void cg_expr(Buf *b, const ExprNames *nm, const IrExpr *e, IrType t) {
  Ex x = {b, nm};
  emit_as(&x, e, t, 0);
}

bool cg_index_ok(const IrExpr *read) { return read->index != IR_IDX_OTHER; }
