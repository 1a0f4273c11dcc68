// codegen_unused.c: variables only the replaced launches used.
//
// A generated kernel picks its own grid, so the grid, block and shared memory
// expressions of the launches it replaces are dropped, and it takes only the
// arguments its body reads. A local variable or a
// parameter named there that nothing else in its function uses, or a variable of
// the file's scope nothing else in the file uses, would then draw an
// unused-variable warning from the compiler; the block says (void)NAME, or
// (void)&NAME for a local that is not const (nvcc warns that a variable is
// "set but never used" through a (void) cast of its value). So does a kernel
// of internal linkage only the replaced launches called, and a static host
// function a replaced launch was seen through (wrapper.c), and a variable only
// such a function's call named.
#include "codegen_impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct Refs {
  CXCursor decl;
  const SrcRange *skip;  // the replaced statements
  int nskip;
  const Frontend *fe;
  int count;             // references outside them
} Refs;

static bool in_ranges(const SrcRange *r, int n, unsigned offset) {
  for (int i = 0; i < n; i++)
    if (offset >= r[i].begin.offset && offset < r[i].end.offset) return true;
  return false;
}

static enum CXChildVisitResult count_refs(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Refs *refs = data;
  if (clang_getCursorKind(c) == CXCursor_DeclRefExpr &&
      clang_equalCursors(clang_getCanonicalCursor(clang_getCursorReferenced(c)), refs->decl)) {
    SrcLoc at = fe_loc(refs->fe, clang_getCursorLocation(c));
    if (!in_ranges(refs->skip, refs->nskip, at.offset)) refs->count++;
  }
  return CXChildVisit_Recurse;
}

static bool is_function(enum CXCursorKind k) {
  return k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate || k == CXCursor_CXXMethod ||
         k == CXCursor_Constructor || k == CXCursor_Destructor || k == CXCursor_LambdaExpr;
}

// Count references in the main file's top-level declarations only (not the headers').
static enum CXChildVisitResult count_refs_in_main(CXCursor c, CXCursor parent, CXClientData data) {
  Refs *refs = data;
  if (fe_in_main_file(refs->fe, clang_getCursorLocation(c))) {
    count_refs(c, parent, data);
    clang_visitChildren(c, count_refs, data);
  }
  return CXChildVisit_Continue;
}

// The local, parameter or file-scope variable (`constexpr int kBlock = 256;`)
// a piece names, if only replaced statements use it.
static char *unused_after(const Frontend *fe, const Piece *p, const SrcRange *skip, int nskip) {
  if (!p->text || !cg_simple(p->text) || strchr(p->text, '.') || strstr(p->text, "->")) return NULL;
  CXSourceLocation at = clang_getLocationForOffset(fe->tu, fe->file, p->range.begin.offset);
  CXCursor ref = clang_getCursor(fe->tu, at);
  if (clang_getCursorKind(ref) != CXCursor_DeclRefExpr) return NULL;
  CXCursor decl = clang_getCursorReferenced(ref);
  enum CXCursorKind k = clang_getCursorKind(decl);
  CXCursor fn = clang_getCursorSemanticParent(decl);
  enum CXCursorKind scope = clang_getCursorKind(fn);
  bool file_scope = k == CXCursor_VarDecl && (scope == CXCursor_TranslationUnit || scope == CXCursor_Namespace) &&
                    fe_in_main_file(fe, clang_getCursorLocation(decl));
  if ((k != CXCursor_VarDecl && k != CXCursor_ParmDecl) || (!is_function(scope) && !file_scope)) return NULL;
  Refs refs = {clang_getCanonicalCursor(decl), skip, nskip, fe, 0};
  if (file_scope) clang_visitChildren(clang_getTranslationUnitCursor(fe->tu), count_refs_in_main, &refs);
  else clang_visitChildren(fn, count_refs, &refs);
  if (refs.count) return NULL;
  char *name = fe_spelling(decl);
  if (k != CXCursor_VarDecl || clang_isConstQualifiedType(clang_getCursorType(decl))) return name;
  char *addr = xasprintf("&%s", name);
  free(name);
  return addr;
}

static int add_name(char **names, int n, int max, char *name) {
  for (int i = 0; i < n && name; i++)
    if (strcmp(names[i], name) == 0) {
      free(name);
      return n;
    }
  if (!name || n == max) {
    free(name);
    return n;
  }
  names[n] = name;
  return n + 1;
}

// A function of internal linkage (static, or in an anonymous namespace) that
// only replaced statements call: a kernel they launched, or a host function a
// launch was seen through (wrapper.c).
static char *unused_function(const Frontend *fe, CXCursor fn, const SrcRange *skip, int nskip) {
  if (clang_Cursor_isNull(fn) || clang_getCursorLinkage(fn) != CXLinkage_Internal) return NULL;
  // A template's instance: the template is not a function a compiler warns about when unused.
  if (!clang_Cursor_isNull(clang_getSpecializedCursorTemplate(fn))) return NULL;
  Refs refs = {clang_getCanonicalCursor(fn), skip, nskip, fe, 0};
  clang_visitChildren(clang_getTranslationUnitCursor(fe->tu), count_refs_in_main, &refs);
  return refs.count ? NULL : fe_spelling(fn);
}

int unused_config(const Frontend *fe, const Region *fr, const SrcRange *replaced, int nreplaced, char **names, int max) {
  int n = 0;
  for (const Stmt *s = fr->stmts; s; s = s->next) {
    if (s->kind != STMT_LAUNCH || !in_ranges(replaced, nreplaced, s->range.begin.offset)) continue;
    // A launch seen through a wrapper: its configuration is the wrapper's, not the region's.
    if (s->launch->wrapper) {
      n = add_name(names, n, max, unused_function(fe, clang_getCursorReferenced(s->cursor), replaced, nreplaced));
      // The call's own arguments: the function may not pass one to the launch (`int *st` unnamed).
      CXCursor call = s->cursor;
      while (clang_getCursorKind(call) == CXCursor_UnexposedExpr && fe_kids(call).n == 1) call = fe_kids(call).v[0];
      for (int i = 0; clang_getCursorKind(call) == CXCursor_CallExpr && i < clang_Cursor_getNumArguments(call); i++) {
        SrcRange r = fe_range(fe, clang_getCursorExtent(clang_Cursor_getArgument(call, (unsigned)i)));
        if (!r.begin.file || r.end.offset <= r.begin.offset) continue;
        Piece arg = {fe_text(fe, r), r, false};
        n = add_name(names, n, max, unused_after(fe, &arg, replaced, nreplaced));
        free(arg.text);
      }
      continue;
    }
    const KernelDef *def = s->launch->def;
    if (def && !def->is_template) n = add_name(names, n, max, unused_function(fe, def->cursor, replaced, nreplaced));
    const Piece *config[] = {&s->launch->grid, &s->launch->block, &s->launch->shmem};
    for (int i = 0; i < 3; i++) n = add_name(names, n, max, unused_after(fe, config[i], replaced, nreplaced));
    // Arguments the generated kernel does not take (a parameter its body never reads).
    for (int i = 0; i < s->launch->nargs; i++)
      n = add_name(names, n, max, unused_after(fe, &s->launch->args[i], replaced, nreplaced));
  }
  return n;
}
