// instantiate.c: kernel templates, analyzed as the instance a launch runs.
//
// libclang shows only a template's pattern: its types are `T`, its calls and
// operators on them unresolved. So for each launch of a kernel template in a
// region, coconet appends to the main file a copy of the definition as a
// plain function of the launch's template arguments (written or deduced),
//
//   namespace coconet_instance_1 { typedef float T; constexpr int BLOCK = 256;
//   __global__ void scale(T *x, T s, int n) { ...the template's own text... } }
//
// (inside the template's own namespaces, reopened, so that the copy sees what
// the template sees), parses that text once for all the launches, and the analysis reads the
// copy, where clang has resolved every type, conversion and overload for
// those arguments. Offsets in a copy map back to the template's text
// (fe_loc), so messages point at the user's template.
//
// Arguments that are types or integers are instantiated; a template template
// parameter, a parameter pack, or arguments that depend on an enclosing
// template (a launch inside a host function template) are not, and say so.
#include "front/front.h"

#include "common/text.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *spelled(CXString s) {
  char *r = strdup(clang_getCString(s));
  clang_disposeString(s);
  if (!r) COCONET_BUG("out of memory");
  return r;
}

static void set_why(KernelDef *k, const char *fmt, const char *x) {
  if (asprintf(&k->why, fmt, x) < 0) COCONET_BUG("out of memory");
}

typedef struct Params {
  CXCursor v[32];
  int n;
  bool other;  // a template template parameter
} Params;

static enum CXChildVisitResult add_param(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Params *p = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k == CXCursor_TemplateTemplateParameter) p->other = true;
  if ((k == CXCursor_TemplateTypeParameter || k == CXCursor_NonTypeTemplateParameter) && p->n < 32) p->v[p->n++] = c;
  return CXChildVisit_Continue;
}

unsigned template_head_end(const SourceFile *src, CXCursor last) {
  unsigned o;
  clang_getFileLocation(clang_getRangeEnd(clang_getCursorExtent(last)), NULL, NULL, NULL, &o);
  const char *b = src->buf;
  while (o < src->len && b[o] != '>') {
    if (b[o] == '/' && o + 1 < src->len && b[o + 1] == '*') {
      const char *e = strstr(b + o + 2, "*/");
      o = e ? (unsigned)(e - b) + 2 : (unsigned)src->len;
    } else if (b[o] == '/' && o + 1 < src->len && b[o + 1] == '/') {
      while (o < src->len && b[o] != '\n') o++;
    } else {
      o++;
    }
  }
  return o < src->len ? o + 1 : 0;
}

// A type as code anywhere spells it: a name in a namespace from the global one
// (`::cfg::Scale`: where a copy or a test is written, `cfg` may be another
// namespace); NULL for a type no code can name (in an anonymous namespace, a lambda's).
static char *type_spelling(CXType t) {
  char *s = spelled(clang_getTypeSpelling(clang_getCanonicalType(t)));
  if (strstr(s, "(anonymous") || strstr(s, "(lambda") || strstr(s, "(unnamed")) {
    free(s);
    return NULL;
  }
  return template_global_name(s);
}

char *template_global_name(char *s) {
  size_t word = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
  if (word == 0 || strncmp(s + word, "::", 2) != 0 || isdigit((unsigned char)s[0])) return s;
  char *global = xasprintf("::%s", s);
  free(s);
  return global;
}

char *template_arg_spelling(CXCursor decl, unsigned i) {
  char *arg = NULL;
  switch (clang_Cursor_getTemplateArgumentKind(decl, i)) {
  case CXTemplateArgumentKind_Type:
    return type_spelling(clang_Cursor_getTemplateArgumentType(decl, i));
  case CXTemplateArgumentKind_Integral: {
    // The parameter's type says how to write the value: a bool's true reads
    // back as -1 (one signed bit), an enumerator needs its type.
    Params ps = {.n = 0};
    clang_visitChildren(clang_getSpecializedCursorTemplate(decl), add_param, &ps);
    CXType type = !ps.other && (int)i < ps.n ? clang_getCanonicalType(clang_getCursorType(ps.v[i]))
                                             : (CXType){.kind = CXType_Invalid};
    long long v = clang_Cursor_getTemplateArgumentValue(decl, i);
    int r;
    if (type.kind == CXType_Bool) {
      r = asprintf(&arg, "%s", v ? "true" : "false");
    } else if (type.kind == CXType_Enum) {
      char *t = type_spelling(type);
      if (!t) return NULL;
      r = asprintf(&arg, "static_cast<%s>(%lld)", t, v);
      free(t);
    } else {
      r = v < 0 ? asprintf(&arg, "%lld", v) : asprintf(&arg, "%llu", clang_Cursor_getTemplateArgumentUnsignedValue(decl, i));
    }
    if (r < 0) COCONET_BUG("out of memory");
    return arg;
  }
  default: return NULL;
  }
}

char *template_args_of(CXCursor decl) {
  int n = clang_Cursor_getNumTemplateArguments(decl);
  if (n <= 0) return NULL;
  Text args = {0};
  text_add(&args, "");
  for (int i = 0; i < n; i++) {
    char *a = template_arg_spelling(decl, (unsigned)i);
    if (!a) {
      free(args.s);
      return NULL;
    }
    if (i) text_add(&args, ", ");
    text_add(&args, a);
    free(a);
  }
  return args.s;
}

// Template parameter param declared as specialization decl's argument i:
// "typedef float T;\n", "constexpr int B = 256;\n" (malloc'd), or NULL when
// the argument is neither a type nor an integer.
static char *template_param_binding(CXCursor decl, unsigned i, CXCursor param) {
  enum CXCursorKind pk = clang_getCursorKind(param);
  enum CXTemplateArgumentKind ak = clang_Cursor_getTemplateArgumentKind(decl, i);
  if (!(pk == CXCursor_TemplateTypeParameter && ak == CXTemplateArgumentKind_Type) &&
      !(pk == CXCursor_NonTypeTemplateParameter && ak == CXTemplateArgumentKind_Integral))
    return NULL;
  char *name = spelled(clang_getCursorSpelling(param)), *arg = template_arg_spelling(decl, i), *line = NULL;
  char *type = pk == CXCursor_TemplateTypeParameter
                   ? NULL
                   : spelled(clang_getTypeSpelling(clang_getCanonicalType(clang_getCursorType(param))));
  line = type ? xasprintf("constexpr %s %s = %s;\n", type, name, arg) : xasprintf("typedef %s %s;\n", arg, name);
  free(name);
  free(arg);
  free(type);
  return line;
}

int template_params(CXCursor tmpl, CXCursor *out, int max) {
  Params ps = {.n = 0};
  clang_visitChildren(tmpl, add_param, &ps);
  if (ps.other) return -1;
  for (int i = 0; i < ps.n && i < max; i++) out[i] = ps.v[i];
  return ps.n < max ? ps.n : max;
}

char *template_bindings(CXCursor decl) {
  CXCursor tmpl = clang_getSpecializedCursorTemplate(decl);
  if (clang_Cursor_isNull(tmpl)) return strdup("");
  Params ps = {.n = 0};
  clang_visitChildren(tmpl, add_param, &ps);
  int nargs = clang_Cursor_getNumTemplateArguments(decl);
  if (ps.other || nargs != ps.n) return NULL;
  Text t = {0};
  text_add(&t, "");
  for (int i = 0; i < ps.n; i++) {
    char *line = template_param_binding(decl, (unsigned)i, ps.v[i]);
    if (!line) {
      free(t.s);
      return NULL;
    }
    text_add(&t, line);
    free(line);
  }
  return t.s;
}

void instance_describe(const Frontend *fe, CXCursor decl, CXCursor tmpl, KernelDef *k) {
  if (clang_getCursorKind(decl) == CXCursor_FunctionTemplate) {
    set_why(k, "the launch of kernel template '%s' has template arguments that depend on the enclosing template; "
               "coconet analyzes a launch whose arguments are known types and integers, and reads a region in a "
               "template in each instance of it that the file makes, which it could not for this one (no instance, "
               "or a template it does not instantiate: see pragmas.md, regions in templates)",
            k->name);
    return;
  }
  Params ps = {.n = 0};
  clang_visitChildren(tmpl, add_param, &ps);
  int nargs = clang_Cursor_getNumTemplateArguments(decl);
  bool pack = false;
  for (int i = 0; i < nargs; i++) pack |= clang_Cursor_getTemplateArgumentKind(decl, (unsigned)i) == CXTemplateArgumentKind_Pack;
  if (ps.other || pack || ps.n == 0 || nargs != ps.n) {
    set_why(k, "kernel template '%s' has a template template parameter or a parameter pack; coconet instantiates "
               "kernel templates whose parameters are types and integers",
            k->name);
    return;
  }
  Text header = {0};
  text_add(&header, "");
  bool ok = true;
  for (int i = 0; i < ps.n && ok; i++) {
    char *line = template_param_binding(decl, (unsigned)i, ps.v[i]);
    ok = line != NULL;
    if (line) text_add(&header, line);
    free(line);
  }
  unsigned from = ok ? template_head_end(k->hsrc ? k->hsrc : &fe->src, ps.v[ps.n - 1]) : 0;
  char *args = from ? template_args_of(decl) : NULL;
  if (!args) {
    set_why(k, "kernel template '%s': a template argument is neither a type nor an integer", k->name);
    free(header.s);
    return;
  }
  k->header = header.s;
  k->args = args;
  k->from = from;
}

// The function definition inside namespace `ns` of the instance TU.
typedef struct Find {
  const char *ns;
  CXCursor found;
} Find;

static enum CXChildVisitResult find_in_ns(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Find *f = data;
  if (clang_getCursorKind(c) == CXCursor_FunctionDecl && clang_isCursorDefinition(c)) {
    f->found = c;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Continue;
}

static enum CXChildVisitResult find_ns(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Find *f = data;
  if (clang_getCursorKind(c) != CXCursor_Namespace) return CXChildVisit_Continue;
  CXString s = clang_getCursorSpelling(c);
  bool match = strcmp(clang_getCString(s), f->ns) == 0;
  clang_disposeString(s);
  if (match) clang_visitChildren(c, find_in_ns, f);
  return match ? CXChildVisit_Break : CXChildVisit_Recurse;
}

// The namespaces around a definition, opened and closed: the copy lives in the
// template's own namespace, so that it sees what the template sees.
static void namespaces_of(CXCursor c, Text *open, Text *close) {
  CXCursor p = clang_getCursorSemanticParent(c);
  if (clang_getCursorKind(p) != CXCursor_Namespace) return;
  namespaces_of(p, open, close);
  char *name = spelled(clang_getCursorSpelling(p));
  text_add(open, "namespace ");
  text_add(open, name);
  text_add(open, " { ");
  text_add(close, "} ");
  free(name);
}

// The copy is parsed at the end of the file, where names declared after the
// template are visible too; the template itself sees only those before it. A
// copy that refers to anything declared after the template (an overload it
// would not see, say) or follows an #include after it is not the template's
// instance: refused.
typedef struct Later {
  const Frontend *fe;  // the instance parse
  unsigned after;      // the template's end in the main file
  unsigned end;        // the main file's length (the copies follow)
  CXCursor found;
} Later;

static enum CXChildVisitResult find_later(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Later *l = data;
  CXCursor d = clang_getCursorReferenced(c);
  if (!clang_Cursor_isNull(d) && !clang_equalCursors(d, c)) {
    CXFile file;
    unsigned offset;
    clang_getFileLocation(clang_getCursorLocation(d), &file, NULL, NULL, &offset);
    if (file && clang_File_isEqual(file, l->fe->file) && offset >= l->after && offset < l->end) {
      l->found = c;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

static bool include_after(const SourceFile *src, unsigned from) {
  for (const char *p = src->buf + from; (p = strchr(p, '#')) != NULL; p++) {
    const char *q = p + 1;
    while (*q == ' ' || *q == '\t') q++;
    if (strncmp(q, "include", 7) == 0) return true;
  }
  return false;
}

void instantiate_program(const Frontend *fe, Program *prog) {
  KernelDef **defs = NULL;
  int n = 0;
  for (Region *r = prog->regions; r; r = r->next)
    for (Stmt *s = r->stmts; s; s = s->next)
      for (Launch *l = s->kind == STMT_LAUNCH ? s->launch : NULL; l; l = l->other) {
        KernelDef *k = l->def;
        if (!k || !k->is_template || !k->header) continue;
        KernelDef **grown = realloc(defs, sizeof *defs * (size_t)(n + 1));
        if (!grown) COCONET_BUG("out of memory");
        defs = grown;
        defs[n++] = k;
      }
  if (!n) return;
  FeCopy *copies = calloc((size_t)n, sizeof *copies);
  if (!copies) COCONET_BUG("out of memory");
  Text extra = {0};
  text_add(&extra, "\n");
  for (int i = 0; i < n; i++) {
    Text outer = {0}, outer_end = {0};
    text_add(&outer, "");
    text_add(&outer_end, "");
    namespaces_of(defs[i]->cursor, &outer, &outer_end);
    char open[64];
    snprintf(open, sizeof open, "namespace coconet_instance_%d {\n", i + 1);
    text_add(&extra, outer.s);
    text_add(&extra, open);
    copies[i].header = (unsigned)(fe->src.len + extra.n);
    text_add(&extra, defs[i]->header);
    copies[i].at = (unsigned)(fe->src.len + extra.n);
    copies[i].from = defs[i]->from;
    const SourceFile *src = defs[i]->hsrc;
    unsigned end = src ? defs[i]->hend : defs[i]->range.end.offset;
    copies[i].src = src;
    copies[i].len = end - defs[i]->from;
    char *body = src ? strndup(src->buf + defs[i]->from, end - defs[i]->from)
                     : fe_text(fe, (SrcRange){source_loc(&fe->src, defs[i]->from), defs[i]->range.end});
    if (!body) COCONET_BUG("out of memory");
    text_add(&extra, body);
    free(body);
    text_add(&extra, "\n}\n");
    text_add(&extra, outer_end.s);
    text_add(&extra, "\n");
    free(outer.s);
    free(outer_end.s);
  }
  prog->instances = calloc(1, sizeof *prog->instances);
  if (!prog->instances) COCONET_BUG("out of memory");
  char *error = NULL;
  int bad = frontend_parse_appended(fe, extra.s, copies, n, prog->instances, &error);
  free(extra.s);
  for (int i = 0; i < n; i++) {
    char ns[64];
    snprintf(ns, sizeof ns, "coconet_instance_%d", i + 1);
    Find f = {ns, clang_getNullCursor()};
    if (!bad) clang_visitChildren(clang_getTranslationUnitCursor(prog->instances->tu), find_ns, &f);
    if (bad || clang_Cursor_isNull(f.found)) {
      if (asprintf(&defs[i]->why, "kernel template '%s' instantiated for <%s> does not compile as coconet copies it: %s",
                   defs[i]->name, defs[i]->args, error ? error : "its definition was not found") < 0)
        COCONET_BUG("out of memory");
      continue;
    }
    // A template in a header sees nothing of the main file's (taken as all after it).
    unsigned after = defs[i]->hsrc ? 0 : defs[i]->range.end.offset;
    Later later = {prog->instances, after, (unsigned)fe->src.len, clang_getNullCursor()};
    clang_visitChildren(f.found, find_later, &later);
    bool includes = !defs[i]->hsrc && include_after(&fe->src, defs[i]->range.end.offset);
    if (!clang_Cursor_isNull(later.found) || includes) {
      char *what = clang_Cursor_isNull(later.found) ? strdup("an #include") : fe_spelling(later.found);
      if (asprintf(&defs[i]->why, "kernel template '%s': coconet reads its instance for <%s> where '%s', which comes "
                                  "after the template in the file, is visible, and the template would not see it; "
                                  "move the template after it (or it before the template)",
                   defs[i]->name, defs[i]->args, what) < 0)
        COCONET_BUG("out of memory");
      free(what);
      continue;
    }
    defs[i]->inst = f.found;
    defs[i]->inst_fe = prog->instances;
  }
  free(error);
  free(defs);
}
