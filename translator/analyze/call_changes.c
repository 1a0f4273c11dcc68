// call_changes.c: what the calls of an argument with side effects may change,
// read on the AST in the bodies of the functions they call and the bodies
// those call (8 deep), for effects.c, which evaluates that argument at the top
// of the generated block: an argument written before it must not read what it
// changes. Changes are:
//   - variables assigned by name: the caller's (passed by a non-const
//     reference), the file's (its variables, a class's statics, a function's
//     static), a function's own (a lambda's, which may be the caller's
//     captured by reference; a parameter of the function around a lambda
//     that its body names is that function's);
//   - aliased: a variable of the user's file was assigned by name, so what a
//     pointer or reference reads may have changed;
//   - memory: something was assigned through a pointer, a reference, `this` or
//     a call's result, which may be any variable of the file or any variable
//     whose address escaped;
//   - anything: a call coconet cannot see into (no body in the translation
//     unit, through a pointer, a virtual method, more than 8 deep, a macro that
//     is not an expression of its arguments), which may change all of that.
// The C and C++ libraries' functions are not read: they change what their
// non-const pointer and reference arguments reach, and the object of a
// non-const method, nothing of the user's else.
#include "analyze/analyze_impl.h"
#include "common/cuda_names.h"
#include "common/text.h"

#include <stdlib.h>
#include <string.h>

enum { VARS_MAX = 64, DEPTH_MAX = 8 };

struct CallChanges {
  const Frontend *fe;
  CXCursor vars[VARS_MAX];    // variables assigned by name
  SrcLoc var_at[VARS_MAX];    // where
  int nvars;
  bool aliased;               // a variable of the user's file among them
  bool memory;                // through a pointer, a reference, this or a call's result
  SrcLoc memory_at;
  bool anything;              // a call coconet cannot see into
  SrcLoc anything_at;
  const char *why;            // ... why it cannot
  char *unseen;               // ... its function, or NULL
  bool args_read;             // every call of the text was read with its parameters' types
  bool hidden;                // the text calls what its text does not show as a call: through a
                              // pointer, an operator, a conversion, a copy
  CXCursor this_obj;          // the variable `this` is in the method being read (null: not known)
  CXCursor walked;            // the function whose body is being read (null: the text itself)
  bool found_user_member;     // user_class_value's finding
  bool class_value;           // the text is an object of a class of the user's, converted or copied
  int depth;
};

static SrcLoc where(const CallChanges *cc, CXCursor c) { return fe_any_loc(cc->fe, clang_getCursorLocation(c)); }

// A variable that lives beyond any call of a function: of the file, of a
// namespace, a class's static, a function's static.
static bool lasting(CXCursor d) {
  return clang_getCursorKind(d) == CXCursor_VarDecl && clang_Cursor_hasVarDeclGlobalStorage(d) == 1;
}

static bool is_reference(CXCursor d) {
  enum CXTypeKind k = clang_getCanonicalType(clang_getCursorType(d)).kind;
  return k == CXType_LValueReference || k == CXType_RValueReference;
}

static bool is_pointer(CXCursor e) { return clang_getCanonicalType(clang_getCursorType(e)).kind == CXType_Pointer; }

static bool in_library(CXCursor c) { return clang_Location_isInSystemHeader(clang_getCursorLocation(c)) != 0; }

// The canonical type a reference (and, with pointers, a pointer) refers to, through every level.
static CXType referred(CXType t, bool pointers) {
  t = clang_getCanonicalType(t);
  while (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference || (pointers && t.kind == CXType_Pointer))
    t = clang_getCanonicalType(clang_getPointeeType(t));
  return t;
}

// An object of a library's class (a FILE, a std::ostream), through references
// and pointers: its state is the library's, no variable of the user's.
static bool library_object(CXType t) {
  t = referred(t, true);
  CXCursor d = clang_getTypeDeclaration(t);
  return t.kind == CXType_Record && !clang_Cursor_isNull(d) && in_library(d);
}

static void note_memory(CallChanges *cc, CXCursor at) {
  if (!cc->memory) cc->memory_at = where(cc, at);
  cc->memory = true;
}

static void note_anything(CallChanges *cc, CXCursor at, CXCursor fn, const char *why) {
  if (cc->anything) return;
  cc->anything = true;
  cc->anything_at = where(cc, at);
  cc->why = why;
  cc->unseen = clang_Cursor_isNull(fn) ? NULL : fe_spelling(fn);
}

static void add_var(CallChanges *cc, CXCursor d, CXCursor at) {
  if (lasting(d) && !in_library(d)) cc->aliased = true;
  for (int i = 0; i < cc->nvars; i++)
    if (clang_equalCursors(cc->vars[i], d)) return;
  if (cc->nvars == VARS_MAX) return note_memory(cc, at);
  cc->var_at[cc->nvars] = where(cc, at);
  cc->vars[cc->nvars++] = d;
}

// What an assignment to expression t changes. A function's parameter is its
// own (what the caller passed by reference is read at the call), except in
// the argument's text itself (caller), where it is the caller's.
static void changes_target(CallChanges *cc, CXCursor t, CXCursor at, bool caller) {
  t = az_uncast(t);
  FeKids ks = fe_kids(t);
  switch (clang_getCursorKind(t)) {
  case CXCursor_DeclRefExpr: {
    CXCursor d = clang_getCanonicalCursor(clang_getCursorReferenced(t));
    enum CXCursorKind dk = clang_getCursorKind(d);
    // (a lambda's body naming a parameter of the function around it: that function's, captured)
    bool own = dk == CXCursor_ParmDecl && !clang_Cursor_isNull(cc->walked) &&
               clang_equalCursors(clang_getCanonicalCursor(clang_getCursorSemanticParent(d)),
                                  clang_getCanonicalCursor(cc->walked));
    if (dk == CXCursor_ParmDecl && !own) caller = true;
    if (is_reference(d) && (caller || dk != CXCursor_ParmDecl)) return note_memory(cc, at);  // to what: not followed
    if (dk == CXCursor_VarDecl || (caller && dk == CXCursor_ParmDecl)) add_var(cc, d, at);
    else if (dk != CXCursor_ParmDecl) note_memory(cc, at);  // a structured binding's name: what it names
    return;
  }
  case CXCursor_MemberRefExpr: {
    if (is_reference(clang_getCursorReferenced(t))) return note_memory(cc, at);  // a reference member: to what
    bool self = ks.n == 0 || clang_getCursorKind(az_uncast(ks.v[0])) == CXCursor_CXXThisExpr;
    if (self && !clang_Cursor_isNull(cc->this_obj)) return add_var(cc, cc->this_obj, at);  // obj.method()'s
    if (ks.n == 1 && !self && !is_pointer(ks.v[0])) return changes_target(cc, ks.v[0], at, caller);
    return note_memory(cc, at);  // through ->, or this
  }
  case CXCursor_ArraySubscriptExpr:
    if (ks.n == 2 && !is_pointer(az_uncast(ks.v[0]))) return changes_target(cc, ks.v[0], at, caller);
    return note_memory(cc, at);
  default:
    if (library_object(clang_getCursorType(t))) return;  // `std::cout << x` returns the stream
    return note_memory(cc, at);  // *p, a call's result, ...
  }
}

// What a library function changes through a non-const pointer it is given:
// `&x` changes x, an array its elements, any other pointer what it points at.
static void changes_pointee(CallChanges *cc, CXCursor a, CXCursor at, bool caller) {
  a = az_uncast(a);
  CXType pointee = clang_getCanonicalType(clang_getPointeeType(clang_getCanonicalType(clang_getCursorType(a))));
  if (library_object(clang_getCursorType(a)) || pointee.kind == CXType_FunctionProto ||
      pointee.kind == CXType_FunctionNoProto || clang_getCursorKind(clang_getCursorReferenced(a)) ==
                                                    CXCursor_FunctionDecl)
    return;  // a FILE *, a function (std::endl)
  FeKids sum = fe_kids(a);
  if (clang_getCursorKind(a) == CXCursor_BinaryOperator && sum.n == 2)  // p + k: what p points into
    return changes_pointee(cc, is_pointer(sum.v[0]) || clang_getCanonicalType(clang_getCursorType(
                                                          az_uncast(sum.v[0]))).kind == CXType_ConstantArray
                                   ? sum.v[0]
                                   : sum.v[1],
                           at, caller);
  char *t = clang_getCursorKind(a) == CXCursor_UnaryOperator ? fe_cursor_text(cc->fe, a) : NULL;
  FeKids ks = fe_kids(a);
  if (t && t[0] == '&' && ks.n == 1)
    changes_target(cc, ks.v[0], at, caller);
  else if (clang_getCanonicalType(clang_getCursorType(a)).kind == CXType_ConstantArray)
    changes_target(cc, a, at, caller);
  else
    note_memory(cc, at);
  free(t);
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data);

// Whether the operator between a binary expression's operands is `=`.
static bool assigns(const CallChanges *cc, CXCursor lhs, CXCursor rhs) {
  char *op = fe_between(cc->fe, clang_getRangeEnd(clang_getCursorExtent(lhs)),
                        clang_getRangeStart(clang_getCursorExtent(rhs)));
  const char *p = op + strspn(op, " \t\r\n");
  bool yes = p[0] == '=' && p[1] != '=';
  free(op);
  return yes;
}

static bool unary_changes(const CallChanges *cc, CXCursor c) {
  char *t = fe_cursor_text(cc->fe, c);
  size_t n = strlen(t);
  bool yes = t[0] == '&' || !strncmp(t, "++", 2) || !strncmp(t, "--", 2) ||
             (n >= 2 && (!strcmp(t + n - 2, "++") || !strcmp(t + n - 2, "--")));
  free(t);
  return yes;
}

static void walk_body(CallChanges *cc, CXCursor def) {
  CXCursor outer = cc->walked;
  cc->walked = def;
  cc->depth++;
  clang_visitChildren(def, visit, cc);
  cc->depth--;
  cc->walked = outer;
}

// The user-provided destructor of a class, or a null cursor.
static enum CXChildVisitResult find_destructor(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_Destructor) *(CXCursor *)data = c;
  return CXChildVisit_Continue;
}

// What calling fn may change, its arguments aside: its body, read (a
// constructor's with its class's destructor, which runs when the object goes).
static enum CXChildVisitResult find_pure_attr(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_PureAttr || clang_getCursorKind(c) == CXCursor_ConstAttr) *(bool *)data = true;
  return CXChildVisit_Continue;
}

static void changes_fn(CallChanges *cc, CXCursor fn, CXCursor at) {
  enum CXCursorKind k = clang_getCursorKind(fn);
  bool pure = false;  // __attribute__((pure)) or ((const)): it changes nothing
  clang_visitChildren(fn, find_pure_attr, &pure);
  if (in_library(fn) || pure) return;
  if (k == CXCursor_CXXMethod && clang_CXXMethod_isVirtual(fn))
    return note_anything(cc, at, fn, "a virtual method: which one runs is known only when it runs");
  CXCursor def = clang_getCursorDefinition(fn);
  if (clang_Cursor_isNull(def)) return note_anything(cc, at, fn, "coconet does not see its body");
  if (cc->depth >= DEPTH_MAX) return note_anything(cc, at, fn, "it is more than 8 calls deep");
  walk_body(cc, def);
  if (k == CXCursor_Constructor) {
    CXCursor dtor = clang_getNullCursor();
    clang_visitChildren(clang_getCursorSemanticParent(fn), find_destructor, &dtor);
    CXCursor ddef = clang_Cursor_isNull(dtor) ? dtor : clang_getCursorDefinition(dtor);
    if (!clang_Cursor_isNull(ddef)) walk_body(cc, ddef);
    else if (!clang_Cursor_isNull(dtor)) note_anything(cc, at, dtor, "coconet does not see its body");
  }
}

// Whether a library function may call code of the user's: it is given a
// callable or an object of the user's class (a comparator, a functor), or it is
// a method of std::function.
static bool calls_back(CXCursor fn, CXCursor call) {
  CXCursor cls = clang_getCursorSemanticParent(fn);
  char *owner = fe_spelling(cls);
  bool yes = clang_getCursorKind(fn) == CXCursor_CXXMethod && !strcmp(owner, "function");
  free(owner);
  for (int i = 0; i < clang_Cursor_getNumArguments(call) && !yes; i++) {
    CXCursor a = az_uncast(clang_Cursor_getArgument(call, i));
    CXType t = referred(clang_getCursorType(a), false);
    CXType pointee = clang_getCanonicalType(clang_getPointeeType(t));
    CXCursor named = clang_getCursorReferenced(a);
    bool function = t.kind == CXType_FunctionProto || t.kind == CXType_FunctionNoProto ||
                    (t.kind == CXType_Pointer &&
                     (pointee.kind == CXType_FunctionProto || pointee.kind == CXType_FunctionNoProto));
    if (function)
      yes = !(fe_is_function(clang_getCursorKind(named)) && in_library(named));  // std::endl is the library's
    else if (t.kind == CXType_Record)
      yes = !library_object(t);
  }
  return yes;
}

// A call (caller: written in the argument's text): its function, the object of
// a method that is not const, what it is passed by a non-const reference (and,
// for a library function, by a non-const pointer).
static void changes_call(CallChanges *cc, CXCursor call, bool caller) {
  CXCursor fn = clang_getCursorReferenced(call);
  enum CXCursorKind k = clang_getCursorKind(fn);
  int nparams = fe_is_function(k) ? clang_Cursor_getNumArguments(fn) : -1;
  if (nparams < 0) {
    cc->args_read = false;
    if (caller) cc->hidden = true;
    return note_anything(cc, call, clang_getNullCursor(), "a call through a pointer");
  }
  FeKids callee = fe_kids(call);
  CXCursor outer_this = cc->this_obj, obj_var = clang_getNullCursor();
  int shift = 0;  // an operator method's call (`v[0]`, `s += t`, `d(rng)`): its object is argument 0
  if (k == CXCursor_CXXMethod && !clang_CXXMethod_isStatic(fn) && callee.n >= 1) {
    CXCursor m = az_uncast(callee.v[0]);
    char *name = fe_spelling(fn);
    bool op = clang_getCursorKind(m) != CXCursor_MemberRefExpr && !strncmp(name, "operator", 8) &&
              clang_Cursor_getNumArguments(call) == nparams + 1;
    free(name);
    shift = op ? 1 : 0;
    FeKids obj = fe_kids(m);
    CXCursor o = op             ? az_uncast(clang_Cursor_getArgument(call, 0))
                 : obj.n == 1 ? az_uncast(obj.v[0])
                              : clang_getNullCursor();
    bool arrow = !op && obj.n == 1 && is_pointer(obj.v[0]);
    if (clang_getCursorKind(o) == CXCursor_DeclRefExpr && !arrow)
      obj_var = clang_getCanonicalCursor(clang_getCursorReferenced(o));  // obj.method(): this is &obj
    else if ((!op && obj.n == 0) || clang_getCursorKind(o) == CXCursor_CXXThisExpr)
      obj_var = outer_this;  // a method of this
    if (!clang_CXXMethod_isConst(fn)) {
      if (op)
        changes_target(cc, o, call, caller);
      else if (clang_getCursorKind(m) == CXCursor_MemberRefExpr && obj.n == 1)
        changes_target(cc, arrow ? m : obj.v[0], call, caller);
      else if (!clang_Cursor_isNull(obj_var))
        add_var(cc, obj_var, call);
      else
        note_memory(cc, call);
    }
  }
  cc->this_obj = obj_var;
  bool library = in_library(fn);
  if (library && calls_back(fn, call))
    return note_anything(cc, call, fn, "a library function given code of yours to call (a callable, a "
                                       "std::function, an object of a class of yours)");
  for (int i = shift; i < clang_Cursor_getNumArguments(call); i++) {
    CXCursor a = clang_Cursor_getArgument(call, i);
    CXType pt = i - shift < nparams ? clang_getCursorType(clang_Cursor_getArgument(fn, i - shift))
                                    : clang_getCursorType(a);
    CXType ct = clang_getCanonicalType(pt);
    bool out = !clang_isConstQualifiedType(clang_getPointeeType(ct));
    if (ct.kind == CXType_LValueReference && out) changes_target(cc, a, call, caller);
    if (library && ct.kind == CXType_Pointer && out) changes_pointee(cc, a, call, caller);
  }
  for (int i = 0; i < nparams; i++)  // default arguments (`float lr_d(float x = bump())`) run in the call
    clang_visitChildren(clang_Cursor_getArgument(fn, i), visit, cc);
  changes_fn(cc, fn, call);
  cc->this_obj = outer_this;
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  CallChanges *cc = data;
  FeKids ks = fe_kids(c);
  switch (clang_getCursorKind(c)) {
  case CXCursor_CompoundAssignOperator:
    if (ks.n == 2) changes_target(cc, ks.v[0], c, false);
    break;
  case CXCursor_BinaryOperator:
    if (ks.n == 2 && assigns(cc, ks.v[0], ks.v[1])) changes_target(cc, ks.v[0], c, false);
    break;
  case CXCursor_UnaryOperator:
    if (ks.n == 1 && unary_changes(cc, c)) changes_target(cc, ks.v[0], c, false);
    break;
  case CXCursor_UnaryExpr:  // sizeof, alignof: not evaluated
    return CXChildVisit_Continue;
  case CXCursor_CallExpr: changes_call(cc, c, false); break;
  default: break;
  }
  return cc->anything ? CXChildVisit_Break : CXChildVisit_Recurse;
}

// The tokens of a piece, in the file it is written in.
static CXToken *piece_tokens(const Frontend *fe, const Piece *p, unsigned *n) {
  *n = 0;
  CXFile f = p->range.begin.file ? clang_getFile(fe->tu, p->range.begin.file) : NULL;
  if (!f || !p->text) return NULL;
  CXSourceRange r = clang_getRange(clang_getLocationForOffset(fe->tu, f, p->range.begin.offset),
                                   clang_getLocationForOffset(fe->tu, f, p->range.end.offset));
  CXToken *toks = NULL;
  clang_tokenize(fe->tu, r, &toks, n);
  return toks;
}

// A variable of a class of the user's with a conversion function or a
// constructor of its own (a copy runs one): what they may change is read; true
// when there is any.
static enum CXChildVisitResult find_user_members(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  CallChanges *cc = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  if ((k == CXCursor_ConversionFunction || k == CXCursor_Constructor) && !clang_Cursor_isNull(clang_getCursorDefinition(c))) {
    cc->found_user_member = true;
    changes_fn(cc, c, c);
  }
  return CXChildVisit_Continue;
}

static bool user_class_value(CallChanges *cc, CXCursor c) {
  CXCursor d = clang_getCursorReferenced(c);
  enum CXCursorKind dk = clang_getCursorKind(d);
  if (dk != CXCursor_VarDecl && dk != CXCursor_ParmDecl && dk != CXCursor_FieldDecl) return false;
  CXType t = referred(clang_getCursorType(d), false);
  CXCursor cls = clang_getTypeDeclaration(t);
  if (t.kind != CXType_Record || clang_Cursor_isNull(cls) || in_library(cls)) return false;
  cc->found_user_member = false;
  clang_visitChildren(cls, find_user_members, cc);
  return cc->found_user_member;
}

static CallChanges *cc_new(const Frontend *fe) {
  CallChanges *cc = xcalloc(1, sizeof *cc);
  cc->fe = fe;
  cc->args_read = true;
  cc->this_obj = clang_getNullCursor();
  cc->walked = clang_getNullCursor();
  return cc;
}

CallChanges *call_changes_stmt(const Frontend *fe, CXCursor stmt) {
  CallChanges *cc = cc_new(fe);
  if (visit(stmt, stmt, cc) == CXChildVisit_Recurse) clang_visitChildren(stmt, visit, cc);
  return cc;
}

CallChanges *call_changes(const Frontend *fe, const Piece *p) {
  CallChanges *cc = cc_new(fe);
  unsigned n = 0;
  CXToken *toks = piece_tokens(fe, p, &n);
  for (unsigned i = 0; i < n; i++) {
    static const char *const unevaluated[] = {"sizeof", "alignof", "decltype", "noexcept", "typeid"};
    bool skip = false;
    for (size_t u = 0; u < sizeof unevaluated / sizeof *unevaluated && !skip; u++)
      skip = clang_getTokenKind(toks[i]) == CXToken_Keyword && fe_token_is(fe->tu, toks[i], unevaluated[u]);
    for (int depth = 0; skip && i + 1 < n; i++) {  // past its operand
      depth += fe_token_is(fe->tu, toks[i + 1], "(") - fe_token_is(fe->tu, toks[i + 1], ")");
      if (depth <= 0 && !fe_token_is(fe->tu, toks[i + 1], "(")) break;
    }
    if (skip) continue;
    CXSourceLocation at = clang_getTokenLocation(fe->tu, toks[i]);
    CXCursor c = clang_getCursor(fe->tu, at);
    enum CXCursorKind k = clang_getCursorKind(c);
    CXCursor fn = clang_getCursorReferenced(c);
    if (clang_getTokenKind(toks[i]) == CXToken_Identifier && k == CXCursor_MacroExpansion &&
        clang_equalLocations(clang_getCursorLocation(c), at) && !fe_macro_pure(fe->tu, fn)) {
      cc->args_read = false;
      note_anything(cc, c, fn, "a macro coconet does not read (its body is not an expression of its arguments)");
    } else if (fe_token_is(fe->tu, toks[i], "(") && k == CXCursor_CallExpr) {
      changes_call(cc, c, true);
    } else if (clang_getTokenKind(toks[i]) == CXToken_Punctuation && k == CXCursor_CallExpr) {
      cc->hidden = true;  // an operator of a class (`g_sched + 1`)
      changes_call(cc, c, true);
    } else if (clang_getTokenKind(toks[i]) == CXToken_Punctuation && fe_is_function(clang_getCursorKind(fn))) {
      cc->args_read = false;  // an object's operator(), an operator: the token names it
      cc->hidden |= !fe_token_is(fe->tu, toks[i], "(");
      char *owner = fe_spelling(clang_getCursorSemanticParent(fn));
      if (in_library(fn) && !strcmp(owner, "function"))
        note_anything(cc, c, fn, "a library function given code of yours to call (a callable, a std::function, "
                                 "an object of a class of yours)");
      free(owner);
      changes_fn(cc, fn, c);
    } else if (clang_getTokenKind(toks[i]) == CXToken_Identifier && user_class_value(cc, c)) {
      cc->hidden = true;  // its conversion or copy runs code of the user's
      cc->class_value = n == 1;
    } else if (k == CXCursor_OverloadedDeclRef) {
      cc->args_read = false;
      note_anything(cc, c, clang_getNullCursor(), "an overloaded call coconet does not resolve");
    }
  }
  clang_disposeTokens(fe->tu, toks, n);
  return cc;
}

bool call_changes_args_read(const CallChanges *cc) { return cc->args_read; }

bool call_changes_hidden(const CallChanges *cc) { return cc->hidden; }

bool call_changes_class_value(const CallChanges *cc) { return cc->class_value; }

static bool token_is(const Frontend *fe, const CXToken *toks, unsigned n, long i, const char *text) {
  return i >= 0 && (unsigned)i < n && fe_token_is(fe->tu, toks[i], text);
}

typedef struct Escape {
  const Frontend *fe;
  CXCursor decl;
  bool yes;
  bool in_lambda;
} Escape;

static bool names(CXCursor e, CXCursor decl) {
  e = az_uncast(e);
  return clang_getCursorKind(e) == CXCursor_DeclRefExpr &&
         clang_equalCursors(clang_getCanonicalCursor(clang_getCursorReferenced(e)), decl);
}

// Whether a local's address leaves it: `&x`, a reference bound to it (a
// structured binding by reference too), a non-const reference parameter given
// it, a lambda naming it.
static enum CXChildVisitResult find_escape(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Escape *e = data;
  FeKids ks = fe_kids(c);
  switch (clang_getCursorKind(c)) {
  case CXCursor_LambdaExpr: {
    Escape in = {e->fe, e->decl, false, true};
    clang_visitChildren(c, find_escape, &in);
    e->yes |= in.yes;
    return e->yes ? CXChildVisit_Break : CXChildVisit_Continue;
  }
  case CXCursor_DeclRefExpr: e->yes |= e->in_lambda && names(c, e->decl); break;
  case CXCursor_UnaryOperator:
    if (ks.n == 1 && names(ks.v[0], e->decl)) {
      char *t = fe_cursor_text(e->fe, c);
      e->yes |= t[0] == '&';
      free(t);
    }
    break;
  case CXCursor_VarDecl:
  case CXCursor_UnexposedDecl:  // `auto &[a, b] = x;`: a and b name x's parts
    e->yes |= is_reference(c) && ks.n && names(ks.last, e->decl);
    break;
  case CXCursor_CallExpr: {
    // (a forwarding `U &&` too: std::pair<int &, int>(x, 0) keeps a reference to x)
    CXCursor fn = clang_getCursorReferenced(c);
    int np = fe_is_function(clang_getCursorKind(fn)) ? clang_Cursor_getNumArguments(fn) : 0;
    for (int i = 0; i < clang_Cursor_getNumArguments(c) && i < np; i++) {
      CXType t = clang_getCanonicalType(clang_getCursorType(clang_Cursor_getArgument(fn, i)));
      e->yes |= (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference) &&
                !clang_isConstQualifiedType(clang_getPointeeType(t)) && names(clang_Cursor_getArgument(c, i), e->decl);
    }
    break;
  }
  case CXCursor_InitListExpr:  // `H h{x}` may bind a reference member to x
    for (int i = 0; i < ks.n && !e->yes; i++) e->yes = names(ks.v[i], e->decl);
    break;
  default: break;
  }
  return e->yes ? CXChildVisit_Break : CXChildVisit_Recurse;
}

// Whether local d's address leaves it in its function.
static bool escapes(const Frontend *fe, CXCursor d) {
  CXCursor fn = clang_getCursorSemanticParent(d);
  if (!fe_is_function(clang_getCursorKind(fn))) return false;
  Escape e = {fe, d, false, false};
  clang_visitChildren(fn, find_escape, &e);
  return e.yes;
}

static SrcLoc change_at(const CallChanges *cc) { return cc->anything ? cc->anything_at : cc->memory_at; }

// Whether reading variable d (through: what it points at) reads what the calls may change.
static bool var_changed(const CallChanges *cc, CXCursor d, bool through, SrcLoc *at) {
  bool memory = cc->memory || cc->anything, alias = memory || cc->aliased;
  CXType t = clang_getCanonicalType(clang_getCursorType(d));
  if (clang_isConstQualifiedType(t) && !through) return false;
  for (int v = 0; v < cc->nvars; v++)
    if (clang_equalCursors(cc->vars[v], d)) {
      *at = cc->var_at[v];
      return true;
    }
  *at = memory || !cc->nvars ? change_at(cc) : cc->var_at[0];
  if (memory && lasting(d)) return true;
  return alias && (through || is_reference(d) || (!lasting(d) && escapes(cc->fe, d)));
}

typedef struct ReadWalk {
  const CallChanges *cc;
  CXCursor found;  // what is read (a DeclRefExpr, or the expression reading memory)
  SrcLoc *at;
  int depth;
} ReadWalk;

// What a function a reader calls reads (a helper returning an expression: `lr_of(n)`), 8 deep.
static enum CXChildVisitResult reads_changed(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  ReadWalk *w = data;
  const CallChanges *cc = w->cc;
  bool alias = cc->memory || cc->anything || cc->aliased;
  FeKids ks = fe_kids(c);
  switch (clang_getCursorKind(c)) {
  case CXCursor_DeclRefExpr: {
    CXCursor d = clang_getCanonicalCursor(clang_getCursorReferenced(c));
    if (clang_getCursorKind(d) == CXCursor_VarDecl && var_changed(cc, d, false, w->at)) w->found = c;
    break;
  }
  case CXCursor_MemberRefExpr:
    if (alias && (ks.n == 0 || is_pointer(ks.v[0]))) w->found = c;  // this->m, p->m
    break;
  case CXCursor_ArraySubscriptExpr:
    if (alias && ks.n == 2 && is_pointer(az_uncast(ks.v[0]))) w->found = c;
    break;
  case CXCursor_UnaryOperator: {
    char *t = fe_cursor_text(cc->fe, c);
    if (alias && t[0] == '*') w->found = c;
    free(t);
    break;
  }
  case CXCursor_UnaryExpr: return CXChildVisit_Continue;
  case CXCursor_CallExpr: {
    CXCursor fn = clang_getCursorReferenced(c);
    CXCursor def = clang_getCursorDefinition(fn);
    if (!in_library(fn) && !clang_Cursor_isNull(def) && w->depth < DEPTH_MAX) {
      w->depth++;
      clang_visitChildren(def, reads_changed, w);
      w->depth--;
    } else if (!in_library(fn) && (cc->memory || cc->anything || cc->nvars)) {
      w->found = c;  // what it reads, coconet does not see
      *w->at = change_at(cc);
    }
    break;
  }
  default: break;
  }
  if (!clang_Cursor_isNull(w->found) && clang_getCursorKind(w->found) != CXCursor_DeclRefExpr) *w->at = change_at(cc);
  return clang_Cursor_isNull(w->found) ? CXChildVisit_Recurse : CXChildVisit_Break;
}

const char *call_changes_read(const CallChanges *cc, const Piece *reader, char *buf, size_t size, SrcLoc *at) {
  const Frontend *fe = cc->fe;
  if (!cc->nvars && !cc->memory && !cc->anything) return NULL;
  bool alias = cc->memory || cc->anything || cc->aliased;
  unsigned n = 0;
  CXToken *toks = piece_tokens(fe, reader, &n);
  char *name = NULL;  // what is read that may change
  for (unsigned i = 0; i < n && !name; i++) {
    CXTokenKind tk = clang_getTokenKind(toks[i]);
    CXCursor c = clang_getCursor(fe->tu, clang_getTokenLocation(fe->tu, toks[i]));
    CXCursor d = clang_getCanonicalCursor(clang_getCursorReferenced(c));
    enum CXCursorKind k = clang_getCursorKind(c), dk = clang_getCursorKind(d);
    bool changed = false;
    if (tk == CXToken_Keyword && fe_token_is(fe->tu, toks[i], "this")) {
      if (alias && token_is(fe, toks, n, (long)i + 1, "->") && i + 2 < n) {
        char *m = fe_token_text(fe->tu, toks[i + 2]);
        name = xasprintf("this->%s", m);
        free(m);
      } else if (alias) {
        name = strdup("*this");
      }
      *at = change_at(cc);
    } else if (tk == CXToken_Punctuation && fe_token_is(fe->tu, toks[i], "(") && k == CXCursor_CallExpr) {
      ReadWalk w = {cc, clang_getNullCursor(), at, 0};
      reads_changed(c, c, &w);
      if (!clang_Cursor_isNull(w.found)) name = fe_cursor_text(fe, w.found);
    } else if (tk == CXToken_Identifier) {
      bool after_member = token_is(fe, toks, n, (long)i - 1, ".") || token_is(fe, toks, n, (long)i - 1, "->");
      if (k == CXCursor_MemberRefExpr && !after_member && dk == CXCursor_FieldDecl) {
        changed = alias;  // a member of this
        *at = change_at(cc);
      } else if (k == CXCursor_DeclRefExpr && (dk == CXCursor_VarDecl || dk == CXCursor_ParmDecl)) {
        bool through = is_pointer(d) && (token_is(fe, toks, n, (long)i + 1, "->") ||
                                         token_is(fe, toks, n, (long)i + 1, "[") ||
                                         token_is(fe, toks, n, (long)i - 1, "*"));
        changed = var_changed(cc, d, through, at);
      }
    }
    if (changed) name = fe_token_text(fe->tu, toks[i]);
  }
  clang_disposeTokens(fe->tu, toks, n);
  if (!name) return NULL;
  snprintf(buf, size, "%s", name);
  free(name);
  return buf;
}

const char *call_changes_read_named(const CallChanges *cc, const Piece *reader, char *buf, size_t size, SrcLoc *at) {
  CallChanges named = *cc;
  named.memory = false;
  named.anything = false;
  return call_changes_read(&named, reader, buf, size, at);
}

const char *call_changes_unseen(const CallChanges *cc, SrcLoc at, const char **why) {
  bool here = cc->anything && at.offset == cc->anything_at.offset && at.file && cc->anything_at.file &&
              !strcmp(at.file, cc->anything_at.file);
  *why = here ? cc->why : NULL;
  return here ? cc->unseen : NULL;
}

void call_changes_free(CallChanges *cc) {
  if (!cc) return;
  free(cc->unseen);
  free(cc);
}
