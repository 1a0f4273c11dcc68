// places.c: where generated text goes in the file: above the top-level
// declaration that holds a region, or beside its function inside the
// namespaces that hold it (code generation, symmetric memory and the
// --verify=exec harness place their text here).
#include "front/front.h"

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

static enum CXChildVisitResult find_holder(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Holder *h = data;
  if (!fe_in_main_file(h->fe, clang_getCursorLocation(c))) return CXChildVisit_Continue;
  SrcRange r = fe_range(h->fe, clang_getCursorExtent(c));
  if (r.begin.offset > h->offset || r.end.offset <= h->offset) return CXChildVisit_Continue;
  if (h->depth == 0) h->top = r.begin.offset;
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
// and defined before it; else above the top-level declaration holding the
// region (false), when defined before that; *ok says whether either holds.
bool place_copy_beside(const Frontend *fe, const KernelDef *def, unsigned offset, bool *ok) {
  CXCursor fn;
  unsigned beside = place_fn(fe, offset, &fn);
  bool here = !clang_Cursor_isNull(fn) && same_namespaces(def->cursor, fn) && def->range.end.offset <= beside;
  *ok = here || def->range.end.offset <= place_decl(fe, offset);
  return here;
}

