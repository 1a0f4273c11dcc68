// verify_inputs.c: the inputs of a region's --verify harness: each harness
// variable's value in each input (recomputed, chosen at random, or given by
// what the IR knows of it), the buffers' contents, and the inputs that take
// the schedule's run-time preconditions.
#include "verify_harness.h"
#include "common/text.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

//
// What the IR gives values to
//

static const char *as_written(const Harness *h, const char *text) { return ir_text_as_written(h->r, text); }

bool harness_set_by_ir(const Harness *h, const HVar *v) {
  size_t n = strlen(v->name);
  for (const IrVar *x = h->r->vars; x; x = x->next) {
    size_t len;
    const char *t = as_written(h, x->text);
    if (harness_lvalue_chain(t, &len) && len == n && strncmp(t, v->name, n) == 0) return true;
  }
  for (const IrTensor *t = h->r->tensors; t; t = t->next) {
    size_t len;
    if (harness_lvalue_chain(t->text, &len) && len == n && strncmp(t->text, v->name, n) == 0) return true;
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
    if (comm && harness_assign_base(h, comm) == base) fprintf(f, "      %s = coconet_verify_cx.comm;\n", comm);
    if (cublas && harness_assign_base(h, cublas) == base) fprintf(f, "      %s = coconet_verify_cx.cublas;\n", cublas);
    int k;
    if (stream && harness_assign_base(h, stream) == base && (k = handle_index(h->streams, &h->nstreams, stream)) >= 0)
      fprintf(f, "      %s = coconet_verify_cx.streams[%d];\n", stream, k);
    if (event && harness_assign_base(h, event) == base && (k = handle_index(h->events, &h->nevents, event)) >= 0)
      fprintf(f, "      %s = coconet_verify_cx.events[%d];\n", event, k);
  }
}

char *harness_path_test(const Harness *h) {
  char *t = strdup("true");
  for (const IrAssume *a = h->r->assumes; a; a = a->next) {
    if (!a->launcher && !a->divisor && !a->guard) continue;
    char *both = strcmp(t, "true") ? xasprintf("%s && (%s)", t, a->test) : xasprintf("(%s)", a->test);
    free(t);
    t = both;
  }
  return t;
}

// A field of a record type, by name: its type when found.
typedef struct FieldFind {
  const char *name;
  bool found;
  CXType type;
} FieldFind;

static enum CXVisitorResult find_field(CXCursor c, CXClientData data) {
  FieldFind *f = data;
  CXString s = clang_getCursorSpelling(c);
  f->found = strcmp(clang_getCString(s), f->name) == 0;
  clang_disposeString(s);
  if (!f->found) return CXVisit_Continue;
  f->type = clang_getCursorType(c);
  return CXVisit_Break;
}

// An integer type (not floating, not bool).
static bool integer_type(CXType t) {
  enum CXTypeKind k = clang_getCanonicalType(t).kind;
  return harness_is_arith(t) && k != CXType_Float && k != CXType_Double && k != CXType_Bool;
}

// One step of a member chain at m after a value of type *t: `.name` of an object (or a
// reference to one), `->name` of a pointer, name a field of it. Its length (0: none), *t
// becoming the field's type.
static size_t member_step(CXType *t, const char *m) {
  enum CXTypeKind tk = clang_getCanonicalType(*t).kind;
  bool pointer = tk == CXType_Pointer;
  size_t a = strncmp(m, "->", 2) == 0 ? 2 : *m == '.' ? 1 : 0, len = 0;
  if (!a || pointer != (a == 2)) return 0;
  while (isalnum((unsigned char)m[a + len]) || m[a + len] == '_') len++;
  char field[256];
  snprintf(field, sizeof field, "%.*s", (int)(len < 255 ? len : 255), m + a);
  FieldFind ff = {field, false, {0}};
  CXType record = pointer || tk == CXType_LValueReference ? clang_getPointeeType(*t) : *t;
  clang_Type_visitFields(clang_getCanonicalType(record), find_field, &ff);
  if (!len || !ff.found) return 0;
  *t = ff.type;
  return a + len;
}

// The length of the member chain at m after a variable of type t (`.tp.world_size`,
// `->cfg.n`, each `.` or `->` as the type before it is an object or a pointer, each name a
// field of it, none const) that ends at an integer the harness may assign; 0 when there is
// none.
static size_t member_chain(CXType t, const char *m, CXType *last) {
  size_t at = 0, integer = 0;
  for (size_t n; (n = member_step(&t, m + at)) && !clang_isConstQualifiedType(t);) {
    at += n;
    integer = integer_type(t) ? at : 0;
    if (integer) *last = t;
  }
  return integer;
}

// The integers a condition reads that the harness may set: a variable of its
// own (`n`), or an integer member of one of its objects at any depth
// (`tensor_para_.world_size`, `cfg->nranks`, `o.tp.world_size`), at most 3, into targets;
// their types into types.
static int path_targets(const Harness *h, const IrAssume *a, char targets[][256], CXType *types, int nt) {
  char names[16][256];
  for (int k = 0, n = ir_assume_names(a, names, 16); k < n && nt < 3; k++) {
    const HVar *v = harness_assign_base(h, names[k]);
    if (!v || v->init || strcmp(v->name, names[k]) != 0) continue;
    CXType t = clang_getCursorType(v->decl);
    if (integer_type(t)) {
      bool seen = false;
      for (int j = 0; j < nt; j++) seen |= strcmp(targets[j], v->name) == 0;
      if (!seen) types[nt] = t, snprintf(targets[nt++], 256, "%s", v->name);
      continue;
    }
    // Its members the condition names: `v.m`, `v->m`, `v.o.m`.
    for (const char *p = text_find_word(a->test, v->name); p && nt < 3; p = text_find_word(p + 1, v->name)) {
      CXType last;
      size_t len = member_chain(t, p + strlen(v->name), &last);
      if (!len || strlen(v->name) + len > 255) continue;
      char target[256];
      snprintf(target, sizeof target, "%s%.*s", v->name, (int)len, p + strlen(v->name));
      bool seen = false;
      for (int j = 0; j < nt; j++) seen |= strcmp(targets[j], target) == 0;
      if (!seen) types[nt] = last, snprintf(targets[nt++], 256, "%s", target);
    }
  }
  return nt;
}

// The path the schedule is for, in the last input: the integers its
// conditions read (three at most: path_targets) try the values around the
// numbers they are compared with (c - 1, c, c + 1, 2c + 1; also each rounded
// up to a multiple of a row length's divisor; a character 'x' gives x - 1, x
// and x + 1; an enumeration's variable tries its enumerators) until the path is taken, the
// locals computed from them again each time; the inputs as chosen when none
// takes it.
static void print_path_search(const Harness *h, FILE *f) {
  char targets[3][256];
  CXType types[3];
  int nv = 0;
  long values[64];
  int nvalues = 0;
  for (const IrAssume *a = h->r->assumes; a; a = a->next) {
    if (!a->launcher && !a->guard) continue;
    nv = path_targets(h, a, targets, types, nv);
    for (const char *c = a->test; *c && nvalues < 60; c++) {
      if (c[0] == '\'' && c[1] && c[1] != '\\' && c[1] != '\'' && c[2] == '\'') {  // 'x': its code
        long x = (unsigned char)c[1];
        values[nvalues++] = x - 1, values[nvalues++] = x, values[nvalues++] = x + 1;
        c += 2;
        continue;
      }
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
  for (const IrAssume *a = h->r->assumes; a; a = a->next)
    for (int i = 0, n = a->divisor ? nvalues : 0; i < n && nvalues < 64; i++)
      if (values[i] % a->divisor) values[nvalues++] = values[i] + a->divisor - values[i] % a->divisor;
  // Each target's values: those numbers, and for an enumeration (`cfg.mode == Mode::kSplit`) its
  // enumerators' (which may be 0 or negative: only its own). A target with none is not searched.
  long own[3][128];
  int nown[3], searched = 0;
  for (int j = 0; j < nv; j++) {
    memcpy(own[j], values, (size_t)nvalues * sizeof *values);
    nown[j] = nvalues;
    CXCursor e[64];
    int ne = clang_getCanonicalType(types[j]).kind != CXType_Enum
                 ? 0
                 : fe_kids_of_kind(clang_getTypeDeclaration(clang_getCanonicalType(types[j])),
                                   CXCursor_EnumConstantDecl, CXCursor_EnumConstantDecl, CXCursor_EnumConstantDecl, e, 64);
    for (int i = 0; i < ne; i++) own[j][nown[j]++] = (long)clang_getEnumConstantDeclValue(e[i]);
    // A block size, or a number one is computed from, tries whole warps only (the program as
    // written runs only so: a kernel reducing with shuffles stops on a partial warp).
    for (int i = 0; i < nown[j] && block_size_name(h, targets[j]); i++)
      own[j][i] = (own[j][i] + 31) / 32 * 32;
    searched += nown[j] > 0;
  }
  if (!searched) return;
  char *test = harness_path_test(h);
  fprintf(f, "      {  // the path the schedule is for: tried with the numbers its conditions compare with\n");
  for (int j = 0; j < nv; j++) {
    if (!nown[j]) continue;
    fprintf(f, "        static const long coconet_verify_values%d[] = {", j);
    for (int i = 0; i < nown[j]; i++) fprintf(f, "%s%ld", i ? ", " : "", own[j][i]);
    fprintf(f, "};\n");
  }
  // A member the inputs do not set (`tp.world_size`) would start a search where the last one left it:
  // each starts where the first did, so that the runs as written and as scheduled take one path.
  for (int j = 0; j < nv; j++)
    if (nown[j])
      fprintf(f, "        static const auto coconet_verify_start%d = %s;\n        %s = coconet_verify_start%d;\n", j,
              targets[j], targets[j], j);
  fprintf(f, "        bool coconet_verify_taken = %s;\n", test);
  int depth = 0;
  for (int j = 0; j < nv; j++) {
    if (!nown[j]) continue;
    fprintf(f, "%*sfor (long coconet_verify_v%d : coconet_verify_values%d) {\n%*sif (coconet_verify_taken) break;\n"
               "%*s%s = static_cast<decltype(%s)>(coconet_verify_v%d);\n", 8 + 2 * depth, "", j, j,
            10 + 2 * depth, "", 10 + 2 * depth, "", targets[j], targets[j], j);
    depth++;
  }
  for (int i = 0; i < h->n; i++)
    if (h->v[i].init) fprintf(f, "%*s%s = (%s);\n", 8 + 2 * depth, "", h->v[i].name, h->v[i].init);
  fprintf(f, "%*scoconet_verify_taken = %s;\n", 8 + 2 * depth, "", test);
  for (int d = depth - 1; d >= 0; d--) fprintf(f, "%*s}\n", 8 + 2 * d, "");
  // None took it: the inputs as chosen (a value tried last, an enumerator of -1, say, is no size).
  fprintf(f, "        if (!coconet_verify_taken) {\n");
  for (int j = 0; j < nv; j++)
    if (nown[j]) fprintf(f, "          %s = coconet_verify_start%d;\n", targets[j], j);
  for (int i = 0; i < h->n; i++)
    if (h->v[i].init) fprintf(f, "          %s = (%s);\n", h->v[i].name, h->v[i].init);
  fprintf(f, "        }\n      }\n");
  free(test);
}

// Each pointer member of v's objects that text reaches through `->` (`ctx.tp` of `ctx.tp->comm`, a
// pointer to a struct: not v itself, whose object is its own) is given an object of the harness's,
// one per member, shallower first, before the members are set.
static void point_members(Harness *h, FILE *f, const HVar *v, const char *text, unsigned *given) {
  size_t base = strlen(v->name);
  if (!text || strncmp(text, v->name, base) != 0) return;
  CXType t = clang_getCursorType(v->decl);
  for (const char *m = text + base;;) {
    int len = (int)(m - text), k = 0;
    CXType before = t;
    size_t n = member_step(&t, m);
    if (!n) return;
    if (m[0] == '-' && (size_t)len > base && len < 256 &&
        clang_getCanonicalType(clang_getPointeeType(before)).kind == CXType_Record) {
      while (k < h->npointees && !(strlen(h->pointees[k]) == (size_t)len && !strncmp(h->pointees[k], text, len))) k++;
      if (k == h->npointees && k < 16) snprintf(h->pointees[h->npointees++], 256, "%.*s", len, text);
      if (k < 16 && !(*given & 1u << k))
        fprintf(f, "      %.*s = coconet_verify_pointee<%d>(%.*s);\n", len, text, k, len, text);
      if (k < 16) *given |= 1u << k;
    }
    m += n;
  }
}

// The texts of the region that v reaches members through: its variables', handles' and conditions'.
static void point_all_members(Harness *h, FILE *f, const HVar *v) {
  unsigned given = 0;  // each once
  for (const IrVar *x = h->r->vars; x; x = x->next) point_members(h, f, v, as_written(h, x->text), &given);
  for (const IrOp *op = h->r->ops; op; op = op->next)
    if (op->kind == IR_OP_COLLECTIVE) {
      point_members(h, f, v, op->coll.comm ? as_written(h, op->coll.comm) : NULL, &given);
      point_members(h, f, v, op->coll.stream ? as_written(h, op->coll.stream) : NULL, &given);
    }
  for (const IrAssume *a = h->r->assumes; a; a = a->next)
    for (const char *p = text_find_word(a->test, v->name); p; p = text_find_word(p + 1, v->name))
      point_members(h, f, v, p, &given);
}

// The assignments of one input: each harness variable in declaration order,
// recomputed or given its value, then what the IR reaches through it.
void harness_print_init(Harness *h, FILE *f, int trial, char *const *members) {
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
    } else if (harness_is_arith(type) && !harness_set_by_ir(h, v)) {
      // A number nothing else sets (a grid size passed in): small and positive, the same on every rank.
      uint64_t z = mix((uint64_t)trial * 31u + (uint64_t)i + 17u);
      bool fp = clang_getCanonicalType(type).kind == CXType_Float || clang_getCanonicalType(type).kind == CXType_Double;
      if (fp) fprintf(f, "      %s = %.6f;\n", v->name, 0.05 + 0.9 * (double)(z >> 11) / 9007199254740992.0);
      else if (clang_getCanonicalType(type).kind == CXType_Enum)  // an enum class takes no int
        fprintf(f, "      %s = static_cast<decltype(%s)>(%d);\n", v->name, v->name, 1 + (int)(z % 8));
      else fprintf(f, "      %s = %d;\n", v->name, block_size_name(h, v->name) ? warps_value(z) : 1 + (int)(z % 8));
    }
    if (!v->init) point_all_members(h, f, v);
    for (const IrVar *x = h->r->vars; x; x = x->next) {
      const char *t = as_written(h, x->text);
      if (harness_assign_base(h, t) != v || (v->init && strcmp(t, v->name) == 0)) continue;
      fprintf(f, "      %s = ", t);
      print_value(f, h, x, trial);
      fputs(";\n", f);
    }
    assign_handles(h, f, v);
  }
  // A stride the schedule assumes equal to the count (the region as written
  // otherwise): made equal, so that the harness runs the schedule.
  for (const IrAssume *a = h->r->assumes; a; a = a->next)
    if (a->other && harness_assign_base(h, a->var)) fprintf(f, "      %s = %s;\n", a->var, a->other);
  // A row length the schedule needs a multiple of k (the region as written
  // otherwise): rounded up to one after the first input; in the first, one
  // that is not (a multiple of k / 2 when k is even, so that a test of a
  // smaller divisor would take the schedule and show); the locals computed
  // from it again. One a block is computed from stays whole warps: a multiple
  // of k and 32 after the first input, in the first one that is not of k when
  // there is such a number of warps (else as drawn: the program as written
  // runs no other).
  bool rounded = false;
  for (const IrAssume *a = h->r->assumes; a; a = a->next) {
    const HVar *v = a->divisor ? harness_assign_base(h, a->var) : NULL;
    if (!v || v->init || strcmp(v->name, a->var) != 0) continue;
    int k = a->divisor, off = k % 2 ? 1 : k / 2;
    if (block_size_name(h, v->name)) {
      int m = k;
      while (m % 32) m += k;
      if (trial > 0) fprintf(f, "      %s = (%s + %d) / %d * %d;\n", v->name, v->name, m - 1, m, m);
      else if (32 % k) fprintf(f, "      %s = %s / %d * %d + 32;\n", v->name, v->name, m, m);
    } else if (trial > 0) {
      fprintf(f, "      %s = (%s + %d) / %d * %d;\n", v->name, v->name, k - 1, k, k);
    } else {
      fprintf(f, "      %s = %s / %d * %d + %d;\n", v->name, v->name, k, k, off);
    }
    rounded = true;
  }
  for (int i = 0; i < h->n && rounded; i++)
    if (h->v[i].init) fprintf(f, "      %s = (%s);\n", h->v[i].name, h->v[i].init);
  if (trial == TRIALS - 1) print_path_search(h, f);
  // Buffers last: their counts may use any of the values above.
  for (const IrTensor *t = h->r->tensors; t; t = t->next) {
    if (!harness_assign_base(h, t->text)) continue;
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