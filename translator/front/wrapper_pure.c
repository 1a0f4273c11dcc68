// wrapper_pure.c: what a text of a function seen through runs that it does not
// show (wrapper_impl.h): whether an expression calls only pure functions (min,
// max, the C library's math, library and defaulted constructors, helpers
// returning a pure expression, 4 deep), assigns through a macro, and the
// default arguments a call leaves out, where a function gives them.
#include "front/wrapper_impl.h"

#include "common/cuda_names.h"

#include <stdlib.h>
#include <string.h>

static bool pure(CXCursor e, int depth);

// Does expression e assign or increment (its tokens, wherever it is written)?
// A macro it expands may, unless its body is pure (front: fe_macro_pure).
static bool assigns(CXCursor e) {
  CXTranslationUnit tu = clang_Cursor_getTranslationUnit(e);
  CXToken *toks = NULL;
  unsigned n = 0;
  CXSourceRange r = fe_file_extent(e);
  if (clang_Range_isNull(r)) return true;  // not one file's text: it may
  clang_tokenize(tu, r, &toks, &n);
  static const char *const ops[] = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--"};
  bool yes = false;
  for (unsigned i = 0; i < n && !yes; i++) {
    if (clang_getTokenKind(toks[i]) == CXToken_Identifier) {
      CXCursor c = clang_getCursor(tu, clang_getTokenLocation(tu, toks[i]));
      yes = clang_getCursorKind(c) == CXCursor_MacroExpansion &&
            clang_equalLocations(clang_getCursorLocation(c), clang_getTokenLocation(tu, toks[i])) &&
            !fe_macro_pure(tu, clang_getCursorReferenced(c));
    }
    if (clang_getTokenKind(toks[i]) != CXToken_Punctuation) continue;
    CXString t = clang_getTokenSpelling(tu, toks[i]);
    for (size_t k = 0; k < sizeof ops / sizeof *ops && !yes; k++) yes = strcmp(clang_getCString(t), ops[k]) == 0;
    clang_disposeString(t);
  }
  clang_disposeTokens(tu, toks, n);
  return yes;
}

static enum CXChildVisitResult find_user_copy(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_Constructor && clang_CXXConstructor_isCopyConstructor(c) &&
      !clang_CXXMethod_isDefaulted(c))
    *(bool *)data = true;
  return CXChildVisit_Continue;
}

// The default argument of fn's parameter i, where fn or its first declaration gives it; or a null cursor.
CXCursor wrapper_default_argument(CXCursor fn, unsigned i) {
  CXCursor decls[2] = {fn, clang_getCanonicalCursor(fn)};
  for (int d = 0; d < 2; d++) {
    FeKids k = fe_kids(clang_Cursor_getArgument(decls[d], i));
    if (k.n && clang_isExpression(clang_getCursorKind(k.last))) return k.last;
  }
  return clang_getNullCursor();
}

// What a call runs that its text does not show: a default argument that is not
// pure (`float lr(float x = bump())`), a copy constructor of the user's for an
// argument passed by value.
static bool hidden_impure(CXCursor call, CXCursor fn, int depth) {
  int nparams = clang_Cursor_getNumArguments(fn);
  for (int i = 0; i < nparams; i++) {
    CXCursor param = clang_Cursor_getArgument(fn, (unsigned)i), given = wrapper_default_argument(fn, (unsigned)i);
    if (!clang_Cursor_isNull(given) && (assigns(given) || !pure(given, depth + 1))) return true;
    CXType t = clang_getCanonicalType(clang_getCursorType(param));
    CXCursor cls = clang_getTypeDeclaration(t);
    bool copy = false;
    if (t.kind == CXType_Record && !clang_Location_isInSystemHeader(clang_getCursorLocation(cls)))
      clang_visitChildren(cls, find_user_copy, &copy);
    if (copy && i < clang_Cursor_getNumArguments(call)) return true;
  }
  return false;
}

// A helper's statement that changes nothing but the helper's own locals: blocks, locals
// (not static) with pure initializers, `if` with a pure condition, an assignment of a pure
// value to a local of fn (not a reference), `return` of a pure value. (Loops: not read.)
static bool pure_body(CXCursor st, CXCursor fn, int depth) {
  FeKids k = fe_kids(st);
  switch (clang_getCursorKind(st)) {
  case CXCursor_NullStmt: return true;
  case CXCursor_CompoundStmt:
  case CXCursor_IfStmt: {
    if (k.n > FE_KIDS) return false;
    bool cond = clang_getCursorKind(st) == CXCursor_IfStmt;  // its first child is the condition
    // A condition the compiler knows (`std::is_same<T, float>::value` in an instance): the branch
    // it takes alone (a trait's `else { printf(...); exit(-1); }` for the other types).
    int only = 0;
    CXEvalResult known = cond ? clang_Cursor_Evaluate(k.v[0]) : NULL;
    if (known && clang_EvalResult_getKind(known) == CXEval_Int) only = clang_EvalResult_getAsLongLong(known) ? 1 : 2;
    if (known) clang_EvalResult_dispose(known);
    for (int i = 0; i < k.n; i++) {
      if (cond && only && i != only) continue;
      if (cond && i == 0 ? assigns(k.v[0]) || !pure(k.v[0], depth) : !pure_body(k.v[i], fn, depth)) return false;
    }
    return true;
  }
  case CXCursor_DeclStmt:
    for (int i = 0; i < k.n && i < FE_KIDS; i++) {
      FeKids init = fe_kids(k.v[i]);
      if (clang_getCursorKind(k.v[i]) != CXCursor_VarDecl || clang_Cursor_hasVarDeclGlobalStorage(k.v[i]) == 1)
        return false;
      if (init.n && clang_isExpression(clang_getCursorKind(init.last)) &&
          (assigns(init.last) || !pure(init.last, depth)))
        return false;
    }
    return k.n <= FE_KIDS;
  case CXCursor_ReturnStmt: return k.n == 0 || (!assigns(k.v[0]) && pure(k.v[0], depth));
  case CXCursor_BinaryOperator:
  case CXCursor_CompoundAssignOperator: {
    if (k.n != 2 || assigns(k.v[1]) || !pure(k.v[1], depth)) return false;
    CXCursor d = clang_getCursorKind(k.v[0]) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(k.v[0])
                                                                      : clang_getNullCursor();
    enum CXTypeKind t = clang_getCanonicalType(clang_getCursorType(d)).kind;
    return clang_getCursorKind(d) == CXCursor_VarDecl && clang_Cursor_hasVarDeclGlobalStorage(d) != 1 &&
           t != CXType_LValueReference && t != CXType_RValueReference &&
           clang_equalCursors(clang_getCursorSemanticParent(d), fn);
  }
  default: return false;
  }
}

static enum CXChildVisitResult find_impure_call(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  int *depth = data;
  if (clang_getCursorKind(c) != CXCursor_CallExpr) return CXChildVisit_Recurse;
  CXCursor fn = clang_getCursorReferenced(c);
  enum CXCursorKind k = clang_getCursorKind(fn);
  char *name = fe_spelling(fn);
  CXCursor scope = clang_getCursorSemanticParent(fn);
  while (clang_getCursorKind(scope) == CXCursor_LinkageSpec || clang_getCursorKind(scope) == CXCursor_UnexposedDecl)
    scope = clang_getCursorSemanticParent(scope);  // extern "C" { ... } (math.h's powf)
  char *ns = fe_spelling(scope);
  bool global = clang_getCursorKind(scope) == CXCursor_TranslationUnit ||
                (clang_getCursorKind(scope) == CXCursor_Namespace && strcmp(ns, "std") == 0);
  // The C library's math as its headers declare it (not a function of the user's of that name).
  bool library = clang_Location_isInSystemHeader(clang_getCursorLocation(fn)) && cuda_name_in(name, HOST_PURE_MATH);
  // A constructor: the library's (dim3) or a defaulted one (a copy of a struct of the user's).
  bool ok = (k == CXCursor_Constructor && (clang_Location_isInSystemHeader(clang_getCursorLocation(fn)) ||
                                           clang_CXXMethod_isDefaulted(fn))) ||
            (k == CXCursor_FunctionDecl && global && (!strcmp(name, "min") || !strcmp(name, "max") || library));
  free(name);
  free(ns);
  if (!ok && k == CXCursor_FunctionDecl && *depth < 4) {
    // A helper that computes with its own locals and returns (ceil_div; a trait's
    // `ncclDataType_t t; if (std::is_same<T, float>::value) t = ncclFloat; ... return t;`).
    CXCursor def = clang_getCursorDefinition(fn);
    FeKids body = clang_Cursor_isNull(def) ? (FeKids){.n = 0} : fe_kids(def);
    ok = body.n && clang_getCursorKind(body.last) == CXCursor_CompoundStmt &&
         pure_body(body.last, def, *depth + 1) && !hidden_impure(c, fn, *depth);
  }
  if (!ok) {
    *depth = -1;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

// Does expression e call only pure functions: min and max (std:: or the host
// overloads), the C library's math (powf: a bias correction), constructors
// (dim3), helpers returning a pure expression?
// (Assignments and ++ are the text's to say: source_assigns.)
bool wrapper_pure(CXCursor e) { return !assigns(e) && pure(e, 0); }

bool wrapper_calls_pure(CXCursor e) { return pure(e, 0); }

static bool pure(CXCursor e, int depth) {
  int d = depth;
  if (clang_getCursorKind(e) == CXCursor_CallExpr) {
    find_impure_call(e, e, &d);
    if (d < 0) return false;
  }
  clang_visitChildren(e, find_impure_call, &d);
  return d >= 0;
}
