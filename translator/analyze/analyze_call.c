// analyze_call.c: calls in the kernel analysis' expressions, into IR
// expressions: math functions, 16-bit conversions and operators, bit casts,
// cache loads, curand's Philox draws, min/max, and the inlining of __device__
// helpers (whose statements analyze_stmt.c reads). See analyze.c.
#include "analyze_impl.h"
#include "common/cuda_names.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define expr az_expr
#define cast_to az_cast_to

static const struct { const char *name; IrType from, to; } BITCASTS[] = {
    {"__float_as_uint", IR_F32, IR_U32}, {"__float_as_int", IR_F32, IR_I32},
    {"__uint_as_float", IR_U32, IR_F32}, {"__int_as_float", IR_I32, IR_F32},
};

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
  if (az->lazy || az->outer != az->draw_outer || az->cond != az->draw_cond)
    return az_fail(az, c, "kernel '%s': curand_uniform under a condition: which number each later draw gets would "
                       "depend on the path taken; draw unconditionally and use the value under the condition",
                   az->launch->kernel);
  return ir_expr_philox(az->ir, az->seed, az->offset, az->draws++);
}

static bool trivial(const IrExpr *e) {
  return e->kind == IR_E_LOCAL || e->kind == IR_E_PARAM || e->kind == IR_E_INT || e->kind == IR_E_FLOAT ||
         e->kind == IR_E_INDEX;
}

static enum CXChildVisitResult find_branch(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (kind(c) == CXCursor_IfStmt || kind(c) == CXCursor_ForStmt) {
    *(bool *)data = true;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

// A helper with statements that branch: its arguments and value are named (lets),
// since the branches' selects use them several times.
static bool branches(CXCursor body) {
  bool found = false;
  clang_visitChildren(body, find_branch, &found);
  return found;
}

static IrExpr *named(Az *az, CXCursor decl, IrExpr *e, const char *suffix) {
  if (!e || trivial(e)) return e;
  char *name = fe_spelling(decl), *full = ir_printf(az->ir, "%s%s", name, suffix);
  free(name);
  return ir_pw_let(az->ir, az->op, full, e, fe_loc(az->fe, clang_getCursorLocation(decl)));
}

bool az_bind_argument(Az *az, CXCursor call, CXCursor def, CXCursor param, CXCursor arg, bool name) {
  // a vector by value or by const reference
  if (az->lanes > 1 && az_vector_type(clang_getNonReferenceType(clang_getCursorType(param)), NULL)) {
    IrExpr *v[4];
    if (!az_vector_expr(az, arg, v)) return false;
    Binding *b = az_bind(az, param, NULL);
    b->vector = true;
    for (int l = 0; l < az->lanes; l++) b->lane[l] = name ? named(az, param, v[l], "") : v[l];
    return true;
  }
  CXType pt = clang_getCursorType(param);
  if (pt.kind == CXType_LValueReference && !clang_isConstQualifiedType(clang_getPointeeType(pt))) {
    char *text = az_text_of(az, arg), *fn = fe_spelling(def), *pn = fe_spelling(param);
    az_fail(az, call, "kernel '%s' passes '%s' to helper '%s' by non-const reference (parameter '%s'): coconet does "
                      "not follow what the helper stores through it; pass a pointer (&t[i] or t + i) or return the "
                      "value", az->launch->kernel, text, fn, pn);
    free(text);
    free(fn);
    free(pn);
    return false;
  }
  if (!az_is_pointer(param)) {
    IrExpr *a = cast_to(az, az_expr_type(param), expr(az, arg));
    if (!a) return false;
    Binding *b = az_bind(az, param, name ? named(az, param, a, "") : a);
    CXCursor ref = az_strip(arg);
    b->index = kind(ref) == CXCursor_DeclRefExpr && !clang_Cursor_isNull(az->index) &&
               same(clang_getCursorReferenced(ref), az->index) && az_is_integer_var(param) &&
               clang_Type_getSizeOf(clang_getCursorType(param)) >= clang_Type_getSizeOf(clang_getCursorType(az->index));
    return true;
  }
  CXCursor decl;
  bool element = az_element_of(az, arg, &decl);
  if (!element && !az_buffer(az, arg, &decl, &element)) {
    char *text = az_text_of(az, arg), *name = fe_spelling(def);
    az_fail(az, call, "kernel '%s' passes '%s' to helper '%s': a pointer argument must be a buffer parameter, "
                   "&t[i] or t + i", az->launch->kernel, text, name);
    free(text);
    free(name);
    return false;
  }
  az_bind_pointer(az, param, decl, element);
  return true;
}

// Inline a __device__ helper: its parameters bound to the call's arguments (a
// pointer to a buffer or to its element i), its statements read as the element
// body's (analyze_stmt.c), its value the returns' under their conditions.
// Called as a statement (as_stmt), it may store through its pointers.
static IrExpr *inline_helper(Az *az, CXCursor call, CXCursor def, bool as_stmt, IrExpr **lanes);

IrExpr *az_inline_helper(Az *az, CXCursor call, CXCursor def, bool as_stmt) {
  return inline_helper(az, call, def, as_stmt, NULL);
}

bool az_inline_vector_helper(Az *az, CXCursor call, CXCursor def, IrExpr **out) {
  return inline_helper(az, call, def, false, out) != NULL;
}

// lanes: the helper returns a vector, whose lanes go there.
static IrExpr *inline_helper(Az *az, CXCursor call, CXCursor def, bool as_stmt, IrExpr **lanes) {
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
  Kids k = kids(def);
  CXCursor body = k.n ? k.last : clang_getNullCursor();
  char *name = fe_spelling(def);
  if (kind(body) != CXCursor_CompoundStmt) {
    az_fail(az, call, "kernel '%s': cannot inline helper '%s' (no body)", az->launch->kernel, name);
    free(name);
    return NULL;
  }
  int n = clang_Cursor_getNumArguments(call);
  bool branchy = branches(body);
  for (int i = 0; i < n && !az_failed(az); i++)
    az_bind_argument(az, call, def, clang_Cursor_getArgument(def, (unsigned)i), clang_Cursor_getArgument(call, (unsigned)i),
                  branchy);
  CXType result = clang_getResultType(clang_getCursorType(def));
  Az frame = *az;  // the caller's condition and return state
  az->outer = az_cond(az);
  az->cond = az->returned = az->ret = NULL;
  az->done = false;
  az->stores_ok = as_stmt;
  az->ret_type = az_type_of(result);
  az->ret_vector = lanes != NULL;
  for (int l = 0; l < 4; l++) az->ret_lane[l] = NULL;
  az->depth++;
  if (!az_failed(az)) az_stmt(az, body);
  IrExpr *value = az->ret;
  bool returned = lanes && az->ret_lane[0];
  for (int l = 0; lanes && l < az->lanes; l++)
    lanes[l] = returned && branchy && !az_failed(az) ? named(az, def, az->ret_lane[l], "_value") : az->ret_lane[l];
  if (returned) value = lanes[0];
  az->depth = frame.depth;
  az->outer = frame.outer;
  az->cond = frame.cond;
  az->returned = frame.returned;
  az->ret = frame.ret;
  az->done = frame.done;
  az->stores_ok = frame.stores_ok;
  az->ret_type = frame.ret_type;
  az->ret_vector = frame.ret_vector;
  for (int l = 0; l < 4; l++) az->ret_lane[l] = frame.ret_lane[l];
  if (lanes) {
    if (!returned && !az_failed(az))
      az_fail(az, call, "kernel '%s': helper '%s' returns no vector coconet can read", az->launch->kernel, name);
  } else if (!value && result.kind == CXType_Void) value = ir_expr_int(az->ir, 0, IR_I32);
  else if (branchy && !az_failed(az)) value = named(az, def, value, "_value");
  if (!value && !az_failed(az))
    az_fail(az, call, "kernel '%s': helper '%s' returns no value coconet can read", az->launch->kernel, name);
  free(name);
  return az_failed(az) ? NULL : value;
}

// min(a, b), max(a, b): fminf/fmaxf on floats (as CUDA's overloads), a select on integers.
static IrExpr *min_max(Az *az, CXCursor c, bool is_min) {
  IrExpr *a = expr(az, clang_Cursor_getArgument(c, 0)), *b = a ? expr(az, clang_Cursor_getArgument(c, 1)) : NULL;
  if (!a || !b) return NULL;
  IrType t = ir_type_promote(a->type, b->type);
  if (ir_type_is_float(t)) {
    IrType ft = t == IR_F64 ? IR_F64 : IR_F32;
    return cast_to(az, az_expr_type(c), ir_expr_call(az->ir, is_min ? IR_FN_FMIN : IR_FN_FMAX, ft, cast_to(az, ft, a),
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

static IrExpr *cache_load(Az *az, CXCursor c, const char *name) {
  CXCursor p = az_strip(clang_Cursor_getArgument(c, 0));
  Kids k = kids(p);
  if (kind(p) == CXCursor_UnaryOperator && k.n == 1 && kind(az_strip(k.v[0])) == CXCursor_ArraySubscriptExpr) {
    char *op = az_unary_op(az, p, k.v[0]);
    bool address = strchr(op, '&') != NULL;
    free(op);
    if (address) return az_subscript(az, az_strip(k.v[0]));
  }
  IrTensor *e = az_element_address(az, p);  // t + i, or a helper's pointer at t[i]
  if (e) return az_read(az, ir_expr_read(az->ir, e, IR_IDX_I, NULL), fe_loc(az->fe, clang_getCursorLocation(p)));
  if (az_failed(az)) return NULL;
  char *t = az_text_of(az, c);
  az_fail(az, c, "kernel '%s': %s must load from &t[i] or t + i (%s)", az->launch->kernel, name, t);
  free(t);
  return NULL;
}

// isnan, isinf, isfinite (and CUDA's __isnanf, __isinff, __finitef, the
// double forms): 'n', 'i' or 'f'; 0 when name is none of them.
static char float_class(const char *name) {
  static const struct { const char *name; char cls; } names[] = {
      {"isnan", 'n'},   {"__isnanf", 'n'}, {"__isnan", 'n'},  {"isinf", 'i'},    {"__isinff", 'i'},
      {"__isinf", 'i'}, {"isfinite", 'f'}, {"__finitef", 'f'}, {"__finite", 'f'},
  };
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strcmp(name, names[i].name) == 0) return names[i].cls;
  return 0;
}

// isnan(x) is x != x; isinf(x) is |x| == inf; isfinite(x) is |x| < inf (false for NaN).
static IrExpr *classify_float(Az *az, CXCursor c, char cls) {
  IrExpr *a = expr(az, clang_Cursor_getArgument(c, 0));
  if (!a) return NULL;
  IrType t = a->type == IR_F64 ? IR_F64 : IR_F32;  // 16-bit values and integers are classified as float
  a = cast_to(az, t, a);
  if (cls == 'n') return cast_to(az, az_expr_type(c), ir_expr_binary(az->ir, IR_NE, a, a));
  IrExpr *mag = ir_expr_call(az->ir, IR_FN_FABS, t, a, NULL), *inf = ir_expr_float(az->ir, INFINITY, t);
  return cast_to(az, az_expr_type(c), ir_expr_binary(az->ir, cls == 'i' ? IR_EQ : IR_LT, mag, inf));
}

// A function of values the IR does not model (a CUDA intrinsic, a library
// function: `__hfma`, `__float2bfloat16_rz`, `normcdff`), of at most three
// arithmetic arguments with an arithmetic result: kept as the call, which the
// kernel's own text makes in generated code (analyze_text.c); analyze.c refuses
// the kernel with the reason below when there is no text. Not a call without
// arguments (clock64(), __activemask(): where and when it runs), nor one through
// which threads meet or that names where the thread is. NULL: not one.
static IrExpr *opaque_call(Az *az, CXCursor c, const char *name, int n) {
  IrType t = az_expr_type(c);
  if (t == IR_VOID || n < 1 || n > 3 || az->lanes > 1) return NULL;
  static const char *const prefixes[] = {"__shfl", "__match", "__reduce", "__sync", "__ballot", "__any", "__all",
                                         "atomic", "__nanosleep", "clock", "__threadfence", NULL};
  for (const char *const *p = prefixes; *p; p++)
    if (strncmp(name, *p, strlen(*p)) == 0) return NULL;
  if (cuda_name_in(name, CUDA_WARP_CALLS) || cuda_name_in(name, CUDA_LEGACY_WARP_CALLS) ||
      cuda_name_in(name, CUDA_BLOCK_BARRIERS) || cuda_name_in(name, CUDA_GROUP_QUERIES))
    return NULL;
  IrExpr *arg[3] = {NULL, NULL, NULL};
  for (int i = 0; i < n; i++) {
    CXCursor a = clang_Cursor_getArgument(c, (unsigned)i);
    if (az_expr_type(a) == IR_VOID) return NULL;
    if (!(arg[i] = expr(az, a))) return NULL;
  }
  if (clang_Cursor_isNull(az->opaque)) az->opaque = c;
  char *text = az_text_of(az, c);
  IrExpr *e = ir_expr_opaque(az->ir, t, text, arg[0], arg[1], arg[2]);
  free(text);
  return e;
}

IrExpr *az_call_expr(Az *az, CXCursor c) {
  CXCursor callee = az_callee(c);
  char *name = clang_Cursor_isNull(callee) ? strdup("") : fe_spelling(callee);
  int n = clang_Cursor_getNumArguments(c);
  IrExpr *e = NULL;
  IrMathFn fn;
  IrType mt;
  if (kind(callee) == CXCursor_Constructor && n == 1) {  // __half(h), __half(x): copy or convert
    e = cast_to(az, az_expr_type(c), expr(az, clang_Cursor_getArgument(c, 0)));
  } else if (strncmp(name, "operator", 8) == 0 && n == 2 && strcmp(name, "operator=") != 0) {
    e = az_binary_expr(az, c, clang_Cursor_getArgument(c, 0), clang_Cursor_getArgument(c, 1), name + 8);
  } else if (strncmp(name, "operator", 8) == 0 && n <= 1) {
    Kids k = kids(c);   // a conversion operator: `(float)h`, called as h.operator float()
    CXCursor object = k.n && kind(k.v[0]) == CXCursor_MemberRefExpr && kids(k.v[0]).n == 1 ? kids(k.v[0]).v[0]
                      : k.n ? k.v[0] : clang_getNullCursor();
    e = k.n ? cast_to(az, az_expr_type(c), expr(az, object)) : NULL;
    if (!k.n) az_fail(az, c, "kernel '%s': unsupported conversion", az->launch->kernel);
  } else if (ir_math_lookup(name, &fn, &mt) && n == ir_math_arity(fn)) {
    // The overload the compiler picked: fma, sqrt, exp, ... of floats are CUDA's (and
    // C++'s) float overloads, computed in float, not C's double functions.
    if (mt == IR_F64 && az_expr_type(c) == IR_F32) mt = IR_F32;
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
  } else if (float_class(name) && n == 1) {
    e = classify_float(az, c, float_class(name));
  } else if (strcmp(name, "__fdividef") == 0 && n == 2) {
    e = az_binary_expr(az, c, clang_Cursor_getArgument(c, 0), clang_Cursor_getArgument(c, 1), "/");
  } else if (half_op(name) && n == 2) {  // __hadd(a, b) is a + b on __half and __nv_bfloat16
    e = az_binary_expr(az, c, clang_Cursor_getArgument(c, 0), clang_Cursor_getArgument(c, 1), half_op(name));
  } else if (strcmp(name, "__hneg") == 0 && n == 1) {
    IrExpr *a = expr(az, clang_Cursor_getArgument(c, 0));
    e = a ? cast_to(az, az_expr_type(c), ir_expr_unary(az->ir, IR_NEG, a)) : NULL;
  } else if (cuda_name_in(name, CUDA_CACHE_LOADS) && n == 1) {
    e = cache_load(az, c, name);
  } else if (strcmp(name, "curand_uniform") == 0 && n == 1) {
    e = philox_draw(az, c, clang_Cursor_getArgument(c, 0));
  } else {
    for (size_t i = 0; i < sizeof CONVERSIONS / sizeof *CONVERSIONS; i++)
      if (strcmp(name, CONVERSIONS[i].name) == 0 && n == 1)
        e = cast_to(az, CONVERSIONS[i].to, expr(az, clang_Cursor_getArgument(c, 0)));
    for (size_t i = 0; i < sizeof BITCASTS / sizeof *BITCASTS; i++)
      if (strcmp(name, BITCASTS[i].name) == 0 && n == 1) {
        IrExpr *a = cast_to(az, BITCASTS[i].from, expr(az, clang_Cursor_getArgument(c, 0)));
        e = a ? ir_expr_bitcast(az->ir, BITCASTS[i].to, a) : NULL;
      }
    CXCursor def = clang_getCursorDefinition(callee);
    if (!e && !az_failed(az) && !clang_Cursor_isNull(def) && fe_in_user_code(az->fe, clang_getCursorLocation(def)))
      e = az_inline_helper(az, c, def, false);
    else if (!e && !az_failed(az) && clang_Cursor_isNull(callee)) {
      char *t = az_text_of(az, c);
      az_fail(az, c, "kernel '%s' calls through a function pointer in %s; coconet reads the functions a kernel calls "
                     "and cannot tell which one this is: call it by name", az->launch->kernel, t);
      free(t);
    } else if (!e && !az_failed(az) && !(e = opaque_call(az, c, name, n)) && !az_failed(az)) {
      char *t = az_text_of(az, c);
      az_fail(az, c, "kernel '%s' calls '%s', which a pointwise kernel cannot use (%s)", az->launch->kernel, name, t);
      free(t);
    }
  }
  free(name);
  return e;
}

