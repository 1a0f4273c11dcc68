// instance_region.c: a region in a template whose statements depend on the
// template's parameters, read in each instance the main file makes.
//
// libclang shows a template's pattern only: there a call of a function
// template with `T *`, a datatype from a trait of T, a kernel template
// launched with <T> are unresolved, and coconet reads calls resolved. For each
// instance of the template that the main file makes (an explicit
// instantiation `template class Decoder<half>;`, a variable or member of type
// `Decoder<float>`, a call `all_reduce_mean(grad, ...)` deducing T), the file
// is parsed again with the template's head replaced, in place and padded to
// its length, by a macro that declares the parameters:
//
//   template <typename T>                       _Coconet_bind
//   void Decoder<T>::forward(T *out, ...)  ->   void Decoder<T>::forward(T *out, ...)
//   with -D'_Coconet_bind=typedef __half T; template <>'
//
// A member defined outside its class becomes the instance's explicit
// specialization; a function template, or a class template whose member is
// defined in the class, a plain function or class of the bound types. Every
// offset is the original's, and the analysis reads the region as that
// instance compiles it. The parse's errors outside the region's function are
// the template's other uses, which no longer fit it: not the region's.
#include "front/front.h"

#include "common/text.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_INSTANCES = 8, MAX_PARAMS = 16 };

#define BIND_MACRO "_Coconet_bind"

static enum CXCursorKind kind_of(CXCursor c) { return clang_getCursorKind(c); }

static bool is_class(CXCursor c) {
  enum CXCursorKind k = kind_of(c);
  return k == CXCursor_StructDecl || k == CXCursor_ClassDecl || k == CXCursor_UnionDecl;
}

// What the region's function is in: the template whose instances the file
// makes, and the declaration whose head an instance replaces.
typedef struct Shape {
  CXCursor tmpl;        // the template: a function template or a class template
  CXCursor head_of;     // whose `template <...>` is replaced: tmpl, or a member defined out of its class
  bool specialize;      // the head becomes `template <>` too (a member defined out of its class)
  CXCursor params[MAX_PARAMS + 1];
  int nparams;
  unsigned begin, end;  // the head's bytes
  SrcRange decls[8];    // a class template made a plain class: its other declarations in the main file
  int ndecls;           // (`template <typename T> class Decoder;`), blanked too
} Shape;

// The declarations of class template sh->tmpl but its definition, in the main
// file (their ';' included), into sh->decls.
static enum CXChildVisitResult find_decls(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  void **p = data;
  const Frontend *fe = p[0];
  Shape *sh = p[1];
  if (kind_of(c) == CXCursor_Namespace) return CXChildVisit_Recurse;
  if (kind_of(c) != CXCursor_ClassTemplate || clang_isCursorDefinition(c) || sh->ndecls == 8 ||
      !clang_equalCursors(clang_getCanonicalCursor(c), clang_getCanonicalCursor(sh->tmpl)) ||
      !fe_in_main_file(fe, clang_getCursorLocation(c)))
    return CXChildVisit_Continue;
  SrcRange r = fe_range(fe, clang_getCursorExtent(c));
  while (r.end.offset < fe->src.len && fe->src.buf[r.end.offset] != ';') r.end.offset++;
  sh->decls[sh->ndecls++] = r;
  return CXChildVisit_Continue;
}

static char *shape_why(const Frontend *fe, CXCursor fn, Shape *sh) {
  CXCursor parent = clang_getCursorSemanticParent(fn);
  bool out_of_class = !clang_equalCursors(clang_getCursorLexicalParent(fn), parent);
  if (kind_of(fn) == CXCursor_FunctionTemplate) {
    if (kind_of(parent) == CXCursor_ClassTemplate || kind_of(parent) == CXCursor_ClassTemplatePartialSpecialization)
      return strdup("it is in a member template of a class template");
    sh->tmpl = sh->head_of = fn;
    sh->specialize = is_class(parent) && out_of_class;
  } else if (kind_of(parent) == CXCursor_ClassTemplate) {
    CXCursor outer = clang_getCursorSemanticParent(parent);
    if (kind_of(outer) == CXCursor_ClassTemplate || is_class(outer))
      return strdup("its class template is nested in a class");
    sh->tmpl = parent;
    sh->head_of = out_of_class ? fn : parent;
    sh->specialize = out_of_class;
    void *find[2] = {(void *)fe, sh};
    if (!out_of_class) clang_visitChildren(clang_getTranslationUnitCursor(fe->tu), find_decls, find);
  } else if (kind_of(parent) == CXCursor_ClassTemplatePartialSpecialization) {
    return strdup("it is in a partial specialization of a class template");
  } else {
    return strdup("it is in a class nested in a template, or a lambda in one");
  }
  sh->nparams = template_params(sh->head_of, sh->params, MAX_PARAMS + 1);
  if (sh->nparams <= 0) return strdup("its template has a template template parameter");
  if (sh->nparams > MAX_PARAMS) return xasprintf("its template has more than %d parameters", MAX_PARAMS);
  SrcRange r = fe_range(fe, clang_getCursorExtent(sh->head_of));
  sh->begin = r.begin.offset;
  sh->end = template_head_end(&fe->src, sh->params[sh->nparams - 1]);
  if (!r.begin.file || sh->end <= sh->begin || sh->end - sh->begin < sizeof BIND_MACRO ||
      strncmp(fe->src.buf + sh->begin, "template", 8) != 0)
    return strdup("its template's head is not written in this file as 'template <...>'");
  return NULL;
}

// What in the region depends on the template's parameters: nothing, only
// types (`T *x` passed to a kernel of floats: the pattern reads as the
// instance would), or a call the parameters decide (an overloaded or
// templated name called with `T`: the pattern does not resolve it).
enum { DEPENDS_NOT, DEPENDS_TYPES, DEPENDS_CALLS };

static enum CXChildVisitResult find_dependent(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  int *level = data;
  enum CXTypeKind k = clang_getCursorType(c).kind;
  // (A function template named with the parameters, `scaleBy<T>`, is resolved only in an instance too.)
  bool unresolved = kind_of(c) == CXCursor_OverloadedDeclRef ||
                    (kind_of(c) == CXCursor_CallExpr && k == CXType_Dependent &&
                     clang_Cursor_isNull(clang_getCursorReferenced(c))) ||
                    (kind_of(c) == CXCursor_DeclRefExpr && kind_of(clang_getCursorReferenced(c)) == CXCursor_FunctionTemplate);
  if (unresolved) *level = DEPENDS_CALLS;
  else if (clang_isExpression(kind_of(c)) && (k == CXType_Dependent || k == CXType_Overload) && !*level)
    *level = DEPENDS_TYPES;
  return *level == DEPENDS_CALLS ? CXChildVisit_Break : CXChildVisit_Recurse;
}

static int depends(const Region *r) {
  int level = DEPENDS_NOT;
  for (const Stmt *s = r->stmts; s && level != DEPENDS_CALLS; s = s->next) {
    find_dependent(s->cursor, s->cursor, &level);
    if (level != DEPENDS_CALLS) clang_visitChildren(s->cursor, find_dependent, &level);
  }
  return level;
}

// One instance the main file makes: its arguments as code spells them.
typedef struct Inst {
  char *args[MAX_PARAMS];
  char *name;  // instance_name's suffix: what tells instances apart
} Inst;

typedef struct Found {
  const Frontend *fe;
  const Shape *sh;
  Inst v[MAX_INSTANCES];
  int n;
  int more;  // instances past MAX_INSTANCES (they run the region as written)
} Found;

static bool is_specialization_of(CXCursor d, CXCursor tmpl) {
  CXCursor of = clang_Cursor_isNull(d) ? d : clang_getSpecializedCursorTemplate(d);
  return !clang_Cursor_isNull(of) &&
         clang_equalCursors(clang_getCanonicalCursor(of), clang_getCanonicalCursor(tmpl));
}

// The name of instance <args> in generated symbols: "half" for <__half>, "float_4" for <float, 4>.
static char *args_name(char *const *args, int n) {
  Text t = {0};
  text_add(&t, "");
  for (int i = 0; i < n; i++) {
    if (i) text_add(&t, "_");
    text_add(&t, args[i]);
  }
  char *out = t.s;
  for (const char *p = t.s; *p; p++) {
    bool word = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9');
    if (word) *out++ = *p;
    else if (out > t.s && out[-1] != '_') *out++ = '_';
  }
  while (out > t.s && out[-1] == '_') out--;
  *out = '\0';
  return t.s;
}

// Add the instance of these arguments (taken), unless the file's other uses
// made it already; its name told apart from the others' (<-1> and <1>: "1", "1_2").
static void add_args(Found *f, char **args) {
  bool seen = false;
  for (int i = 0; i < f->n && !seen; i++) {
    seen = true;
    for (int k = 0; k < f->sh->nparams && seen; k++) seen = strcmp(f->v[i].args[k], args[k]) == 0;
  }
  if (seen || f->n == MAX_INSTANCES) {
    f->more += !seen;
    for (int i = 0; i < f->sh->nparams; i++) free(args[i]);
    return;
  }
  char *base = args_name(args, f->sh->nparams), *name = strdup(base);
  for (int k = 2, taken = 1; taken; k++) {
    taken = 0;
    for (int i = 0; i < f->n; i++) taken |= strcmp(f->v[i].name, name) == 0;
    if (taken) {
      free(name);
      name = xasprintf("%s_%d", base, k);
    }
  }
  free(base);
  memcpy(f->v[f->n].args, args, sizeof *args * (size_t)f->sh->nparams);
  f->v[f->n++].name = name;
}

// An explicit specialization of the class (`template <> class Decoder<int8_t> { ... };`) is
// a class of its own, not an instance of the template's members.
static bool explicit_specialization(const Frontend *fe, CXCursor decl) {
  if (!fe_in_main_file(fe, clang_getCursorLocation(decl)) || !clang_isCursorDefinition(decl)) return false;
  char *text = fe_cursor_text(fe, decl);
  const char *p = text;
  bool spec = strncmp(p, "template", 8) == 0;
  for (p += 8; spec && (*p == ' ' || *p == '\t' || *p == '\n'); p++) {}
  spec = spec && *p == '<';
  for (p++; spec && (*p == ' ' || *p == '\t' || *p == '\n'); p++) {}
  spec = spec && *p == '>';
  free(text);
  return spec;
}

static void add_instance(Found *f, CXCursor decl) {
  if (clang_Cursor_getNumTemplateArguments(decl) != f->sh->nparams || explicit_specialization(f->fe, decl)) return;
  char *args[MAX_PARAMS] = {0};
  bool ok = true;
  for (int i = 0; i < f->sh->nparams && ok; i++) {
    args[i] = template_arg_spelling(decl, (unsigned)i);
    // A use in a template (`Decoder<T>`) is no instance.
    ok = args[i] && !strstr(args[i], "type-parameter");
  }
  if (ok) {
    add_args(f, args);
    return;
  }
  for (int i = 0; i < f->sh->nparams; i++) free(args[i]);
}

static bool spelled_as(CXTranslationUnit tu, CXToken t, const char *want) {
  CXString s = clang_getTokenSpelling(tu, t);
  bool same = strcmp(clang_getCString(s), want) == 0;
  clang_disposeString(s);
  return same;
}

// The template arguments written from the token after '<' (at) to its '>'
// (taken: the caller frees them); how many, -1 when there is no '>'.
static int written_args(CXTranslationUnit tu, CXToken *t, unsigned n, unsigned at, char **args) {
  int nargs = 0, depth = 0;
  Text arg = {0};
  unsigned i = at;
  for (; i < n && nargs < MAX_PARAMS; i++) {
    bool close = spelled_as(tu, t[i], ">"), comma = spelled_as(tu, t[i], ",");
    if ((close || comma) && depth == 0) {
      args[nargs++] = arg.s ? arg.s : strdup("");
      arg = (Text){0};
      if (close) break;
      continue;
    }
    depth += spelled_as(tu, t[i], "<") || spelled_as(tu, t[i], "(");
    depth -= spelled_as(tu, t[i], ">") || spelled_as(tu, t[i], ")");
    CXString s = clang_getTokenSpelling(tu, t[i]);
    if (arg.s && clang_getTokenKind(t[i]) != CXToken_Punctuation) text_add(&arg, " ");
    text_add(&arg, clang_getCString(s));
    clang_disposeString(s);
  }
  free(arg.s);
  if (i < n) return nargs;
  for (int k = 0; k < nargs; k++) free(args[k]);
  return -1;
}

// The instance whose arguments follow `NAME <` in tokens [from, n), before a ';'.
static void add_written(Found *f, CXToken *t, unsigned n, unsigned from) {
  CXTranslationUnit tu = f->fe->tu;
  char *name = fe_spelling(f->sh->tmpl);
  unsigned i = from;
  for (; i + 1 < n && !spelled_as(tu, t[i], ";"); i++)
    if (clang_getTokenKind(t[i]) == CXToken_Identifier && spelled_as(tu, t[i], name) && spelled_as(tu, t[i + 1], "<"))
      break;
  free(name);
  if (i + 1 >= n || spelled_as(tu, t[i], ";")) return;
  char *args[MAX_PARAMS] = {0};
  int nargs = written_args(tu, t, n, i + 2, args);
  if (nargs == f->sh->nparams) add_args(f, args);
  else
    for (int k = 0; k < nargs; k++) free(args[k]);
}

// A call of a member function template (libclang gives no template arguments
// of a method): the arguments written in the call (`c.act<float, 256>(x, n)`),
// else each type parameter deduced from a parameter whose type names it once
// (`T *x` called with a `float *`: its type with T's text cut out around).
static void add_member_call(Found *f, CXCursor call, CXCursor spec) {
  CXTranslationUnit tu = f->fe->tu;
  CXToken *t = NULL;
  unsigned n = 0;
  clang_tokenize(tu, clang_getCursorExtent(call), &t, &n);
  int before = f->n + f->more;
  if (n) add_written(f, t, n, 0);
  clang_disposeTokens(tu, t, n);
  if (f->n + f->more > before) return;
  char *args[MAX_PARAMS] = {0};
  CXCursor parms[32];
  int found = 0, nparms = fe_kids_of_kind(f->sh->tmpl, CXCursor_ParmDecl, CXCursor_ParmDecl, CXCursor_ParmDecl, parms, 32);
  CXType spec_type = clang_getCursorType(spec);
  for (int k = 0; k < f->sh->nparams; k++) {
    char *pname = fe_spelling(f->sh->params[k]);
    for (int j = 0; j < nparms && !args[k] && kind_of(f->sh->params[k]) == CXCursor_TemplateTypeParameter && *pname;
         j++) {
      CXString ps = clang_getTypeSpelling(clang_getCursorType(parms[j]));
      CXString ss = clang_getTypeSpelling(clang_getCanonicalType(clang_getArgType(spec_type, (unsigned)j)));
      const char *pat = clang_getCString(ps), *got = clang_getCString(ss);
      const char *at = text_find_word(pat, pname);
      size_t pre = at ? (size_t)(at - pat) : 0, post = at ? strlen(at + strlen(pname)) : 0;
      if (at && !text_find_word(at + 1, pname) && strlen(got) > pre + post && strncmp(got, pat, pre) == 0 &&
          strcmp(got + strlen(got) - post, at + strlen(pname)) == 0) {
        args[k] = strndup(got + pre, strlen(got) - pre - post);
        found++;
      }
      clang_disposeString(ps);
      clang_disposeString(ss);
    }
    free(pname);
  }
  if (found == f->sh->nparams) {
    for (int k = 0; k < found; k++) args[k] = template_global_name(args[k]);
    add_args(f, args);
    return;
  }
  for (int k = 0; k < f->sh->nparams; k++) free(args[k]);
}

// An explicit instantiation of a function template, which libclang does not show:
// `template void NAME<ARGS>(...);` read from the file's tokens.
static void add_explicit(Found *f, CXToken *t, unsigned n, unsigned at) { add_written(f, t, n, at + 1); }

static void find_explicit(Found *f) {
  CXTranslationUnit tu = f->fe->tu;
  CXSourceRange all = clang_getRange(clang_getLocationForOffset(tu, f->fe->file, 0),
                                     clang_getLocationForOffset(tu, f->fe->file, (unsigned)f->fe->src.len));
  CXToken *t = NULL;
  unsigned n = 0;
  clang_tokenize(tu, all, &t, &n);
  for (unsigned i = 0; i + 1 < n; i++)
    if (clang_getTokenKind(t[i]) == CXToken_Keyword && spelled_as(tu, t[i], "template") &&
        !spelled_as(tu, t[i + 1], "<"))
      add_explicit(f, t, n, i);
  clang_disposeTokens(tu, t, n);
}

static enum CXChildVisitResult find_instances(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Found *f = data;
  if (!fe_in_main_file(f->fe, clang_getCursorLocation(c)) && kind_of(c) != CXCursor_Namespace)
    return CXChildVisit_Continue;
  if (kind_of(f->sh->tmpl) == CXCursor_FunctionTemplate) {
    CXCursor d = clang_getCursorReferenced(c);
    enum CXCursorKind k = kind_of(c);
    if ((k == CXCursor_CallExpr || k == CXCursor_DeclRefExpr || k == CXCursor_MemberRefExpr) &&
        is_specialization_of(d, f->sh->tmpl)) {
      if (kind_of(d) == CXCursor_FunctionDecl) add_instance(f, d);
      else if (k == CXCursor_CallExpr) add_member_call(f, c, d);
    }
    return CXChildVisit_Recurse;
  }
  if (is_class(c) && is_specialization_of(c, f->sh->tmpl)) add_instance(f, c);  // an explicit instantiation
  CXType t = clang_getCanonicalType(clang_getCursorType(c));
  while (t.kind == CXType_Pointer || t.kind == CXType_LValueReference || t.kind == CXType_RValueReference)
    t = clang_getCanonicalType(clang_getPointeeType(t));
  CXCursor d = clang_getTypeDeclaration(t);
  if (t.kind != CXType_Invalid && is_specialization_of(d, f->sh->tmpl)) add_instance(f, d);
  return CXChildVisit_Recurse;
}

// A name the region calls that the main file declares again after the
// template: C++ looks a template's dependent calls up where it is instantiated
// too (an overload found by its arguments' types, a specialization declared
// later), and the instance parse reads the region where the template is
// defined, so it could call another function than the instance does.
typedef struct Called {
  const Frontend *fe;
  char *names[64];
  CXCursor decls[64];  // the functions of those names the region calls (their other declarations are no others)
  int n, ndecls;
  unsigned after;   // the template's end
  CXCursor later;   // a declaration after it of a called name
  bool deep;        // also the calls in the bodies of the templates called
} Called;

static void add_called(Called *c, const char *name) {
  for (int i = 0; i < c->n; i++)
    if (strcmp(c->names[i], name) == 0) return;
  if (c->n < 64 && *name) c->names[c->n++] = strdup(name);
}

static enum CXChildVisitResult collect_calls(CXCursor x, CXCursor parent, CXClientData data) {
  (void)parent;
  Called *c = data;
  enum CXCursorKind k = kind_of(x);
  if (k != CXCursor_OverloadedDeclRef && k != CXCursor_DeclRefExpr) return CXChildVisit_Recurse;
  CXCursor d = k == CXCursor_OverloadedDeclRef ? clang_getOverloadedDecl(x, 0) : clang_getCursorReferenced(x);
  enum CXCursorKind dk = kind_of(d);
  if (dk != CXCursor_FunctionDecl && dk != CXCursor_FunctionTemplate) return CXChildVisit_Recurse;
  char *name = fe_spelling(d);
  add_called(c, name);
  free(name);
  for (unsigned i = 0, n = k == CXCursor_OverloadedDeclRef ? clang_getNumOverloadedDecls(x) : 1; i < n; i++)
    if (c->ndecls < 64)
      c->decls[c->ndecls++] =
          clang_getCanonicalCursor(k == CXCursor_OverloadedDeclRef ? clang_getOverloadedDecl(x, i) : d);
  // One level down: what a function template the region calls calls.
  for (unsigned i = 0, n = k == CXCursor_OverloadedDeclRef ? clang_getNumOverloadedDecls(x) : 1; c->deep && i < n; i++) {
    CXCursor o = k == CXCursor_OverloadedDeclRef ? clang_getOverloadedDecl(x, i) : d;
    if (kind_of(o) != CXCursor_FunctionTemplate) continue;
    c->deep = false;
    clang_visitChildren(o, collect_calls, c);
    c->deep = true;
  }
  return CXChildVisit_Recurse;
}

static enum CXChildVisitResult find_later_decl(CXCursor x, CXCursor parent, CXClientData data) {
  (void)parent;
  Called *c = data;
  enum CXCursorKind k = kind_of(x);
  if (k == CXCursor_Namespace) return CXChildVisit_Recurse;
  if (k != CXCursor_FunctionDecl && k != CXCursor_FunctionTemplate) return CXChildVisit_Continue;
  unsigned offset;
  CXFile file;
  clang_getFileLocation(clang_getCursorLocation(x), &file, NULL, NULL, &offset);
  if (!file || !clang_File_isEqual(file, c->fe->file) || offset < c->after) return CXChildVisit_Continue;
  bool same = false;  // a declaration of a function the region calls (its definition after its declaration)
  for (int i = 0; i < c->ndecls && !same; i++) same = clang_equalCursors(clang_getCanonicalCursor(x), c->decls[i]);
  char *name = fe_spelling(x);
  for (int i = 0; i < c->n && clang_Cursor_isNull(c->later) && !same; i++)
    if (strcmp(c->names[i], name) == 0) c->later = x;
  free(name);
  return clang_Cursor_isNull(c->later) ? CXChildVisit_Continue : CXChildVisit_Break;
}

static char *later_decl_why(const Frontend *fe, const Region *r, CXCursor fn) {
  Called c = {.fe = fe, .deep = true, .later = clang_getNullCursor()};
  c.after = fe_range(fe, clang_getCursorExtent(fn)).end.offset;
  for (const Stmt *s = r->stmts; s; s = s->next) clang_visitChildren(s->cursor, collect_calls, &c);
  clang_visitChildren(clang_getTranslationUnitCursor(fe->tu), find_later_decl, &c);
  char *why = NULL;
  if (!clang_Cursor_isNull(c.later)) {
    char *name = fe_spelling(c.later);
    SrcLoc at = fe_loc(fe, clang_getCursorLocation(c.later));
    why = xasprintf("the region calls '%s', which is declared again after the template (line %u), and an instance "
                    "may call that one (C++ looks dependent calls up where a template is instantiated too), while "
                    "coconet reads the region where the template is defined: declare it before the template",
                    name, at.line);
    free(name);
  }
  for (int i = 0; i < c.n; i++) free(c.names[i]);
  return why;
}

// The shadow text: the main file with the head replaced by the macro, padded
// with blanks to its length (its line breaks kept).
static SourceFile shadow_of(const Frontend *fe, const Shape *sh) {
  SourceFile t = {strdup(fe->src.path), malloc(fe->src.len + 1), fe->src.len};
  if (!t.path || !t.buf) COCONET_BUG("out of memory");
  memcpy(t.buf, fe->src.buf, fe->src.len + 1);
  for (unsigned i = sh->begin; i < sh->end; i++)
    if (t.buf[i] != '\n') t.buf[i] = ' ';
  memcpy(t.buf + sh->begin, BIND_MACRO, sizeof BIND_MACRO - 1);
  for (int d = 0; d < sh->ndecls; d++)
    for (unsigned i = sh->decls[d].begin.offset; i <= sh->decls[d].end.offset && i < t.len; i++)
      if (t.buf[i] != '\n') t.buf[i] = ' ';
  return t;
}



// The first error of the shadow parse in the template's head or the region's
// function (fn: its bytes), or NULL; errors elsewhere are the template's other
// uses, which no longer fit it.
static char *error_within(const Frontend *fe, const Shape *sh, SrcRange fn) {
  char *error = NULL;
  unsigned nd = clang_getNumDiagnostics(fe->tu);
  for (unsigned i = 0; i < nd && !error; i++) {
    CXDiagnostic d = clang_getDiagnostic(fe->tu, i);
    CXFile file;
    unsigned offset;
    clang_getFileLocation(clang_getDiagnosticLocation(d), &file, NULL, NULL, &offset);
    bool main = file && clang_File_isEqual(file, fe->file);
    bool head = main && offset >= sh->begin && offset < sh->end;
    bool body = main && offset >= fn.begin.offset && offset < fn.end.offset;
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error && (head || body || !file)) {
      CXString s = clang_getDiagnosticSpelling(d);
      const char *text = clang_getCString(s);
      error = xasprintf("%s%s", text,
                        head && !body ? " (at the template's head, where coconet declares the instance's arguments: "
                                        "what they name must be declared before the template)"
                        : strstr(text, "after instantiation")
                            ? " (coconet reads a member defined out of its class as the instance's explicit "
                              "specialization where it is defined: a use of the member before its definition comes "
                              "first; define it before its first use)"
                            : "");
      clang_disposeString(s);
    }
    clang_disposeDiagnostic(d);
  }
  return error;
}

// "typedef __half T; constexpr int N = 4; " and its test "std::is_same<T, __half>::value && N == 4"
// (a parameter without a name is left out: the function cannot name it).
static void bind_of(const Inst *in, const Shape *sh, Text *bind, Text *test, Text *label) {
  text_add(bind, "");
  text_add(test, "");
  text_add(label, "");
  for (int i = 0; i < sh->nparams; i++) {
    char *name = fe_spelling(sh->params[i]), *line, *t, *l;
    const char *arg = in->args[i], *and = *test->s ? " && " : "";
    if (!*name) {
      free(name);
      continue;
    }
    if (kind_of(sh->params[i]) == CXCursor_TemplateTypeParameter) {
      line = xasprintf("typedef %s %s; ", arg, name);
      t = xasprintf("%sstd::is_same<%s, %s>::value", and, name, arg);
    } else {
      // Its type as written (`I BLOCK` after `typename I` is bound first), unless that is `auto`.
      CXType pt = clang_getCursorType(sh->params[i]);
      CXString ts = clang_getTypeSpelling(pt);
      line = xasprintf("constexpr %s %s = %s; ", clang_getCString(ts), name, arg);
      t = xasprintf("%s%s == %s", and, name, arg);
      clang_disposeString(ts);
    }
    l = xasprintf("%s%s = %s", *label->s ? ", " : "", name, arg);
    text_add(bind, line);
    text_add(test, t);
    text_add(label, l);
    free(name);
    free(line);
    free(t);
    free(l);
  }
}

static void instance_free(RegionInstance *ri) {
  program_free(&ri->prog);
  if (ri->fe.tu) clang_disposeTranslationUnit(ri->fe.tu);
  if (ri->fe.index) clang_disposeIndex(ri->fe.index);
  if (ri->fe.names) free(ri->fe.names->text);
  free(ri->fe.names);
  for (int i = 0; i < ri->fe.nargs; i++) free(ri->fe.args[i]);
  free(ri->fe.args);
  source_free(&ri->text);
  free(ri->label);
  free(ri->test);
}

// The region read in instance decl; NULL with *why when it cannot be.
static RegionInstance *read_instance(const Frontend *fe, const Region *r, const Shape *sh, CXCursor fn, const Inst *in,
                                     char **why) {
  Text bind = {0}, test = {0}, label = {0};
  bind_of(in, sh, &bind, &test, &label);
  if (!*test.s) {
    *why = strdup("its template's parameters have no names, so its code cannot tell its instances apart");
    free(bind.s), free(test.s), free(label.s);
    return NULL;
  }
  RegionInstance *ri = xcalloc(1, sizeof *ri);
  ri->label = label.s;
  ri->test = test.s;
  ri->text = shadow_of(fe, sh);
  ri->fe.src = ri->text;
  ri->fe.tmpdir = fe->tmpdir;  // borrowed: instance_free leaves it
  ri->fe.args = xcalloc((size_t)fe->nargs + 1, sizeof *ri->fe.args);
  for (int i = 0; i < fe->nargs; i++) ri->fe.args[i] = strdup(fe->args[i]);
  ri->fe.args[fe->nargs] = xasprintf("-D" BIND_MACRO "=%s%s", bind.s, sh->specialize ? "template <>" : "");
  ri->fe.nargs = fe->nargs + 1;
  enum CXErrorCode err = frontend_parse_text(fe, ri->text.buf, ri->text.len, &ri->fe);
  SrcRange fr = fe_range(fe, clang_getCursorExtent(fn));
  char *error = err != CXError_Success ? xasprintf("libclang could not parse it (error %d)", err)
                                       : error_within(&ri->fe, sh, fr);
  if (!error) {
    ri->fe.names = xcalloc(1, sizeof *ri->fe.names);
    diag_mute(true);
    int bad = directives_collect_one(&ri->fe, &ri->prog, r->pragma_range.begin.offset);
    error = bad || !ri->prog.regions ? strdup(diag_muted_first() ? diag_muted_first() : "its region was not found")
                                     : NULL;
    diag_mute(false);
  }
  if (error) {
    *why = xasprintf("in its instance %s, %s", ri->label, error);
    free(error);
    free(bind.s);
    instance_free(ri);
    free(ri);
    return NULL;
  }
  Region *read = ri->prog.regions;
  free(read->name);
  read->name = xasprintf("%s_%s", r->name, in->name);
  read->bind = bind.s;
  instantiate_program(&ri->fe, &ri->prog);
  return ri;
}

// A name for generated symbols no other region of the program has.
static void unique_name(const Program *prog, const Region *self, Region *read) {
  for (int k = 2, taken = 1; taken; k++) {
    taken = 0;
    for (const Region *o = prog->regions; o; o = o->next) {
      taken |= o != self && strcmp(o->name, read->name) == 0;
      for (int i = 0; i < o->ninstances; i++) taken |= strcmp(o->instances[i].prog.regions->name, read->name) == 0;
    }
    if (taken) {
      char *other = xasprintf("%s_%d", read->name, k);
      free(read->name);
      read->name = other;
    }
  }
}

static void region_instances(const Frontend *fe, const Program *prog, Region *r) {
  CXCursor fn = place_function(fe, r->range.begin.offset);
  bool in_template = false;
  for (CXCursor p = fn; !clang_Cursor_isNull(p) && kind_of(p) != CXCursor_TranslationUnit && !in_template;
       p = clang_getCursorSemanticParent(p))
    in_template = kind_of(p) == CXCursor_FunctionTemplate || kind_of(p) == CXCursor_ClassTemplate ||
                  kind_of(p) == CXCursor_ClassTemplatePartialSpecialization;
  if (!in_template) return;
  int level = depends(r);
  Shape sh = {0};
  char *why = shape_why(fe, fn, &sh);
  Found f = {.fe = fe, .sh = &sh};
  if (!why) clang_visitChildren(clang_getTranslationUnitCursor(fe->tu), find_instances, &f);
  if (!why && kind_of(sh.tmpl) == CXCursor_FunctionTemplate) find_explicit(&f);
  // No instance in this file: the region is read as its pattern (the calls that depend on the
  // parameters say so, classify.c).
  if (!why && f.n == 0) return;
  if (!why) why = later_decl_why(fe, r, fn);
  RegionInstance *v = xcalloc((size_t)f.n + 1, sizeof *v);
  int n = 0;
  for (int i = 0; i < f.n && !why; i++) {
    RegionInstance *ri = read_instance(fe, r, &sh, fn, &f.v[i], &why);
    if (ri) {
      v[n] = *ri;
      unique_name(prog, r, v[n].prog.regions);
      n++;
    }
    free(ri);
  }
  for (int i = 0; i < f.n; i++) {
    for (int k = 0; k < sh.nparams; k++) free(f.v[i].args[k]);
    free(f.v[i].name);
  }
  r->instances = v;
  r->ninstances = n;
  r->instances_more = f.more;
  if (why) region_instances_free(r);
  // A region whose pattern depends on the parameters' types at most reads as its instances would:
  // read so when they cannot be.
  if (why && level != DEPENDS_CALLS) {
    free(why);
    why = NULL;
  }
  r->instance_why = why;
}

void instance_regions(const Frontend *fe, Program *prog) {
  for (Region *r = prog->regions; r; r = r->next) region_instances(fe, prog, r);
}

void region_instances_free(Region *r) {
  for (int i = 0; i < r->ninstances; i++) instance_free(&r->instances[i]);
  free(r->instances);
  free(r->instance_why);
  free(r->bind);
  r->instances = NULL;
  r->ninstances = r->instances_more = 0;
  r->instance_why = NULL;
  r->bind = NULL;
}
