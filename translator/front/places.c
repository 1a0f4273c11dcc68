// places.c: where generated text goes in the file: above the top-level
// declaration that holds a region, or beside its function inside the
// namespaces that hold it (code generation, symmetric memory and the
// --verify harness place their text here).
#include "front/front.h"
#include "common/text.h"

#include <stdlib.h>
#include <string.h>

static enum CXCursorKind kind_of(CXCursor c) { return clang_getCursorKind(c); }

// What holds an offset: the top-level declaration, and the function definition
// when a namespace holds it directly.
typedef struct Holder {
  const Frontend *fe;
  unsigned offset;
  unsigned top;          // where the top-level declaration that holds offset starts
  CXCursor fn;           // the function (template) inside a namespace that holds it (null: none)
  int depth;             // namespaces entered
} Holder;

// Whether c, in the main file, holds byte offset; *begin gets where it starts.
static bool holds(const Frontend *fe, CXCursor c, unsigned offset, unsigned *begin) {
  if (!fe_in_main_file(fe, clang_getCursorLocation(c))) return false;
  SrcRange r = fe_range(fe, clang_getCursorExtent(c));
  *begin = r.begin.offset;
  return r.begin.offset <= offset && offset < r.end.offset;
}

static enum CXChildVisitResult find_holder(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Holder *h = data;
  unsigned begin;
  if (!holds(h->fe, c, h->offset, &begin)) return CXChildVisit_Continue;
  if (h->depth == 0) h->top = begin;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k == CXCursor_Namespace) {
    h->depth++;
    return CXChildVisit_Recurse;
  }
  if (h->depth > 0 && (k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate)) h->fn = c;
  return CXChildVisit_Break;
}

static Holder holder_of(const Frontend *fe, unsigned offset) {
  Holder h = {fe, offset, offset, clang_getNullCursor(), 0};
  clang_visitChildren(clang_getTranslationUnitCursor(fe->tu), find_holder, &h);
  return h;
}

static unsigned line_start(const char *buf, unsigned at) {
  while (at > 0 && buf[at - 1] != '\n') at--;
  return at;
}

// Above the comment lines directly on top of the declaration that starts at `at`.
static unsigned above_comments(const Frontend *fe, unsigned at) {
  const char *buf = fe->src.buf;
  unsigned ls = line_start(buf, at);
  if (strspn(buf + ls, " \t") != at - ls) return at;
  at = ls;
  while (at > 0) {
    unsigned prev = line_start(buf, at - 1);
    size_t lead = strspn(buf + prev, " \t");
    if (strncmp(buf + prev + lead, "//", 2) != 0) break;
    at = prev;
  }
  return at;
}

typedef struct Within {
  const Frontend *fe;
  unsigned offset;
  CXCursor fn;
} Within;

static enum CXChildVisitResult find_function(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Within *w = data;
  unsigned begin;
  if (!holds(w->fe, c, w->offset, &begin)) return CXChildVisit_Continue;
  enum CXCursorKind k = kind_of(c);
  if (k == CXCursor_FunctionDecl || k == CXCursor_CXXMethod || k == CXCursor_FunctionTemplate ||
      k == CXCursor_Constructor || k == CXCursor_Destructor) {
    w->fn = c;
    return CXChildVisit_Break;
  }
  return k == CXCursor_Namespace || k == CXCursor_LinkageSpec || k == CXCursor_StructDecl ||
                 k == CXCursor_ClassDecl || k == CXCursor_ClassTemplate
             ? CXChildVisit_Recurse
             : CXChildVisit_Break;
}

CXCursor place_function(const Frontend *fe, unsigned offset) {
  Within w = {fe, offset, clang_getNullCursor()};
  clang_visitChildren(clang_getTranslationUnitCursor(fe->tu), find_function, &w);
  return w.fn;
}

unsigned place_decl(const Frontend *fe, unsigned offset) { return above_comments(fe, holder_of(fe, offset).top); }

unsigned place_fn(const Frontend *fe, unsigned offset, CXCursor *fn) {
  Holder h = holder_of(fe, offset);
  *fn = h.fn;
  unsigned at = clang_Cursor_isNull(h.fn) ? h.top : fe_range(fe, clang_getCursorExtent(h.fn)).begin.offset;
  return above_comments(fe, at);
}

// Whether two declarations are in the same namespaces (blocks of one namespace are one).
static bool same_namespaces(CXCursor a, CXCursor b) {
  for (;;) {
    a = clang_getCursorSemanticParent(a);
    b = clang_getCursorSemanticParent(b);
    while (!clang_Cursor_isNull(a) && kind_of(a) != CXCursor_Namespace && kind_of(a) != CXCursor_TranslationUnit)
      a = clang_getCursorSemanticParent(a);
    while (!clang_Cursor_isNull(b) && kind_of(b) != CXCursor_Namespace && kind_of(b) != CXCursor_TranslationUnit)
      b = clang_getCursorSemanticParent(b);
    if (clang_Cursor_isNull(a) || clang_Cursor_isNull(b)) return clang_Cursor_isNull(a) && clang_Cursor_isNull(b);
    if (kind_of(a) == CXCursor_TranslationUnit || kind_of(b) == CXCursor_TranslationUnit) return kind_of(a) == kind_of(b);
    if (!clang_equalCursors(clang_getCanonicalCursor(a), clang_getCanonicalCursor(b))) return false;
  }
}

// Where the copy of a kernel defined by def can go for the region at `offset`:
// beside the region's function (true), when the kernel is in its namespaces
// and defined before it (a header's kernel is included above anything the file
// defines); else above the top-level declaration holding the region (false),
// when defined before that; *ok says whether either holds.
bool place_copy_beside(const Frontend *fe, const KernelDef *def, unsigned offset, bool *ok) {
  CXCursor fn;
  unsigned beside = place_fn(fe, offset, &fn);
  if (def->in_header) {
    *ok = true;
    return !clang_Cursor_isNull(fn) && same_namespaces(def->cursor, fn);
  }
  bool here = !clang_Cursor_isNull(fn) && same_namespaces(def->cursor, fn) && def->range.end.offset <= beside;
  *ok = here || def->range.end.offset <= place_decl(fe, offset);
  return here;
}

// The conditional blocks open at each line start of a text: a scan of its
// preprocessor lines (#if/#ifdef/#ifndef open one, #endif closes it; #else and
// #elif stay in it), block comments skipped. Each open block is named by the
// offset of its #if, so that two places are in the same blocks when their
// stacks are equal.
enum { PLACE_DEPTH = 64 };
typedef struct Conds {
  unsigned open[PLACE_DEPTH];
  int depth;  // -1 once the nesting is deeper than PLACE_DEPTH or unbalanced
} Conds;

static bool same_conds(const Conds *a, const Conds *b) {
  if (a->depth < 0 || a->depth != b->depth) return false;
  for (int i = 0; i < a->depth; i++)
    if (a->open[i] != b->open[i]) return false;
  return true;
}

// The directive a line starts with ("include", "if", ...: its first letter at
// *word), or false when the line is not a preprocessor line.
static bool directive(const char *buf, unsigned at, unsigned end, const char **word) {
  while (at < end && (buf[at] == ' ' || buf[at] == '\t')) at++;
  if (at >= end || buf[at] != '#') return false;
  at++;
  while (at < end && (buf[at] == ' ' || buf[at] == '\t')) at++;
  *word = buf + at;
  return true;
}

static bool starts_word(const char *s, const char *w) {
  size_t n = strlen(w);
  return strncmp(s, w, n) == 0 && !text_ident_char(s[n]);
}

// Whether a block comment is open at the end of line [at, end), given whether
// one was open at its start (string and character literals skipped).
static bool comment_after(const char *buf, unsigned at, unsigned end, bool open) {
  char quote = 0;
  for (unsigned i = at; i < end; i++) {
    char c = buf[i], next = i + 1 < end ? buf[i + 1] : '\0';
    if (open) {
      if (c == '*' && next == '/') open = false, i++;
    } else if (quote) {
      if (c == '\\') i++;
      else if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '/' && next == '/') {
      break;
    } else if (c == '/' && next == '*') {
      open = true, i++;
    }
  }
  return open;
}

// The #if blocks open at offset upto; with want, *best gets the start of the
// line after the last #include before upto that is at file scope and inside
// exactly the blocks of want (0: none).
static Conds scan_conditionals(const Frontend *fe, unsigned upto, const Conds *want, unsigned *best) {
  const char *buf = fe->src.buf;
  Conds now = {{0}, 0};
  bool in_comment = false;
  for (unsigned line = 0; line < upto;) {
    unsigned end = line;
    while (end < fe->src.len && buf[end] != '\n') end++;
    const char *word;
    if (!in_comment && now.depth >= 0 && directive(buf, line, end, &word)) {
      if (starts_word(word, "if") || starts_word(word, "ifdef") || starts_word(word, "ifndef")) {
        if (now.depth == PLACE_DEPTH) now.depth = -1;
        else now.open[now.depth++] = line;
      } else if (starts_word(word, "endif")) {
        now.depth = now.depth > 0 ? now.depth - 1 : -1;
      } else if (want && starts_word(word, "include") && end < upto && same_conds(&now, want) &&
                 place_decl(fe, end + 1) == end + 1) {
        *best = end + 1;
      }
    }
    in_comment = comment_after(buf, line, end, in_comment);
    line = end + 1;
  }
  return now;
}

unsigned place_include(const Frontend *fe, unsigned before, bool *found) {
  Conds there = scan_conditionals(fe, before, NULL, NULL);
  unsigned best = 0;
  if (there.depth >= 0) scan_conditionals(fe, before, &there, &best);
  *found = best > 0;
  return best;
}

// The names coconet's own start with that the translation unit declares or
// defines as macros outside system headers, though the file may not spell them
// (a header's `#define coconet_p 1`, a name pasted by a macro): one per line.
static enum CXChildVisitResult find_own_names(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (clang_Location_isInSystemHeader(clang_getCursorLocation(c))) return CXChildVisit_Continue;
  enum CXCursorKind k = kind_of(c);
  if (clang_isDeclaration(k) || k == CXCursor_MacroDefinition) {
    CXString sp = clang_getCursorSpelling(c);
    const char *name = clang_getCString(sp);
    if (name && strncmp(name, "coconet_", 8) == 0) {
      text_add(data, name);
      text_add(data, "\n");
    }
    clang_disposeString(sp);
  }
  return k == CXCursor_MacroDefinition || k == CXCursor_MacroExpansion || k == CXCursor_InclusionDirective
             ? CXChildVisit_Continue
             : CXChildVisit_Recurse;
}

const char *fe_names_in_use(const Frontend *fe) {
  if (!fe->names) return fe->src.buf;  // no translation unit of its own to walk
  if (!fe->names->text) {
    Text t = {0};
    text_add(&t, fe->src.buf);
    text_add(&t, "\n");
    clang_visitChildren(clang_getTranslationUnitCursor(fe->tu), find_own_names, &t);
    fe->names->text = t.s;
  }
  return fe->names->text;
}

bool place_namespaces(CXCursor fn, char **ns_open, char **ns_close, char **ns_prefix) {
  Text open = {0}, close = {0}, prefix = {0};
  text_add(&open, "");
  text_add(&close, "");
  text_add(&prefix, "");
  bool ok = true;
  for (CXCursor p = clang_getCursorSemanticParent(fn); !clang_Cursor_isNull(p) && ok;
       p = clang_getCursorSemanticParent(p)) {
    enum CXCursorKind k = clang_getCursorKind(p);
    if (k == CXCursor_TranslationUnit) break;
    if (k != CXCursor_Namespace) {
      ok = false;
      break;
    }
    char *name = clang_Cursor_isAnonymous(p) ? strdup("") : fe_spelling(p);
    char *o = xasprintf("namespace %s%s{\n%s", name, *name ? " " : "", open.s);
    char *c = xasprintf("%s}  // namespace %s\n", close.s, *name ? name : "(anonymous)");
    char *q = xasprintf("%s%s%s", name, *name ? "::" : "", prefix.s);
    free(open.s);
    free(close.s);
    free(prefix.s);
    open = (Text){o, strlen(o), strlen(o) + 1};
    close = (Text){c, strlen(c), strlen(c) + 1};
    prefix = (Text){q, strlen(q), strlen(q) + 1};
    free(name);
  }
  *ns_open = open.s;
  *ns_close = close.s;
  *ns_prefix = prefix.s;
  return ok;
}
