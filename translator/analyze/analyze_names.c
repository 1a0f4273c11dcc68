// analyze_names.c: whether a kernel's text, copied to another place of the
// translation unit (fuse's copy of a row-wise kernel, above the region's
// function), names what it names at the kernel: a declaration of the user's
// with the same name as one the text uses, between the kernel's definition and
// the copy (a better overload, a name that hides the one the kernel reads),
// could be what the copy's name means.
//
// Places are compared in the order the translation unit reads them: a place in
// a header is where the main file's #include of it (through the headers that
// include it) is, then its offset there.
#include "analyze_impl.h"

#include <stdlib.h>
#include <string.h>

enum { TU_DEPTH = 16, INCLUDES = 512, NAMES = 64 };

// A place in reading order: the offsets of the #include lines from the main
// file down to the place's file, then the place's offset there.
typedef struct TuPlace {
  unsigned v[TU_DEPTH + 1];
  int n;
} TuPlace;

typedef struct Includes {
  const Frontend *fe;
  CXFile file[INCLUDES];
  TuPlace at[INCLUDES];  // where the file's first #include is
  int n;
  TuPlace path;          // while walking: where the file being read is
} Includes;

static void walk_includes(Includes *in, CXFile f);

static void add_include(const FeInclude *inc, void *data) {
  Includes *in = data;
  if (in->n == INCLUDES || in->path.n >= TU_DEPTH) return;
  if (clang_Location_isInSystemHeader(clang_getLocationForOffset(in->fe->tu, inc->to, 0))) return;
  for (int i = 0; i < in->n; i++)
    if (clang_File_isEqual(in->file[i], inc->to)) return;
  TuPlace saved = in->path;
  in->path.v[in->path.n++] = inc->begin;
  in->file[in->n] = inc->to;
  in->at[in->n++] = in->path;
  walk_includes(in, inc->to);
  in->path = saved;
}

// The user's headers f includes (the preprocessor's #include lines, read from the text:
// a translation unit read with a precompiled prelude lists no inclusions), depth first.
static void walk_includes(Includes *in, CXFile f) { fe_includes(in->fe, f, add_include, in); }

// Where loc is in reading order; false when its file is not one the main file
// includes, as the user's headers are (a file given with -include, as coconet's
// prelude, is read before it; a header included deeper than TU_DEPTH, or after
// INCLUDES others, is not known).
static bool tu_place(const Frontend *fe, const Includes *in, CXSourceLocation loc, TuPlace *out) {
  CXFile f = NULL;
  unsigned offset = 0;
  clang_getFileLocation(loc, &f, NULL, NULL, &offset);
  out->n = 0;
  if (!f) return false;
  if (!clang_File_isEqual(f, fe->file)) {
    int i = 0;
    while (i < in->n && !clang_File_isEqual(in->file[i], f)) i++;
    if (i == in->n) return false;
    *out = in->at[i];
  }
  out->v[out->n++] = offset;
  return true;
}

static bool before(const TuPlace *a, const TuPlace *b) {
  for (int i = 0; i < a->n && i < b->n; i++)
    if (a->v[i] != b->v[i]) return a->v[i] < b->v[i];
  return a->n < b->n;
}

// The names the text uses of declarations at namespace scope (not its own
// locals and parameters), each with what it names there (null: an overload set).
typedef struct Uses {
  char *name[NAMES];
  CXCursor decl[NAMES];
  int n;
} Uses;

static bool at_namespace_scope(CXCursor d) {
  enum CXCursorKind k = clang_getCursorKind(clang_getCursorSemanticParent(d));
  return k == CXCursor_Namespace || k == CXCursor_TranslationUnit || k == CXCursor_LinkageSpec;
}

static enum CXChildVisitResult add_use(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Uses *u = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k != CXCursor_DeclRefExpr && k != CXCursor_TypeRef && k != CXCursor_TemplateRef &&
      k != CXCursor_OverloadedDeclRef)
    return CXChildVisit_Recurse;
  CXCursor d = clang_getCursorReferenced(c);
  bool set = k == CXCursor_OverloadedDeclRef;
  if (!set && (clang_Cursor_isNull(d) || !at_namespace_scope(d))) return CXChildVisit_Recurse;
  char *name = fe_spelling(set ? c : d);
  bool seen = !*name || u->n == NAMES;
  for (int i = 0; i < u->n && !seen; i++) seen = strcmp(u->name[i], name) == 0;
  if (seen) {
    free(name);
    return CXChildVisit_Recurse;
  }
  u->name[u->n] = name;
  u->decl[u->n++] = set ? clang_getNullCursor() : clang_getCanonicalCursor(d);
  return CXChildVisit_Recurse;
}

// The namespace a declaration is in (through extern "C" blocks), canonical.
static CXCursor scope_of(CXCursor d) {
  CXCursor p = clang_getCursorSemanticParent(d);
  while (clang_getCursorKind(p) == CXCursor_LinkageSpec) p = clang_getCursorSemanticParent(p);
  return clang_getCanonicalCursor(p);
}

typedef struct Clash {
  const Frontend *fe;
  const Includes *in;
  const Uses *uses;
  TuPlace from, to;  // the kernel's definition, the copy's place
  CXCursor chain[TU_DEPTH];  // the namespaces the copy is in, innermost first, then the translation unit
  int nchain;
  CXCursor found;    // a declaration between them of a name the text uses
  const char *name;
} Clash;

static int chain_index(const Clash *x, CXCursor ns) {
  for (int i = 0; i < x->nchain; i++)
    if (clang_equalCursors(x->chain[i], ns)) return i;
  return -1;
}

// Whether declaration d, in scope sd, can be what a name the text finds as use
// (null: an overload set) means at the copy, which looks in its namespaces from
// the innermost out and stops at the first that has the name: d's namespace is
// that of use or one inside it on the way there (or, for use outside the copy's
// namespaces, named qualified, its own).
static bool may_hide(const Clash *x, CXCursor use, CXCursor sd) {
  int at = chain_index(x, sd);
  if (clang_Cursor_isNull(use)) return at >= 0;
  CXCursor su = scope_of(use);
  int u = chain_index(x, su);
  return u < 0 ? clang_equalCursors(sd, su) || at >= 0 : at >= 0 && at <= u;
}

static enum CXChildVisitResult find_clash(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Clash *x = data;
  CXSourceLocation loc = clang_getCursorLocation(c);
  if (clang_Location_isInSystemHeader(loc)) return CXChildVisit_Continue;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k == CXCursor_Namespace || k == CXCursor_LinkageSpec) return CXChildVisit_Recurse;
  if (!clang_isDeclaration(k)) return CXChildVisit_Continue;
  char *name = fe_spelling(c);
  for (int i = 0; i < x->uses->n && clang_Cursor_isNull(x->found); i++) {
    if (strcmp(name, x->uses->name[i]) != 0) continue;
    if (!clang_Cursor_isNull(x->uses->decl[i]) && clang_equalCursors(clang_getCanonicalCursor(c), x->uses->decl[i]))
      continue;  // (a declaration of the same entity)
    TuPlace at;
    if (!may_hide(x, x->uses->decl[i], scope_of(c))) continue;
    // (a file the main file does not #include, as its own headers do: coconet's prelude, read before it)
    if (tu_place(x->fe, x->in, loc, &at) && before(&x->from, &at) && before(&at, &x->to)) {
      x->found = c;
      x->name = x->uses->name[i];
    }
  }
  free(name);
  return clang_Cursor_isNull(x->found) ? CXChildVisit_Continue : CXChildVisit_Break;
}

char *copy_name_clash(const Frontend *fe, CXCursor kernel, unsigned place, SrcLoc *at) {
  Uses u = {.n = 0};
  clang_visitChildren(fe_kids(kernel).last, add_use, &u);
  char *clash = NULL;
  if (u.n) {
    Includes *in = calloc(1, sizeof *in);
    if (!in) COCONET_BUG("out of memory");
    in->fe = fe;
    walk_includes(in, fe->file);
    Clash x = {fe, in, &u, {.n = 0}, {.n = 0}, {{0}}, 0, clang_getNullCursor(), NULL};
    x.to.v[x.to.n++] = place;
    for (CXCursor p = scope_of(kernel); x.nchain < TU_DEPTH; p = scope_of(p)) {
      x.chain[x.nchain++] = p;
      if (clang_getCursorKind(p) != CXCursor_Namespace) break;  // (the translation unit)
    }
    if (tu_place(fe, in, clang_getRangeEnd(clang_getCursorExtent(kernel)), &x.from)) {
      clang_visitChildren(clang_getTranslationUnitCursor(fe->tu), find_clash, &x);
      if (!clang_Cursor_isNull(x.found)) {
        clash = strdup(x.name);
        *at = fe_any_loc(fe, clang_getCursorLocation(x.found));
      }
    }
    free(in);
  }
  for (int i = 0; i < u.n; i++) free(u.name[i]);
  return clash;
}
