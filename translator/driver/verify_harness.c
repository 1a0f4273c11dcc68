// verify_harness.c: the harness function of one region for --verify
// (verify_exec.c builds and runs the program): its free variables and what
// their values are computed from, the region as written and as scheduled as
// lambdas over them, the comparison (the inputs: verify_inputs.c).
#include "verify_harness.h"
#include "analyze/analyze.h"
#include "common/text.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static bool is_ident_start(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// `a`, `a.b`, `a->b.c`: something the harness can assign; *base gets the first name's length.
bool harness_lvalue_chain(const char *t, size_t *base) {
  const char *p = t;
  while (*p == ' ') p++;
  if (!is_ident_start(*p)) return false;
  const char *b = p;
  while (text_ident_char(*p)) p++;
  *base = (size_t)(p - b);
  for (;;) {
    while (*p == ' ') p++;
    if (*p == '\0') return true;
    if (*p == '.') p++;
    else if (p[0] == '-' && p[1] == '>') p += 2;
    else return false;
    while (*p == ' ') p++;
    if (!is_ident_start(*p)) return false;
    while (text_ident_char(*p)) p++;
  }
}

static const HVar *hvar_named(const Harness *h, const char *text, size_t len) {
  const char *p = text;
  while (*p == ' ') p++;
  for (int i = 0; i < h->n; i++)
    if (strlen(h->v[i].name) == len && strncmp(h->v[i].name, p, len) == 0) return &h->v[i];
  return NULL;
}

// The harness variable an assignable text starts from (NULL: not assignable here).
const HVar *harness_assign_base(const Harness *h, const char *text) {
  size_t len;
  return text && harness_lvalue_chain(text, &len) ? hvar_named(h, text, len) : NULL;
}

//
// Free variables
//

typedef struct Walk {
  Harness *h;
  unsigned begin;        // variables declared before it are free
} Walk;

bool harness_is_arith(CXType t) {
  switch (clang_getCanonicalType(t).kind) {
  case CXType_Bool: case CXType_Char_U: case CXType_UChar: case CXType_UShort: case CXType_UInt:
  case CXType_ULong: case CXType_ULongLong: case CXType_Char_S: case CXType_SChar: case CXType_Short:
  case CXType_Int: case CXType_Long: case CXType_LongLong: case CXType_Float: case CXType_Double:
  case CXType_Enum:
    return true;
  default: return false;
  }
}

// dim3 (a launch configuration held in a local): recomputed like a number.
static bool is_dim3(CXType t) {
  CXString s = clang_getTypeSpelling(clang_getUnqualifiedType(clang_getCanonicalType(t)));
  bool is = strcmp(clang_getCString(s), "dim3") == 0;
  clang_disposeString(s);
  return is;
}

// The text that recomputes a local from its initializer: the expression, or for
// a constructor call (`dim3 grid(blocks, 2)`), dim3 built from its arguments.
static char *init_text(const Harness *h, CXCursor decl, CXCursor init) {
  char *t = fe_text(h->fe, fe_range(h->fe, clang_getCursorExtent(init)));
  // (the constructor call may sit under implicit nodes: `dim3 block(std::min(h, 1024))`)
  while (clang_getCursorKind(init) == CXCursor_UnexposedExpr && fe_kids(init).n == 1) init = fe_kids(init).v[0];
  if (!is_dim3(clang_getCursorType(decl)) || clang_getCursorKind(init) != CXCursor_CallExpr) return t;
  free(t);
  int n = clang_Cursor_getNumArguments(init);
  size_t cap = 64;
  char *out = malloc(cap);
  if (!out) COCONET_BUG("out of memory");
  strcpy(out, "dim3(");
  for (int i = 0; i < n; i++) {
    char *a = fe_text(h->fe, fe_range(h->fe, clang_getCursorExtent(clang_Cursor_getArgument(init, (unsigned)i))));
    if (!*a) {  // a default argument, not written
      free(a);
      break;
    }
    size_t need = strlen(out) + strlen(a) + 4;
    if (need > cap) {
      cap = need * 2;
      char *g = realloc(out, cap);
      if (!g) COCONET_BUG("out of memory");
      out = g;
    }
    if (i) strcat(out, ", ");
    strcat(out, a);
    free(a);
  }
  strcat(out, ")");
  return out;
}

static bool in_function(CXCursor decl) {
  enum CXCursorKind k = clang_getCursorKind(clang_getCursorSemanticParent(decl));
  return k == CXCursor_FunctionDecl || k == CXCursor_CXXMethod || k == CXCursor_FunctionTemplate ||
         k == CXCursor_Constructor || k == CXCursor_Destructor || k == CXCursor_LambdaExpr;
}

static void add_var(Harness *h, CXCursor d);

// Where d's name is (`count` of `const size_t total = n, count = total;` comes after `total`, whose
// declaration's extent begins at the same type).
static unsigned name_offset(const Frontend *fe, CXCursor d) {
  CXSourceLocation at = clang_getCursorLocation(d);
  return fe_range(fe, clang_getRange(at, at)).begin.offset;
}

static enum CXChildVisitResult find_refs(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Walk *w = data;
  if (clang_getCursorKind(c) == CXCursor_DeclRefExpr) {
    CXCursor d = clang_getCursorReferenced(c);
    enum CXCursorKind k = clang_getCursorKind(d);
    unsigned at = name_offset(w->h->fe, d);
    if ((k == CXCursor_VarDecl || k == CXCursor_ParmDecl) && in_function(d) && at < w->begin) add_var(w->h, d);
  } else if (clang_getCursorKind(c) == CXCursor_MemberRefExpr &&
             clang_getCursorKind(clang_getCursorReferenced(c)) == CXCursor_FieldDecl) {
    // A member of the object a member function runs on, named alone (`comm`, not `this->comm`): a
    // variable of the harness of the member's name and type.
    unsigned start, name;
    clang_getFileLocation(clang_getRangeStart(clang_getCursorExtent(c)), NULL, NULL, NULL, &start);
    clang_getFileLocation(clang_getCursorLocation(c), NULL, NULL, NULL, &name);
    if (start == name) add_var(w->h, clang_getCursorReferenced(c));
    FeKids k = fe_kids(c);
    if (k.n == 1 && clang_getCursorKind(k.v[0]) == CXCursor_CXXThisExpr) w->h->through_this = true;
  }
  return CXChildVisit_Recurse;
}

// The last child of a VarDecl when it is an expression: its initializer.
static CXCursor initializer(CXCursor decl) {
  if (clang_getCursorKind(decl) != CXCursor_VarDecl) return clang_getNullCursor();
  CXCursor last = fe_kids(decl).last;
  return !clang_Cursor_isNull(last) && clang_isExpression(clang_getCursorKind(last)) ? last : clang_getNullCursor();
}

static void add_var(Harness *h, CXCursor d) {
  for (int i = 0; i < h->n; i++)
    if (clang_equalCursors(h->v[i].decl, d)) return;
  if (h->n == MAX_HVARS) {
    h->overflow = true;
    return;
  }
  HVar *v = &h->v[h->n++];
  v->decl = d;
  v->name = fe_spelling(d);
  CXString ts = clang_getTypeSpelling(clang_getCursorType(d));
  v->type = strdup(clang_getCString(ts));
  clang_disposeString(ts);
  v->offset = name_offset(h->fe, d);
  v->init = NULL;
  v->extra = IR_VOID;
  v->object = false;
  v->alias_of = NULL;
}

// Sizes, scalars, buffers and handles are given values by the harness; other
// arithmetic and dim3 locals are recomputed from their initializers (a grid
// size from the count), which may need more variables.

// An initializer of numbers alone: arithmetic variables, literals and
// operators (no member, call or pointer the harness would not fill in).
static enum CXChildVisitResult non_arith(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  enum CXCursorKind k = clang_getCursorKind(c);
  bool bad = k == CXCursor_MemberRefExpr || k == CXCursor_CallExpr ||
             (k == CXCursor_DeclRefExpr && !harness_is_arith(clang_getCursorType(clang_getCursorReferenced(c))));
  if (bad) *(bool *)data = true;
  return bad ? CXChildVisit_Break : CXChildVisit_Recurse;
}

static bool arithmetic_only(CXCursor init) {
  bool bad = false;
  non_arith(init, init, &bad);
  if (!bad) clang_visitChildren(init, non_arith, &bad);
  return !bad;
}

static void close_over_initializers(Harness *h) {
  for (int i = 0; i < h->n; i++) {
    HVar *v = &h->v[i];
    CXCursor init = initializer(v->decl);
    CXType type = clang_getCursorType(v->decl);
    // A local the IR names that keeps its initializer's value (`int n = rows * cols;`) is computed
    // from it, so that it agrees with the sizes the IR reads through the initializer.
    bool computed = !clang_Cursor_isNull(init) && clang_getCursorKind(v->decl) == CXCursor_VarDecl &&
                    never_assigned(h->fe, v->decl) && arithmetic_only(init);
    CXCursor named = clang_Cursor_isNull(init) ? init : fe_kids(init).n <= 1 ? init : clang_getNullCursor();
    while (!clang_Cursor_isNull(named) && clang_getCursorKind(named) == CXCursor_UnexposedExpr && fe_kids(named).n == 1)
      named = fe_kids(named).v[0];
    if (type.kind == CXType_LValueReference && !clang_Cursor_isNull(named) &&
        clang_getCursorKind(named) == CXCursor_DeclRefExpr) {  // the variable itself, through its other name
      v->alias_of = fe_spelling(clang_getCursorReferenced(named));
      Walk w = {.h = h, .begin = v->offset + 1};
      find_refs(named, named, &w);
      continue;
    }
    if (clang_Cursor_isNull(init) || !(harness_is_arith(type) || is_dim3(type)) || (harness_set_by_ir(h, v) && !computed)) continue;
    v->init = init_text(h, v->decl, init);
    Walk w = {.h = h, .begin = v->offset + 1};
    clang_visitChildren(init, find_refs, &w);
    if (clang_getCursorKind(init) == CXCursor_DeclRefExpr) find_refs(init, init, &w);
  }
}

static int by_offset(const void *a, const void *b) {
  const HVar *x = a, *y = b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}


static bool is_handle_type(const char *type) {
  static const char *const names[] = {"ncclComm", "cudaStream", "CUstream", "cudaEvent", "CUevent", "cublas"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strstr(type, names[i])) return true;
  return false;
}

// A pointer to a struct or class that the region, and the initial values the
// harness computes, read only through `->` (verify_members.c).
static bool object_pointer(const Harness *h, const HVar *v, CXType pointee) {
  if (pointee.kind != CXType_Record) return false;
  bool only = true;
  for (const Stmt *st = h->fr->stmts; st && only; st = st->next)  // the statements compiled, not #if'd out
    only = harness_object_only(st->cursor, v->decl);
  for (int i = 0; i < h->n && only; i++) {
    CXCursor init = initializer(h->v[i].decl);
    if (!clang_Cursor_isNull(init)) only = harness_object_only(init, v->decl);
  }
  return only;
}

// Pointers the IR has no buffer for get one of the largest count of the
// region's buffers; their element type comes from the pointer's type. A
// pointer to an object read through `->` gets an object.
static const char *find_extras(Harness *h) {
  static char why[512];
  int next = h->r->ntensors;
  for (int i = 0; i < h->n; i++) {
    HVar *v = &h->v[i];
    CXType t = clang_getCanonicalType(clang_getCursorType(v->decl));
    if (t.kind == CXType_LValueReference) t = clang_getCanonicalType(clang_getPointeeType(t));
    if (t.kind != CXType_Pointer || is_handle_type(v->type)) continue;
    // (before set_by_ir: the region's `cfg->comm` is an IR variable through it)
    if ((v->object = object_pointer(h, v, clang_getCanonicalType(clang_getPointeeType(t)))) || harness_set_by_ir(h, v)) continue;
    CXString ps = clang_getTypeSpelling(clang_getUnqualifiedType(clang_getCanonicalType(clang_getPointeeType(t))));
    const char *name = clang_getCString(ps);
    IrType et = ir_type_from_name(strncmp(name, "const ", 6) == 0 ? name + 6 : name);
    clang_disposeString(ps);
    if (et == IR_VOID || next >= 64) {
      snprintf(why, sizeof why, "'%s' (%s) is used where coconet does not see how much memory it needs", v->name, v->type);
      return why;
    }
    v->extra = et;
    v->extra_id = next++;
  }
  return NULL;
}

// Why a region cannot be run by the harness, or NULL.
static const char *unverifiable(Harness *h) {
  static char why[512];
  if (h->overflow) return "the region has more free variables than the harness holds";
  if (h->through_this)
    return "it names a member of its object through 'this->', and the harness runs the region at file scope, its "
           "members as variables of their own: name them alone";
  for (const IrOp *op = h->r->ops; op; op = op->next)
    if (op->kind == IR_OP_COLLECTIVE && (op->coll.kind == IR_SEND || op->coll.kind == IR_RECV))
      return "it sends or receives (ncclSend/ncclRecv), and its peer is a process the harness does not run; "
             "--verify=ir compares what it sends";
  for (const IrTensor *t = h->r->tensors; t; t = t->next) {
    if (!harness_assign_base(h, t->text)) {
      snprintf(why, sizeof why, "buffer '%s' is not a variable of the enclosing function, so the harness cannot "
                                "allocate it", t->text);
      return why;
    }
    if (!t->count) {
      snprintf(why, sizeof why, "the region does not say how many elements buffer '%s' has", t->text);
      return why;
    }
  }
  for (const IrVar *x = h->r->vars; x; x = x->next) {
    if (!x->is_size) continue;
    const char *t = ir_text_as_written(h->r, x->text);
    if (!harness_assign_base(h, t) && !(t[0] >= '0' && t[0] <= '9')) {
      snprintf(why, sizeof why, "size '%s' is not a variable of the enclosing function, so the harness cannot "
                                "choose its value", t);
      return why;
    }
  }
  for (const IrAssume *a = h->r->assumes; a; a = a->next)
    if (a->other && !harness_assign_base(h, a->var)) {
      snprintf(why, sizeof why, "its schedule is for %s == %s, and '%s' is not a variable of the enclosing "
                                "function, so the harness cannot make them equal", a->var, a->other, a->var);
      return why;
    }
  for (const IrClause *c = h->r->clauses; c; c = c->next)
    if (c->kind == IR_CL_SHARD && h->r->overlap_chunks > 1) return "shard buffers of an overlapped region";
  return find_extras(h);
}

static void print_compare(const Harness *h, FILE *f) {
  for (int i = 0; i < h->n; i++)
    if (h->v[i].extra != IR_VOID)
      fprintf(f, "      coconet_verify_compare(&coconet_verify_cx, %d, 0, coconet_verify_cx.buffers[%d].count, "
                 "coconet_verify_trial);\n", h->v[i].extra_id, h->v[i].extra_id);
  for (const IrTensor *t = h->r->tensors; t; t = t->next) {
    if (t->scratch) continue;
    int id = t->id - 1;
    if (t->shard) {
      fprintf(f, "      { const size_t coconet_verify_n = coconet_verify_cx.buffers[%d].count, coconet_verify_s = "
                 "coconet_verify_n / coconet_verify_cx.nranks;\n", id);
      fprintf(f, "        coconet_verify_compare(&coconet_verify_cx, %d, coconet_verify_cx.rank * coconet_verify_s, "
                 "(coconet_verify_cx.rank + 1) * coconet_verify_s, coconet_verify_trial);\n", id);
      fprintf(f, "        coconet_verify_compare(&coconet_verify_cx, %d, coconet_verify_cx.nranks * coconet_verify_s, "
                 "coconet_verify_n, coconet_verify_trial); }\n", id);
    } else {
      fprintf(f, "      coconet_verify_compare(&coconet_verify_cx, %d, 0, coconet_verify_cx.buffers[%d].count, "
                 "coconet_verify_trial);\n", id, id);
    }
  }
}


// One region's harness function: its variables, the inputs, the two runs and
// the comparison; it returns the number of mismatches.
// `using namespace A::B;` for the namespaces of the region's function: the
// region's code names their members without qualification, and the harness
// runs it at file scope.
static void using_namespaces(Harness *h, FILE *f) {
  CXCursor fn = place_function(h->fe, h->fr->range.begin.offset);
  if (clang_Cursor_isNull(fn)) return;
  char *chain[16];
  int n = 0;
  for (CXCursor p = clang_getCursorSemanticParent(fn); !clang_Cursor_isNull(p) && n < 16;
       p = clang_getCursorSemanticParent(p))
    if (clang_getCursorKind(p) == CXCursor_Namespace) chain[n++] = fe_spelling(p);
    else if (clang_getCursorKind(p) == CXCursor_TranslationUnit) break;
  bool any = false;
  for (int i = n - 1; i >= 0; i--)
    if (*chain[i]) any = true;
  if (any) {
    fputs("  using namespace ", f);
    bool first = true;
    for (int i = n - 1; i >= 0; i--)
      if (*chain[i]) {  // an anonymous namespace's members are reached through the one around it
        fprintf(f, "%s%s", first ? "" : "::", chain[i]);
        first = false;
      }
    fputs(";\n", f);
  }
  for (int i = 0; i < n; i++) free(chain[i]);
}

// A region in a template (a function template, a member of a class
// template): each type parameter that a buffer's pointer names (`T *x`) stands
// for the element type the IR gives that buffer (`using T = float;`).
typedef struct TypeParams {
  CXCursor v[8];
  int n;
} TypeParams;

static enum CXChildVisitResult add_type_param(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  TypeParams *tp = data;
  if (clang_getCursorKind(c) == CXCursor_TemplateTypeParameter && tp->n < 8) tp->v[tp->n++] = c;
  return CXChildVisit_Continue;
}

static void template_types(const Harness *h, FILE *f) {
  if (h->fr->bind) {  // an instance's region: its parameters as the instance binds them
    fprintf(f, "  %s\n", h->fr->bind);
    return;
  }
  for (CXCursor p = place_function(h->fe, h->fr->range.begin.offset);
       !clang_Cursor_isNull(p) && clang_getCursorKind(p) != CXCursor_TranslationUnit; p = clang_getCursorSemanticParent(p)) {
    enum CXCursorKind k = clang_getCursorKind(p);
    if (k != CXCursor_FunctionTemplate && k != CXCursor_ClassTemplate &&
        k != CXCursor_ClassTemplatePartialSpecialization)
      continue;
    TypeParams tp = {.n = 0};
    clang_visitChildren(p, add_type_param, &tp);
    for (int j = 0; j < tp.n; j++) {
      char *name = fe_spelling(tp.v[j]);
      const char *bound = NULL;
      for (int i = 0; i < h->n && !bound; i++) {
        CXType t = clang_getCursorType(h->v[i].decl);
        if (t.kind != CXType_Pointer) continue;
        CXString s = clang_getTypeSpelling(clang_getUnqualifiedType(clang_getPointeeType(t)));
        bool names = strcmp(clang_getCString(s), name) == 0;
        clang_disposeString(s);
        for (const IrTensor *x = h->r->tensors; x && names && !bound; x = x->next)
          if (strcmp(ir_text_as_written(h->r, x->text), h->v[i].name) == 0) bound = codegen_ctype(x->type);
      }
      if (bound) fprintf(f, "  using %s = %s;\n", name, bound);
      free(name);
    }
  }
}

static void print_region(Harness *h, FILE *f, int index, const char *written, const char *scheduled, long ulp,
                         bool reassociated) {
  fprintf(f, "\n// coconet --verify: region %s as written and as scheduled\n", h->r->name);
  fprintf(f, "static long coconet_verify_region_%d(coconet_verify_ctx &coconet_verify_cx) {\n", index);
  using_namespaces(h, f);
  template_types(h, f);
  fprintf(f, "  coconet_verify_region_begin(&coconet_verify_cx, %ld, %s);\n", ulp, reassociated ? "true" : "false");
  for (int i = 0; i < h->n; i++) {
    if (h->v[i].alias_of)
      fprintf(f, "  auto &%s = %s;\n", h->v[i].name, h->v[i].alias_of);
    else if (h->v[i].object)  // a pointer to a const object too: the harness sets its members
      fprintf(f, "  std::remove_cv_t<std::remove_pointer_t<std::remove_cv_t<std::remove_reference_t<%s>>>> *%s{};\n",
              h->v[i].type, h->v[i].name);
    else
      fprintf(f, "  std::remove_cv_t<std::remove_reference_t<%s>> %s{};\n", h->v[i].type, h->v[i].name);
  }
  fprintf(f, "  auto coconet_verify_init = [&](int coconet_verify_trial) {\n    switch (coconet_verify_trial) {\n");
  // The members of the user's structs that hold the rank count or the rank (found once).
  char *members[MAX_HVARS] = {0};
  for (int i = 0; i < h->n; i++) {
    CXType t = clang_getCanonicalType(clang_getCursorType(h->v[i].decl));
    if (t.kind == CXType_LValueReference) t = clang_getCanonicalType(clang_getPointeeType(t));
    if (h->v[i].object) members[i] = harness_members(h->fe, clang_getPointeeType(t), h->v[i].name, true);
    else if (t.kind == CXType_Record && !h->v[i].init && !h->v[i].alias_of)
      members[i] = harness_members(h->fe, t, h->v[i].name, false);
  }
  for (int t = 0; t < TRIALS; t++) harness_print_init(h, f, t, members);
  for (int i = 0; i < h->n; i++) free(members[i]);
  fprintf(f, "    }\n  };\n");
  fprintf(f, "  auto coconet_verify_written = [&]() {\n%s\n  };\n", written);
  fprintf(f, "  auto coconet_verify_scheduled = [&]() {\n%s\n  };\n", scheduled);
  fprintf(f, "  for (int coconet_verify_trial = 0; coconet_verify_trial < %d; coconet_verify_trial++) {\n", TRIALS);
  fprintf(f, "    coconet_verify_init(coconet_verify_trial);\n    coconet_verify_globals_save();\n"
             "    coconet_verify_written();\n");
  fprintf(f, "    coconet_verify_snapshot(&coconet_verify_cx, false);\n    coconet_verify_globals_restore();\n");
  for (int i = 0; i < h->n; i++)
    if (harness_is_arith(clang_getCursorType(h->v[i].decl)) && !is_handle_type(h->v[i].type))
      fprintf(f, "    const auto coconet_verify_host_%d = %s;\n", i, h->v[i].name);
  fprintf(f, "    coconet_verify_init(coconet_verify_trial);\n");
  char *test = harness_path_test(h);
  if (strcmp(test, "true") != 0) fprintf(f, "    coconet_verify_path(&coconet_verify_cx, %s);\n", test);
  free(test);
  fprintf(f, "    coconet_verify_scheduled();\n");
  fprintf(f, "    coconet_verify_snapshot(&coconet_verify_cx, true);\n    {\n");
  print_compare(h, f);
  fprintf(f, "    }\n");
  for (int i = 0; i < h->n; i++)
    if (harness_is_arith(clang_getCursorType(h->v[i].decl)) && !is_handle_type(h->v[i].type))
      fprintf(f, "    coconet_verify_host(&coconet_verify_cx, \"%s\", coconet_verify_host_%d, %s, coconet_verify_trial);\n",
              h->v[i].name, i, h->v[i].name);
  fprintf(f, "    coconet_verify_globals_compare(coconet_verify_cx, coconet_verify_trial);\n");
  fprintf(f, "  }\n  return coconet_verify_region_end(&coconet_verify_cx, %d, %d);\n}\n", index, TRIALS);
}


static void harness_free(Harness *h) {
  for (int i = 0; i < h->n; i++) {
    free(h->v[i].name);
    free(h->v[i].type);
    free(h->v[i].init);
    free(h->v[i].alias_of);
  }
  for (int i = 0; i < h->nstreams; i++) free(h->streams[i]);
  for (int i = 0; i < h->nevents; i++) free(h->events[i]);
}

int harness_write_region(FILE *f, const Frontend *fe, const Region *fr, const IrRegion *r, const Edit *lowered,
                         const char *scheduled, const Verified *v) {
  Harness h = {.fe = fe, .fr = fr, .r = r};
  Walk w = {.h = &h, .begin = fr->range.begin.offset};
  clang_visitChildren(fr->cursor, find_refs, &w);
  close_over_initializers(&h);
  qsort(h.v, (size_t)h.n, sizeof *h.v, by_offset);
  const char *why = unverifiable(&h);
  int rc = 0;
  if (why) {
    diag_error(&fr->pragma_range.begin, "--verify: region '%s' cannot be run by the harness: %s", r->name, why);
    rc = -1;
  } else {
    char *written = edits_apply_span(&fe->src, lowered, fr->range.begin.offset, fr->range.end.offset);
    // A region the schedule leaves as it is runs as written (lowered) both times.
    char *original = fe_text(fe, fr->range);
    const char *sched = scheduled && strcmp(scheduled, original) != 0 ? scheduled : written;
    print_region(&h, f, v->index, written, sched, v->ulp, v->reassociated);
    free(original);
    free(written);
  }
  harness_free(&h);
  return rc;
}
