// analyze_macros.c: whether the macros a kernel's text uses mean, where generated code
// copies the text, what they mean in the kernel: a name #undef'd, or #defined again in a
// file of the user's, makes the copy unsafe (analyze_text.c then runs the IR instead;
// fuse's copy of a row-wise kernel is refused: analyze_copy.c).
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
  bool body[512];   // ... or named in a macro's body only
  int n;
} Names;

static void add_name(Names *ns, const char *name, bool macro, bool body) {
  for (int i = 0; i < ns->n; i++)
    if (strcmp(ns->v[i], name) == 0) {
      ns->macro[i] |= macro;
      ns->body[i] &= body;
      return;
    }
  if (ns->n == 512) return;
  ns->macro[ns->n] = macro;
  ns->body[ns->n] = body;
  ns->v[ns->n++] = strdup(name);
}

// The byte ranges of a file the preprocessor skipped (an #if not taken): its
// directives there define nothing.
typedef struct Skipped {
  unsigned (*v)[2];
  unsigned n;
} Skipped;

static bool skipped(const Skipped *sk, size_t at) {
  for (unsigned i = 0; i < sk->n; i++)
    if (at >= sk->v[i][0] && at < sk->v[i][1]) return true;
  return false;
}

// The skipped ranges of file f of tu (free .v).
static Skipped skipped_of(CXTranslationUnit tu, CXFile f) {
  CXSourceRangeList *list = f ? clang_getSkippedRanges(tu, f) : NULL;
  Skipped sk = {NULL, list ? list->count : 0};
  if (sk.n && !(sk.v = malloc(sizeof *sk.v * sk.n))) COCONET_BUG("out of memory");
  for (unsigned i = 0; i < sk.n; i++) {
    clang_getFileLocation(clang_getRangeStart(list->ranges[i]), NULL, NULL, NULL, &sk.v[i][0]);
    clang_getFileLocation(clang_getRangeEnd(list->ranges[i]), NULL, NULL, NULL, &sk.v[i][1]);
  }
  if (list) clang_disposeSourceRangeList(list);
  return sk;
}

// (tokens in an #if the preprocessor skipped are none of the text's)
static void add_tokens(Names *ns, CXTranslationUnit tu, CXSourceRange r, int depth, bool body) {
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(tu, r, &toks, &n);
  CXFile file = NULL;
  clang_getFileLocation(clang_getRangeStart(r), &file, NULL, NULL, NULL);
  Skipped sk = body ? (Skipped){NULL, 0} : skipped_of(tu, file);
  for (unsigned i = body ? 1 : 0; i < n; i++) {  // a macro definition's token 0 is its name
    if (clang_getTokenKind(toks[i]) == CXToken_Keyword) {  // (__func__ and __PRETTY_FUNCTION__ are keywords)
      CXString sp = clang_getTokenSpelling(tu, toks[i]);
      if (macro_name_is_where(clang_getCString(sp))) add_name(ns, clang_getCString(sp), false, body);
      clang_disposeString(sp);
    }
    if (clang_getTokenKind(toks[i]) != CXToken_Identifier) continue;
    unsigned at = 0;
    clang_getFileLocation(clang_getTokenLocation(tu, toks[i]), NULL, NULL, NULL, &at);
    if (skipped(&sk, at)) continue;
    CXString sp = clang_getTokenSpelling(tu, toks[i]);
    CXCursor c = body ? clang_getNullCursor() : clang_getCursor(tu, clang_getTokenLocation(tu, toks[i]));
    bool macro = kind(c) == CXCursor_MacroExpansion;
    add_name(ns, clang_getCString(sp), macro, body);
    clang_disposeString(sp);
    CXCursor def = macro ? clang_getCursorReferenced(c) : clang_getNullCursor();
    if (macro && depth < 4 && kind(def) == CXCursor_MacroDefinition)
      add_tokens(ns, tu, clang_getCursorExtent(def), depth + 1, true);
  }
  clang_disposeTokens(tu, toks, n);
  free(sk.v);
}

// The #define and #undef lines of the user's files (the translated file's up
// to where generated code goes) that the preprocessor read (not in an #if it
// skipped).
typedef struct Directive {
  char *name;
  bool undef;
} Directive;

typedef struct Directives {
  Directive *v;
  int n, cap;
} Directives;

static void scan_directives(Directives *ds, const char *buf, size_t to, const Skipped *sk) {
  for (size_t at = 0; buf && at < to;) {
    size_t p = at;
    if (skipped(sk, at)) {
      while (at < to && buf[at] != '\n') at++;
      at++;
      continue;
    }
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
  Skipped sk = skipped_of(fe->tu, f);
  scan_directives(&sc->ds, buf, main && sc->place < size ? sc->place : size, &sk);
  free(sk.v);
  fe_includes(fe, f, scan_include, sc);
}

bool macro_name_is_where(const char *name) {
  static const char *const where[] = {"__LINE__",        "__FILE__",           "__FILE_NAME__",   "__BASE_FILE__",
                                      "__COUNTER__",     "__func__",           "__FUNCTION__",    "__PRETTY_FUNCTION__",
                                      "__builtin_LINE",  "__builtin_FUNCTION", "__builtin_FILE",  "__builtin_COLUMN",
                                      "__builtin_FILE_NAME"};
  for (size_t i = 0; i < sizeof where / sizeof *where; i++)
    if (strcmp(name, where[i]) == 0) return true;
  return false;
}

// A name the texts of cursors `texts` (of tu) depend on whose macro definition
// may differ at byte `place` of the translated file, where generated code goes:
// #undef'd, or #defined in a file of the user's once more than the definition
// the texts see (an X-macro header, a later redefinition). Its name (malloc'd),
// else NULL: a copy of the text there would not mean what the text means.
// (Conservative: a header's directive after the place counts too.) With
// `where`, a name whose value is where it is written (__LINE__, __func__:
// macro_name_is_where) comes first.
static char *gone_at(const Frontend *fe, CXTranslationUnit tu, const CXSourceRange *texts, int ntexts, unsigned place,
                     bool where, bool bodies) {
  Names ns = {.n = 0};
  for (int t = 0; t < ntexts; t++) add_tokens(&ns, tu, texts[t], 0, false);
  char *gone = NULL;
  for (int i = 0; i < ns.n && !gone && where; i++)
    if (macro_name_is_where(ns.v[i])) gone = strdup(ns.v[i]);
  Scan sc = {.fe = fe, .place = place};
  scan_file(&sc, fe->file);
  for (int i = 0; i < ns.n && !gone; i++) {
    int defines = 0, undefs = 0;
    for (int d = 0; d < sc.ds.n; d++)
      if (strcmp(sc.ds.v[d].name, ns.v[i]) == 0) ++*(sc.ds.v[d].undef ? &undefs : &defines);
    if (undefs > 0 || defines > (ns.macro[i] || (bodies && ns.body[i]) ? 1 : 0)) gone = strdup(ns.v[i]);
  }
  for (int i = 0; i < ns.n; i++) free(ns.v[i]);
  for (int d = 0; d < sc.ds.n; d++) free(sc.ds.v[d].name);
  free(sc.ds.v);
  return gone;
}

char *az_macro_gone(const Az *az) {
  const Frontend *fe = az->region_fe;
  CXSourceRange texts[2] = {clang_getCursorExtent(az->kbody), clang_getCursorExtent(az->loop_call)};
  // A template is read in a copy at the end of the file (instantiate.c): the whole file counts.
  bool copy = az->launch->def->is_template;
  return gone_at(fe, az->fe->tu, texts, az->loop_helper ? 2 : 1,
                 copy ? (unsigned)fe->src.len : place_decl(fe, az->ir->range.begin.offset), false, false);
}

char *macro_gone_at(const Frontend *fe, CXCursor body, unsigned place) {
  CXSourceRange r = clang_getCursorExtent(body);
  return gone_at(fe, fe->tu, &r, 1, place, true, false);
}

char *macro_gone_in(const Frontend *fe, const CXCursor *texts, int ntexts, unsigned place, bool where) {
  CXSourceRange r[64];
  int n = 0;
  for (int t = 0; t < ntexts && n < 64; t++) r[n++] = fe_file_extent(texts[t]);  // (a macro's use: its arguments too)
  return gone_at(fe, fe->tu, r, n, place, where, true);
}
