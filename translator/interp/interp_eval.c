// interp_eval.c: the interpreter's arithmetic: CUDA rounding of 16-bit types,
// typed operators with GPU integer semantics, curand's Philox4x32-10, and
// evaluation of pointwise expressions.
//
// Semantics chosen where C leaves them open (the same on both sides of every
// comparison, and what the GPU does where it defines it):
//   - integers wrap (two's complement); x / 0 = -1 (all ones) and x % 0 = x;
//     INT_MIN / -1 = INT_MIN; a shift by a negative count or by the width or
//     more gives 0 (or -1 for >> of a negative signed value)
//   - float to integer conversions truncate and saturate, NaN -> 0 (cvt.rzi.sat)
//   - f32 is computed in float; __half and __nv_bfloat16 are computed in float
//     and rounded to nearest even after every operation; f64 in double
//   - math functions use the C library (both runs use the same one)
#include "interp_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

void interp_fail(Interp *in, const char *fmt, ...) {
  if (in->failed) return;
  in->failed = true;
  va_list ap;
  va_start(ap, fmt);
  diag_vreport("error", in->op ? &in->op->loc : NULL, fmt, ap);
  va_end(ap);
}

double interp_to_double(IrVal v, IrType t) { return ir_type_is_float(t) ? v.f : (double)v.i; }

static int64_t wrap(int64_t v, IrType t) {
  switch (t) {
  case IR_I32: return (int32_t)(uint32_t)(uint64_t)v;
  case IR_U32: return (uint32_t)(uint64_t)v;
  case IR_U8: return (uint8_t)(uint64_t)v;
  case IR_I8: return (int8_t)(uint8_t)(uint64_t)v;
  case IR_BOOL: return v != 0;
  default: return v;
  }
}

static int64_t saturate(double d, IrType t) {
  if (t == IR_BOOL) return d != 0;  // NaN too
  // (uint8_t)f, (int8_t)f of a float or double: nvcc converts to 32 bits (cvt.rzi.u32, .s32,
  // clamped) and stores the low byte (C++ leaves a value out of range undefined).
  if (t == IR_U8 || t == IR_I8) return wrap(saturate(d, t == IR_U8 ? IR_U32 : IR_I32), t);
  if (isnan(d)) return 0;
  d = trunc(d);
  double lo = t == IR_I32 ? INT32_MIN : t == IR_U32 ? 0 : -9223372036854775808.0;
  double hi = t == IR_I32 ? INT32_MAX : t == IR_U32 ? UINT32_MAX : 9223372036854774784.0;
  return (int64_t)(d < lo ? lo : d > hi ? hi : d);
}

IrVal interp_from_double(double d, IrType t) {
  IrVal v;
  if (ir_type_is_float(t)) v.f = ir_round(t, d);
  else v.i = saturate(d, t);
  return v;
}

IrVal interp_convert(IrVal v, IrType from, IrType to) {
  if ((from == IR_F16 || from == IR_BF16) && (to == IR_U8 || to == IR_I8)) {
    // __half2uchar_rz, __half2char_rz (CUDA's __half conversions): clamped into 8 bits
    double lo = to == IR_U8 ? 0 : -128, hi = to == IR_U8 ? 255 : 127, d = isnan(v.f) ? 0 : trunc(v.f);
    IrVal r = {.i = (int64_t)(d < lo ? lo : d > hi ? hi : d)};
    return r;
  }
  if (ir_type_is_float(to)) {
    IrVal r = {.f = ir_round(to, ir_type_is_float(from) ? v.f : (double)v.i)};
    return r;
  }
  if (ir_type_is_float(from)) return interp_from_double(v.f, to);
  IrVal r = {.i = wrap(v.i, to)};
  return r;
}

static IrVal fval(double d) {
  IrVal v = {.f = d};
  return v;
}

static IrVal ival(int64_t i) {
  IrVal v = {.i = i};
  return v;
}

static bool truthy(IrVal v, IrType t) { return ir_type_is_float(t) ? v.f != 0 : v.i != 0; }

static IrVal float_arith(int op, IrType t, double a, double b) {
  if (t == IR_F64) {
    switch (op) {
    case IR_ADD: return fval(a + b);
    case IR_SUB: return fval(a - b);
    case IR_MUL: return fval(a * b);
    case IR_DIV: return fval(a / b);
    default: return fval(fmod(a, b));
    }
  }
  float fa = (float)a, fb = (float)b, r;
  switch (op) {
  case IR_ADD: r = fa + fb; break;
  case IR_SUB: r = fa - fb; break;
  case IR_MUL: r = fa * fb; break;
  case IR_DIV: r = fa / fb; break;
  default: r = fmodf(fa, fb); break;
  }
  return fval(ir_round(t, r));
}

static int64_t shift(int op, IrType t, int64_t a, int64_t count) {
  int width = t == IR_I64 ? 64 : 32;
  bool is_signed = t != IR_U32;
  if (count < 0 || count >= width) return op == IR_SHR && is_signed && a < 0 ? -1 : 0;
  if (op == IR_SHL) return wrap((int64_t)((uint64_t)a << count), t);
  return is_signed ? a >> count : (int64_t)((uint64_t)a >> count);
}

static int64_t int_divmod(int op, IrType t, int64_t a, int64_t b) {
  if (b == 0) return op == IR_DIV ? wrap(-1, t) : a;
  if (t == IR_I64 && a == INT64_MIN && b == -1) return op == IR_DIV ? a : 0;
  if (t == IR_I32 && a == INT32_MIN && b == -1) return op == IR_DIV ? a : 0;
  return wrap(op == IR_DIV ? a / b : a % b, t);
}

static IrVal int_arith(int op, IrType t, int64_t a, int64_t b) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (op) {
  case IR_ADD: return ival(wrap((int64_t)(ua + ub), t));
  case IR_SUB: return ival(wrap((int64_t)(ua - ub), t));
  case IR_MUL: return ival(wrap((int64_t)(ua * ub), t));
  case IR_DIV: case IR_MOD: return ival(int_divmod(op, t, a, b));
  case IR_BITAND: return ival(wrap(a & b, t));
  case IR_BITOR: return ival(wrap(a | b, t));
  case IR_BITXOR: return ival(wrap(a ^ b, t));
  default: return ival(shift(op, t, a, b));
  }
}

static IrVal compare(int op, IrType t, IrVal a, IrVal b) {
  double x = interp_to_double(a, t), y = interp_to_double(b, t);
  bool r;
  if (!ir_type_is_float(t)) {
    int64_t p = a.i, q = b.i;
    r = op == IR_LT ? p < q : op == IR_LE ? p <= q : op == IR_GT ? p > q : op == IR_GE ? p >= q : op == IR_EQ ? p == q : p != q;
  } else {
    r = op == IR_LT ? x < y : op == IR_LE ? x <= y : op == IR_GT ? x > y : op == IR_GE ? x >= y : op == IR_EQ ? x == y : x != y;
  }
  return ival(r);
}

IrVal interp_arith(int op, IrType t, IrVal a, IrVal b) {
  switch (op) {
  case IR_LT: case IR_LE: case IR_GT: case IR_GE: case IR_EQ: case IR_NE: return compare(op, t, a, b);
  case IR_LAND: return ival(truthy(a, t) && truthy(b, t));
  case IR_LOR: return ival(truthy(a, t) || truthy(b, t));
  default: break;
  }
  if (!ir_type_is_float(t)) return int_arith(op, t, a.i, b.i);
  if (op == IR_ADD || op == IR_SUB || op == IR_MUL || op == IR_DIV || op == IR_MOD)
    return float_arith(op, t, a.f, b.f);
  return fval(NAN);
}

//
// Philox4x32-10 and curand's uniform (Salmon et al., SC'11; curand's
// curand_init/skipahead semantics)
//

void ir_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; round++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint32_t)p1;
    c3 = (uint32_t)p0;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

// curand_init(seed, subsequence, offset) puts the 128-bit counter at
// (subsequence << 64) + offset / 4 and starts at word offset % 4; each
// curand() returns the next word, moving to the next counter after four.
float ir_curand_uniform(uint64_t seed, uint64_t subsequence, uint64_t offset, uint64_t draw) {
  uint64_t word = (offset & 3) + draw;
  uint64_t lo = offset / 4, add = word / 4, hi = subsequence;
  lo += add;
  if (lo < add) hi++;
  uint32_t ctr[4] = {(uint32_t)lo, (uint32_t)(lo >> 32), (uint32_t)hi, (uint32_t)(hi >> 32)};
  uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
  uint32_t out[4];
  ir_philox4x32_10(ctr, key, out);
  const float inv = 2.3283064e-10f;  // 2^-32, as CURAND_2POW32_INV
  return (float)out[word & 3] * inv + inv / 2.0f;
}

//
// Expressions
//

static double math1(IrMathFn fn, IrType t, double x) {
  if (t == IR_F64) {
    switch (fn) {
    case IR_FN_SQRT: return sqrt(x);
    case IR_FN_RSQRT: return 1.0 / sqrt(x);
    case IR_FN_EXP: return exp(x);
    case IR_FN_EXP2: return exp2(x);
    case IR_FN_LOG: return log(x);
    case IR_FN_LOG2: return log2(x);
    case IR_FN_LOG1P: return log1p(x);
    case IR_FN_TANH: return tanh(x);
    case IR_FN_ERF: return erf(x);
    case IR_FN_SIN: return sin(x);
    case IR_FN_COS: return cos(x);
    case IR_FN_FABS: return fabs(x);
    case IR_FN_FLOOR: return floor(x);
    default: return ceil(x);
    }
  }
  float f = (float)x;
  switch (fn) {
  case IR_FN_SQRT: return sqrtf(f);
  case IR_FN_RSQRT: return 1.0f / sqrtf(f);
  case IR_FN_EXP: return expf(f);
  case IR_FN_EXP2: return exp2f(f);
  case IR_FN_LOG: return logf(f);
  case IR_FN_LOG2: return log2f(f);
  case IR_FN_LOG1P: return log1pf(f);
  case IR_FN_TANH: return tanhf(f);
  case IR_FN_ERF: return erff(f);
  case IR_FN_SIN: return sinf(f);
  case IR_FN_COS: return cosf(f);
  case IR_FN_FABS: return fabsf(f);
  case IR_FN_FLOOR: return floorf(f);
  default: return ceilf(f);
  }
}

static double math2(IrMathFn fn, IrType t, double x, double y) {
  if (t == IR_F64) {
    switch (fn) {
    case IR_FN_FMIN: return fmin(x, y);
    case IR_FN_FMAX: return fmax(x, y);
    case IR_FN_COPYSIGN: return copysign(x, y);
    default: return pow(x, y);
    }
  }
  float a = (float)x, b = (float)y;
  switch (fn) {
  case IR_FN_FMIN: return fminf(a, b);
  case IR_FN_FMAX: return fmaxf(a, b);
  case IR_FN_COPYSIGN: return copysignf(a, b);
  default: return powf(a, b);
  }
}

// fma rounds once: in double for f64, in float for everything narrower.
static double math3(IrType t, double x, double y, double z) {
  return t == IR_F64 ? fma(x, y, z) : fmaf((float)x, (float)y, (float)z);
}

static IrVal eval_as(Interp *in, const IrExpr *e, IrType t) {
  return interp_convert(interp_eval(in, e), e->type, t);
}

static long read_index(Interp *in, const IrExpr *e) {
  long k = e->k ? ir_size_eval(e->k, in->run->vars) : 0;
  if (e->index != IR_IDX_I && e->index != IR_IDX_CONST && k <= 0) {
    interp_fail(in, "verify=ir: kernel '%s' reads %s[i %s K] with K = %ld", in->op->pw.kernel,
                e->tensor->name, e->index == IR_IDX_MOD ? "%" : "/", k);
    return 0;
  }
  switch (e->index) {
  case IR_IDX_I: return in->i;
  case IR_IDX_MOD: return in->i % k;
  case IR_IDX_DIV: return in->i / k;
  case IR_IDX_CONST: return k;
  case IR_IDX_OTHER: break;
  }
  interp_fail(in, "verify=ir: kernel '%s' reads %s[%s], which the interpreter cannot evaluate",
              in->op->pw.kernel, e->tensor->name, e->text);
  return 0;
}

static IrVal eval_read(Interp *in, const IrExpr *e) {
  const IrRunTensor *rt = &in->run->tensors[e->tensor->id - 1];
  long j = read_index(in, e);
  if (in->failed) return ival(0);
  if (j < 0 || j >= rt->count) {
    interp_fail(in, "verify=ir: kernel '%s' reads %s[%ld] out of bounds (%ld elements)", in->op->pw.kernel,
                e->tensor->name, j, rt->count);
    return ival(0);
  }
  return rt->data[in->rank][j];
}

static IrVal eval_local(Interp *in, const IrExpr *e) {
  for (int k = in->nlets - 1; k >= 0; k--)
    if (in->lets[k] == e->let) return in->let_vals[k];
  interp_fail(in, "verify=ir: local '%s' used before its definition", e->let->name);
  return ival(0);
}

static IrVal eval_philox(Interp *in, const IrExpr *e) {
  IrVal seed = eval_as(in, e->a, IR_I64), offset = eval_as(in, e->b, IR_I64);
  return fval(ir_curand_uniform((uint64_t)seed.i, (uint64_t)in->i, (uint64_t)offset.i, (uint64_t)e->draw));
}

static IrVal eval_unary(Interp *in, const IrExpr *e) {
  IrVal a = eval_as(in, e->a, e->op == IR_NOT ? e->a->type : e->type);
  switch (e->op) {
  case IR_NEG: return ir_type_is_float(e->type) ? fval(-a.f) : ival(wrap((int64_t)(0 - (uint64_t)a.i), e->type));
  case IR_NOT: return ival(!truthy(a, e->a->type));
  default: return ival(wrap(~a.i, e->type));
  }
}

// The bits of an f32 as u32/i32, or of a u32/i32 as f32.
static IrVal eval_bitcast(Interp *in, const IrExpr *e) {
  if (e->type == IR_F32) {
    uint32_t u = (uint32_t)eval_as(in, e->a, e->a->type).i;
    float f;
    memcpy(&f, &u, sizeof f);
    return (IrVal){.f = f};
  }
  float f = (float)eval_as(in, e->a, IR_F32).f;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return ival(wrap((int64_t)u, e->type));
}

// A call the IR does not model: a fixed function of its text and its arguments'
// values (a hash into [-1, 1]), the same wherever the element is computed, so the
// schedule's data flow is still checked.
static IrVal eval_opaque(Interp *in, const IrExpr *e) {
  uint64_t h = 1469598103934665603ull;
  for (const char *t = e->text; *t; t++) h = (h ^ (unsigned char)*t) * 1099511628211ull;
  const IrExpr *args[3] = {e->a, e->b, e->c};
  for (int k = 0; k < 3 && args[k]; k++) {
    double v = interp_to_double(interp_eval(in, args[k]), args[k]->type);
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    h = (h ^ bits) * 1099511628211ull;
  }
  h ^= h >> 29;
  return interp_from_double((double)(int)(h % 2001) / 1000.0 - 1.0, e->type);
}

IrVal interp_eval(Interp *in, const IrExpr *e) {
  if (in->failed) return ival(0);
  switch (e->kind) {
  case IR_E_INT: return interp_convert(ival(e->ival), IR_I64, e->type);
  case IR_E_FLOAT: return interp_from_double(e->fval, e->type);
  case IR_E_INDEX: return ival(in->i);
  case IR_E_READ: return eval_read(in, e);
  case IR_E_PARAM: return interp_from_double(in->run->vars[e->param->var->id], e->type);
  case IR_E_LOCAL: return eval_local(in, e);
  case IR_E_UNARY: return eval_unary(in, e);
  case IR_E_BINARY: {
    IrType t = e->type;
    if (e->op >= IR_LT && e->op <= IR_LOR) t = ir_type_promote(e->a->type, e->b->type);
    if (e->op == IR_SHL || e->op == IR_SHR) return interp_arith(e->op, t, eval_as(in, e->a, t), eval_as(in, e->b, IR_I64));
    return interp_arith(e->op, t, eval_as(in, e->a, t), eval_as(in, e->b, t));
  }
  case IR_E_SELECT:
    return truthy(interp_eval(in, e->a), e->a->type) ? eval_as(in, e->b, e->type) : eval_as(in, e->c, e->type);
  case IR_E_CAST: return eval_as(in, e->a, e->type);
  case IR_E_CALL: {
    IrType t = e->type;
    double x = interp_to_double(eval_as(in, e->a, t), t);
    double r = e->c   ? math3(t, x, interp_to_double(eval_as(in, e->b, t), t), interp_to_double(eval_as(in, e->c, t), t))
               : e->b ? math2(e->fn, t, x, interp_to_double(eval_as(in, e->b, t), t))
                      : math1(e->fn, t, x);
    return interp_from_double(r, t);
  }
  case IR_E_PHILOX: return eval_philox(in, e);
  case IR_E_BITCAST: return eval_bitcast(in, e);
  case IR_E_OPAQUE: return eval_opaque(in, e);
  }
  return ival(0);
}
