// analyze_copy.c: whether a row-wise kernel's body can be copied, as written,
// into the fused kernel of `split reorder fuse` (codegen_rows.c makes the copy):
// a kernel at namespace scope, defined before the region's function (in this
// file or a header of the user's), its parameters and body spelled in place,
// __ldg called where it is written.
#include "analyze_impl.h"
#include "common/text.h"

#include <stdlib.h>
#include <string.h>

static enum CXCursorKind kind_of(CXCursor c) { return clang_getCursorKind(c); }

typedef struct LdgScan {
  CXCursor macro_call;  // an __ldg call written through a macro (null: none)
} LdgScan;

// An __ldg call whose name is not written where the call is: a macro's (the
// token where the call is, in the file that holds it, is not `__ldg`).
static enum CXChildVisitResult find_macro_ldg(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  LdgScan *s = data;
  if (kind_of(c) != CXCursor_CallExpr) return CXChildVisit_Recurse;
  char *name = fe_spelling(c);
  bool ldg = strcmp(name, "__ldg") == 0;
  free(name);
  if (!ldg) return CXChildVisit_Recurse;
  CXTranslationUnit tu = clang_Cursor_getTranslationUnit(c);
  CXFile file = NULL;
  unsigned offset = 0;
  clang_getFileLocation(clang_getCursorLocation(c), &file, NULL, NULL, &offset);
  CXToken *at = file ? clang_getToken(tu, clang_getLocationForOffset(tu, file, offset)) : NULL;
  bool written = at && fe_token_is(tu, *at, "__ldg");
  if (at) clang_disposeTokens(tu, at, 1);
  if (written) return CXChildVisit_Recurse;
  s->macro_call = c;
  return CXChildVisit_Break;
}

static bool in_class(CXCursor p) {
  enum CXCursorKind k = kind_of(p);
  return k == CXCursor_StructDecl || k == CXCursor_ClassDecl || k == CXCursor_UnionDecl ||
         k == CXCursor_ClassTemplate || k == CXCursor_ClassTemplatePartialSpecialization;
}

// Whether every #if, #ifdef and #ifndef of a text has its #endif in it, and
// no #else, #elif or #endif belongs to one outside it.
static bool conditionals_balanced(const char *text) {
  int depth = 0;
  for (const char *line = text; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    const char *p = line + strspn(line, " \t");
    if (*p != '#') continue;
    p += 1 + strspn(p + 1, " \t");
    if (strncmp(p, "if", 2) == 0) depth++;
    else if (strncmp(p, "endif", 5) == 0 && --depth < 0) return false;
    else if ((strncmp(p, "else", 4) == 0 || strncmp(p, "elif", 4) == 0) && depth == 0) return false;
  }
  return depth == 0;
}

// Whether a kernel's parameters and body are spelled in place in the file that
// defines it (so that their text can be copied), not produced by a macro: each
// parameter's text ends with its name, the texts follow each other, the body
// is `{ ... }` with its preprocessor conditionals whole.
static bool spelled_in_place(const Frontend *fe, const KernelDef *def) {
  CXCursor parms[64];
  int np = fe_kids_of_kind(def->cursor, CXCursor_ParmDecl, CXCursor_ParmDecl, CXCursor_ParmDecl, parms, 64);
  CXFile file = NULL;
  unsigned after = 0;
  clang_getFileLocation(clang_getRangeStart(clang_getCursorExtent(def->cursor)), &file, NULL, NULL, &after);
  bool ok = np < 64 && file;
  for (int i = 0; i < np && ok; i++) {
    CXSourceRange r = clang_getCursorExtent(parms[i]);
    CXFile bf = NULL, ef = NULL;
    unsigned b = 0, e = 0;
    clang_getFileLocation(clang_getRangeStart(r), &bf, NULL, NULL, &b);
    clang_getFileLocation(clang_getRangeEnd(r), &ef, NULL, NULL, &e);
    char *t = fe_cursor_text(fe, parms[i]), *name = fe_spelling(parms[i]);
    size_t nt = strlen(t), nn = strlen(name);
    ok = bf && ef && clang_File_isEqual(bf, file) && clang_File_isEqual(ef, file) && b >= after && e > b &&
         (!nn || (nt >= nn && strcmp(t + nt - nn, name) == 0));
    after = e;
    free(t);
    free(name);
  }
  CXCursor bc = fe_kids(def->cursor).last;
  CXFile bf = NULL;
  unsigned b = 0;
  clang_getFileLocation(clang_getRangeStart(clang_getCursorExtent(bc)), &bf, NULL, NULL, &b);
  char *body = fe_cursor_text(fe, bc);
  size_t nb = strlen(body);
  ok = ok && bf && clang_File_isEqual(bf, file) && nb >= 2 && body[0] == '{' && body[nb - 1] == '}' && b >= after &&
       conditionals_balanced(body);
  free(body);
  return ok;
}

char *rows_copy_why(const Frontend *fe, const Stmt *s, SrcLoc *loc) {
  const KernelDef *def = s->launch ? s->launch->def : NULL;
  if (!def) return NULL;
  const char *k = s->launch->kernel;
  *loc = def->range.begin;
  for (CXCursor p = clang_getCursorSemanticParent(def->cursor);
       !clang_Cursor_isNull(p) && kind_of(p) != CXCursor_TranslationUnit; p = clang_getCursorSemanticParent(p))
    if (in_class(p)) {
      char *scope = fe_spelling(p);
      char *why = xasprintf("fuse: kernel '%s' is a member of '%s'; the fused kernel copies a row-wise kernel's body "
                            "into a function at namespace scope: define the kernel at namespace scope, or drop fuse",
                            k, scope);
      free(scope);
      return why;
    }
  if (def->in_header) *loc = fe_any_loc(fe, clang_getCursorLocation(def->cursor));
  if (def->is_template && !def->args)
    return xasprintf("fuse: coconet cannot spell the template arguments of kernel '%s' (%s), which the fused kernel's "
                     "copy of its body needs: drop fuse", k, def->why ? def->why : "no instance");
  bool placed;
  place_copy_beside(fe, def, s->range.begin.offset, &placed);
  if (!placed)
    return xasprintf("fuse: kernel '%s' is defined after the function that launches it; the fused kernel, which "
                     "copies the kernel's body, goes above that function: define the kernel before it, or drop fuse",
                     k);
  if (!spelled_in_place(fe, def))
    return xasprintf("fuse: kernel '%s' has its parameters or its body written through a macro, or a #if that "
                     "its body does not close; the fused kernel copies them as written: write them out in the "
                     "kernel, or drop fuse", k);
  CXCursor fn;
  unsigned place = place_fn(fe, s->range.begin.offset, &fn);
  char *gone = macro_gone_at(fe, fe_kids(def->cursor).last, place);
  if (gone) {
    char *why = macro_name_is_where(gone)
                    ? xasprintf("fuse: kernel '%s' uses '%s', whose value is where the text is written; the fused "
                                "kernel's copy of the kernel's text, above the region's function, would differ: "
                                "drop fuse", k, gone)
                    : xasprintf("fuse: kernel '%s' uses macro '%s', which a file of yours #undefs or #defines again; "
                                "the fused kernel's copy of the kernel's text, above the region's function, would not "
                                "mean what it means in the kernel: drop fuse", k, gone);
    free(gone);
    return why;
  }
  SrcLoc other;
  char *clash = copy_name_clash(fe, def->cursor, place, &other);
  if (clash) {
    char *why = xasprintf("fuse: kernel '%s' uses '%s', and a file of yours declares '%s' again after the kernel "
                          "(%s:%u); the fused kernel's copy of the kernel's text, above the region's function, could "
                          "mean that one (another overload, a name that hides the kernel's): drop fuse, or rename it",
                          k, clash, clash, text_base_name(other.file), other.line);
    free(clash);
    return why;
  }
  bool instance = def->is_template && def->inst_fe;
  const Frontend *kfe = instance ? def->inst_fe : fe;
  LdgScan scan = {clang_getNullCursor()};
  clang_visitChildren(instance ? def->inst : def->cursor, find_macro_ldg, &scan);
  if (!clang_Cursor_isNull(scan.macro_call)) {
    *loc = fe_any_loc(kfe, clang_getCursorLocation(scan.macro_call));
    return xasprintf("fuse: kernel '%s' calls __ldg through a macro; the fused kernel's copy of the kernel turns __ldg "
                     "into a coherent load (the read-only cache does not see the rows the fused kernel writes) where "
                     "it is written in the kernel: call __ldg there, or drop fuse", k);
  }
  return NULL;
}
