// wrapper.c: a launch inside a small host function, seen through.
//
// Training code often launches a kernel from a host function that computes the
// grid and launches, nothing else:
//
//   void adamw_update(float *p, const float *g, ..., int n, cudaStream_t s) {
//     const int blocks = (n + 255) / 256;
//     adamw<<<blocks, 256, 0, s>>>(p, g, ..., n);
//   }
//
// A region statement that is exactly a call of such a function defined in this
// file (`adamw_update(w, grads, ..., count, stream);`) is classified as that
// launch, its texts in the caller's terms: each parameter of the wrapper stands
// for the call's argument, each local for its initializer. One level only; the
// wrapper's body must be declarations of initialized locals, then the one
// launch, and no text of it may have side effects (a call, ++, an assignment:
// with no other statement, nothing else can change a parameter or a local).
// The launch's arguments and stream are used in the caller's scope, so they may
// read only the function's parameters and locals (a global the function reads
// could be another variable of the same name there).
// Anything else (a second statement, a wrapper template) leaves the call opaque.
#include "front/front.h"

#include <stdlib.h>
#include <string.h>

typedef struct Subst {
  CXCursor decl;  // a ParmDecl or local VarDecl of the wrapper
  char *text;     // what it stands for in the caller (parenthesized unless a name)
} Subst;

typedef struct Wrapper {
  const Frontend *fe;
  CXCursor fn;
  Subst *v;
  int n;
  bool foreign;  // the last text substituted names a variable that is not the function's
} Wrapper;

static bool is_name(const char *t) {
  if (!*t || !(*t == '_' || (*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z'))) return false;
  for (; *t; t++)
    if (!(*t == '_' || (*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') || (*t >= '0' && *t <= '9'))) return false;
  return true;
}

static char *grouped(char *t) {
  if (is_name(t)) return t;
  char *g;
  if (asprintf(&g, "(%s)", t) < 0) COCONET_BUG("out of memory");
  free(t);
  return g;
}

static const Subst *subst_of(const Wrapper *w, CXCursor decl) {
  for (int i = 0; i < w->n; i++)
    if (clang_equalCursors(w->v[i].decl, decl)) return &w->v[i];
  return NULL;
}

// The text of a range of the wrapper with every parameter and local replaced.
static char *substituted(Wrapper *w, SrcRange r) {
  const Frontend *fe = w->fe;
  CXSourceRange cr = clang_getRange(clang_getLocationForOffset(fe->tu, fe->file, r.begin.offset),
                                    clang_getLocationForOffset(fe->tu, fe->file, r.end.offset));
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(fe->tu, cr, &toks, &n);
  size_t cap = 64, len = 0;
  w->foreign = false;
  char *out = malloc(cap);
  if (!out) COCONET_BUG("out of memory");
  out[0] = '\0';
  unsigned at = r.begin.offset;
  for (unsigned i = 0; i <= n; i++) {
    unsigned b = i < n ? fe_loc(fe, clang_getTokenLocation(fe->tu, toks[i])).offset : r.end.offset;
    unsigned e = i < n ? fe_loc(fe, clang_getRangeEnd(clang_getTokenExtent(fe->tu, toks[i]))).offset : r.end.offset;
    if (b >= r.end.offset && i < n) break;
    const char *piece = fe->src.buf + at;
    size_t plen = b > at ? b - at : 0;
    const Subst *s = NULL;
    if (i < n && clang_getTokenKind(toks[i]) == CXToken_Identifier) {
      CXCursor c = clang_getCursor(fe->tu, clang_getTokenLocation(fe->tu, toks[i]));
      // A macro may stand for anything, a parameter included: not the caller's to read.
      if (clang_getCursorKind(c) == CXCursor_MacroExpansion) w->foreign = true;
      CXCursor d = clang_getCursorReferenced(c);
      if (!clang_Cursor_isNull(d)) s = subst_of(w, d);
      enum CXCursorKind dk = clang_getCursorKind(d);
      if (!s && (dk == CXCursor_VarDecl || dk == CXCursor_ParmDecl)) w->foreign = true;
    }
    const char *tok = i < n ? fe->src.buf + b : "";
    size_t tlen = i < n ? e - b : 0;
    if (s) {
      tok = s->text;
      tlen = strlen(s->text);
    }
    while (len + plen + tlen + 1 > cap) cap *= 2;
    char *grown = realloc(out, cap);
    if (!grown) COCONET_BUG("out of memory");
    out = grown;
    memcpy(out + len, piece, plen);
    len += plen;
    memcpy(out + len, tok, tlen);
    len += tlen;
    out[len] = '\0';
    at = e;
    if (i == n) break;
  }
  clang_disposeTokens(fe->tu, toks, n);
  return out;
}

static void add(Wrapper *w, CXCursor decl, char *text) {
  Subst *grown = realloc(w->v, sizeof *w->v * (size_t)(w->n + 1));
  if (!grown) COCONET_BUG("out of memory");
  w->v = grown;
  w->v[w->n++] = (Subst){decl, grouped(text)};
}

static void free_wrapper(Wrapper *w) {
  for (int i = 0; i < w->n; i++) free(w->v[i].text);
  free(w->v);
}

// in_caller: the text is used in the caller's scope (arguments, stream), where a
// variable the function reads from its own scope (a global) may name another.
static void substitute_piece(Wrapper *w, Piece *p, bool in_caller, const char **why) {
  if (!p->text) return;
  char *t = substituted(w, p->range);
  if (source_has_effects(t) && !*why) *why = "a text of its launch has side effects (a call, ++, an assignment)";
  if (in_caller && w->foreign && !*why)
    *why = "an argument or the stream of its launch reads a variable that is not the function's parameter or "
           "local, or a macro";
  free(p->text);
  p->text = t;
}

void wrapper_see_through(const Frontend *fe, Stmt *s) {
  CXCursor call = s->cursor;
  if (clang_getCursorKind(call) != CXCursor_CallExpr) return;
  CXCursor callee = clang_getCursorReferenced(call);
  if (clang_getCursorKind(callee) != CXCursor_FunctionDecl || cursor_is_kernel(callee) ||
      !clang_Cursor_isNull(clang_getSpecializedCursorTemplate(callee)))
    return;
  CXCursor fn = clang_getCursorDefinition(callee);
  if (clang_Cursor_isNull(fn) || !fe_in_main_file(fe, clang_getCursorLocation(fn))) return;
  int nparams = clang_Cursor_getNumArguments(fn), nargs = clang_Cursor_getNumArguments(call);
  FeKids k = fe_kids(fn);
  CXCursor body = k.n ? k.last : clang_getNullCursor();
  if (nparams < 0 || nparams != nargs || clang_getCursorKind(body) != CXCursor_CompoundStmt) return;
  // Only a function that launches a kernel is worth a word when it is not seen through.
  char *text = fe_text(fe, fe_range(fe, clang_getCursorExtent(body)));
  bool launches = strstr(text, "<<<") != NULL;
  free(text);
  if (!launches) return;
  const char *why = NULL;
  Wrapper w = {fe, fn, NULL, 0, false};
  for (int i = 0; i < nparams; i++) {
    CXCursor a = clang_Cursor_getArgument(call, (unsigned)i);
    char *t = fe_text(fe, fe_range(fe, clang_getCursorExtent(a)));
    if ((!*t || source_has_effects(t)) && !why) why = "an argument of the call has side effects (a call, ++, an assignment)";
    add(&w, clang_Cursor_getArgument(fn, (unsigned)i), t);
  }
  FeKids stmts = fe_kids(body);
  Stmt *launch = NULL;
  for (int i = 0; i < stmts.n && i < FE_KIDS && !why; i++) {
    CXCursor st = stmts.v[i];
    if (clang_getCursorKind(st) == CXCursor_DeclStmt && !launch) {
      FeKids vars = fe_kids(st);
      for (int j = 0; j < vars.n && j < FE_KIDS && !why; j++) {
        FeKids init = fe_kids(vars.v[j]);
        if (clang_getCursorKind(vars.v[j]) != CXCursor_VarDecl || !init.n) {
          why = "its body declares a local without an initializer";
          break;
        }
        char *t = substituted(&w, fe_range(fe, clang_getCursorExtent(init.last)));
        if (source_has_effects(t)) why = "a local's initializer has side effects (a call, ++, an assignment)";
        add(&w, vars.v[j], t);
      }
    } else if (!launch) {
      launch = classify_stmt(fe, st);
      if (launch->kind != STMT_LAUNCH || launch->wrap != WRAP_NONE || launch->launch->wrapper)
        why = "its body is not initialized locals and then one kernel launch";
    } else {
      why = "its body has a statement after the launch";
    }
  }
  if (!why && (!launch || stmts.n > FE_KIDS)) why = "its body is not initialized locals and then one kernel launch";
  if (!why) {
    Launch *l = launch->launch;
    Piece *conf[] = {&l->grid, &l->block, &l->shmem, &l->stream};
    for (int i = 0; i < 4; i++) substitute_piece(&w, conf[i], i == 3, &why);
    for (int i = 0; i < l->nargs; i++) substitute_piece(&w, &l->args[i], true, &why);
  }
  // The statement must be the call and its ';', nothing around it.
  SrcRange cr = fe_range(fe, clang_getCursorExtent(call));
  if (!why && cr.begin.offset != s->range.begin.offset) why = "the statement is more than the call";
  char *name = fe_spelling(fn);
  SrcLoc at = fe_loc(fe, clang_getCursorLocation(fn));
  if (why) {
    if (asprintf(&s->why_opaque, "the call of '%s' (%s:%u:%u) is not seen through as the kernel launch inside it: %s; "
                                 "coconet sees through a host function whose body is initialized locals and then "
                                 "one launch", name, at.file ? at.file : "?", at.line, at.col, why) < 0)
      COCONET_BUG("out of memory");
    free(name);
  } else {
    s->kind = STMT_LAUNCH;
    s->launch = launch->launch;
    s->launch->wrapper = name;
    s->launch->wrapper_loc = at;
    s->callee = strdup(s->launch->kernel);
    s->call_range = cr;
    s->args = s->launch->args;
    s->nargs = s->launch->nargs;
    launch->launch = NULL;
    launch->args = NULL;
    launch->nargs = 0;
  }
  stmt_free(launch);
  free_wrapper(&w);
}
