// verify_members.c: the objects of the user's structs --verify's harness builds.
// A pointer the region reads only through `->` points at one object: where it
// is passed to a function of the user's that reads its parameter only so too
// (llm.c's `multi_gpu_get_shard_offset(tensor.size, multi_gpu_config, 1)`).
// Their members that hold the rank count or this rank: a region that reads
// its communicator through a configuration (`multi_gpu_config->nccl_comm`) may
// also compute with the configuration's rank count
// (`tensor.offset / multi_gpu_config->num_processes`); the harness's object is
// value-initialized, and a count of 0 divides by zero. Which member holds what
// is read where the program sets it: `MPI_Comm_size(MPI_COMM_WORLD,
// &cfg.num_processes)`, `ncclCommCount(comm, &c->nranks)`, `MPI_Comm_rank` and
// `ncclCommUserRank` (in the file or a header of the user's).
#include "verify_impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct Members {
  CXCursor record;   // the struct's declaration
  char *count, *rank;  // its members' names, NULL where nothing sets one
} Members;

// `&x.m` or `&x->m` (under casts): m's declaration, else a null cursor.
static CXCursor member_address(CXCursor e) {
  FeKids k = fe_kids(e);
  while ((clang_getCursorKind(e) == CXCursor_UnexposedExpr || clang_getCursorKind(e) == CXCursor_CStyleCastExpr ||
          clang_getCursorKind(e) == CXCursor_ParenExpr) && k.n >= 1) {
    e = k.last;
    k = fe_kids(e);
  }
  if (clang_getCursorKind(e) != CXCursor_UnaryOperator || k.n != 1 ||
      clang_getCursorKind(k.v[0]) != CXCursor_MemberRefExpr)
    return clang_getNullCursor();
  CXCursor field = clang_getCursorReferenced(k.v[0]);
  return clang_getCursorKind(field) == CXCursor_FieldDecl ? field : clang_getNullCursor();
}

static enum CXChildVisitResult find_setters(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Members *m = data;
  if (clang_Location_isInSystemHeader(clang_getCursorLocation(c))) return CXChildVisit_Continue;
  if (clang_getCursorKind(c) != CXCursor_CallExpr || clang_Cursor_getNumArguments(c) != 2)
    return CXChildVisit_Recurse;
  char *name = fe_spelling(clang_getCursorReferenced(c));
  bool count = !strcmp(name, "MPI_Comm_size") || !strcmp(name, "ncclCommCount");
  bool rank = !strcmp(name, "MPI_Comm_rank") || !strcmp(name, "ncclCommUserRank");
  free(name);
  CXCursor field = count || rank ? member_address(clang_Cursor_getArgument(c, 1)) : clang_getNullCursor();
  if (!clang_Cursor_isNull(field) &&
      clang_equalCursors(clang_getCanonicalCursor(clang_getCursorSemanticParent(field)), m->record)) {
    char **slot = count ? &m->count : &m->rank;
    if (!*slot) *slot = fe_spelling(field);
  }
  return CXChildVisit_Recurse;
}

char *harness_members(const Frontend *fe, CXType record, const char *object, bool pointer) {
  CXCursor decl = clang_getTypeDeclaration(clang_getCanonicalType(record));
  if (clang_Cursor_isNull(decl) || clang_Location_isInSystemHeader(clang_getCursorLocation(decl))) return NULL;
  Members m = {clang_getCanonicalCursor(decl), NULL, NULL};
  clang_visitChildren(clang_getTranslationUnitCursor(fe->tu), find_setters, &m);
  const char *sep = pointer ? "->" : ".";
  char *count = m.count ? xasprintf("      %s%s%s = coconet_verify_cx.nranks;\n", object, sep, m.count) : strdup("");
  char *out = m.rank ? xasprintf("%s      %s%s%s = coconet_verify_cx.rank;\n", count, object, sep, m.rank)
                     : strdup(count);
  free(count);
  free(m.count);
  free(m.rank);
  return out;
}

// Implicit conversions and parentheses around e.
static CXCursor bare(CXCursor e) {
  while (clang_getCursorKind(e) == CXCursor_UnexposedExpr || clang_getCursorKind(e) == CXCursor_ParenExpr) {
    FeKids k = fe_kids(e);
    if (k.n != 1) break;
    e = k.v[0];
  }
  return e;
}

static bool names(CXCursor e, CXCursor decl) {
  e = bare(e);
  return clang_getCursorKind(e) == CXCursor_DeclRefExpr && clang_equalCursors(clang_getCursorReferenced(e), decl);
}

enum { CALL_DEPTH = 4 };

typedef struct Uses {
  CXCursor target;
  int refs, through;  // the references to target; those that read a member or pass it on so
  int depth;
} Uses;

static bool object_only_at(CXCursor root, CXCursor target, int depth);

static enum CXChildVisitResult count_uses(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Uses *u = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k == CXCursor_DeclRefExpr && clang_equalCursors(clang_getCursorReferenced(c), u->target)) u->refs++;
  if (k == CXCursor_MemberRefExpr) {
    FeKids kids = fe_kids(c);
    if (kids.n >= 1 && names(kids.v[0], u->target)) u->through++;  // a pointer's member: `->`
  }
  if (k == CXCursor_CallExpr) {
    CXCursor fn = clang_getCursorDefinition(clang_getCursorReferenced(c));
    bool seen = !clang_Cursor_isNull(fn) && clang_getCursorKind(fn) == CXCursor_FunctionDecl &&
                !clang_Location_isInSystemHeader(clang_getCursorLocation(fn)) && u->depth < CALL_DEPTH;
    for (int i = 0; i < clang_Cursor_getNumArguments(c); i++)
      if (names(clang_Cursor_getArgument(c, (unsigned)i), u->target) && seen && i < clang_Cursor_getNumArguments(fn))
        u->through += object_only_at(fe_kids(fn).last, clang_Cursor_getArgument(fn, (unsigned)i), u->depth + 1);
  }
  return CXChildVisit_Recurse;
}

static bool object_only_at(CXCursor root, CXCursor target, int depth) {
  Uses u = {target, 0, 0, depth};
  count_uses(root, root, &u);
  clang_visitChildren(root, count_uses, &u);
  return u.refs == u.through;
}

bool harness_object_only(CXCursor root, CXCursor target) { return object_only_at(root, target, 0); }
