// call_changes.c: what the functions an argument with side effects calls may
// change, read on the AST in their bodies and the bodies they call (4 deep),
// for effects.c, which evaluates that argument at the top of the generated
// block: an argument written before it must not read what it changes.
// Changes through the call's own arguments (`next_lr(calls)`, `&n`) are the
// argument's text's to say (effects.c); here: variables of the file (not a
// function's locals), memory reached through a pointer, a reference or
// `this`, or anything at all (a call of a function whose body coconet cannot
// see, a call through a pointer).
#include "analyze/analyze_impl.h"
#include "common/cuda_names.h"
#include "common/text.h"

#include <stdlib.h>
#include <string.h>

enum { VARS_MAX = 64, DEPTH_MAX = 4 };

struct CallChanges {
  const Frontend *fe;
  CXCursor vars[VARS_MAX];    // variables of the file assigned
  SrcLoc var_at[VARS_MAX];    // where
  int nvars;
  bool memory;                // through a pointer, a reference or this
  SrcLoc memory_at;
  bool anything;              // a call coconet cannot see into
  SrcLoc anything_at;
  char *unseen;               // that call's function, or NULL (a call through a pointer)
  bool args_read;             // every call of the text was read with its parameters' types
  int depth;
};

static SrcLoc where(const CallChanges *cc, CXCursor c) { return fe_any_loc(cc->fe, clang_getCursorLocation(c)); }

// A variable that lives beyond any call of a function: of the file, of a
// namespace, a class's static, a function's static.
static bool lasting(CXCursor d) {
  if (clang_getCursorKind(d) != CXCursor_VarDecl) return false;
  return clang_Cursor_hasVarDeclGlobalStorage(d) == 1;
}

static bool is_reference(CXCursor d) {
  enum CXTypeKind k = clang_getCanonicalType(clang_getCursorType(d)).kind;
  return k == CXType_LValueReference || k == CXType_RValueReference;
}

static bool is_pointer(CXCursor e) { return clang_getCanonicalType(clang_getCursorType(e)).kind == CXType_Pointer; }

static void note_memory(CallChanges *cc, CXCursor at) {
  if (!cc->memory) cc->memory_at = where(cc, at);
  cc->memory = true;
}

static void note_anything(CallChanges *cc, CXCursor at, CXCursor fn) {
  if (cc->anything) return;
  cc->anything = true;
  cc->anything_at = where(cc, at);
  cc->unseen = clang_Cursor_isNull(fn) ? NULL : fe_spelling(fn);
}

static void add_var(CallChanges *cc, CXCursor d, CXCursor at) {
  for (int i = 0; i < cc->nvars; i++)
    if (clang_equalCursors(cc->vars[i], d)) return;
  if (cc->nvars == VARS_MAX) return note_memory(cc, at);
  cc->var_at[cc->nvars] = where(cc, at);
  cc->vars[cc->nvars++] = d;
}

// What an assignment to expression t changes: in a function called, a variable
// of the file or memory (its locals and parameters are its own); in the
// argument's text itself (caller), the caller's variable too.
static void changes_target(CallChanges *cc, CXCursor t, CXCursor at, bool caller) {
  t = az_uncast(t);
  FeKids ks = fe_kids(t);
  switch (clang_getCursorKind(t)) {
  case CXCursor_DeclRefExpr: {
    CXCursor d = clang_getCanonicalCursor(clang_getCursorReferenced(t));
    enum CXCursorKind dk = clang_getCursorKind(d);
    // (A function's own local is no name of the caller's: recorded all the same, for a
    // lambda's, which may be the caller's captured by reference.)
    if (dk == CXCursor_VarDecl || (caller && dk == CXCursor_ParmDecl)) add_var(cc, d, at);
    if (is_reference(d) && (caller || dk != CXCursor_ParmDecl)) note_memory(cc, at);  // to what: not followed
    return;  // a function's parameter: what the caller passed is read at the call
  }
  case CXCursor_MemberRefExpr:
    if (ks.n == 1 && !is_pointer(ks.v[0])) return changes_target(cc, ks.v[0], at, caller);
    return note_memory(cc, at);  // through ->, or this
  case CXCursor_ArraySubscriptExpr:
    if (ks.n == 2 && !is_pointer(az_uncast(ks.v[0]))) return changes_target(cc, ks.v[0], at, caller);
    return note_memory(cc, at);
  default: return note_memory(cc, at);
  }
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data);

// The text of the operator token between a binary expression's operands.
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

// What calling fn may change, its arguments aside.
static void changes_fn(CallChanges *cc, CXCursor fn, CXCursor at) {
  char *name = fe_spelling(fn);
  bool library = clang_Location_isInSystemHeader(clang_getCursorLocation(fn));
  bool pure = library && (cuda_name_in(name, HOST_PURE_MATH) || !strcmp(name, "min") || !strcmp(name, "max"));
  free(name);
  CXCursor def = clang_getCursorDefinition(fn);
  if (pure || (library && clang_Cursor_isNull(def))) return;
  if (clang_Cursor_isNull(def) || cc->depth >= DEPTH_MAX) return note_anything(cc, at, fn);
  cc->depth++;
  clang_visitChildren(def, visit, cc);
  cc->depth--;
}

// A call in a function called: the function, what it may change through its
// object and the references it is passed, what a library function changes
// through its pointers.
static void changes_call(CallChanges *cc, CXCursor call) {
  CXCursor fn = clang_getCursorReferenced(call);
  enum CXCursorKind k = clang_getCursorKind(fn);
  if (k == CXCursor_Constructor) return;
  if (!fe_is_function(k)) return note_anything(cc, call, clang_getNullCursor());
  FeKids callee = fe_kids(call);
  if (k == CXCursor_CXXMethod && !clang_CXXMethod_isConst(fn) && !clang_CXXMethod_isStatic(fn) && callee.n >= 1) {
    CXCursor m = az_uncast(callee.v[0]);
    FeKids obj = fe_kids(m);
    if (clang_getCursorKind(m) == CXCursor_MemberRefExpr && obj.n == 1)
      changes_target(cc, is_pointer(obj.v[0]) ? m : obj.v[0], call, false);
    else
      note_memory(cc, call);  // a method of this
  }
  CXCursor def = clang_getCursorDefinition(fn);
  for (int i = 0; i < clang_Cursor_getNumArguments(call); i++) {
    CXCursor a = clang_Cursor_getArgument(call, i);
    CXType t = clang_getCanonicalType(clang_getCursorType(a));
    bool library_out = clang_Location_isInSystemHeader(clang_getCursorLocation(fn)) && t.kind == CXType_Pointer &&
                       !clang_isConstQualifiedType(clang_getPointeeType(t));
    CXType pt = clang_Cursor_isNull(def) || i >= clang_Cursor_getNumArguments(def)
                    ? (CXType){.kind = CXType_Invalid}
                    : clang_getCursorType(clang_Cursor_getArgument(def, i));
    if (library_out) note_memory(cc, call);
    if (pt.kind == CXType_LValueReference && !clang_isConstQualifiedType(clang_getPointeeType(pt)))
      changes_target(cc, a, call, false);
  }
  changes_fn(cc, fn, call);
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
  case CXCursor_CallExpr: changes_call(cc, c); break;
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

// A call written in the text: what its function changes, and what it is passed
// by a reference that is not const.
static void changes_caller_call(CallChanges *cc, CXCursor call) {
  CXCursor fn = clang_getCursorReferenced(call);
  enum CXCursorKind k = clang_getCursorKind(fn);
  if (k == CXCursor_Constructor) return;
  int nparams = fe_is_function(k) ? clang_Cursor_getNumArguments(fn) : -1;
  if (nparams < 0) {  // through a pointer, or not resolved
    cc->args_read = false;
    return note_anything(cc, call, clang_getNullCursor());
  }
  for (int a = 0; a < clang_Cursor_getNumArguments(call) && a < nparams; a++) {
    CXType t = clang_getCursorType(clang_Cursor_getArgument(fn, a));
    if (t.kind == CXType_LValueReference && !clang_isConstQualifiedType(clang_getPointeeType(t)))
      changes_target(cc, clang_Cursor_getArgument(call, a), call, true);
  }
  changes_fn(cc, fn, call);
}

CallChanges *call_changes(const Frontend *fe, const Piece *p) {
  CallChanges *cc = xcalloc(1, sizeof *cc);
  cc->fe = fe;
  cc->args_read = true;
  unsigned n = 0;
  CXToken *toks = piece_tokens(fe, p, &n);
  for (unsigned i = 0; i < n; i++) {
    CXSourceLocation at = clang_getTokenLocation(fe->tu, toks[i]);
    CXCursor c = clang_getCursor(fe->tu, at);
    enum CXCursorKind k = clang_getCursorKind(c);
    if (clang_getTokenKind(toks[i]) == CXToken_Identifier && k == CXCursor_MacroExpansion &&
        clang_equalLocations(clang_getCursorLocation(c), at) &&
        !fe_macro_pure(fe->tu, clang_getCursorReferenced(c))) {
      cc->args_read = false;  // what its body changes, the walk does not read
      note_anything(cc, c, clang_getCursorReferenced(c));
    } else if (fe_token_is(fe->tu, toks[i], "(") && k == CXCursor_CallExpr) {
      changes_caller_call(cc, c);
    } else if (k == CXCursor_OverloadedDeclRef) {
      cc->args_read = false;
      note_anything(cc, c, clang_getNullCursor());
    }
  }
  clang_disposeTokens(fe->tu, toks, n);
  return cc;
}

bool call_changes_args_read(const CallChanges *cc) { return cc->args_read; }

static bool token_is(const Frontend *fe, const CXToken *toks, unsigned n, long i, const char *text) {
  return i >= 0 && (unsigned)i < n && fe_token_is(fe->tu, toks[i], text);
}

// Whether reading variable d (through a pointer: through) reads what the calls may change.
static bool var_changed(const CallChanges *cc, CXCursor d, bool through, SrcLoc *at) {
  bool memory = cc->memory || cc->anything;
  CXType t = clang_getCanonicalType(clang_getCursorType(d));
  *at = cc->anything ? cc->anything_at : cc->memory_at;
  if (clang_isConstQualifiedType(t) && !through) return false;
  for (int v = 0; v < cc->nvars; v++)
    if (clang_equalCursors(cc->vars[v], d)) {
      *at = cc->var_at[v];
      return true;
    }
  return (cc->anything && lasting(d)) || (memory && (is_reference(d) || through));
}

typedef struct ReadWalk {
  const CallChanges *cc;
  CXCursor found;  // what is read (a DeclRefExpr, or the expression reading memory)
  SrcLoc *at;
  int depth;
} ReadWalk;

// What a function a reader calls reads (a helper returning an expression: `lr_of(n)`), 4 deep.
static enum CXChildVisitResult reads_changed(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  ReadWalk *w = data;
  const CallChanges *cc = w->cc;
  bool memory = cc->memory || cc->anything;
  FeKids ks = fe_kids(c);
  switch (clang_getCursorKind(c)) {
  case CXCursor_DeclRefExpr: {
    CXCursor d = clang_getCanonicalCursor(clang_getCursorReferenced(c));
    if (clang_getCursorKind(d) == CXCursor_VarDecl && var_changed(cc, d, false, w->at)) w->found = c;
    break;
  }
  case CXCursor_MemberRefExpr:
    if (memory && (ks.n == 0 || is_pointer(ks.v[0]))) w->found = c;  // this->m, p->m
    break;
  case CXCursor_ArraySubscriptExpr:
    if (memory && ks.n == 2 && is_pointer(az_uncast(ks.v[0]))) w->found = c;
    break;
  case CXCursor_UnaryOperator: {
    char *t = fe_cursor_text(cc->fe, c);
    if (memory && t[0] == '*') w->found = c;
    free(t);
    break;
  }
  case CXCursor_CallExpr: {
    CXCursor def = clang_getCursorDefinition(clang_getCursorReferenced(c));
    if (!clang_Cursor_isNull(def) && !clang_Location_isInSystemHeader(clang_getCursorLocation(def)) &&
        w->depth < DEPTH_MAX) {
      w->depth++;
      clang_visitChildren(def, reads_changed, w);
      w->depth--;
    }
    break;
  }
  default: break;
  }
  return clang_Cursor_isNull(w->found) ? CXChildVisit_Recurse : CXChildVisit_Break;
}

const char *call_changes_read(const CallChanges *cc, const Piece *reader, char *buf, size_t size, SrcLoc *at) {
  const Frontend *fe = cc->fe;
  if (!cc->nvars && !cc->memory && !cc->anything) return NULL;
  bool memory = cc->memory || cc->anything;
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
      changed = memory;
      *at = cc->anything ? cc->anything_at : cc->memory_at;
    } else if (tk == CXToken_Punctuation && fe_token_is(fe->tu, toks[i], "(") && k == CXCursor_CallExpr) {
      ReadWalk w = {cc, clang_getNullCursor(), at, 0};
      reads_changed(c, c, &w);
      if (!clang_Cursor_isNull(w.found)) name = fe_cursor_text(fe, w.found);
    } else if (tk == CXToken_Identifier) {
      bool after_member = token_is(fe, toks, n, (long)i - 1, ".") || token_is(fe, toks, n, (long)i - 1, "->");
      if (k == CXCursor_MemberRefExpr && !after_member && dk == CXCursor_FieldDecl) {
        changed = memory;  // this->m
        *at = cc->anything ? cc->anything_at : cc->memory_at;
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

const char *call_changes_unseen(const CallChanges *cc) { return cc->anything ? cc->unseen : NULL; }

void call_changes_free(CallChanges *cc) {
  if (!cc) return;
  free(cc->unseen);
  free(cc);
}
