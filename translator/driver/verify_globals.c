// verify_globals.c: the file's own variables in the --verify harness: saved
// before a region's run as written, set back before its run as scheduled, and
// compared after both (a region's `g_step++` is the same in both runs).
#include "verify_impl.h"
#include "common/text.h"

#include <stdlib.h>
#include <string.h>

typedef struct Globals {
  char **names;  // qualified: "opt::lr_scale"
  bool *plain;   // a struct of numbers (the runtime keeps numbers, enums and arrays of them itself)
  int n, cap;
} Globals;

// A class whose members are numbers, enums, arrays and classes of them, no
// pointer (a workspace's pointer, set back, could hand the second run freed memory).
static enum CXVisitorResult plain_field(CXCursor c, CXClientData data);

static bool plain_type(CXType t, int depth) {
  t = clang_getCanonicalType(t);
  while (t.kind == CXType_ConstantArray) t = clang_getCanonicalType(clang_getArrayElementType(t));
  if (t.kind == CXType_Enum || (t.kind >= CXType_Bool && t.kind <= CXType_LongDouble)) return true;
  if (t.kind != CXType_Record || depth > 8) return false;
  int state[2] = {1, depth + 1};  // all plain so far, the depth of the fields
  clang_Type_visitFields(t, plain_field, state);
  return state[0];
}

static enum CXVisitorResult plain_field(CXCursor c, CXClientData data) {
  int *state = data;
  state[0] = plain_type(clang_getCursorType(c), state[1]);
  return state[0] ? CXVisit_Continue : CXVisit_Break;
}

static bool has_shared_attr(CXCursor v) {
  FeKids kids = fe_kids(v);
  for (int i = 0; i < kids.n; i++)
    if (clang_getCursorKind(kids.v[i]) == CXCursor_CUDASharedAttr) return true;
  return false;
}

static bool kept_type(CXType t) {
  t = clang_getCanonicalType(t);
  if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference) return false;
  while (t.kind == CXType_ConstantArray) t = clang_getCanonicalType(clang_getArrayElementType(t));
  return !clang_isConstQualifiedType(t) && !clang_isVolatileQualifiedType(t) && t.kind != CXType_IncompleteArray;
}

static enum CXChildVisitResult find_globals(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Globals *g = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (!clang_Location_isFromMainFile(clang_getCursorLocation(c))) return CXChildVisit_Continue;
  if (k == CXCursor_Namespace) return CXChildVisit_Recurse;
  enum CXCursorKind owner = clang_getCursorKind(clang_getCursorSemanticParent(c));  // not a class's static member
  if (k != CXCursor_VarDecl || (owner != CXCursor_Namespace && owner != CXCursor_TranslationUnit) ||
      !clang_isCursorDefinition(c) || !kept_type(clang_getCursorType(c)) || has_shared_attr(c))
    return CXChildVisit_Continue;
  Text name = {0};
  char *chain[16];
  int n = 0;
  for (CXCursor p = clang_getCursorSemanticParent(c); clang_getCursorKind(p) == CXCursor_Namespace && n < 16;
       p = clang_getCursorSemanticParent(p))
    chain[n++] = fe_spelling(p);
  for (int i = n - 1; i >= 0; i--) {
    if (*chain[i]) {  // an anonymous namespace's members need no name
      text_add(&name, chain[i]);
      text_add(&name, "::");
    }
    free(chain[i]);
  }
  char *base = fe_spelling(c);
  text_add(&name, base);
  free(base);
  if (g->n == g->cap) {
    g->cap = g->cap ? 2 * g->cap : 16;
    g->names = realloc(g->names, (size_t)g->cap * sizeof *g->names);
    g->plain = realloc(g->plain, (size_t)g->cap * sizeof *g->plain);
    if (!g->names || !g->plain) COCONET_BUG("out of memory");
  }
  CXType t = clang_getCanonicalType(clang_getCursorType(c));
  while (t.kind == CXType_ConstantArray) t = clang_getCanonicalType(clang_getArrayElementType(t));
  g->plain[g->n] = t.kind == CXType_Record && plain_type(t, 0);
  g->names[g->n++] = name.s;
  return CXChildVisit_Continue;
}

void harness_write_globals(FILE *f, const Frontend *fe) {
  Globals g = {0};
  clang_visitChildren(clang_getTranslationUnitCursor(fe->tu), find_globals, &g);
  fputs("\n// coconet --verify: the file's variables, alike before each region's run as written and as "
        "scheduled\n", f);
  for (int i = 0; i < g.n; i++)
    fprintf(f, "static coconet_verify_global<std::remove_cv_t<decltype(%s)>%s> coconet_verify_global_%d;\n",
            g.names[i], g.plain[i] ? ", true" : "", i);
  static const char *const step[] = {"save", "restore"};
  for (int k = 0; k < 2; k++) {
    fprintf(f, "static void coconet_verify_globals_%s() {\n", step[k]);
    for (int i = 0; i < g.n; i++) fprintf(f, "  coconet_verify_global_%d.%s(%s);\n", i, step[k], g.names[i]);
    fputs("}\n", f);
  }
  fputs("static void coconet_verify_globals_compare(coconet_verify_ctx &coconet_verify_cx, int coconet_verify_trial) "
        "{\n", f);
  for (int i = 0; i < g.n; i++)
    fprintf(f, "  coconet_verify_global_%d.compare(&coconet_verify_cx, \"%s\", %s, coconet_verify_trial);\n", i,
            g.names[i], g.names[i]);
  fputs("  (void)coconet_verify_cx;\n  (void)coconet_verify_trial;\n}\n", f);
  for (int i = 0; i < g.n; i++) free(g.names[i]);
  free(g.names);
  free(g.plain);
}
