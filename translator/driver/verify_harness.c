// verify_harness.c: the harness function of one region for --verify
// (verify_exec.c builds and runs the program): its free variables and what
// their values are computed from, the inputs, the region as written and as
// scheduled as lambdas over them, the comparison.
#include "verify_impl.h"
#include "analyze/analyze.h"
#include "common/text.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_HVARS = 256 };

// A variable of the harness: a free variable of the region, or one that a
// free variable's initial value is computed from.
typedef struct HVar {
  CXCursor decl;
  char *name;
  char *type;        // as libclang spells it
  unsigned offset;   // where it is declared (the harness declares them in this order)
  char *init;        // its initializer's text when the harness recomputes it, else NULL
  IrType extra;      // a pointer the IR does not know (a statement coconet does not see
                     // into uses it): the harness gives it a buffer of this type; IR_VOID if none
  int extra_id;      // that buffer's number
  bool object;       // a pointer to a struct or class read only through `->` (`config->comm`):
                     // it points at a value-initialized object whose members the harness sets
  char *alias_of;    // a local reference to another variable (`int &rc = calls;`): that variable
} HVar;

typedef struct Harness {
  const Frontend *fe;
  const Region *fr;
  const IrRegion *r;
  HVar v[MAX_HVARS];
  int n;
  bool overflow;
  char *streams[8];   // distinct stream texts, in order
  int nstreams;
  char *events[8];
  int nevents;
} Harness;

static bool is_ident_start(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// `a`, `a.b`, `a->b.c`: something the harness can assign; *base gets the first name's length.
static bool lvalue_chain(const char *t, size_t *base) {
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
static const HVar *assign_base(const Harness *h, const char *text) {
  size_t len;
  return text && lvalue_chain(text, &len) ? hvar_named(h, text, len) : NULL;
}

//
// Free variables
//

typedef struct Walk {
  Harness *h;
  unsigned begin;        // variables declared before it are free
} Walk;

static bool is_arith(CXType t) {
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
static bool set_by_ir(const Harness *h, const HVar *v);

// An initializer of numbers alone: arithmetic variables, literals and
// operators (no member, call or pointer the harness would not fill in).
static enum CXChildVisitResult non_arith(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  enum CXCursorKind k = clang_getCursorKind(c);
  bool bad = k == CXCursor_MemberRefExpr || k == CXCursor_CallExpr ||
             (k == CXCursor_DeclRefExpr && !is_arith(clang_getCursorType(clang_getCursorReferenced(c))));
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
    if (clang_Cursor_isNull(init) || !(is_arith(type) || is_dim3(type)) || (set_by_ir(h, v) && !computed)) continue;
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

//
// What the IR gives values to
//

static const char *as_written(const Harness *h, const char *text) { return ir_text_as_written(h->r, text); }

static bool set_by_ir(const Harness *h, const HVar *v) {
  size_t n = strlen(v->name);
  for (const IrVar *x = h->r->vars; x; x = x->next) {
    size_t len;
    const char *t = as_written(h, x->text);
    if (lvalue_chain(t, &len) && len == n && strncmp(t, v->name, n) == 0) return true;
  }
  for (const IrTensor *t = h->r->tensors; t; t = t->next) {
    size_t len;
    if (lvalue_chain(t->text, &len) && len == n && strncmp(t->text, v->name, n) == 0) return true;
  }
  return false;
}

static int handle_index(char **list, int *n, const char *text) {
  for (int i = 0; i < *n; i++)
    if (strcmp(list[i], text) == 0) return i;
  if (*n == 8) return -1;
  list[*n] = strdup(text);
  return (*n)++;
}

// A size expression as C++ text, with the variables as written.
static void print_size(const Harness *h, FILE *f, const IrSize *s) {
  switch (s->kind) {
  case IR_SIZE_CONST: fprintf(f, "%ld", s->value); return;
  case IR_SIZE_VAR: fprintf(f, "(%s)", as_written(h, s->var->text)); return;
  case IR_SIZE_MUL:
    print_size(h, f, s->lhs);
    fputs(" * ", f);
    print_size(h, f, s->rhs);
    return;
  }
}

static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Whether a size variable is used alone as some tensor's count (a length, not a factor).
static bool alone(const IrRegion *r, const IrVar *v) {
  for (const IrTensor *t = r->tensors; t; t = t->next)
    if (t->count && t->count->kind == IR_SIZE_VAR && t->count->var == v) return true;
  return false;
}

// A name the region launches a kernel with as its block size, or that a launch's
// block is computed from (`dim3 block(std::min(hidden, 1024))`, through a launcher
// too): given a whole number of warps, as a kernel whose warps own rows or reduce
// with shuffles needs (any other small number would stop it on the host backend).
static bool block_size_name(const Harness *h, const char *name) {
  for (const IrOp *op = h->r->ops; op; op = op->next)
    if (op->kind == IR_OP_POINTWISE && op->pw.block && strcmp(op->pw.block, name) == 0) return true;
  size_t n = strlen(name);
  for (const Stmt *s = h->fr->stmts; s; s = s->next) {
    const char *b = s->kind == STMT_LAUNCH && s->launch ? s->launch->block.text : NULL;
    for (const char *p = b ? strstr(b, name) : NULL; p; p = strstr(p + 1, name))
      if ((p == b || !text_ident_char(p[-1])) && !text_ident_char(p[n])) return true;
  }
  return false;
}

static int warps_value(uint64_t z) { return 32 * (1 + (int)(z % 4)); }

// How the region's kernels use a scalar: in a test (a comparison, a logical
// operator, a condition: `if (i < n && step % 2 == 0)`), and as what a division or
// an unmodelled call takes (`x / k`, `f(k)`). *budget bounds the walk (the IR is a DAG).
typedef struct ScalarUse {
  bool tested, divides;
} ScalarUse;

static void expr_use(const IrExpr *e, const IrVar *v, bool test, bool divisor, ScalarUse *u, int *budget) {
  if (!e || --*budget < 0) return;
  if (e->kind == IR_E_PARAM) {
    if (e->param && e->param->var == v) {
      u->tested |= test;
      u->divides |= divisor;
    }
    return;
  }
  bool sub_test = test, a_div = divisor, b_div = divisor;
  if (e->kind == IR_E_BINARY) {
    sub_test |= (e->op >= IR_LT && e->op <= IR_LOR);
    b_div |= e->op == IR_DIV || e->op == IR_MOD;
  } else if (e->kind == IR_E_UNARY) {
    sub_test |= e->op == IR_NOT;
  } else if (e->kind == IR_E_OPAQUE) {
    a_div = b_div = true;
  }
  if (e->kind == IR_E_SELECT) {
    expr_use(e->a, v, true, divisor, u, budget);
    expr_use(e->b, v, test, divisor, u, budget);
    expr_use(e->c, v, test, divisor, u, budget);
    return;
  }
  expr_use(e->a, v, sub_test, a_div, u, budget);
  expr_use(e->b, v, sub_test, b_div, u, budget);
  expr_use(e->c, v, sub_test, a_div, u, budget);
}

// An integer scalar the kernels only test (never divide by, never hand to a call
// the IR does not model) is 0 for the second input, so that `if (flag)` and `!skip`
// take both branches (1..100 otherwise).
static bool zero_ok(const Harness *h, const IrVar *v) {
  ScalarUse u = {false, false};
  int budget = 100000;
  for (const IrOp *op = h->r->ops; op; op = op->next)
    if (op->kind == IR_OP_POINTWISE)
      for (const IrStmt *s = op->pw.body; s; s = s->next) {
        expr_use(s->value, v, false, false, &u, &budget);
        expr_use(s->target, v, false, false, &u, &budget);
      }
  return u.tested && !u.divides && budget >= 0;
}

// The value of an IR variable for one input (the same on every rank).
static void print_value(FILE *f, const Harness *h, const IrVar *v, int trial) {
  const IrRegion *r = h->r;
  uint64_t z = mix((uint64_t)trial * 1000003u + (uint64_t)v->id);
  if (!ir_type_is_float(v->type) && block_size_name(h, v->text)) {
    fprintf(f, "%d", warps_value(z));
  } else if (v->is_size) {
    static const long len[TRIALS][2] = {{1, 9}, {10, 300}, {300, 3000}};
    static const long dim[TRIALS][2] = {{1, 3}, {2, 17}, {5, 40}};
    const long *range = alone(r, v) ? len[trial] : dim[trial];
    long x = range[0] + (long)(z % (uint64_t)(range[1] - range[0] + 1));
    // The first two inputs' lengths divide by no rank count up to 4, so that the
    // tail is exercised; the third may divide.
    if (trial < 2 && alone(r, v)) {
      x |= 1;
      if (x % 3 == 0) x += 2;
    }
    fprintf(f, "%ld", x);
  } else if (ir_type_is_float(v->type)) {
    fprintf(f, "%.6f", 0.05 + 0.9 * (double)(z >> 11) / 9007199254740992.0);
  } else {
    fprintf(f, "%ld", trial == 1 && zero_ok(h, v) ? 0 : 1 + (long)(z % 100));
  }
}

static const char *verify_type(IrType t) {
  switch (t) {
  case IR_F32: return "COCONET_VERIFY_F32";
  case IR_F16: return "COCONET_VERIFY_F16";
  case IR_BF16: return "COCONET_VERIFY_BF16";
  case IR_F64: return "COCONET_VERIFY_F64";
  case IR_I64: return "COCONET_VERIFY_I64";
  case IR_U32: return "COCONET_VERIFY_U32";
  case IR_U8: return "COCONET_VERIFY_U8";
  case IR_I8: return "COCONET_VERIFY_I8";
  case IR_BOOL: return "COCONET_VERIFY_BOOL";
  default: return "COCONET_VERIFY_I32";
  }
}

static void assign_handles(Harness *h, FILE *f, const HVar *base) {
  for (const IrOp *op = h->r->ops; op; op = op->next) {
    const char *comm = NULL, *stream = NULL, *event = NULL, *cublas = NULL;
    switch (op->kind) {
    case IR_OP_COLLECTIVE: comm = op->coll.comm; stream = op->coll.stream; break;
    case IR_OP_POINTWISE: stream = op->pw.stream; break;
    case IR_OP_COPY: stream = op->copy.stream; break;
    case IR_OP_MEMSET: stream = op->memset.stream; break;
    case IR_OP_EVENT: stream = op->event.stream; event = op->event.event; break;
    case IR_OP_GEMM: cublas = op->gemm.nargs ? op->gemm.args[0] : NULL; break;
    case IR_OP_OPAQUE: break;
    }
    comm = comm ? as_written(h, comm) : NULL;
    stream = stream ? as_written(h, stream) : NULL;
    event = event ? as_written(h, event) : NULL;
    cublas = cublas ? as_written(h, cublas) : NULL;
    if (comm && assign_base(h, comm) == base) fprintf(f, "      %s = coconet_verify_cx.comm;\n", comm);
    if (cublas && assign_base(h, cublas) == base) fprintf(f, "      %s = coconet_verify_cx.cublas;\n", cublas);
    int k;
    if (stream && assign_base(h, stream) == base && (k = handle_index(h->streams, &h->nstreams, stream)) >= 0)
      fprintf(f, "      %s = coconet_verify_cx.streams[%d];\n", stream, k);
    if (event && assign_base(h, event) == base && (k = handle_index(h->events, &h->nevents, event)) >= 0)
      fprintf(f, "      %s = coconet_verify_cx.events[%d];\n", event, k);
  }
}

// The assignments of one input: each harness variable in declaration order,
// recomputed or given its value, then what the IR reaches through it.
// The path a launcher that picks its kernel at run time takes when the schedule runs (the
// conjunction of the launcher assumes, "true" when none; malloc'd).
static char *path_test(const Harness *h) {
  char *t = strdup("true");
  for (const IrAssume *a = h->r->assumes; a; a = a->next) {
    if (!a->launcher) continue;
    char *both = strcmp(t, "true") ? xasprintf("%s && (%s)", t, a->test) : xasprintf("(%s)", a->test);
    free(t);
    t = both;
  }
  return t;
}

// The path the schedule is for, in the last input: the integer variables its
// conditions read (two at most) try the values around the numbers they are
// compared with (c - 1, c, c + 1, 2c + 1) until the path is taken, the locals
// computed from them again each time; the inputs as chosen when none takes it.
static void print_path_search(const Harness *h, FILE *f) {
  char names[16][256];
  const HVar *vars[2];
  int nv = 0;
  long values[64];
  int nvalues = 0;
  for (const IrAssume *a = h->r->assumes; a; a = a->next) {
    if (!a->launcher) continue;
    for (int k = 0, n = ir_assume_names(a, names, 16); k < n && nv < 2; k++) {
      const HVar *v = assign_base(h, names[k]);
      enum CXTypeKind tk = v ? clang_getCanonicalType(clang_getCursorType(v->decl)).kind : CXType_Invalid;
      bool integer = v && is_arith(clang_getCursorType(v->decl)) && tk != CXType_Float && tk != CXType_Double &&
                     tk != CXType_Bool && !v->init && strcmp(v->name, names[k]) == 0;
      for (int j = 0; j < nv && integer; j++) integer = vars[j] != v;
      if (integer) vars[nv++] = v;
    }
    for (const char *c = a->test; *c && nvalues < 60; c++) {
      if (!isdigit((unsigned char)*c) || (c > a->test && (isalnum((unsigned char)c[-1]) || c[-1] == '_' || c[-1] == '.')))
        continue;
      char *end;
      long x = strtol(c, &end, 0);
      c = end - 1;
      if (*end == '.' || x > 32768) continue;
      long around[] = {x - 1, x, x + 1, 2 * x + 1};
      for (int i = 0; i < 4; i++)
        if (around[i] > 0) values[nvalues++] = around[i];
    }
  }
  if (!nv || !nvalues) return;
  char *test = path_test(h);
  fprintf(f, "      {  // the path the schedule is for: tried with the numbers its conditions compare with\n");
  fprintf(f, "        static const long coconet_verify_values[] = {");
  for (int i = 0; i < nvalues; i++) fprintf(f, "%s%ld", i ? ", " : "", values[i]);
  fprintf(f, "};\n        bool coconet_verify_taken = %s;\n", test);
  for (int j = 0; j < nv; j++)
    fprintf(f, "%*sfor (long coconet_verify_v%d : coconet_verify_values) {\n%*sif (coconet_verify_taken) break;\n"
               "%*s%s = static_cast<decltype(%s)>(coconet_verify_v%d);\n", 8 + 2 * j, "", j, 10 + 2 * j, "",
            10 + 2 * j, "", vars[j]->name, vars[j]->name, j);
  for (int i = 0; i < h->n; i++)
    if (h->v[i].init) fprintf(f, "%*s%s = (%s);\n", 8 + 2 * nv, "", h->v[i].name, h->v[i].init);
  fprintf(f, "%*scoconet_verify_taken = %s;\n", 8 + 2 * nv, "", test);
  for (int j = nv - 1; j >= 0; j--) fprintf(f, "%*s}\n", 8 + 2 * j, "");
  fprintf(f, "      }\n");
  free(test);
}

static void print_init(Harness *h, FILE *f, int trial, char *const *members) {
  fprintf(f, "    case %d:\n", trial);
  for (int i = 0; i < h->n; i++) {
    const HVar *v = &h->v[i];
    CXType type = clang_getCursorType(v->decl);
    if (v->alias_of) continue;  // set through the variable it names
    if (v->init) {
      fprintf(f, "      %s = (%s);\n", v->name, v->init);
    } else if (v->object) {
      fprintf(f, "      %s = coconet_verify_object(%s);\n%s", v->name, v->name, members[i] ? members[i] : "");
    } else if (members[i]) {
      fputs(members[i], f);
    } else if (is_arith(type) && !set_by_ir(h, v)) {
      // A number nothing else sets (a grid size passed in): small and positive, the same on every rank.
      uint64_t z = mix((uint64_t)trial * 31u + (uint64_t)i + 17u);
      bool fp = clang_getCanonicalType(type).kind == CXType_Float || clang_getCanonicalType(type).kind == CXType_Double;
      if (fp) fprintf(f, "      %s = %.6f;\n", v->name, 0.05 + 0.9 * (double)(z >> 11) / 9007199254740992.0);
      else fprintf(f, "      %s = %d;\n", v->name, block_size_name(h, v->name) ? warps_value(z) : 1 + (int)(z % 8));
    }
    for (const IrVar *x = h->r->vars; x; x = x->next) {
      const char *t = as_written(h, x->text);
      if (assign_base(h, t) != v || (v->init && strcmp(t, v->name) == 0)) continue;
      fprintf(f, "      %s = ", t);
      print_value(f, h, x, trial);
      fputs(";\n", f);
    }
    assign_handles(h, f, v);
  }
  // A stride the schedule assumes equal to the count (the region as written
  // otherwise): made equal, so that the harness runs the schedule.
  for (const IrAssume *a = h->r->assumes; a; a = a->next)
    if (a->other && assign_base(h, a->var)) fprintf(f, "      %s = %s;\n", a->var, a->other);
  if (trial == TRIALS - 1) print_path_search(h, f);
  // Buffers last: their counts may use any of the values above.
  for (const IrTensor *t = h->r->tensors; t; t = t->next) {
    if (!assign_base(h, t->text)) continue;
    bool same = t->layout_in == IR_LAYOUT_REPLICATED;
    fprintf(f, "      %s = static_cast<decltype(%s)>(coconet_verify_buffer_of(&coconet_verify_cx, %d, \"%s\", %s, (size_t)(",
            t->text, t->text, t->id - 1, t->name, verify_type(t->type));
    // Used with several counts: the largest.
    for (int i = 0; i < t->nalso; i++) fputs("std::max((size_t)(", f);
    print_size(h, f, t->count);
    for (int i = 0; i < t->nalso; i++) {
      fputs("), (size_t)(", f);
      print_size(h, f, t->also[i]);
      fputs("))", f);
    }
    fprintf(f, ")));\n      coconet_verify_fill(&coconet_verify_cx, %d, %lluull%s);\n", t->id - 1,
            (unsigned long long)mix((uint64_t)trial * 7919u + (uint64_t)t->id),
            same ? "" : " + 0x100000001ull * (uint64_t)(coconet_verify_cx.rank + 1)");
  }
  bool extras = false;
  for (int i = 0; i < h->n; i++) extras |= h->v[i].extra != IR_VOID;
  if (extras) {
    fputs("      {\n        size_t coconet_verify_max = 1;\n", f);
    for (const IrTensor *t = h->r->tensors; t; t = t->next)
      fprintf(f, "        coconet_verify_max = std::max(coconet_verify_max, coconet_verify_cx.buffers[%d].count);\n",
              t->id - 1);
    for (int i = 0; i < h->n; i++) {
      const HVar *v = &h->v[i];
      if (v->extra == IR_VOID) continue;
      fprintf(f, "        %s = static_cast<decltype(%s)>(coconet_verify_buffer_of(&coconet_verify_cx, %d, \"%s\", %s, "
                 "coconet_verify_max));\n", v->name, v->name, v->extra_id, v->name, verify_type(v->extra));
      fprintf(f, "        coconet_verify_fill(&coconet_verify_cx, %d, %lluull + 0x100000001ull * "
                 "(uint64_t)(coconet_verify_cx.rank + 1));\n", v->extra_id,
              (unsigned long long)mix((uint64_t)trial * 104729u + (uint64_t)i));
    }
    fputs("      }\n", f);
  }
  fputs("      break;\n", f);
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
    if ((v->object = object_pointer(h, v, clang_getCanonicalType(clang_getPointeeType(t)))) || set_by_ir(h, v)) continue;
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
  for (const IrOp *op = h->r->ops; op; op = op->next)
    if (op->kind == IR_OP_COLLECTIVE && (op->coll.kind == IR_SEND || op->coll.kind == IR_RECV))
      return "it sends or receives (ncclSend/ncclRecv), and its peer is a process the harness does not run; "
             "--verify=ir compares what it sends";
  for (const IrTensor *t = h->r->tensors; t; t = t->next) {
    if (!assign_base(h, t->text)) {
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
    const char *t = as_written(h, x->text);
    if (!assign_base(h, t) && !(t[0] >= '0' && t[0] <= '9')) {
      snprintf(why, sizeof why, "size '%s' is not a variable of the enclosing function, so the harness cannot "
                                "choose its value", t);
      return why;
    }
  }
  for (const IrAssume *a = h->r->assumes; a; a = a->next)
    if (a->other && !assign_base(h, a->var)) {
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

static void print_region(Harness *h, FILE *f, int index, const char *written, const char *scheduled, long ulp,
                         bool reassociated) {
  fprintf(f, "\n// coconet --verify: region %s as written and as scheduled\n", h->r->name);
  fprintf(f, "static long coconet_verify_region_%d(coconet_verify_ctx &coconet_verify_cx) {\n", index);
  using_namespaces(h, f);
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
  for (int t = 0; t < TRIALS; t++) print_init(h, f, t, members);
  for (int i = 0; i < h->n; i++) free(members[i]);
  fprintf(f, "    }\n  };\n");
  fprintf(f, "  auto coconet_verify_written = [&]() {\n%s\n  };\n", written);
  fprintf(f, "  auto coconet_verify_scheduled = [&]() {\n%s\n  };\n", scheduled);
  fprintf(f, "  for (int coconet_verify_trial = 0; coconet_verify_trial < %d; coconet_verify_trial++) {\n", TRIALS);
  fprintf(f, "    coconet_verify_init(coconet_verify_trial);\n    coconet_verify_globals_save();\n"
             "    coconet_verify_written();\n");
  fprintf(f, "    coconet_verify_snapshot(&coconet_verify_cx, false);\n    coconet_verify_globals_restore();\n");
  for (int i = 0; i < h->n; i++)
    if (is_arith(clang_getCursorType(h->v[i].decl)) && !is_handle_type(h->v[i].type))
      fprintf(f, "    const auto coconet_verify_host_%d = %s;\n", i, h->v[i].name);
  fprintf(f, "    coconet_verify_init(coconet_verify_trial);\n");
  char *test = path_test(h);
  if (strcmp(test, "true") != 0) fprintf(f, "    coconet_verify_path(&coconet_verify_cx, %s);\n", test);
  free(test);
  fprintf(f, "    coconet_verify_scheduled();\n");
  fprintf(f, "    coconet_verify_snapshot(&coconet_verify_cx, true);\n    {\n");
  print_compare(h, f);
  fprintf(f, "    }\n");
  for (int i = 0; i < h->n; i++)
    if (is_arith(clang_getCursorType(h->v[i].decl)) && !is_handle_type(h->v[i].type))
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
