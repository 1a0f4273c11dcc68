// symmetric.c: what `#pragma coconet symmetric` makes of the file.
//
//   cudaMalloc(&p, bytes)   (annotated)  ->  coconet_symmetric_malloc(&p, bytes)
//   cudaFree(p)             (every call) ->  coconet_free(p)
//   ncclCommDestroy(comm)   (every call) ->  coconet_comm_destroy(comm)
//
// (runtime/include/coconet_fused.h): the allocation comes from ncclMemAlloc
// and is recorded, so that fused kernels find its window; coconet_free sends
// a symmetric pointer to ncclMemFree (after deregistering its windows) and any
// other to cudaFree; coconet_comm_destroy releases what coconet made on a
// communicator first. The pragma line is commented; `#include
// <coconet_fused.h>` goes before the first top-level declaration edited. A call
// written inside a macro's body cannot be rewritten: a warning names it.
#include "output/output.h"
#include "common/text.h"

#include <stdlib.h>
#include <string.h>

typedef struct Calls {
  const Frontend *fe;
  Edit **edits;
  unsigned first;   // offset of the earliest edit
} Calls;

// The offset of identifier `name` followed by '(' in [begin, end), or -1.
static long find_call(const char *buf, unsigned begin, unsigned end, const char *name) {
  size_t n = strlen(name);
  for (unsigned at = begin; at + n <= end; at++) {
    if (strncmp(buf + at, name, n) != 0 || (at > 0 && text_ident_char(buf[at - 1])) || text_ident_char(buf[at + n])) continue;
    unsigned p = at + (unsigned)n;
    while (p < end && (buf[p] == ' ' || buf[p] == '\t' || buf[p] == '\n')) p++;
    if (p < end && buf[p] == '(') return at;
  }
  return -1;
}

static void note_edit(Calls *c, unsigned at) {
  if (at < c->first) c->first = at;
}

static enum CXChildVisitResult visit(CXCursor cur, CXCursor parent, CXClientData data) {
  (void)parent;
  Calls *c = data;
  if (!fe_in_main_file(c->fe, clang_getCursorLocation(cur))) return CXChildVisit_Continue;
  if (clang_getCursorKind(cur) != CXCursor_CallExpr) return CXChildVisit_Recurse;
  CXString s = clang_getCursorSpelling(cur);
  const char *name = clang_getCString(s);
  const char *to = !strcmp(name, "cudaFree") ? "coconet_free" : !strcmp(name, "ncclCommDestroy") ? "coconet_comm_destroy" : NULL;
  if (to) {
    SrcRange r = fe_range(c->fe, clang_getCursorExtent(cur));
    long at = find_call(c->fe->src.buf, r.begin.offset, r.end.offset, name);
    if (at >= 0) {
      edit_add(c->edits, (unsigned)at, (unsigned)at + (unsigned)strlen(name), to);
      note_edit(c, (unsigned)at);
    } else {
      diag_warning(&r.begin, "this %s comes from a macro's body, which coconet cannot rewrite; if it %s, call %s "
                             "instead", name, strcmp(to, "coconet_free") == 0 ? "frees a symmetric buffer" : "destroys a "
                             "communicator a fused kernel used", to);
    }
  }
  clang_disposeString(s);
  return CXChildVisit_Recurse;
}

int symmetric_edits(const Frontend *fe, const Program *prog, Edit **edits, unsigned *first) {
  if (!prog->symmetric) return 0;
  Calls c = {fe, edits, fe->src.len};
  for (const Annotation *a = prog->symmetric; a; a = a->next) {
    long at = find_call(fe->src.buf, a->range.begin.offset, a->range.end.offset, "cudaMalloc");
    if (at < 0) {
      diag_error(&a->range.begin, "'#pragma coconet symmetric': the cudaMalloc of '%s' comes from a macro's body, "
                                  "which coconet cannot rewrite; write the cudaMalloc call in the statement",
                 a->target);
      return -1;
    }
    char *comment = rewrite_pragma_comment(&fe->src, a->pragma_range);
    edit_add(edits, a->pragma_range.begin.offset, a->pragma_range.end.offset, comment);
    free(comment);
    edit_add(edits, (unsigned)at, (unsigned)at + 10, "coconet_symmetric_malloc");
    note_edit(&c, a->pragma_range.begin.offset);
  }
  clang_visitChildren(clang_getTranslationUnitCursor(fe->tu), visit, &c);
  *first = place_decl(fe, c.first);
  return 0;
}
