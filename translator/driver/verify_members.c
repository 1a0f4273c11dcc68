// verify_members.c: the members of the user's structs that hold the rank count
// or this rank, for the objects --verify's harness builds. A region that reads
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

void harness_write_members(FILE *f, const Frontend *fe, CXType record, const char *object, bool pointer) {
  CXCursor decl = clang_getTypeDeclaration(clang_getCanonicalType(record));
  if (clang_Cursor_isNull(decl) || clang_Location_isInSystemHeader(clang_getCursorLocation(decl))) return;
  Members m = {clang_getCanonicalCursor(decl), NULL, NULL};
  clang_visitChildren(clang_getTranslationUnitCursor(fe->tu), find_setters, &m);
  const char *sep = pointer ? "->" : ".";
  if (m.count) fprintf(f, "      %s%s%s = coconet_verify_cx.nranks;\n", object, sep, m.count);
  if (m.rank) fprintf(f, "      %s%s%s = coconet_verify_cx.rank;\n", object, sep, m.rank);
  free(m.count);
  free(m.rank);
}
