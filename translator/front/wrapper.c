// wrapper.c: a launch inside small host functions, seen through.
//
// Training code often launches a kernel from a host function that computes the
// grid and launches, nothing else, and inference engines from a template
// `invoke` function, sometimes called through another:
//
//   void adamw_update(float *p, const float *g, ..., int n, cudaStream_t s) {
//     const int blocks = (n + 255) / 256;
//     adamw<<<blocks, 256, 0, s>>>(p, g, ..., n);
//   }
//   template <typename T> void invokeScale(T *x, float a, int n, cudaStream_t s) {
//     dim3 grid((n + 255) / 256);
//     scale<T><<<grid, 256, 0, s>>>(x, a, n);
//   }
//
// A region statement that is exactly a call of such a function defined in this
// file (`adamw_update(w, grads, ..., count, stream);`) is classified as that
// launch, its texts in the caller's terms: each parameter of the function
// stands for the call's argument, each local for its initializer, each
// template parameter for the instance's argument as spelled ("float"). The
// body must be declarations of initialized locals, then either the one launch
// or a call of another such function (seen through the same way, to any
// depth), and no text of it may have side effects (a call, ++, an assignment:
// with no other statement, nothing else can change a parameter or a local).
// Templates are read as the instance the call uses (libclang gives its body);
// a launch of a kernel template gets the instance's arguments written out. The
// launch's arguments and stream are used in the caller's scope, so they may
// read only the functions' parameters and locals (a global the function reads
// could be another variable of the same name there).
// Anything else (a second statement, a function in a header) leaves the call
// opaque.
#include "front/front.h"

#include "common/text.h"

#include <stdlib.h>
#include <string.h>

struct Wrapper;

// A name of a function seen through and what it stands for.
typedef struct Subst {
  CXSourceLocation at;       // where the parameter, local or template parameter is declared
  SrcRange range;            // the call's argument or the local's initializer
  const struct Wrapper *in;  // whose names the range reads (NULL: the region's, as written)
  char *fixed;               // a template argument as spelled, else NULL
  char *name;                // a template parameter's name (its uses in an instance are found by it)
  char *cast;                // the declared type, when the value's differs ("float" for an int 1)
  bool dim3;                 // a dim3 of one value: NAME.x is the value, NAME.y and NAME.z are 1
} Subst;

// One function of the chain, from the region's call down.
typedef struct Wrapper {
  const Frontend *fe;
  const struct Wrapper *up;  // the function calling this one, NULL for the region's call
  Subst *v;
  int n;
} Wrapper;

enum { WRAPPER_DEPTH = 8 };

static bool is_name(const char *t) {
  if (!*t || !(*t == '_' || (*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z'))) return false;
  for (; *t; t++)
    if (!(*t == '_' || (*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') || (*t >= '0' && *t <= '9'))) return false;
  return true;
}

// A number: digits, letters and dots ("256", "0.5f", "1e-8f" is not one: no sign).
static bool is_number(const char *t) {
  if (!(*t >= '0' && *t <= '9')) return false;
  for (; *t; t++)
    if (!(text_ident_char(*t) || *t == '.')) return false;
  return true;
}

static char *grouped(char *t) {
  if (is_name(t) || is_number(t)) return t;
  char *g;
  if (asprintf(&g, "(%s)", t) < 0) COCONET_BUG("out of memory");
  free(t);
  return g;
}

static const Subst *subst_of(const Wrapper *w, CXCursor decl) {
  CXSourceLocation at = clang_getCursorLocation(decl);
  for (int i = 0; i < w->n; i++)
    if (clang_equalLocations(w->v[i].at, at)) return &w->v[i];
  return NULL;
}

// A template parameter by its name: in an instance's body libclang gives a
// use of one as what it stands for (an integer literal, the type), not a reference.
static const Subst *template_param_named(const Wrapper *w, const char *name) {
  for (int i = 0; i < w->n; i++)
    if (w->v[i].name && strcmp(w->v[i].name, name) == 0) return &w->v[i];
  return NULL;
}

// A declaration a name reaches through a namespace or class of the function's
// (an enumerator, a constant, a helper): the same name may mean another thing
// or nothing in the caller. Names at file scope (and unscoped enumerators
// there) mean the same.
static bool scoped(CXCursor d) {
  for (CXCursor p = clang_getCursorSemanticParent(d); !clang_Cursor_isNull(p); p = clang_getCursorSemanticParent(p)) {
    enum CXCursorKind k = clang_getCursorKind(p);
    if (k == CXCursor_TranslationUnit) return false;
    if (k == CXCursor_EnumDecl && !clang_EnumDecl_isScoped(p)) continue;
    if (k == CXCursor_LinkageSpec) continue;
    return true;
  }
  return false;
}

// An object-like macro whose body names nothing (numbers and operators only).
static bool constant_macro(const Frontend *fe, CXCursor expansion) {
  CXCursor def = clang_getCursorReferenced(expansion);
  if (clang_getCursorKind(def) != CXCursor_MacroDefinition || clang_Cursor_isMacroFunctionLike(def)) return false;
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(fe->tu, clang_getCursorExtent(def), &toks, &n);
  bool constant = n > 1;
  for (unsigned i = 1; i < n; i++)  // token 0 is the macro's name
    constant &= clang_getTokenKind(toks[i]) != CXToken_Identifier && clang_getTokenKind(toks[i]) != CXToken_Keyword;
  clang_disposeTokens(fe->tu, toks, n);
  return constant;
}

static bool token_is(const Frontend *fe, const CXToken *t, const char *text) {
  CXString sp = clang_getTokenSpelling(fe->tu, *t);
  bool is = strcmp(clang_getCString(sp), text) == 0;
  clang_disposeString(sp);
  return is;
}

// The text of a range of w's body with every parameter, local and template
// parameter replaced by what it stands for, down to the region's terms
// (w NULL: the range is the region's own text). *foreign: a name that is not
// the functions' own (a global, a macro) was read.
static char *substituted(const Frontend *fe, const Wrapper *w, SrcRange r, bool *foreign) {
  if (!w) return fe_text(fe, r);
  CXSourceRange cr = clang_getRange(clang_getLocationForOffset(fe->tu, fe->file, r.begin.offset),
                                    clang_getLocationForOffset(fe->tu, fe->file, r.end.offset));
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(fe->tu, cr, &toks, &n);
  Text out = {0};
  text_add(&out, "");
  unsigned at = r.begin.offset;
  for (unsigned i = 0; i <= n; i++) {
    unsigned b = i < n ? fe_loc(fe, clang_getTokenLocation(fe->tu, toks[i])).offset : r.end.offset;
    unsigned e = i < n ? fe_loc(fe, clang_getRangeEnd(clang_getTokenExtent(fe->tu, toks[i]))).offset : r.end.offset;
    if (b >= r.end.offset && i < n) break;
    if (b > at) text_addn(&out, fe->src.buf + at, b - at);
    if (i == n) break;
    const Subst *s = NULL;
    // After `.`, `->` or `::`: a member or a qualified name, not one of the function's.
    bool qualified = i > 0 && (token_is(fe, &toks[i - 1], ".") || token_is(fe, &toks[i - 1], "->") ||
                               token_is(fe, &toks[i - 1], "::"));
    if (clang_getTokenKind(toks[i]) == CXToken_Identifier && !qualified) {
      CXCursor c = clang_getCursor(fe->tu, clang_getTokenLocation(fe->tu, toks[i]));
      // A macro may stand for anything, a parameter included: not the caller's to read,
      // unless it is a constant (`#define BLK 128`).
      if (clang_getCursorKind(c) == CXCursor_MacroExpansion && !constant_macro(fe, c)) *foreign = true;
      CXCursor d = clang_getCursorReferenced(c);
      if (!clang_Cursor_isNull(d)) s = subst_of(w, d);
      if (!s) {
        CXString sp = clang_getTokenSpelling(fe->tu, toks[i]);
        s = template_param_named(w, clang_getCString(sp));
        clang_disposeString(sp);
      }
      enum CXCursorKind dk = clang_getCursorKind(d);
      if (!s && (dk == CXCursor_VarDecl || dk == CXCursor_ParmDecl)) *foreign = true;
      if (!s && (dk == CXCursor_EnumConstantDecl || dk == CXCursor_FunctionDecl || dk == CXCursor_FunctionTemplate) &&
          scoped(d))
        *foreign = true;
    }
    // NAME.y of a dim3 of one value: 1u; NAME.x: the value, unsigned.
    char *member = s && s->dim3 && i + 2 < n && clang_getTokenKind(toks[i + 1]) == CXToken_Punctuation
                       ? fe_text(fe, (SrcRange){.begin = fe_loc(fe, clang_getTokenLocation(fe->tu, toks[i + 1])),
                                                .end = fe_loc(fe, clang_getRangeEnd(clang_getTokenExtent(
                                                                      fe->tu, toks[i + 2])))})
                       : NULL;
    bool x = member && strcmp(member, ".x") == 0, yz = member && (!strcmp(member, ".y") || !strcmp(member, ".z"));
    free(member);
    if (yz) {
      text_add(&out, "1u");
    } else if (s) {
      char *t = grouped(s->fixed ? strdup(s->fixed) : substituted(fe, s->in, s->range, foreign));
      // A dim3's lane is unsigned (std::min(n, block.x) must stay a min of unsigned values).
      const char *cast = x ? "unsigned" : s->cast;
      if (cast) {
        char *c = xasprintf("((%s)%s)", cast, t);
        free(t);
        t = c;
      }
      text_add(&out, t);
      free(t);
    } else {
      text_addn(&out, fe->src.buf + b, e - b);
    }
    if (x || yz) {
      i += 2;
      e = fe_loc(fe, clang_getRangeEnd(clang_getTokenExtent(fe->tu, toks[i]))).offset;
    }
    at = e;
  }
  clang_disposeTokens(fe->tu, toks, n);
  return out.s;
}

static char *canonical_spelling(CXType t) {
  CXString s = clang_getTypeSpelling(clang_getCanonicalType(t));
  char *r = strdup(clang_getCString(s));
  clang_disposeString(s);
  if (!r) COCONET_BUG("out of memory");
  return r;
}

static bool is_dim3(CXType t) {
  char *s = canonical_spelling(t);
  bool is = strcmp(s, "dim3") == 0 || strcmp(s, "const dim3") == 0;
  free(s);
  return is;
}

// The type a value of type `from` is converted to when it initializes decl,
// when the two differ and the conversion changes what the text computes
// (1 for a float parameter: `1 / world` must divide in float); NULL for pointers,
// references, dim3 and the same type.
static char *conversion(CXCursor decl, CXType from) {
  CXType to = clang_getCanonicalType(clang_getCursorType(decl));
  if (to.kind == CXType_Pointer || to.kind == CXType_LValueReference || to.kind == CXType_RValueReference ||
      is_dim3(to) || from.kind == CXType_Invalid)
    return NULL;
  char *a = canonical_spelling(to), *b = canonical_spelling(from);
  // const int and int hold the same value.
  const char *a0 = strncmp(a, "const ", 6) == 0 ? a + 6 : a, *b0 = strncmp(b, "const ", 6) == 0 ? b + 6 : b;
  bool same = strcmp(a0, b0) == 0;
  char *cast = same ? NULL : strdup(a0);
  free(a);
  free(b);
  return cast;
}

// The type of an expression before the implicit conversions around it
// (libclang shows them as an expression whose one written child spans the
// same text: an implicit cast, dim3's converting constructor).
static CXType written_type(CXCursor e) {
  for (;;) {
    FeKids k = fe_kids(e);
    CXSourceRange r = clang_getCursorExtent(e);
    CXCursor only = clang_getNullCursor();
    int written = 0;
    for (int i = 0; i < k.n && i < FE_KIDS; i++) {
      CXSourceRange kr = clang_getCursorExtent(k.v[i]);
      if (clang_Range_isNull(kr) || clang_equalLocations(clang_getRangeStart(kr), clang_getRangeEnd(kr))) continue;
      written++;
      only = k.v[i];
    }
    if (written != 1 || k.n > FE_KIDS || !clang_isExpression(clang_getCursorKind(only)) ||
        !clang_equalRanges(r, clang_getCursorExtent(only)))
      return clang_getCursorType(e);
    e = only;
  }
}

static void add(Wrapper *w, CXCursor decl, SrcRange range, const Wrapper *in, char *fixed, bool dim3) {
  Subst *grown = realloc(w->v, sizeof *w->v * (size_t)(w->n + 1));
  if (!grown) COCONET_BUG("out of memory");
  w->v = grown;
  w->v[w->n++] = (Subst){clang_getCursorLocation(decl), range, in, fixed, NULL, NULL, dim3};
}

static void free_wrapper(Wrapper *w) {
  for (int i = 0; i < w->n; i++) {
    free(w->v[i].fixed);
    free(w->v[i].name);
    free(w->v[i].cast);
  }
  free(w->v);
}

// Does the text of range r (in w's terms) have side effects, or read a name
// that is not the functions' own (*foreign)? pure: its calls are all pure.
static bool effects(const Frontend *fe, const Wrapper *w, SrcRange r, bool pure, bool *foreign) {
  char *t = substituted(fe, w, r, foreign);
  bool yes = !*t || (pure ? source_assigns(t) : source_has_effects(t));
  free(t);
  return yes;
}

static bool pure(CXCursor e, int depth);

// Does expression e assign or increment (its tokens, wherever it is written)?
static bool assigns(CXCursor e) {
  CXTranslationUnit tu = clang_Cursor_getTranslationUnit(e);
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(tu, clang_getCursorExtent(e), &toks, &n);
  static const char *const ops[] = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--"};
  bool yes = false;
  for (unsigned i = 0; i < n && !yes; i++) {
    if (clang_getTokenKind(toks[i]) != CXToken_Punctuation) continue;
    CXString t = clang_getTokenSpelling(tu, toks[i]);
    for (size_t k = 0; k < sizeof ops / sizeof *ops && !yes; k++) yes = strcmp(clang_getCString(t), ops[k]) == 0;
    clang_disposeString(t);
  }
  clang_disposeTokens(tu, toks, n);
  return yes;
}

static enum CXChildVisitResult find_impure_call(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  int *depth = data;
  if (clang_getCursorKind(c) != CXCursor_CallExpr) return CXChildVisit_Recurse;
  CXCursor fn = clang_getCursorReferenced(c);
  enum CXCursorKind k = clang_getCursorKind(fn);
  char *name = fe_spelling(fn);
  CXCursor scope = clang_getCursorSemanticParent(fn);
  char *ns = fe_spelling(scope);
  bool global = clang_getCursorKind(scope) == CXCursor_TranslationUnit ||
                (clang_getCursorKind(scope) == CXCursor_Namespace && strcmp(ns, "std") == 0);
  bool ok = k == CXCursor_Constructor ||
            (k == CXCursor_FunctionDecl && global && (!strcmp(name, "min") || !strcmp(name, "max")));
  free(name);
  free(ns);
  if (!ok && k == CXCursor_FunctionDecl && *depth < 4) {
    // A helper whose body is `return e;` with e pure (ceil_div, div_up).
    CXCursor def = clang_getCursorDefinition(fn);
    FeKids body = clang_Cursor_isNull(def) ? (FeKids){.n = 0} : fe_kids(def);
    FeKids stmts = body.n && clang_getCursorKind(body.last) == CXCursor_CompoundStmt ? fe_kids(body.last)
                                                                                   : (FeKids){.n = 0};
    FeKids ret = stmts.n == 1 && clang_getCursorKind(stmts.v[0]) == CXCursor_ReturnStmt ? fe_kids(stmts.v[0])
                                                                                       : (FeKids){.n = 0};
    ok = ret.n == 1 && !assigns(ret.v[0]) && pure(ret.v[0], *depth + 1);
  }
  if (!ok) {
    *depth = -1;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

// Does expression e call only pure functions: min and max (std:: or the host
// overloads), constructors (dim3), helpers returning a pure expression?
// (Assignments and ++ are the text's to say: source_assigns.)
static bool pure(CXCursor e, int depth) {
  int d = depth;
  if (clang_getCursorKind(e) == CXCursor_CallExpr) {
    find_impure_call(e, e, &d);
    if (d < 0) return false;
  }
  clang_visitChildren(e, find_impure_call, &d);
  return d >= 0;
}

// A text of the launch, in the caller's terms. The generated code uses it in
// the caller's scope, where a name the function reads from its own scope (a
// global, an enumerator of its namespace) may name another thing.
static void substitute_piece(const Wrapper *w, Piece *p, const char **why) {
  if (!p->text) return;
  bool foreign = false;
  char *t = substituted(w->fe, w, p->range, &foreign);
  // What the names stand for was checked where they are declared (arguments, locals' initializers).
  if (source_has_effects(p->text) && !*why) *why = "a text of its launch has side effects (a call, ++, an assignment)";
  if (foreign && !*why)
    *why = "a text of its launch reads a variable that is not the function's parameter or local, a name of its "
           "namespace or class, or a macro";
  // A whole argument needs no parentheses ("g + n" is read as a buffer plus an
  // offset, as written in a launch), unless a comma is the outermost operator.
  char *u = strdup(t);
  if (!u) COCONET_BUG("out of memory");
  text_unwrap(u);
  int depth = 0;
  bool comma = false;
  for (const char *c = u; *c; c++) {
    depth += *c == '(' || *c == '[' || *c == '{' ? 1 : *c == ')' || *c == ']' || *c == '}' ? -1 : 0;
    comma |= depth == 0 && *c == ',';
  }
  if (!comma) {
    free(t);
    t = u;
  } else {
    free(u);
  }
  free(p->text);
  p->text = t;
}

// A local's initializer: `int b = E;` -> E; `dim3 grid(E);` -> E (a dim3 of one
// value is that value converted; *dim3 set); NULL range (begin.file NULL) for any other.
static SrcRange initializer(const Frontend *fe, CXCursor var, bool *dim3, CXCursor *expr) {
  FeKids init = fe_kids(var);
  SrcRange none = {0};
  if (clang_getCursorKind(var) != CXCursor_VarDecl || !init.n) return none;
  CXCursor e = init.last;
  *expr = e;
  SrcRange r = fe_range(fe, clang_getCursorExtent(e));
  // A constructor call written as the declaration (`dim3 grid(E)`) starts at the variable's name.
  if (r.begin.offset <= fe_loc(fe, clang_getCursorLocation(var)).offset) {
    if (!is_dim3(clang_getCursorType(var))) return none;
    while (clang_getCursorKind(e) == CXCursor_UnexposedExpr && fe_kids(e).n == 1) e = fe_kids(e).v[0];
    if (clang_getCursorKind(e) != CXCursor_CallExpr) return none;
    // Default arguments (dim3's y and z) have no place in the source.
    int n = clang_Cursor_getNumArguments(e), written = 0;
    for (int i = 0; i < n; i++)
      written += fe_range(fe, clang_getCursorExtent(clang_Cursor_getArgument(e, (unsigned)i))).begin.file != NULL;
    if (written != 1) return none;
    *dim3 = true;
    *expr = clang_Cursor_getArgument(e, 0);
    return fe_range(fe, clang_getCursorExtent(*expr));
  }
  return r;
}

// The function a call statement calls, when it is a host function of this file
// with a body (a template's instance: libclang gives the instance's body).
static CXCursor host_function(const Frontend *fe, CXCursor call) {
  CXCursor none = clang_getNullCursor();
  if (clang_getCursorKind(call) != CXCursor_CallExpr) return none;
  CXCursor callee = clang_getCursorReferenced(call);
  if (clang_getCursorKind(callee) != CXCursor_FunctionDecl || cursor_is_kernel(callee)) return none;
  CXCursor fn = clang_getCursorDefinition(callee);
  if (clang_Cursor_isNull(fn) || !fe_in_main_file(fe, clang_getCursorLocation(fn))) return none;
  return fn;
}

// Its name as the explanation gives it: "invokeScale<float>" for a template's instance.
static char *function_name(CXCursor fn) {
  char *name = fe_spelling(fn), *args = NULL;
  if (!clang_Cursor_isNull(clang_getSpecializedCursorTemplate(fn)) && (args = template_args_of(fn))) {
    char *full = xasprintf("%s<%s>", name, args);
    free(name);
    name = full;
  }
  free(args);
  return name;
}

typedef struct Reach {
  const Frontend *fe;
  int depth;
  int *budget;  // functions left to read (recursion and fan-out stay bounded)
  bool yes;
} Reach;

static bool reaches(const Frontend *fe, CXCursor fn, int depth, int *budget);

static enum CXChildVisitResult find_launching_call(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Reach *r = data;
  if (clang_getCursorKind(c) == CXCursor_CallExpr) {
    CXCursor fn = host_function(r->fe, c);
    if (!clang_Cursor_isNull(fn) && reaches(r->fe, fn, r->depth + 1, r->budget)) r->yes = true;
  }
  return r->yes ? CXChildVisit_Break : CXChildVisit_Recurse;
}

// Does fn launch a kernel, itself or through the functions of this file it calls?
// (Only then is a word on why a call of it is not seen through worth saying.)
static bool reaches(const Frontend *fe, CXCursor fn, int depth, int *budget) {
  if (--*budget < 0) return false;
  char *text = fe_text(fe, fe_range(fe, clang_getCursorExtent(fn)));
  Reach r = {fe, depth, budget, strstr(text, "<<<") != NULL};
  free(text);
  if (!r.yes && depth < WRAPPER_DEPTH) clang_visitChildren(fn, find_launching_call, &r);
  return r.yes;
}

static bool launches(const Frontend *fe, CXCursor fn, int depth) {
  int budget = 64;
  return reaches(fe, fn, depth, &budget);
}

typedef struct Seen {
  const char *why;   // why not seen through, or NULL
  bool launches;     // a function of the chain launches a kernel (worth a word when refused)
  bool is_template;  // a function of the chain is a template's instance
  char *path;        // the functions below the region's call ("invokeB, invokeC"), or NULL
} Seen;

// See through the call `call` of fn (its arguments in up's terms) down to one
// launch, its texts in the region's terms; NULL (and sn->why) otherwise.
static Launch *see(const Frontend *fe, const Wrapper *up, CXCursor call, CXCursor fn, int depth, Seen *sn) {
  int nparams = clang_Cursor_getNumArguments(fn), nargs = clang_Cursor_getNumArguments(call);
  FeKids k = fe_kids(fn);
  CXCursor body = k.n ? k.last : clang_getNullCursor();
  if (nparams < 0 || nparams != nargs || clang_getCursorKind(body) != CXCursor_CompoundStmt) {
    sn->why = "it takes other arguments than the call gives (default arguments, variadic)";
    return NULL;
  }
  sn->launches |= launches(fe, fn, depth);
  Wrapper w = {fe, up, NULL, 0};
  bool foreign = false;
  for (int i = 0; i < nparams; i++) {
    CXCursor arg = clang_Cursor_getArgument(call, (unsigned)i), param = clang_Cursor_getArgument(fn, (unsigned)i);
    SrcRange r = fe_range(fe, clang_getCursorExtent(arg));
    if (effects(fe, up, r, false, &foreign) && !sn->why) sn->why = "an argument of the call has side effects (a call, ++, an assignment)";
    // A dim3 parameter given one value (`256`): param.x is that value.
    CXType at = written_type(arg);
    add(&w, param, r, up, NULL, is_dim3(clang_getCursorType(param)) && !is_dim3(at));
    w.v[w.n - 1].cast = conversion(param, at);
  }
  CXCursor tmpl = clang_getSpecializedCursorTemplate(fn);
  if (!clang_Cursor_isNull(tmpl)) {
    sn->is_template = true;
    FeKids tps = fe_kids(tmpl);
    for (int i = 0, arg = 0; i < tps.n && i < FE_KIDS; i++) {
      enum CXCursorKind tk = clang_getCursorKind(tps.v[i]);
      if (tk != CXCursor_TemplateTypeParameter && tk != CXCursor_NonTypeTemplateParameter &&
          tk != CXCursor_TemplateTemplateParameter)
        continue;
      char *spelled = template_arg_spelling(fn, (unsigned)arg++);
      if (!spelled && !sn->why) sn->why = "a template argument of the call is neither a type nor an integer";
      if (spelled) {
        add(&w, tps.v[i], (SrcRange){0}, NULL, spelled, false);
        w.v[w.n - 1].name = fe_spelling(tps.v[i]);
      }
    }
  }
  FeKids stmts = fe_kids(body);
  Launch *launch = NULL;
  bool last = false;
  for (int i = 0; i < stmts.n && i < FE_KIDS && !sn->why; i++) {
    CXCursor st = stmts.v[i];
    CXCursor inner = host_function(fe, st);
    if (last) {
      sn->why = "its body has a statement after the launch";
    } else if (clang_getCursorKind(st) == CXCursor_DeclStmt) {
      FeKids vars = fe_kids(st);
      for (int j = 0; j < vars.n && j < FE_KIDS && !sn->why; j++) {
        bool dim3 = false;
        CXCursor e = clang_getNullCursor();
        SrcRange r = initializer(fe, vars.v[j], &dim3, &e);
        if (!r.begin.file) sn->why = "its body declares a local without an initializer of one value";
        else if (effects(fe, &w, r, pure(e, 0), &foreign)) sn->why = "a local's initializer has side effects (a call, ++, an assignment)";
        else {
          add(&w, vars.v[j], r, &w, NULL, dim3);
          if (!dim3) w.v[w.n - 1].cast = conversion(vars.v[j], written_type(e));
        }
      }
    } else if (!clang_Cursor_isNull(inner) && depth >= WRAPPER_DEPTH) {
      sn->why = "it calls host functions more than 8 deep (or itself)";
    } else if (!clang_Cursor_isNull(inner)) {
      last = true;
      char *name = function_name(inner), *path = sn->path;
      sn->path = path ? xasprintf("%s, %s", path, name) : strdup(name);
      free(path);
      free(name);
      launch = see(fe, &w, st, inner, depth + 1, sn);
      // The call must be the whole statement: the body's last statement is the call itself.
    } else {
      last = true;
      Stmt *s = classify_stmt(fe, st);
      if (s->kind == STMT_LAUNCH && s->wrap == WRAP_NONE && !s->launch->wrapper) {
        launch = s->launch;
        s->launch = NULL;
        s->args = NULL;
        s->nargs = 0;
        // The generated code uses the grid and block in the caller too (the launch it falls back to, a
        // thread's coordinates).
        Piece *conf[] = {&launch->grid, &launch->block, &launch->shmem, &launch->stream};
        for (int c = 0; c < 4; c++) substitute_piece(&w, conf[c], &sn->why);
        for (int a = 0; a < launch->nargs; a++) substitute_piece(&w, &launch->args[a], &sn->why);
      } else {
        sn->why = "its body is not initialized locals and then one kernel launch";
      }
      stmt_free(s);
    }
  }
  if (!sn->why && (!launch || stmts.n > FE_KIDS)) sn->why = "its body is not initialized locals and then one kernel launch";
  free_wrapper(&w);
  if (sn->why && launch) {
    launch_free(launch);
    launch = NULL;
  }
  return launch;
}

// A host function of a header of the user's that launches a kernel: say why a
// call of it is not seen through.
static void note_header_function(const Frontend *fe, Stmt *s) {
  CXCursor call = s->cursor;
  if (clang_getCursorKind(call) != CXCursor_CallExpr) return;
  CXCursor callee = clang_getCursorReferenced(call);
  if (clang_getCursorKind(callee) != CXCursor_FunctionDecl || cursor_is_kernel(callee)) return;
  CXCursor fn = clang_getCursorDefinition(callee);
  CXSourceLocation at = clang_getCursorLocation(fn);
  if (clang_Cursor_isNull(fn) || fe_in_main_file(fe, at) || !fe_in_user_code(fe, at)) return;
  CXSourceRange r = clang_getCursorExtent(fn);
  char *text = fe_between(fe, clang_getRangeStart(r), clang_getRangeEnd(r));
  bool launches = strstr(text, "<<<") != NULL;
  free(text);
  if (!launches) return;
  char *name = function_name(fn);
  SrcLoc loc = fe_any_loc(fe, at);
  s->why_opaque = xasprintf("the call of '%s' (%s:%u:%u) is not seen through as the kernel launch inside it: the "
                            "function is defined in a header; coconet sees through host functions defined in the "
                            "file it translates (define the function there, or launch the kernel in the region)",
                            name, loc.file ? loc.file : "?", loc.line, loc.col);
  free(name);
}

void wrapper_see_through(const Frontend *fe, Stmt *s) {
  CXCursor call = s->cursor;
  CXCursor fn = host_function(fe, call);
  if (clang_Cursor_isNull(fn)) {
    note_header_function(fe, s);
    return;
  }
  Seen sn = {0};
  Launch *l = see(fe, NULL, call, fn, 1, &sn);
  // A launch of a kernel template inside a template: its arguments written out as the instance's.
  if (l && sn.is_template && l->def && l->def->is_template && l->def->args) {
    free(l->template_args);
    l->template_args = strdup(l->def->args);
  }
  // The statement must be the call and its ';', nothing around it.
  SrcRange cr = fe_range(fe, clang_getCursorExtent(call));
  if (!sn.why && cr.begin.offset != s->range.begin.offset) sn.why = "the statement is more than the call";
  char *name = function_name(fn);
  SrcLoc at = fe_loc(fe, clang_getCursorLocation(fn));
  if (sn.why && sn.launches) {
    s->why_opaque = xasprintf("the call of '%s' (%s:%u:%u) is not seen through as the kernel launch inside it: %s%s%s%s; "
                              "coconet sees through a host function whose body is initialized locals and then one "
                              "launch, or one call of another such function",
                              name, at.file ? at.file : "?", at.line, at.col, sn.path ? "(in '" : "",
                              sn.path ? sn.path : "", sn.path ? "') " : "", sn.why);
  }
  if (sn.why || !l) {
    free(name);
    free(sn.path);
    if (l) launch_free(l);
    return;
  }
  s->kind = STMT_LAUNCH;
  s->launch = l;
  l->wrapper = name;
  l->wrapper_path = sn.path;
  l->wrapper_loc = at;
  s->callee = strdup(l->kernel);
  s->call_range = cr;
  s->args = l->args;
  s->nargs = l->nargs;
}
