// directives.c: every `#pragma coconet` of the main file.
//
// A pragma is not an AST node: it is found in the file's tokens (`#` first on
// its line, then `pragma`, then `coconet`), its text is parsed by pragmas/, and
// it is attached to the outermost statement (or, for `pointwise`, the
// function definition) that starts at the first token after its line.
// Pragmas in #if branches the preprocessor skipped are ignored.
#include "front/front.h"
#include "common/text.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

// An AST node that a directive can attach to, by its first byte.
typedef struct Anchor {
  unsigned offset;
  CXCursor cursor;
  CXCursor function;  // the enclosing function definition (null at file scope)
  bool is_decl;       // a function definition rather than a statement
} Anchor;

typedef struct Anchors {
  const Frontend *fe;
  Anchor *v;
  size_t n, cap;
  CXCursor function;
} Anchors;

static void anchor_add(Anchors *a, CXCursor c, bool is_decl) {
  SrcRange r = fe_range(a->fe, clang_getCursorExtent(c));
  if (!r.begin.file) return;
  if (a->n == a->cap) {
    a->cap = a->cap ? 2 * a->cap : 256;
    a->v = realloc(a->v, a->cap * sizeof *a->v);
    if (!a->v) COCONET_BUG("out of memory");
  }
  a->v[a->n++] = (Anchor){r.begin.offset, c, a->function, is_decl};
}

static bool is_function(enum CXCursorKind k) {
  return k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate ||
         k == CXCursor_CXXMethod || k == CXCursor_Constructor || k == CXCursor_Destructor ||
         k == CXCursor_LambdaExpr;
}

// Pre-order walk: statements directly inside a block, and function definitions.
static enum CXChildVisitResult collect_anchors(CXCursor c, CXCursor parent, CXClientData data) {
  Anchors *a = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (!fe_in_main_file(a->fe, clang_getCursorLocation(c)) && k != CXCursor_Namespace &&
      k != CXCursor_LinkageSpec)
    return CXChildVisit_Continue;
  if (clang_getCursorKind(parent) == CXCursor_CompoundStmt) anchor_add(a, c, false);
  if (is_function(k) && clang_isCursorDefinition(c)) {
    if (k != CXCursor_LambdaExpr) anchor_add(a, c, true);
    CXCursor saved = a->function;
    a->function = c;
    clang_visitChildren(c, collect_anchors, a);
    a->function = saved;
    return CXChildVisit_Continue;
  }
  return CXChildVisit_Recurse;
}

static const Anchor *anchor_at(const Anchors *a, unsigned offset, bool want_decl) {
  for (size_t i = 0; i < a->n; i++)
    if (a->v[i].offset == offset && a->v[i].is_decl == want_decl) return &a->v[i];
  return NULL;
}

// One pragma occurrence in the file.
typedef struct Found {
  unsigned hash;       // offset of '#'
  unsigned text;       // offset of 'coconet'
  unsigned line_end;   // offset of the newline ending the logical line
  unsigned next_tok;   // offset of the first token after it (or file length)
} Found;

// A backslash followed by blanks and a newline continues the line (as clang
// accepts it, with a warning).
static unsigned continuation_at(const SourceFile *src, unsigned i) {
  if (src->buf[i] != '\\') return 0;
  unsigned j = i + 1;
  while (j < src->len && (src->buf[j] == ' ' || src->buf[j] == '\t' || src->buf[j] == '\r')) j++;
  return j < src->len && src->buf[j] == '\n' ? j + 1 - i : 0;
}

static unsigned logical_line_end(const SourceFile *src, unsigned i) {
  while (i < src->len && src->buf[i] != '\n') {
    unsigned skip = continuation_at(src, i);
    i += skip ? skip : 1;
  }
  return i;
}

// The pragma's text with comments blanked (same length, so offsets hold).
static char *pragma_text(const SourceFile *src, const Found *f) {
  size_t n = f->line_end - f->text;
  char *s = malloc(n + 1);
  if (!s) COCONET_BUG("out of memory");
  memcpy(s, src->buf + f->text, n);
  s[n] = '\0';
  char quote = 0;
  for (size_t i = 0; i < n; i++) {
    if (quote) {
      if (s[i] == '\\') i++;
      else if (s[i] == quote) quote = 0;
    } else if (s[i] == '"' || s[i] == '\'') {
      quote = s[i];
    } else if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
      memset(s + i, ' ', n - i);
      break;
    } else if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
      char *end = strstr(s + i + 2, "*/");
      size_t stop = end ? (size_t)(end - s) + 2 : n;
      for (size_t j = i; j < stop; j++)
        if (s[j] != '\n' && s[j] != '\r') s[j] = ' ';
      i = stop - 1;
    }
  }
  return s;
}

static bool in_skipped(const Frontend *fe, CXSourceRangeList *skipped, unsigned offset) {
  for (unsigned i = 0; skipped && i < skipped->count; i++) {
    SrcRange r = fe_range(fe, skipped->ranges[i]);
    if (offset >= r.begin.offset && offset < r.end.offset) return true;
  }
  return false;
}

static char *spelling(CXTranslationUnit tu, CXToken t) {
  CXString s = clang_getTokenSpelling(tu, t);
  char *out = strdup(clang_getCString(s));
  clang_disposeString(s);
  return out;
}

static bool spelled(CXTranslationUnit tu, CXToken t, const char *want) {
  char *s = spelling(tu, t);
  bool eq = strcmp(s, want) == 0;
  free(s);
  return eq;
}

// `_Pragma("coconet ...")`: produced by a macro or written inline, it has no
// line of its own to rewrite.
static void report_operator_pragma(const Frontend *fe, CXToken *t, unsigned n, unsigned i) {
  if (i + 2 >= n || !spelled(fe->tu, t[i + 1], "(")) return;
  char *str = spelling(fe->tu, t[i + 2]);
  const char *p = str;
  while (*p && strchr("uUL8R\"( \t", *p)) p++;
  if (strncmp(p, "coconet", 7) == 0) {
    SrcLoc loc = fe_loc(fe, clang_getTokenLocation(fe->tu, t[i]));
    diag_error(&loc,
               "'_Pragma(\"coconet ...\")' is not supported: a coconet directive must be written "
               "as '#pragma coconet' on its own line, outside macros");
  }
  free(str);
}

static bool first_on_its_line(const Frontend *fe, CXToken *t, unsigned i) {
  if (i == 0) return true;
  unsigned prev = fe_loc(fe, clang_getRangeEnd(clang_getTokenExtent(fe->tu, t[i - 1]))).line;
  return fe_loc(fe, clang_getTokenLocation(fe->tu, t[i])).line != prev;
}

// The first token after offset `after` that is code: not in a preprocessor
// directive line, not in a skipped #if branch. The file length if none.
static unsigned next_code_token(const Frontend *fe, CXToken *t, unsigned n, unsigned j,
                                unsigned after, CXSourceRangeList *skipped) {
  for (; j < n; j++) {
    unsigned off = fe_loc(fe, clang_getTokenLocation(fe->tu, t[j])).offset;
    if (off <= after || in_skipped(fe, skipped, off)) continue;
    if (spelled(fe->tu, t[j], "#") && first_on_its_line(fe, t, j)) {
      after = logical_line_end(&fe->src, off);
      continue;
    }
    return off;
  }
  return (unsigned)fe->src.len;
}

// The file's tokens without comments (libclang returns them as tokens:
// `#pragma /* x */ coconet` is still a coconet pragma).
static void drop_comments(CXToken *t, unsigned *n) {
  unsigned k = 0;
  for (unsigned i = 0; i < *n; i++)
    if (clang_getTokenKind(t[i]) != CXToken_Comment) t[k++] = t[i];
  *n = k;
}

// The main file's tokens from one offset to another, without comments, and
// the #if branches the preprocessor skipped.
typedef struct Tokens {
  CXToken *t;
  unsigned n, all;
  CXSourceRangeList *skipped;
} Tokens;

static Tokens tokens_between(const Frontend *fe, unsigned from, unsigned to) {
  Tokens k;
  CXSourceLocation b = clang_getLocationForOffset(fe->tu, fe->file, from);
  CXSourceLocation e = clang_getLocationForOffset(fe->tu, fe->file, to);
  clang_tokenize(fe->tu, clang_getRange(b, e), &k.t, &k.n);
  k.all = k.n;
  drop_comments(k.t, &k.n);
  k.skipped = clang_getSkippedRanges(fe->tu, fe->file);
  return k;
}

static void tokens_free(const Frontend *fe, Tokens *k) {
  clang_disposeSourceRangeList(k->skipped);
  clang_disposeTokens(fe->tu, k->t, k->all);
}

// `#pragma cocnet region ...`: a namespace one or two letters from coconet's is
// a typo the compiler would ignore in silence; it is warned about.
static void near_miss(const Frontend *fe, CXToken word) {
  CXString s = clang_getTokenSpelling(fe->tu, word);
  const char *w = clang_getCString(s);
  if (strlen(w) >= 5 && text_distance(w, "coconet") <= 2) {
    SrcLoc loc = fe_loc(fe, clang_getTokenLocation(fe->tu, word));
    diag_warning(&loc, "'#pragma %s' is not a coconet directive and is ignored; did you mean '#pragma coconet'?", w);
  }
  clang_disposeString(s);
}

static Found *find_pragmas(const Frontend *fe, size_t *count) {
  Tokens k = tokens_between(fe, 0, (unsigned)fe->src.len);
  CXToken *t = k.t;
  unsigned n = k.n;
  CXSourceRangeList *skipped = k.skipped;
  Found *out = calloc(n + 1, sizeof *out);
  if (!out) COCONET_BUG("out of memory");
  *count = 0;
  for (unsigned i = 0; i < n; i++) {
    SrcLoc loc = fe_loc(fe, clang_getTokenLocation(fe->tu, t[i]));
    if (in_skipped(fe, skipped, loc.offset)) continue;
    if (clang_getTokenKind(t[i]) == CXToken_Identifier && spelled(fe->tu, t[i], "_Pragma"))
      report_operator_pragma(fe, t, n, i);
    if (i + 2 < n && first_on_its_line(fe, t, i) && spelled(fe->tu, t[i], "#") &&
        spelled(fe->tu, t[i + 1], "pragma") && !spelled(fe->tu, t[i + 2], "coconet"))
      near_miss(fe, t[i + 2]);
    if (i + 2 >= n || !first_on_its_line(fe, t, i) || !spelled(fe->tu, t[i], "#") ||
        !spelled(fe->tu, t[i + 1], "pragma") || !spelled(fe->tu, t[i + 2], "coconet"))
      continue;
    Found *f = &out[(*count)++];
    f->hash = loc.offset;
    f->text = fe_loc(fe, clang_getTokenLocation(fe->tu, t[i + 2])).offset;
    f->line_end = logical_line_end(&fe->src, f->text);
    f->next_tok = next_code_token(fe, t, n, i + 3, f->line_end, skipped);
  }
  tokens_free(fe, &k);
  return out;
}

// A preprocessor line inside a region that is not a conditional (#if ...
// #endif: the rewrite keeps the branch the flags chose): the rewrite replaces
// the region's text, so a #define, #undef or #include there would no longer
// reach the code after the region, and a #pragma its statement.
int directives_check_region_lines(const Frontend *fe, const Region *r) {
  static const char *const conditionals[] = {"if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else", "endif"};
  Tokens k = tokens_between(fe, r->range.begin.offset, r->range.end.offset);
  CXToken *t = k.t;
  unsigned n = k.n;
  int status = 0;
  for (unsigned i = 0; i + 1 < n && status == 0; i++) {
    SrcLoc loc = fe_loc(fe, clang_getTokenLocation(fe->tu, t[i]));
    if (!spelled(fe->tu, t[i], "#") || !first_on_its_line(fe, t, i) || in_skipped(fe, k.skipped, loc.offset)) continue;
    char *name = spelling(fe->tu, t[i + 1]);
    bool ok = strcmp(name, "pragma") == 0 && i + 2 < n && spelled(fe->tu, t[i + 2], "coconet");
    for (size_t k = 0; k < sizeof conditionals / sizeof *conditionals; k++) ok |= strcmp(name, conditionals[k]) == 0;
    if (!ok) {
      diag_error(&loc, "region '%s' contains '#%s'; coconet rewrites the region's text, which would drop it (a "
                       "definition would no longer reach the code after the region, a #pragma its statement): "
                       "move it before the region", r->name, name);
      status = -1;
    }
    free(name);
  }
  tokens_free(fe, &k);
  return status;
}

static SrcLoc at(const Frontend *fe, unsigned offset) { return source_loc(&fe->src, offset); }

static char *function_name(CXCursor fn) {
  if (clang_Cursor_isNull(fn)) return strdup("file");
  return fe_spelling(fn);
}

// Whitespace-free copy, for comparing expression texts.
// Does the region's text use the buffer expression `buf` (as a whole token run)?
static bool region_uses(const char *region_text, const char *buf) {
  char *hay = text_without(region_text, TEXT_BLANKS "\\"), *needle = text_without(buf, TEXT_BLANKS "\\");
  size_t n = strlen(needle);
  bool found = false;
  for (const char *p = hay; n && (p = strstr(p, needle)); p++) {
    bool left = p == hay || !text_ident_char(p[-1]) || !text_ident_char(needle[0]);
    bool right = !text_ident_char(p[n]) || !text_ident_char(needle[n - 1]);
    if (left && right && (p == hay || p[-1] != '.') && (p < hay + 2 || p[-1] != '>' || p[-2] != '-')) {
      found = true;
      break;
    }
  }
  free(hay);
  free(needle);
  return found;
}

// After the first clause that names a buffer the region does not use: the
// statement the region attached to (the next one after the pragma), when that
// is not a { ... } block, which is what a region usually marks.
static void note_attached(const Region *r, const char *body) {
  const char *p = body;
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  if (*p == '{') return;
  int n = (int)strcspn(p, "\n");
  diag_note(&r->range.begin, "the region is the statement after the pragma, '%.*s%s', not the block below it: put "
                             "the pragma right above the '{' of the block", n > 60 ? 60 : n, p, n > 60 ? "..." : "");
}

static int check_buffers(const Frontend *fe, const Region *r, unsigned text_off) {
  static const char *const buffer_clauses[] = {"shard", "scratch", "split", "replicated"};
  char *body = fe_text(fe, r->range);
  int bad = 0;
  for (const PragmaClause *c = r->pragma->clauses; c; c = c->next) {
    bool takes_buffers = false;
    for (size_t i = 0; i < sizeof buffer_clauses / sizeof *buffer_clauses; i++)
      takes_buffers |= strcmp(c->name, buffer_clauses[i]) == 0;
    for (const PragmaArg *a = c->args; takes_buffers && a; a = a->next) {
      if (a->key || region_uses(body, a->text)) continue;
      SrcLoc loc = at(fe, text_off + a->offset);
      diag_error(&loc, "'%s(%s)': the region never uses '%s'", c->name, a->text, a->text);
      if (!bad) note_attached(r, body);
      bad = -1;
    }
  }
  free(body);
  return bad;
}

typedef struct StmtSink {
  const Frontend *fe;
  Region *region;
  Stmt **tail;
} StmtSink;

static enum CXChildVisitResult collect_stmts(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  StmtSink *sink = data;
  for (Stmt *s = classify_region_stmt(sink->fe, c); s; s = s->next) {
    *sink->tail = s;
    sink->tail = &s->next;
    sink->region->nstmts++;
  }
  return CXChildVisit_Continue;
}

static void region_stmts(const Frontend *fe, Region *r) {
  StmtSink sink = {fe, r, &r->stmts};
  if (clang_getCursorKind(r->cursor) == CXCursor_CompoundStmt)
    clang_visitChildren(r->cursor, collect_stmts, &sink);
  else
    collect_stmts(r->cursor, r->cursor, &sink);
}

static char *default_name(const Frontend *fe, CXCursor fn, unsigned offset) {
  char *f = function_name(fn);
  char buf[512];
  snprintf(buf, sizeof buf, "%s_%u", f, at(fe, offset).line);
  free(f);
  return strdup(buf);
}

static void report_parse_error(const Frontend *fe, const Found *f, const PragmaError *err) {
  SrcLoc loc = at(fe, f->text + err->offset);
  diag_error(&loc, "%s", err->message);
}

static const char *directive_word(const Pragma *p) { return pragma_directive_name(p->directive); }

// Generated symbols are named after regions: names must be unique.
static int check_unique_name(const Program *prog, const Region *r) {
  for (const Region *o = prog->regions; o; o = o->next) {
    if (o == r || strcmp(o->name, r->name) != 0) continue;
    diag_error(&r->pragma_range.begin, "duplicate region name '%s'", r->name);
    diag_note(&o->pragma_range.begin, "the first region named '%s' is here", o->name);
    return -1;
  }
  return 0;
}

static int add_region(const Frontend *fe, Program *prog, Region ***tail, Pragma *p, const Found *f,
                      const Anchor *a) {
  Region *r = calloc(1, sizeof *r);
  if (!r) COCONET_BUG("out of memory");
  r->pragma = p;
  r->cursor = a->cursor;
  r->pragma_range = (SrcRange){at(fe, f->hash), at(fe, f->line_end)};
  r->range = fe_range(fe, clang_getCursorExtent(a->cursor));
  if (clang_getCursorKind(a->cursor) != CXCursor_CompoundStmt) {
    Stmt *probe = classify_stmt(fe, a->cursor);
    r->range = probe->range;
    stmt_free(probe);
  }
  r->function = function_name(a->function);
  r->function_start = fe_range(fe, clang_getCursorExtent(a->function)).begin;
  const PragmaClause *name = pragma_find_clause(p, "name");
  r->name = name && name->args ? strdup(name->args->text) : default_name(fe, a->function, f->hash);
  region_stmts(fe, r);
  **tail = r;
  *tail = &r->next;
  prog->nregions++;
  int dup = check_unique_name(prog, r);
  return check_buffers(fe, r, f->text) || dup ? -1 : 0;
}

static bool ends_before(SrcRange outer, unsigned offset) { return offset >= outer.end.offset; }

// A region inside another region's statement is an error.
static int check_nesting(const Frontend *fe, const Program *prog, const Found *f) {
  for (const Region *r = prog->regions; r; r = r->next) {
    if (f->hash > r->range.begin.offset && !ends_before(r->range, f->hash)) {
      SrcLoc loc = at(fe, f->hash);
      diag_error(&loc, "nested '#pragma coconet region': regions cannot contain regions");
      diag_note(&r->pragma_range.begin, "the enclosing region '%s' starts here", r->name);
      return -1;
    }
  }
  return 0;
}

// `symmetric` applies to `cudaMalloc(&p, bytes)`, bare or wrapped: the
// pointer's text, and the statement's range (with its ';').
static char *symmetric_target(const Frontend *fe, const Anchor *a, SrcRange *range) {
  Stmt *s = classify_stmt(fe, a->cursor);
  char *target = NULL;
  char *text = fe_text(fe, s->range);
  char *call = strstr(text, "cudaMalloc");
  if (call && (call[10] == '(' || call[10] == ' ')) {
    char *amp = strchr(call, '&');
    char *comma = amp ? strchr(amp, ',') : NULL;
    if (amp && comma) {
      while (comma > amp && (comma[-1] == ' ' || comma[-1] == ')')) comma--;
      target = strndup(amp + 1, (size_t)(comma - amp - 1));
    }
  }
  *range = s->range;
  free(text);
  stmt_free(s);
  return target;
}

static int add_annotation(const Frontend *fe, Program *prog, Pragma *p, const Found *f,
                          const Anchor *a) {
  Annotation *an = calloc(1, sizeof *an);
  if (!an) COCONET_BUG("out of memory");
  an->pragma = p;
  an->pragma_range = (SrcRange){at(fe, f->hash), at(fe, f->line_end)};
  an->range = fe_range(fe, clang_getCursorExtent(a->cursor));
  Annotation **list = p->directive == PRAGMA_SYMMETRIC ? &prog->symmetric : &prog->pointwise;
  an->target = p->directive == PRAGMA_SYMMETRIC ? symmetric_target(fe, a, &an->range) : fe_spelling(a->cursor);
  an->next = NULL;
  while (*list) list = &(*list)->next;
  *list = an;
  return an->target ? 0 : -1;
}

static int attach(const Frontend *fe, Program *prog, Region ***tail, const Anchors *anchors,
                  const Found *f, Pragma *p) {
  SrcLoc loc = at(fe, f->hash);
  bool decl = p->directive == PRAGMA_POINTWISE;
  const Anchor *a = f->next_tok < fe->src.len ? anchor_at(anchors, f->next_tok, decl) : NULL;
  if (decl && (!a || !cursor_is_kernel(a->cursor))) {
    diag_error(&loc, "'#pragma coconet pointwise' must be followed by a __global__ function definition");
    pragma_free(p);
    return -1;
  }
  if (!a) {
    diag_error(&loc, "'#pragma coconet %s' must be followed by a statement%s", directive_word(p),
               p->directive == PRAGMA_REGION ? " (normally a { ... } block)" : "");
    pragma_free(p);
    return -1;
  }
  if (p->directive == PRAGMA_REGION) {
    unsigned begin = fe_range(fe, clang_getCursorExtent(a->cursor)).begin.offset;
    for (const Region *r = prog->regions; r; r = r->next) {
      if (r->range.begin.offset != begin) continue;
      diag_error(&loc, "a second '#pragma coconet region' for the same statement; write one region pragma "
                       "with all the clauses");
      diag_note(&r->pragma_range.begin, "region '%s' already applies to it", r->name);
      pragma_free(p);
      return -1;
    }
    if (check_nesting(fe, prog, f)) {
      pragma_free(p);
      return -1;
    }
    return add_region(fe, prog, tail, p, f, a);
  }
  if (add_annotation(fe, prog, p, f, a)) {
    diag_error(&loc, "'#pragma coconet symmetric' must be followed by a cudaMalloc(&ptr, bytes) call");
    return -1;
  }
  return 0;
}

static int collect(const Frontend *fe, Program *prog, unsigned only) {
  memset(prog, 0, sizeof *prog);
  Anchors anchors = {fe, NULL, 0, 0, clang_getNullCursor()};
  clang_visitChildren(clang_getTranslationUnitCursor(fe->tu), collect_anchors, &anchors);
  size_t n;
  Found *found = find_pragmas(fe, &n);
  Region **tail = &prog->regions;
  int status = diag_error_count() ? -1 : 0;
  for (size_t i = 0; i < n; i++) {
    char *text = pragma_text(&fe->src, &found[i]);
    Pragma *p = NULL;
    PragmaError err;
    if (pragma_parse(text, strlen(text), &p, &err) != 0) {
      report_parse_error(fe, &found[i], &err);
      status = -1;
    } else if (only != UINT_MAX && found[i].hash != only && p->directive == PRAGMA_REGION) {
      pragma_free(p);  // another region, read in the main parse
    } else if (attach(fe, prog, &tail, &anchors, &found[i], p)) {
      status = -1;
    }
    free(text);
  }
  free(found);
  free(anchors.v);
  return status;
}

int directives_collect(const Frontend *fe, Program *prog) { return collect(fe, prog, UINT_MAX); }

int directives_collect_one(const Frontend *fe, Program *prog, unsigned pragma_at) { return collect(fe, prog, pragma_at); }

static void annotations_free(Annotation *a) {
  while (a) {
    Annotation *next = a->next;
    pragma_free(a->pragma);
    free(a->target);
    free(a);
    a = next;
  }
}

void program_free(Program *prog) {
  for (Region *r = prog->regions; r;) {
    Region *next = r->next;
    for (Stmt *s = r->stmts; s;) {
      Stmt *sn = s->next;
      stmt_free(s);
      s = sn;
    }
    pragma_free(r->pragma);
    region_instances_free(r);
    free(r->name);
    free(r->function);
    free(r);
    r = next;
  }
  annotations_free(prog->symmetric);
  annotations_free(prog->pointwise);
  if (prog->instances) {
    frontend_dispose(prog->instances);
    free(prog->instances);
  }
  memset(prog, 0, sizeof *prog);
}
