// analyze_macros.c: whether the macros a kernel's text uses mean, where generated code
// copies the text, what they mean in the kernel: a name #undef'd, or #defined again in a
// file of the user's, makes the copy unsafe (analyze_text.c then runs the IR instead).
#include "analyze_impl.h"
#include "common/text.h"

#include "front/front.h"

#include <stdlib.h>
#include <string.h>

// The names whose macro definitions decide what the kernel's text means where
// generated code copies it: its identifiers, and those of the bodies of the
// macros it expands (to a depth), each once.
typedef struct Names {
  char *v[512];
  bool macro[512];  // a macro where the kernel uses it
  int n;
} Names;

static void add_name(Names *ns, const char *name, bool macro) {
  for (int i = 0; i < ns->n; i++)
    if (strcmp(ns->v[i], name) == 0) {
      ns->macro[i] |= macro;
      return;
    }
  if (ns->n == 512) return;
  ns->macro[ns->n] = macro;
  ns->v[ns->n++] = strdup(name);
}

static void add_tokens(Names *ns, CXTranslationUnit tu, CXSourceRange r, int depth, bool body) {
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(tu, r, &toks, &n);
  for (unsigned i = body ? 1 : 0; i < n; i++) {  // a macro definition's token 0 is its name
    if (clang_getTokenKind(toks[i]) != CXToken_Identifier) continue;
    CXString sp = clang_getTokenSpelling(tu, toks[i]);
    CXCursor c = body ? clang_getNullCursor() : clang_getCursor(tu, clang_getTokenLocation(tu, toks[i]));
    bool macro = kind(c) == CXCursor_MacroExpansion;
    add_name(ns, clang_getCString(sp), macro);
    clang_disposeString(sp);
    CXCursor def = macro ? clang_getCursorReferenced(c) : clang_getNullCursor();
    if (macro && depth < 4 && kind(def) == CXCursor_MacroDefinition)
      add_tokens(ns, tu, clang_getCursorExtent(def), depth + 1, true);
  }
  clang_disposeTokens(tu, toks, n);
}

// The #define and #undef lines of the user's files (the translated file's up
// to where generated code goes).
typedef struct Directive {
  char *name;
  bool undef;
} Directive;

typedef struct Directives {
  Directive *v;
  int n, cap;
} Directives;

static void scan_directives(Directives *ds, const char *buf, size_t to) {
  for (size_t at = 0; buf && at < to;) {
    size_t p = at;
    while (p < to && (buf[p] == ' ' || buf[p] == '\t')) p++;
    if (p < to && buf[p] == '#') {
      p++;
      while (p < to && (buf[p] == ' ' || buf[p] == '\t')) p++;
      int which = to - p >= 5 && strncmp(buf + p, "undef", 5) == 0 ? 5 : to - p >= 6 && strncmp(buf + p, "define", 6) == 0 ? 6 : 0;
      size_t q = p + (size_t)which;
      while (which && q < to && (buf[q] == ' ' || buf[q] == '\t')) q++;
      size_t e = q;
      while (which && e < to && text_ident_char(buf[e])) e++;
      if (which && e > q && q > p + (size_t)which) {
        if (ds->n == ds->cap) {
          ds->cap = ds->cap ? 2 * ds->cap : 64;
          ds->v = realloc(ds->v, sizeof *ds->v * (size_t)ds->cap);
          if (!ds->v) COCONET_BUG("out of memory");
        }
        ds->v[ds->n++] = (Directive){strndup(buf + q, e - q), which == 5};
      }
    }
    while (at < to && buf[at] != '\n') at++;
    at++;
  }
}

typedef struct Scan {
  const Frontend *fe;
  unsigned place;
  Directives ds;
  CXFile files[256];  // the files scanned
  int nfiles;
} Scan;

static void scan_file(Scan *sc, CXFile f);

static void scan_include(const FeInclude *in, void *data) {
  Scan *sc = data;
  if (!clang_Location_isInSystemHeader(clang_getLocationForOffset(sc->fe->tu, in->to, 0))) scan_file(sc, in->to);
}

// The user's file f's directives (the translated file's up to the place), then its headers'.
static void scan_file(Scan *sc, CXFile f) {
  for (int i = 0; i < sc->nfiles; i++)
    if (clang_File_isEqual(sc->files[i], f)) return;
  if (sc->nfiles == 256) return;
  sc->files[sc->nfiles++] = f;
  const Frontend *fe = sc->fe;
  size_t size = 0;
  const char *buf = fe_file_bytes(fe, f, &size);
  bool main = clang_File_isEqual(f, fe->file);
  scan_directives(&sc->ds, buf, main && sc->place < size ? sc->place : size);
  fe_includes(fe, f, scan_include, sc);
}

// A name the kernel's text depends on whose macro definition may differ where
// generated code goes: #undef'd, or #defined in a file of the user's once more
// than the definition the kernel sees (an X-macro header, a later
// redefinition). Its name (malloc'd), else NULL: the copied text would not
// mean what the kernel means. (Conservative: a header's directive after the
// generated code counts too.)
char *az_macro_gone(const Az *az) {
  const Frontend *fe = az->region_fe;
  Names ns = {.n = 0};
  add_tokens(&ns, az->fe->tu, clang_getCursorExtent(az->kbody), 0, false);
  if (az->loop_helper) add_tokens(&ns, az->fe->tu, clang_getCursorExtent(az->loop_call), 0, false);
  // A template is read in a copy at the end of the file (instantiate.c): the whole file counts.
  bool copy = az->launch->def->is_template;
  Scan sc = {.fe = fe, .place = copy ? (unsigned)fe->src.len : place_decl(fe, az->ir->range.begin.offset)};
  scan_file(&sc, fe->file);
  char *gone = NULL;
  for (int i = 0; i < ns.n && !gone; i++) {
    int defines = 0, undefs = 0;
    for (int d = 0; d < sc.ds.n; d++)
      if (strcmp(sc.ds.v[d].name, ns.v[i]) == 0) ++*(sc.ds.v[d].undef ? &undefs : &defines);
    if (undefs > 0 || defines > (ns.macro[i] ? 1 : 0)) gone = strdup(ns.v[i]);
  }
  for (int i = 0; i < ns.n; i++) free(ns.v[i]);
  for (int d = 0; d < sc.ds.n; d++) free(sc.ds.v[d].name);
  free(sc.ds.v);
  return gone;
}
