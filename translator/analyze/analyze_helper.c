// analyze_helper.c: an element loop written in a __device__ helper the kernel calls.
//
// Trainers keep the per-element update in a helper and make the kernel a call of it,
// with each tensor's slice of the flat buffers (llm.c's adamw_kernel3):
//
//   __device__ void adamw_update(float *params, const float *grads, size_t n, float lr) {
//     int idx = blockIdx.x * blockDim.x + threadIdx.x;
//     if (idx >= n) return;
//     params[idx] -= lr * grads[idx];
//   }
//   __global__ void adamw_kernel3(float *params, const float *grads, size_t n, ptrdiff_t stride,
//                                 float lr) {
//     adamw_update(params + blockIdx.y * stride, grads + blockIdx.y * stride, n, lr);
//   }
//
// When the kernel's body is that one call, the helper's body is read as the kernel's
// (the element loop, its locals, its statements), the helper's parameters bound to
// the call's arguments: a buffer parameter, `buf + blockIdx.y * S` in a launch whose
// grid's y selects a slice (analyze_slice.c), `buf ? buf + blockIdx.y * S : NULL`
// (a test of the parameter against NULL is then the test of buf), &t[i]; a value
// (an expression of the kernel's parameters); a parameter's default where the call
// leaves it out. The loop's bound names its count by the helper's parameter: the
// kernel's argument for it stands for it.
#include "analyze_impl.h"

#include <stdlib.h>
#include <string.h>

static enum CXChildVisitResult first_call(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (kind(c) != CXCursor_CallExpr) return CXChildVisit_Recurse;
  *(CXCursor *)data = c;
  return CXChildVisit_Break;
}

CXCursor az_statement_call(CXCursor s) {
  s = az_strip(s);
  CXCursor call = kind(s) == CXCursor_CallExpr ? s : clang_getNullCursor();
  if (clang_Cursor_isNull(call)) clang_visitChildren(s, first_call, &call);
  return call;
}

// The one call the kernel's body makes as its one statement (null: not so).
static CXCursor only_call(CXCursor kbody) {
  AzList l = {0};
  clang_visitChildren(kbody, az_list_add, &l);
  CXCursor s = l.n == 1 ? az_strip(l.v[0]) : clang_getNullCursor();
  free(l.v);
  bool call = kind(s) == CXCursor_CallExpr || kind(s) == CXCursor_UnexposedExpr;
  return call ? az_statement_call(s) : clang_getNullCursor();
}

static enum CXChildVisitResult find_coordinate(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (kind(c) != CXCursor_DeclRefExpr && kind(c) != CXCursor_MemberRefExpr) return CXChildVisit_Recurse;
  char *name = fe_spelling(kind(c) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(c) : c);
  bool found = strcmp(name, "threadIdx") == 0 || strcmp(name, "blockIdx") == 0;
  free(name);
  if (!found) return CXChildVisit_Recurse;
  *(bool *)data = true;
  return CXChildVisit_Break;
}

// `p ? X : NULL` (or `p != NULL ? X : nullptr`, `!p ? NULL : X`) with p the buffer X points
// into: X, the pointer a null test of the parameter tests p for.
static CXCursor null_or(Az *az, CXCursor e) {
  Kids k = kids(az_uncast(e));
  if (kind(az_uncast(e)) != CXCursor_ConditionalOperator || k.n != 3) return clang_getNullCursor();
  CXCursor x = k.v[1], other = k.v[2];
  bool element;
  CXCursor cond = az_strip(k.v[0]);
  Kids c = kids(cond);
  bool negated = false;
  if (kind(cond) == CXCursor_UnaryOperator && c.n == 1) {
    char *op = az_unary_op(az, cond, c.v[0]);
    negated = strcmp(op, "!") == 0;
    free(op);
    if (!negated) return clang_getNullCursor();
    cond = az_strip(c.v[0]);
  } else if (kind(cond) == CXCursor_BinaryOperator && c.n == 2) {
    char *op = az_op_between(az, c.v[0], c.v[1]);
    negated = strcmp(op, "==") == 0;
    bool test = negated || strcmp(op, "!=") == 0;
    free(op);
    if (!test || !az_is_null_constant(c.v[1])) return clang_getNullCursor();
    cond = az_strip(c.v[0]);
  }
  if (negated) {
    CXCursor t = x;
    x = other;
    other = t;
  }
  CXCursor tested, base;
  if (!az_buffer(az, cond, &tested, &element) || element || !az_is_null_constant(other)) return clang_getNullCursor();
  CXCursor a, b;
  if (!az_is_binary(az, az_uncast(x), "+", &a, &b)) return clang_getNullCursor();
  if ((az_buffer(az, a, &base, &element) && same(base, tested)) || (az_buffer(az, b, &base, &element) && same(base, tested)))
    return x;
  return clang_getNullCursor();
}

static bool bind(Az *az, CXCursor call, CXCursor def, CXCursor param, CXCursor arg) {
  Binding *b;
  if (az_is_pointer(param) && az->slices) {
    CXCursor x = null_or(az, arg);
    if (az_slice_pointer(az, param, clang_Cursor_isNull(x) ? arg : x)) {
      b = az_find_local(az, param);
      b->arg = arg;
      return true;
    }
  }
  if (!az_bind_argument(az, call, def, param, arg, false)) return false;
  b = az_find_local(az, param);
  if (b) b->arg = arg;
  return true;
}

static enum CXChildVisitResult last_expression(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (clang_isExpression(kind(c))) *(CXCursor *)data = c;
  return CXChildVisit_Continue;
}

// The call's argument for parameter i: as written, or the parameter's default (an argument the
// call leaves out has no text of its own in the call; null: none found).
static CXCursor argument(CXCursor call, CXCursor param, int i) {
  CXCursor arg = clang_Cursor_getArgument(call, (unsigned)i);
  CXSourceRange a = clang_getCursorExtent(arg), c = clang_getCursorExtent(call);
  unsigned ab, ae, cb, ce;
  clang_getFileLocation(clang_getRangeStart(a), NULL, NULL, NULL, &ab);
  clang_getFileLocation(clang_getRangeEnd(a), NULL, NULL, NULL, &ae);
  clang_getFileLocation(clang_getRangeStart(c), NULL, NULL, NULL, &cb);
  clang_getFileLocation(clang_getRangeEnd(c), NULL, NULL, NULL, &ce);
  if (ab >= cb && ae <= ce && ae > ab) return arg;
  CXCursor def = clang_getNullCursor();
  clang_visitChildren(param, last_expression, &def);
  return def;
}

bool az_loop_helper(Az *az, CXCursor kbody) {
  CXCursor call = only_call(kbody);
  CXCursor def = clang_Cursor_isNull(call) ? call : clang_getCursorDefinition(clang_getCursorReferenced(call));
  Kids k = kids(def);
  CXCursor body = k.n ? k.last : clang_getNullCursor();
  if (az->lanes > 1 || kind(def) != CXCursor_FunctionDecl || kind(body) != CXCursor_CompoundStmt ||
      clang_getResultType(clang_getCursorType(def)).kind != CXType_Void)  // (a value the kernel drops: not read)
    return false;
  bool reads = false;
  clang_visitChildren(body, find_coordinate, &reads);
  int n = clang_Cursor_getNumArguments(call);
  if (!reads || n != clang_Cursor_getNumArguments(def)) return false;
  for (int i = 0; i < n && !az_failed(az); i++) {
    CXCursor param = clang_Cursor_getArgument(def, (unsigned)i), arg = argument(call, param, i);
    if (clang_Cursor_isNull(arg)) {
      char *name = fe_spelling(param), *fn = fe_spelling(def);
      az_fail(az, call, "kernel '%s' leaves out the argument of helper '%s' for '%s', whose default coconet cannot "
                        "read: write the argument out", az->launch->kernel, fn, name);
      free(name);
      free(fn);
    } else if (az_writes(az, body, param)) {
      char *name = fe_spelling(param), *fn = fe_spelling(def);
      az_fail(az, param, "kernel '%s': helper '%s', which holds the element loop, assigns its parameter '%s': coconet "
                         "binds the helper's parameters to the kernel's arguments; copy it into a local",
              az->launch->kernel, fn, name);
      free(name);
      free(fn);
    } else {
      bind(az, call, def, param, arg);
    }
  }
  if (az_failed(az)) return true;
  az->kbody = body;
  az->body_fn = def;
  az->loop_call = call;
  char *name = fe_spelling(def);
  az->loop_helper = ir_strdup(az->ir, name);
  free(name);
  return true;
}

CXCursor az_kernel_terms(Az *az, CXCursor c) {
  CXCursor d = az_referenced(az_strip(c));
  Binding *b = kind(az_strip(c)) == CXCursor_DeclRefExpr ? az_find_local(az, d) : NULL;
  if (!b || clang_Cursor_isNull(b->arg) || kind(d) != CXCursor_ParmDecl || az_is_pointer(d)) return c;
  return b->arg;
}
