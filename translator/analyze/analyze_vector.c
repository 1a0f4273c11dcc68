// analyze_vector.c: kernels whose element is a vector. Each thread handles
// `lanes` consecutive elements of buffers viewed as float2, float4, double2,
// __half2 or __nv_bfloat162:
//
//   const float4 g4 = reinterpret_cast<const float4 *>(g)[i];   // or a float4 * parameter
//   float4 p4 = p4s[i];                                          // the launch passes (float4 *)p
//   p4.x -= lr * g4.x; ...                                       // component by component
//   p4s[i] = p4;
//   __half2 h = __hadd2(x2[i], y2[i]);                           // lane-wise 16-bit arithmetic
//
// The vector index i counts vectors: element e = lanes * i + lane. The kernel
// is analyzed once per lane (Az.lane, analyze.c runs the passes): component
// `lane` of a vector read is the element read t[e], the other components are
// reads of the other elements of the vector (IR_IDX_OTHER, "4 * (i / 4) + 1"),
// kept only so that a store which uses them is refused (lanes that mix); a
// vector store stores component `lane`. analyze.c checks that every lane's IR
// is the same, so one per-element function computes every lane, and counts
// the op in elements: `n / 4` float4s are n elements, with a guard that leaves
// the last n % 4 as the kernel does (it never reaches them).
//
// In a vector kernel, i itself is e / lanes (a hash keyed by i is the same for
// a vector's lanes), and a scalar buffer read s[i] is s[e / lanes]; a scalar
// buffer written at [i] is refused (several elements would write it).
#include "analyze_impl.h"

#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name;
  int lanes;
  IrType comp;
} VECTORS[] = {
    {"float2", 2, IR_F32}, {"float4", 4, IR_F32}, {"double2", 2, IR_F64},
    {"__half2", 2, IR_F16}, {"__nv_bfloat162", 2, IR_BF16},
};

int az_vector_type(CXType t, IrType *comp) {
  t = clang_getCanonicalType(t);
  if (t.kind != CXType_Record) return 0;
  CXString s = clang_getTypeSpelling(clang_getUnqualifiedType(t));
  const char *n = clang_getCString(s);
  if (strncmp(n, "struct ", 7) == 0) n += 7;
  int lanes = 0;
  for (size_t i = 0; i < sizeof VECTORS / sizeof *VECTORS && !lanes; i++)
    if (strcmp(n, VECTORS[i].name) == 0) {
      lanes = VECTORS[i].lanes;
      if (comp) *comp = VECTORS[i].comp;
    }
  clang_disposeString(s);
  return lanes;
}

static int vector_of(CXCursor c, IrType *comp) { return az_vector_type(clang_getCursorType(c), comp); }

static char *type_name(CXCursor c) {
  CXString s = clang_getTypeSpelling(clang_getUnqualifiedType(clang_getCanonicalType(clang_getCursorType(c))));
  char *out = strdup(clang_getCString(s));
  clang_disposeString(s);
  if (!out) COCONET_BUG("out of memory");
  return out;
}

//
// The kernel's lanes: every vector type its body and parameters use
//

typedef struct Scan {
  int lanes;
  CXCursor first, other;  // where the first vector type is, and one with another width
} Scan;

static void scan_type(Scan *sc, CXCursor c, CXType t) {
  if (t.kind == CXType_Invalid) return;
  int n = az_vector_type(t, NULL);
  if (!n && t.kind == CXType_Pointer) n = az_vector_type(clang_getPointeeType(t), NULL);
  if (!n) return;
  if (!sc->lanes) {
    sc->lanes = n;
    sc->first = c;
  } else if (n != sc->lanes && clang_Cursor_isNull(sc->other)) {
    sc->other = c;
  }
}

static enum CXChildVisitResult scan_visit(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  scan_type(data, c, clang_getCanonicalType(clang_getCursorType(c)));
  return CXChildVisit_Recurse;
}

int az_kernel_lanes(Az *az) {
  Scan sc = {0, clang_getNullCursor(), clang_getNullCursor()};
  clang_visitChildren(az->kernel, scan_visit, &sc);
  if (!clang_Cursor_isNull(sc.other)) {
    char *a = type_name(sc.first), *b = type_name(sc.other);
    az_fail(az, sc.other, "kernel '%s' uses vectors of %d lanes ('%s') and of another width ('%s'); coconet "
                          "handles vector kernels whose vectors all have one width", az->launch->kernel, sc.lanes, a, b);
    free(a);
    free(b);
    return 0;
  }
  return sc.lanes > 1 ? sc.lanes : 0;
}

//
// Vector buffers: a vector pointer parameter the launch passes as a view of a
// scalar buffer, or a scalar pointer parameter viewed as vectors in the kernel
//

// Strips a pointer cast written around a name: `reinterpret_cast<float4 *>(p)`,
// `(float4 *)p`, `(float4 *)(p)`; NULL when the text is not one (malloc'd).
static char *cast_operand_text(const char *t) {
  while (*t == ' ') t++;
  const char *inner = NULL;
  static const char *const casts[] = {"reinterpret_cast<", "static_cast<", "const_cast<"};
  for (size_t i = 0; i < sizeof casts / sizeof *casts && !inner; i++) {
    if (strncmp(t, casts[i], strlen(casts[i])) != 0) continue;
    const char *gt = strchr(t, '>');
    if (gt && gt[1] == '(') inner = gt + 1;
  }
  if (!inner && *t == '(') {
    const char *close = strchr(t, ')');
    const char *star = strchr(t, '*');
    if (close && star && star < close && close[1]) inner = close + 1;
  }
  if (!inner) return NULL;
  while (*inner == ' ') inner++;
  size_t n = strlen(inner);
  while (n && inner[n - 1] == ' ') n--;
  if (n >= 2 && inner[0] == '(' && inner[n - 1] == ')') inner++, n -= 2;
  char *out = strndup(inner, n);
  if (!out) COCONET_BUG("out of memory");
  return out;
}

// An explicit cast (through implicit nodes) and its operand.
static bool explicit_cast(CXCursor c, CXCursor *operand) {
  c = az_strip(c);
  enum CXCursorKind k = kind(c);
  if (k != CXCursor_CStyleCastExpr && k != CXCursor_CXXReinterpretCastExpr && k != CXCursor_CXXStaticCastExpr &&
      k != CXCursor_CXXConstCastExpr)
    return false;
  Kids ks = kids(c);
  if (!ks.n) return false;
  *operand = az_strip(ks.last);
  return true;
}

// The element type of a pointer expression, when it points to a scalar.
static IrType scalar_pointee(CXCursor c) {
  CXType t = clang_getCanonicalType(clang_getCursorType(c));
  if (t.kind != CXType_Pointer) return IR_VOID;
  CXType p = clang_getPointeeType(t);
  return az_vector_type(p, NULL) ? IR_VOID : az_element_type_of(p);
}

// A float4 * parameter: the launch must pass (float4 *)x with x a float *.
static IrTensor *vector_param(Az *az, CXCursor decl, CXCursor at, IrType comp) {
  const char *arg = az_launch_arg(az, decl);
  CXCursor passed = launch_argument(az->launch, az_param_position(az, decl)), operand;
  char *inner = arg ? cast_operand_text(arg) : NULL;
  CXType pointee = clang_getUnqualifiedType(clang_getCanonicalType(clang_getPointeeType(clang_getCursorType(decl))));
  CXString ps = clang_getTypeSpelling(pointee);
  char *name = fe_spelling(decl), *vt = strdup(clang_getCString(ps));
  clang_disposeString(ps);
  if (!vt) COCONET_BUG("out of memory");
  IrTensor *t = NULL;
  if (!inner || !explicit_cast(passed, &operand) || scalar_pointee(operand) != comp || !az_simple_name(inner)) {
    az_fail(az, at, "kernel '%s': vector parameter '%s' is passed '%s'; coconet reads a vector buffer as a view of a "
                    "scalar one: pass reinterpret_cast<%s *>(x) (or (%s *)x) with x a pointer to its lane type",
            az->launch->kernel, name, arg ? arg : "?", vt, vt);
  } else {
    t = ir_tensor_get_or_add(az->ir, inner, comp, NULL, fe_loc(az->fe, clang_getCursorLocation(at)));
  }
  free(inner);
  free(name);
  free(vt);
  return t;
}

// The buffer a vector subscript's base views, and its lane type.
static IrTensor *vector_buffer(Az *az, CXCursor base, IrType comp) {
  CXCursor b = az_strip(base), operand;
  CXCursor d = kind(b) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(b) : clang_getNullCursor();
  bool param = kind(d) == CXCursor_ParmDecl && az_is_pointer(d) && same(clang_getCursorSemanticParent(d), az->kernel);
  if (param) return vector_param(az, d, b, comp);
  if (explicit_cast(b, &operand) && kind(operand) == CXCursor_DeclRefExpr) {
    CXCursor p = clang_getCursorReferenced(operand);
    if (kind(p) == CXCursor_ParmDecl && same(clang_getCursorSemanticParent(p), az->kernel) && az_is_pointer(p)) {
      if (scalar_pointee(operand) == comp) return az_buffer_tensor(az, p, b);
      char *t = az_text_of(az, operand), *pt = type_name(operand), *vt = type_name(b);
      az_fail(az, b, "kernel '%s' views '%s' (%s) as '%s', whose lanes are not its elements; coconet reads a "
                     "vector buffer whose lanes have the buffer's element type", az->launch->kernel, t, pt, vt);
      free(t);
      free(pt);
      free(vt);
      return NULL;
    }
  }
  char *t = az_text_of(az, b);
  az_fail(az, b, "kernel '%s' indexes '%s' as a vector; coconet reads vectors of a pointer parameter "
                 "(reinterpret_cast<const float4 *>(g)[i], or a float4 * parameter)", az->launch->kernel, t);
  free(t);
  return NULL;
}

// v4[i] (sub: the expression, base v4, idx i): the lanes of the vector at the index.
static bool vector_load(Az *az, CXCursor sub, CXCursor base, CXCursor idx, IrType comp, IrExpr **out) {
  if (!az_is_index(az, idx)) {
    char *t = az_text_of(az, sub);
    az_fail(az, sub, "kernel '%s' reads the vector %s: a vector kernel reads only at [i]", az->launch->kernel, t);
    free(t);
    return false;
  }
  IrTensor *t = vector_buffer(az, base, comp);
  if (!t) return false;
  SrcLoc loc = fe_loc(az->fe, clang_getCursorLocation(sub));
  for (int c = 0; c < az->lanes; c++) {
    if (!az->lane_text[c]) az->lane_text[c] = ir_printf(az->ir, "%d * (i / %d) + %d", az->lanes, az->lanes, c);
    IrExpr *e = c == az->lane ? ir_expr_read(az->ir, t, IR_IDX_I, NULL) : ir_expr_read_other(az->ir, t, az->lane_text[c]);
    out[c] = az_read(az, e, loc);
  }
  return true;
}

// The vector a store writes: v4[i] (v4 a vector parameter or a cast of a scalar one).
static IrTensor *vector_target(Az *az, CXCursor lhs) {
  CXCursor l = az_strip(lhs);
  Kids k = kids(l);
  IrType comp = IR_VOID;
  if (kind(l) == CXCursor_ArraySubscriptExpr && k.n == 2 && vector_of(l, &comp) && az_is_index(az, k.v[1]))
    return vector_buffer(az, k.v[0], comp);
  char *t = az_text_of(az, l);
  az_fail(az, l, "kernel '%s' assigns the vector '%s': a vector kernel stores vectors at [i] and assigns vector "
                 "locals", az->launch->kernel, t);
  free(t);
  return NULL;
}

//
// Vector values
//

static const char *LANE_NAMES = "xyzw";

// The lane a member names (v.x: 0, ..., v.w: 3), -1 when none.
static int member_lane(const Az *az, CXCursor member) {
  char *m = fe_spelling(member);
  const char *at = strlen(m) == 1 ? strchr(LANE_NAMES, m[0]) : NULL;
  int lane = at ? (int)(at - LANE_NAMES) : -1;
  free(m);
  return lane < az->lanes ? lane : -1;
}

static bool lanes_of_args(Az *az, CXCursor c, int first, IrType comp, IrExpr **out) {
  for (int l = 0; l < az->lanes; l++) {
    out[l] = az_cast_to(az, comp, az_expr(az, clang_Cursor_getArgument(c, (unsigned)(first + l))));
    if (!out[l]) return false;
  }
  return true;
}

static const struct { const char *name; int op; } LANEWISE[] = {
    {"__hadd2", IR_ADD}, {"__hsub2", IR_SUB}, {"__hmul2", IR_MUL}, {"__h2div", IR_DIV},
    {"__hadd2_rn", IR_ADD}, {"__hsub2_rn", IR_SUB}, {"__hmul2_rn", IR_MUL},
    {"operator+", IR_ADD}, {"operator-", IR_SUB}, {"operator*", IR_MUL}, {"operator/", IR_DIV},
};

static bool vector_call(Az *az, CXCursor c, IrType comp, IrExpr **out) {
  CXCursor callee = az_callee(c);
  char *name = clang_Cursor_isNull(callee) ? strdup("") : fe_spelling(callee);
  int n = clang_Cursor_getNumArguments(c);
  IrExpr *a[4] = {0}, *b[4] = {0};
  bool ok = false, known = true;
  if ((strncmp(name, "make_float", 10) == 0 || strncmp(name, "make_double", 11) == 0) && n == az->lanes) {
    ok = lanes_of_args(az, c, 0, comp, out);
  } else if ((!strcmp(name, "__floats2half2_rn") || !strcmp(name, "__floats2bfloat162_rn") ||
              !strcmp(name, "__halves2half2") || !strcmp(name, "__halves2bfloat162")) && n == 2) {
    ok = lanes_of_args(az, c, 0, comp, out);
  } else if ((!strcmp(name, "__float2half2_rn") || !strcmp(name, "__float2bfloat162_rn") ||
              !strcmp(name, "__half2half2") || !strcmp(name, "__bfloat162bfloat162")) && n == 1) {
    IrExpr *v = az_cast_to(az, comp, az_expr(az, clang_Cursor_getArgument(c, 0)));
    for (int l = 0; l < az->lanes; l++) out[l] = v;
    ok = v != NULL;
  } else if ((!strcmp(name, "__float22half2_rn") || !strcmp(name, "__float22bfloat162_rn") ||
              !strcmp(name, "__half22float2") || !strcmp(name, "__bfloat1622float2")) && n == 1) {
    ok = az_vector_expr(az, clang_Cursor_getArgument(c, 0), a);
    for (int l = 0; ok && l < az->lanes; l++) out[l] = az_cast_to(az, comp, a[l]);
  } else if ((!strcmp(name, "__hneg2")) && n == 1) {
    ok = az_vector_expr(az, clang_Cursor_getArgument(c, 0), a);
    for (int l = 0; ok && l < az->lanes; l++) out[l] = az_cast_to(az, comp, ir_expr_unary(az->ir, IR_NEG, a[l]));
  } else if (kind(callee) == CXCursor_Constructor && n == 1) {  // a copy
    ok = az_vector_expr(az, clang_Cursor_getArgument(c, 0), out);
  } else if (strcmp(name, "__ldg") == 0 && n == 1) {  // __ldg(&v4[i]), __ldg(v4 + i)
    CXCursor p = az_strip(clang_Cursor_getArgument(c, 0)), x, y;
    Kids k = kids(p);
    char *op = kind(p) == CXCursor_UnaryOperator && k.n == 1 ? az_unary_op(az, p, k.v[0]) : NULL;
    CXCursor sub = k.n == 1 ? az_strip(k.v[0]) : clang_getNullCursor();
    if (op && strcmp(op, "&") == 0 && kind(sub) == CXCursor_ArraySubscriptExpr && kids(sub).n == 2)
      ok = vector_load(az, sub, kids(sub).v[0], kids(sub).v[1], comp, out);
    else if (az_is_binary(az, p, "+", &x, &y))
      ok = az_is_index(az, y) ? vector_load(az, p, x, y, comp, out) : vector_load(az, p, y, x, comp, out);
    else
      known = false;
    free(op);
  } else {
    known = false;
    // Operators are CUDA's (__half2's) only: one defined in this file may do anything.
    CXCursor def = clang_getCursorDefinition(callee);
    bool theirs = clang_Cursor_isNull(def) || !fe_in_user_code(az->fe, clang_getCursorLocation(def));
    for (size_t i = 0; i < sizeof LANEWISE / sizeof *LANEWISE; i++) {
      if (strcmp(name, LANEWISE[i].name) != 0 || n != 2 || (!theirs && strncmp(name, "operator", 8) == 0)) continue;
      known = true;
      ok = az_vector_expr(az, clang_Cursor_getArgument(c, 0), a) && az_vector_expr(az, clang_Cursor_getArgument(c, 1), b);
      for (int l = 0; ok && l < az->lanes; l++)
        out[l] = az_cast_to(az, comp, ir_expr_binary(az->ir, (IrBinaryOp)LANEWISE[i].op, a[l], b[l]));
    }
  }
  CXCursor def = clang_Cursor_isNull(callee) ? callee : clang_getCursorDefinition(callee);
  if (!known && !az_failed(az) && !clang_Cursor_isNull(def) && fe_in_user_code(az->fe, clang_getCursorLocation(def))) {
    known = true;  // a __device__ helper (or operator) of this file: inlined, lane by lane
    ok = az_inline_vector_helper(az, c, def, out);
  }
  if (!known && !az_failed(az)) {
    char *t = az_text_of(az, c);
    az_fail(az, c, "kernel '%s' calls '%s' on vectors, which coconet does not read (%s); see the vector functions "
                   "in docs/pragmas.md", az->launch->kernel, name, t);
    free(t);
  }
  free(name);
  return ok && !az_failed(az);
}

// A vector passed by value (`__half2 neg_lr`, `float4 scale`): its lanes are
// scalar parameters bound to the launch argument's members (`neg_lr.x`, ...),
// when the launch passes a variable. Element e reads lane e % lanes (every
// lane's pass the same expression: a select on the element's lane).
static bool vector_scalar_param(Az *az, CXCursor d, IrType comp, IrExpr **out) {
  static const char *const member[4] = {"x", "y", "z", "w"};
  if (kind(d) != CXCursor_ParmDecl || !same(clang_getCursorSemanticParent(d), az->kernel) || az_is_pointer(d))
    return false;
  const char *arg = az_launch_arg(az, d);
  if (!arg || !az_simple_name(arg) || az->lanes > 4) return false;
  char *pname = fe_spelling(d);
  IrExpr *lane[4];
  for (int l = 0; l < az->lanes; l++) {
    lane[l] = az_param(az, ir_printf(az->ir, "%s_%s", pname, member[l]), comp,
                       ir_printf(az->ir, "%s.%s", arg, member[l]));
  }
  free(pname);
  IrExpr *which = ir_expr_binary(az->ir, IR_MOD, ir_expr_index(az->ir), ir_expr_int(az->ir, az->lanes, IR_I64));
  IrExpr *e = lane[az->lanes - 1];
  for (int l = az->lanes - 2; l >= 0; l--)
    e = ir_expr_select(az->ir, ir_expr_binary(az->ir, IR_EQ, which, ir_expr_int(az->ir, l, IR_I64)), lane[l], e);
  for (int l = 0; l < az->lanes; l++) out[l] = e;
  return true;
}

bool az_vector_expr(Az *az, CXCursor c, IrExpr **out) {
  if (az_failed(az)) return false;
  IrType comp = IR_VOID;
  c = az_strip(c);
  if (vector_of(c, &comp) != az->lanes || az->lanes < 2) {
    char *t = az_text_of(az, c);
    az_fail(az, c, "kernel '%s': '%s' is not a vector of the kernel's %d lanes", az->launch->kernel, t, az->lanes);
    free(t);
    return false;
  }
  Kids k = kids(c);
  switch (kind(c)) {
  case CXCursor_DeclRefExpr: {
    CXCursor d = clang_getCursorReferenced(c);
    Binding *b = az_find_local(az, d);
    if (b && b->vector) {
      for (int l = 0; l < az->lanes; l++) out[l] = b->lane[l];
      return true;
    }
    if (!b && vector_scalar_param(az, d, comp, out)) return true;
    break;
  }
  case CXCursor_ArraySubscriptExpr:
    return k.n == 2 && vector_load(az, c, k.v[0], k.v[1], comp, out);
  case CXCursor_CallExpr:
    return vector_call(az, c, comp, out);
  case CXCursor_InitListExpr:
    if (k.n == az->lanes) {
      for (int l = 0; l < az->lanes; l++)
        if (!(out[l] = az_cast_to(az, comp, az_expr(az, k.v[l])))) return false;
      return true;
    }
    break;
  case CXCursor_UnexposedExpr:
  case CXCursor_ParenExpr:
  case CXCursor_CStyleCastExpr:
  case CXCursor_CXXFunctionalCastExpr:
    if (k.n >= 1 && vector_of(az_strip(k.last), NULL) == az->lanes) return az_vector_expr(az, k.last, out);
    break;
  case CXCursor_ConditionalOperator:
    if (k.n == 3) {
      IrExpr *p = az_expr(az, k.v[0]), *a[4], *b[4];
      az->lazy++;  // each branch runs only sometimes
      bool ok = p && az_vector_expr(az, k.v[1], a) && az_vector_expr(az, k.v[2], b);
      az->lazy--;
      if (!ok) return false;
      for (int l = 0; l < az->lanes; l++) out[l] = ir_expr_select(az->ir, p, a[l], b[l]);
      return true;
    }
    break;
  default:
    break;
  }
  char *t = az_text_of(az, c);
  az_fail(az, c, "kernel '%s': the vector '%s' is not one coconet reads (vector locals, v4[i], make_float4(...), "
                 "__floats2half2_rn(...), lane-wise __hadd2/__hsub2/__hmul2/__h2div and their operators)",
          az->launch->kernel, t);
  free(t);
  return false;
}

// v.x (a lane of a vector value), __low2float(h), __high2half(h), ...: NULL when
// c is none of these (no reason recorded), or on failure (reason recorded).
IrExpr *az_vector_lane(Az *az, CXCursor c, bool *handled) {
  *handled = false;
  IrExpr *v[4];
  c = az_strip(c);
  Kids k = kids(c);
  if (kind(c) == CXCursor_MemberRefExpr && k.n == 1 && vector_of(az_strip(k.v[0]), NULL)) {
    *handled = true;
    int lane = member_lane(az, c);
    if (lane < 0) return az_fail(az, c, "kernel '%s': unknown vector member", az->launch->kernel);
    return az_vector_expr(az, k.v[0], v) ? v[lane] : NULL;
  }
  if (kind(c) != CXCursor_CallExpr || clang_Cursor_getNumArguments(c) != 1) return NULL;
  CXCursor arg = clang_Cursor_getArgument(c, 0);
  if (!vector_of(az_strip(arg), NULL)) return NULL;
  char *name = fe_spelling(clang_getCursorReferenced(c));
  int lane = !strcmp(name, "__low2float") || !strcmp(name, "__low2half") || !strcmp(name, "__low2bfloat16") ? 0
             : !strcmp(name, "__high2float") || !strcmp(name, "__high2half") || !strcmp(name, "__high2bfloat16") ? 1
                                                                                                               : -1;
  free(name);
  if (lane < 0) return NULL;
  *handled = true;
  return az_vector_expr(az, arg, v) ? az_cast_to(az, az_type_of(clang_getCursorType(c)), v[lane]) : NULL;
}

//
// Statements: vector locals, lane assignments, vector stores
//

// A lane's new value, named as the vector (each element computes its own lane).
static IrExpr *lane_let(Az *az, CXCursor at, CXCursor decl, IrExpr *value) {
  char *name = fe_spelling(decl);
  IrExpr *e = ir_pw_let(az->ir, az->op, name, value, fe_loc(az->fe, clang_getCursorLocation(at)));
  free(name);
  return e;
}

void az_vector_decl(Az *az, CXCursor var) {
  IrType comp = IR_VOID;
  vector_of(var, &comp);
  Kids init = kids(var);
  CXCursor last = init.n ? init.last : clang_getNullCursor();
  IrExpr *v[4];
  // `float4 r;` (no initializer, or the implicit default construction): lanes
  // assigned before they are read, as `float step;` (analyze_stmt.c).
  bool bare = init.n == 0 || kind(last) == CXCursor_TypeRef ||
              (kind(last) == CXCursor_CallExpr && clang_Cursor_getNumArguments(last) == 0);
  if (!bare && !az_vector_expr(az, last, v)) return;
  Binding *b = az_bind(az, var, NULL);
  b->vector = true;
  for (int l = 0; l < az->lanes; l++)
    b->lane[l] = bare ? az_cast_to(az, comp, ir_expr_int(az->ir, 0, IR_I32)) : lane_let(az, var, var, v[l]);
}

// A read of another lane's element, reachable from e through lets.
static const IrExpr *other_lane(const Az *az, const IrExpr *e, int depth) {
  if (!e || depth > 256) return NULL;
  if (e->kind == IR_E_READ && e->index == IR_IDX_OTHER)
    for (int l = 0; l < az->lanes; l++)
      if (az->lane_text[l] && strcmp(e->text, az->lane_text[l]) == 0) return e;
  if (e->kind == IR_E_LOCAL) return other_lane(az, e->let->value, depth + 1);
  const IrExpr *r = other_lane(az, e->a, depth + 1);
  if (!r) r = other_lane(az, e->b, depth + 1);
  if (!r) r = other_lane(az, e->c, depth + 1);
  return r;
}

bool az_vector_assign(Az *az, CXCursor s, CXCursor lhs, CXCursor rhs, const char *op) {
  CXCursor l = az_strip(lhs);
  IrType comp = IR_VOID;
  Kids k = kids(l);
  Binding *local = kind(l) == CXCursor_DeclRefExpr ? az_find_local(az, clang_getCursorReferenced(l)) : NULL;
  bool whole = vector_of(l, &comp) != 0;
  bool member = kind(l) == CXCursor_MemberRefExpr && k.n == 1 && vector_of(az_strip(k.v[0]), &comp);
  if (!whole && !member) return false;
  if (member) {  // v.x = e, v.x op= e: a new value of one lane of a local
    CXCursor base = az_strip(k.v[0]);
    Binding *b = kind(base) == CXCursor_DeclRefExpr ? az_find_local(az, clang_getCursorReferenced(base)) : NULL;
    int lane = member_lane(az, l);
    if (b && az_carries(az, s, b)) return true;
    if (!b || !b->vector || lane < 0) {
      char *t = az_text_of(az, l);
      az_fail(az, l, "kernel '%s' assigns '%s': a vector kernel assigns lanes of vector locals only (store the "
                     "whole vector to the buffer)", az->launch->kernel, t);
      free(t);
      return true;
    }
    IrExpr *value = az_assigned_value(az, s, lhs, rhs, op);
    if (!value) return true;
    value = az_cast_to(az, comp, value);
    IrExpr *cond = az_cond(az);
    if (cond) value = ir_expr_select(az->ir, cond, value, b->lane[lane]);
    b->lane[lane] = lane_let(az, s, clang_getCursorReferenced(base), value);
    return true;
  }
  IrExpr *v[4];
  if (strcmp(op, "=") != 0) {
    char *t = az_text_of(az, s);
    az_fail(az, s, "kernel '%s': '%s': coconet reads vector arithmetic written as calls (__hadd2) or lane by lane",
            az->launch->kernel, t);
    free(t);
    return true;
  }
  if (!az_vector_expr(az, rhs, v)) return true;
  if (local && local->vector) {  // v = w
    if (az_carries(az, s, local)) return true;
    IrExpr *cond = az_cond(az);
    for (int j = 0; j < az->lanes; j++)
      local->lane[j] = lane_let(az, s, clang_getCursorReferenced(l),
                                cond ? ir_expr_select(az->ir, cond, v[j], local->lane[j]) : v[j]);
    return true;
  }
  IrTensor *t = vector_target(az, lhs);
  if (!t) return true;
  const IrExpr *other = other_lane(az, v[az->lane], 0);
  IrExpr *cond = az_cond(az);
  if (!other && cond) other = other_lane(az, cond, 0);
  if (other) {
    char *text = az_text_of(az, l);
    SrcLoc at = other->loc.file ? other->loc : fe_loc(az->fe, clang_getCursorLocation(s));
    char *tn = type_name(l);
    az_fail(az, s, "kernel '%s' computes lane %d of the %s it stores to %s from another lane of '%s' (%s:%u:%u): "
                   "coconet computes a vector kernel element by element, so each lane may use only the same lane of "
                   "the vectors it reads", az->launch->kernel, az->lane, tn, text, other->tensor->name,
            at.file ? at.file : "?", at.line, at.col);
    free(tn);
    free(text);
    return true;
  }
  az->lane_store = true;
  az_store(az, s, t, v[az->lane]);
  az->lane_store = false;
  return true;
}

//
// The count in elements
//

// The element count of `vectors` (in the launch's terms) vectors: `X / lanes`
// is X elements (*tail: the kernel leaves the last X % lanes), any other count
// c is lanes * c.
IrSize *az_vector_elements(Az *az, const char *vectors, bool *tail) {
  const char *t = vectors;
  size_t n = strlen(t);
  for (;;) {  // without spaces and parentheses around the whole
    while (n && *t == ' ') t++, n--;
    while (n && t[n - 1] == ' ') n--;
    int depth = 0;
    size_t close = 0;
    for (size_t i = 0; i < n && !close; i++) {
      depth += t[i] == '(' ? 1 : t[i] == ')' ? -1 : 0;
      if (depth == 0) close = i ? i : n;
    }
    if (n < 2 || t[0] != '(' || close != n - 1) break;
    t++, n -= 2;
  }
  // X / lanes with / the last operator outside parentheses and no + or - there
  // (they bind looser): the count is X.
  int depth = 0;
  const char *slash = NULL;
  bool additive = false;
  for (size_t i = 0; i < n; i++) {
    if (t[i] == '(') depth++;
    else if (t[i] == ')') depth--;
    else if (depth == 0 && (t[i] == '+' || t[i] == '-')) additive = true;
    else if (depth == 0 && (t[i] == '/' || t[i] == '*' || t[i] == '%' || t[i] == '<' || t[i] == '>'))
      slash = t[i] == '/' ? t + i : NULL;
  }
  *tail = false;
  if (slash && !additive) {
    char *rhs = strndup(slash + 1, (size_t)(t + n - slash - 1)), *end;
    long v = strtol(rhs, &end, 10);
    while (*end == ' ') end++;
    bool by_lanes = end != rhs && *end == '\0' && v == az->lanes;
    free(rhs);
    if (by_lanes) {
      char *lhs = strndup(t, (size_t)(slash - t));
      IrSize *s = ir_size_parse(az->ir, lhs);
      free(lhs);
      *tail = true;
      return s;
    }
  }
  return ir_size_mul(az->ir, ir_size_const(az->ir, az->lanes), ir_size_parse(az->ir, vectors));
}
