// wrapper_nccl.c: the NCCL collective a chain of host functions ends in
// (wrapper_impl.h): its texts in the region's terms (buffers without their
// casts to `void *`, the datatype as its enumerator or spelled from the
// buffer's type, the count as the region wrote it), and its result kept in a
// local and tested for failure.
#include "front/wrapper_impl.h"

#include "common/cuda_names.h"
#include "common/text.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

// A buffer argument through its conversions to `void *` (`(const void *)buf`,
// `reinterpret_cast<void *>(buf)`): the typed pointer converted, or the argument.
static CXCursor typed_pointer(CXCursor a) {
  for (;;) {
    CXType t = clang_getCanonicalType(clang_getCursorType(a));
    bool to_void = t.kind == CXType_Pointer && clang_getCanonicalType(clang_getPointeeType(t)).kind == CXType_Void;
    enum CXCursorKind k = clang_getCursorKind(a);
    FeKids kids = fe_kids(a);
    if (!to_void || !kids.n ||
        !(k == CXCursor_CStyleCastExpr || k == CXCursor_CXXStaticCastExpr || k == CXCursor_CXXReinterpretCastExpr ||
          k == CXCursor_CXXConstCastExpr || k == CXCursor_ParenExpr || k == CXCursor_UnexposedExpr))
      return a;
    a = kids.last;
  }
}

static enum CXChildVisitResult find_nccl_call(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (clang_getCursorKind(c) != CXCursor_CallExpr) return CXChildVisit_Recurse;
  char *name = fe_spelling(c);
  bool is = cuda_name_in(name, NCCL_CALLS);
  free(name);
  if (!is) return CXChildVisit_Recurse;
  *(CXCursor *)data = c;
  return CXChildVisit_Break;
}

typedef struct EnumName {
  long long value;
  char *name;  // the first enumerator of that value (malloc'd), NULL while none
} EnumName;

static enum CXChildVisitResult find_enumerator(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  EnumName *e = data;
  if (clang_getCursorKind(c) == CXCursor_EnumConstantDecl && clang_getEnumConstantDeclValue(c) == e->value) {
    e->name = fe_spelling(c);
    return CXChildVisit_Break;
  }
  return CXChildVisit_Continue;
}

// An argument of an enumeration type that is a constant where the function is
// read (`NcclType<T>::value` in an instance): the enumerator of its value
// (malloc'd), else NULL.
static char *enumerator_of(CXCursor a) {
  CXType t = clang_getCanonicalType(clang_getCursorType(a));
  CXCursor decl = t.kind == CXType_Enum ? clang_getTypeDeclaration(t) : clang_getNullCursor();
  CXEvalResult r = clang_Cursor_isNull(decl) ? NULL : clang_Cursor_Evaluate(a);
  EnumName e = {0, NULL};
  if (r && clang_EvalResult_getKind(r) == CXEval_Int) {
    e.value = clang_EvalResult_getAsLongLong(r);
    clang_visitChildren(decl, find_enumerator, &e);
  }
  if (r) clang_EvalResult_dispose(r);
  return e.name;
}

// A name NCCL declares (`ncclFloat`): the generated code can spell it as it is.
static bool nccl_name(const char *t) {
  if (strncmp(t, "nccl", 4) != 0 || !t[4]) return false;
  for (const char *p = t + 4; *p; p++)
    if (!isalnum((unsigned char)*p)) return false;
  return true;
}

// The NCCL statement st of w's body (classified as s) in the region's terms:
// its buffers without their casts to `void *`, its datatype spelled from the
// buffer's type when the text names something the caller does not have (a
// trait function: getNcclDataType<T>()).
void wrapper_collective(const Wrapper *w, CXCursor st, Stmt *s, const char **why) {
  const Frontend *fe = w->fe;
  CXCursor call = clang_getNullCursor();
  if (clang_getCursorKind(st) == CXCursor_CallExpr) find_nccl_call(st, st, &call);
  if (clang_Cursor_isNull(call)) clang_visitChildren(st, find_nccl_call, &call);
  bool p2p = strcmp(s->callee, "ncclSend") == 0 || strcmp(s->callee, "ncclRecv") == 0;
  int nbuf = p2p ? 1 : 2, dt = p2p ? 2 : 3;
  if (clang_Cursor_isNull(call) || clang_Cursor_getNumArguments(call) != s->nargs || s->nargs <= dt) {
    *why = "its NCCL call is not one coconet reads";
    return;
  }
  char *elem = NULL;
  for (int i = 0; i < s->nargs && !*why; i++) {
    CXCursor a = clang_Cursor_getArgument(call, (unsigned)i);
    if (i < nbuf) {
      a = typed_pointer(a);
      CXType t = clang_getCanonicalType(clang_getCursorType(a));
      CXType pt = clang_getUnqualifiedType(clang_getCanonicalType(clang_getPointeeType(t)));
      if (i == 0 && t.kind == CXType_Pointer) elem = wrapper_type_spelling(pt);
      s->args[i].range = fe_range(fe, clang_getCursorExtent(a));
    }
    bool foreign = false;
    char *text = wrapper_substituted(wrapper_root(fe), w, s->args[i].range, &foreign);
    // A datatype that is a constant there (a trait's member for the instance's T): its enumerator.
    char *constant = i == dt && !nccl_name(text) ? enumerator_of(a) : NULL;
    if (constant) {
      free(text);
      text = constant;
      foreign = false;
    } else if (i == dt && (foreign || source_has_effects(text))) {
      const char *spelled = cuda_nccl_type_of(elem);
      free(text);
      text = spelled ? strdup(spelled) : NULL;
      if (!text) *why = "its datatype is not a name the caller has, and its buffer's type has no NCCL datatype";
      foreign = false;
    } else if (source_has_effects(text) && !*why) {
      *why = "an argument of its NCCL call has side effects (a call, ++, an assignment)";
    }
    if (foreign && !*why)
      *why = "an argument of its NCCL call reads a variable that is not the function's parameter or local, a name "
             "of its namespace or class, a macro, or a local whose initializer has side effects";
    if (text) {
      text_unwrap(text);
      free(s->args[i].text);
      s->args[i].text = text;
    }
    // The count passed down as the region wrote it (`n`): the region's text, which the region's
    // sizes read through a local never reassigned as the other statements' counts are.
    SrcRange as_written = i == (p2p ? 1 : 2) ? wrapper_region_range(wrapper_root(fe), w, a) : (SrcRange){0};
    if (as_written.begin.file && !*why) {  // (without a conversion that keeps its value: `(size_t)n`)
      free(s->args[i].text);
      s->args[i].text = fe_text(wrapper_root(fe), as_written);
      s->args[i].range = as_written;
    }
  }
  free(elem);
}

// `ncclResult_t r = ncclAllReduce(...);`: the local r (its one initializer the
// call, *call) or a null cursor.
CXCursor wrapper_collective_result(CXCursor st, CXCursor *call) {
  FeKids vars = fe_kids(st);
  if (vars.n != 1 || clang_getCursorKind(vars.v[0]) != CXCursor_VarDecl) return clang_getNullCursor();
  // (const, an alias, auto: the type as clang resolves it)
  CXString ts = clang_getTypeSpelling(clang_getUnqualifiedType(clang_getCanonicalType(clang_getCursorType(vars.v[0]))));
  bool result = strcmp(clang_getCString(ts), "ncclResult_t") == 0;
  clang_disposeString(ts);
  FeKids init = fe_kids(vars.v[0]);
  if (!result || init.n == 0) return clang_getNullCursor();
  CXCursor e = init.last;
  while ((clang_getCursorKind(e) == CXCursor_UnexposedExpr || clang_getCursorKind(e) == CXCursor_InitListExpr) &&
         fe_kids(e).n == 1)
    e = fe_kids(e).v[0];
  if (clang_getCursorKind(e) != CXCursor_CallExpr) return clang_getNullCursor();
  *call = e;
  return vars.v[0];
}

// After `ncclResult_t r = <collective>;`: `if (r != ncclSuccess) ...` (or
// `ncclSuccess != r`, `r != 0`, `r`) with no else. Its branch runs only when
// the collective failed; the generated code checks what it runs instead.
bool wrapper_result_check(const Frontend *fe, CXCursor st, CXCursor result) {
  FeKids k = fe_kids(st);
  if (clang_getCursorKind(st) != CXCursor_IfStmt || k.n != 2) return false;
  char *cond = fe_cursor_text(fe, k.v[0]), *c = text_without(cond, TEXT_BLANKS "()");
  char *r = fe_spelling(result);
  free(cond);
  char *forms[4] = {xasprintf("%s!=ncclSuccess", r), xasprintf("ncclSuccess!=%s", r), xasprintf("%s!=0", r),
                    strdup(r)};
  bool yes = false;
  for (int i = 0; i < 4; i++) {
    yes |= strcmp(c, forms[i]) == 0;
    free(forms[i]);
  }
  free(c);
  free(r);
  return yes;
}
