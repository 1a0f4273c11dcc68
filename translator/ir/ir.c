// ir.c: the IR's objects and builders (arena, types, variables, sizes,
// tensors, expressions, ops, clauses). See ir.h for the model.
#include "ir/ir.h"
#include "common/text.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

//
// Arena: a list of blocks; ir_program_free frees them all.
//

typedef struct IrArena {
  struct IrArena *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
} IrArena;

enum { ARENA_BLOCK = 64 * 1024 };

static void *arena_alloc(IrProgram *p, size_t size) {
  size = (size + 15) & ~(size_t)15;
  IrArena *a = p->arena;
  if (!a || a->used + size > a->cap) {
    size_t cap = size > ARENA_BLOCK ? size : ARENA_BLOCK;
    a = malloc(sizeof *a + cap);
    if (!a) COCONET_BUG("out of memory");
    a->next = p->arena;
    a->used = 0;
    a->cap = cap;
    p->arena = a;
  }
  void *mem = a->data + a->used;
  a->used += size;
  memset(mem, 0, size);
  return mem;
}

IrProgram *ir_program_new(void) {
  IrProgram *p = calloc(1, sizeof *p);
  if (!p) COCONET_BUG("out of memory");
  return p;
}

void ir_program_free(IrProgram *p) {
  if (!p) return;
  while (p->arena) {
    IrArena *next = p->arena->next;
    free(p->arena);
    p->arena = next;
  }
  free(p);
}

void *ir_alloc(IrRegion *r, size_t size) { return arena_alloc(r->prog, size); }

char *ir_strdup(IrRegion *r, const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = ir_alloc(r, n);
  memcpy(d, s, n);
  return d;
}

char *ir_printf(IrRegion *r, const char *fmt, ...) {
  char small[256];
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  char *s;
  if (n < (int)sizeof small) {
    s = ir_strdup(r, small);
  } else {
    s = ir_alloc(r, (size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, fmt, again);
  }
  va_end(again);
  return s;
}

IrRegion *ir_region_new(IrProgram *p, const char *name, SrcLoc loc, SrcRange range) {
  IrRegion *r = arena_alloc(p, sizeof *r);
  r->prog = p;
  r->name = ir_strdup(r, name);
  r->loc = loc;
  r->range = range;
  IrRegion **tail = &p->regions;
  while (*tail) tail = &(*tail)->next;
  *tail = r;
  return r;
}

void ir_region_note(IrRegion *r, const char *what) {
  IrStep *s = ir_alloc(r, sizeof *s);
  s->what = ir_strdup(r, what);
  IrStep **tail = &r->notes;
  while (*tail) tail = &(*tail)->next;
  *tail = s;
}

// var's variable is assumed equal to other's (both must exist): it compares as that one.
static void link_same(IrRegion *r, const char *var, const char *other) {
  IrVar *a = NULL, *b = NULL;
  for (IrVar *v = r->vars; v; v = v->next) {
    if (strcmp(v->text, var) == 0) a = v;
    if (strcmp(v->text, other) == 0) b = v;
  }
  if (a && b && a != b && !b->same) a->same = b;
}

// The precondition test (var != nullptr, or == other, or another), added once.
static IrAssume *add_assume_test(IrRegion *r, const char *var, const char *other, const char *test,
                                 const char *kernel, SrcLoc loc) {
  IrAssume **tail = &r->assumes;
  for (; *tail; tail = &(*tail)->next)
    if (strcmp((*tail)->test, test) == 0) return NULL;
  IrAssume *a = ir_alloc(r, sizeof *a);
  a->var = ir_strdup(r, var);
  a->other = other ? ir_strdup(r, other) : NULL;
  a->test = ir_strdup(r, test);
  a->kernel = ir_strdup(r, kernel);
  a->loc = loc;
  *tail = a;
  return a;
}

static IrAssume *add_assume(IrRegion *r, const char *var, const char *other, const char *kernel, SrcLoc loc) {
  char *test = other ? ir_printf(r, "(size_t)(%s) == (size_t)(%s)", var, other) : ir_printf(r, "%s != nullptr", var);
  return add_assume_test(r, var, other, test, kernel, loc);
}

void ir_region_assume_divides(IrRegion *r, const char *length, int k, const char *kernel, SrcLoc loc) {
  IrAssume *a = add_assume_test(r, length, NULL, ir_printf(r, "(%s) %% %d == 0", length, k), kernel, loc);
  if (a) a->divisor = k;
}

void ir_region_assume(IrRegion *r, const char *var, const char *kernel, SrcLoc loc) {
  add_assume(r, var, NULL, kernel, loc);
}

void ir_region_assume_guard(IrRegion *r, const char *test, const char *callee, SrcLoc loc) {
  IrAssume *a = add_assume_test(r, test, NULL, test, callee, loc);
  if (a) a->guard = true;
}

void ir_region_assume_path(IrRegion *r, const char *when, const char *kernel, const char *launcher, SrcLoc loc) {
  IrAssume *a = add_assume_test(r, when, NULL, when, kernel, loc);
  if (a) a->launcher = ir_strdup(r, launcher);
}

// Words of C++ a condition names that are no variable.
static bool keyword(const char *w, size_t n) {
  static const char *const words[] = {"sizeof", "alignof", "true", "false", "nullptr", "NULL", "const", "volatile",
                                      "unsigned", "signed", "int", "long", "short", "char", "bool", "float",
                                      "double", "void", "size_t", "static_cast", "reinterpret_cast", "const_cast",
                                      "decltype", "std", NULL};
  for (int i = 0; words[i]; i++)
    if (strlen(words[i]) == n && strncmp(words[i], w, n) == 0) return true;
  return false;
}

int ir_assume_names(const IrAssume *a, char names[][256], int max) {
  int n = 0;
  if (!a->launcher && !a->divisor && !a->guard) {
    for (int k = 0; k < (a->other ? 2 : 1) && n < max; k++) {
      const char *name = k ? a->other : a->var;
      size_t len = strcspn(name, ".-[ ");
      snprintf(names[n++], 256, "%.*s", (int)(len < 256 ? len : 255), name);
    }
    return n;
  }
  // Every name but a member's (after '.', '->') or a qualified one's (after '::'), a
  // function's or a scope's (before '(' or '::') and C++'s own words: more is safer
  // than fewer (`n < 256`, `hidden <= 1024`: the names before '<' count).
  const char *t = a->test;
  for (size_t i = 0; t[i];) {
    if (!(isalpha((unsigned char)t[i]) || t[i] == '_') || (i && (isalnum((unsigned char)t[i - 1]) || t[i - 1] == '_'))) {
      i++;
      continue;
    }
    size_t e = i;
    while (isalnum((unsigned char)t[e]) || t[e] == '_') e++;
    size_t after = e, before = i;
    while (t[after] == ' ') after++;
    while (before > 0 && t[before - 1] == ' ') before--;
    bool member = before > 0 && (t[before - 1] == '.' || (before > 1 && t[before - 1] == '>' && t[before - 2] == '-') ||
                                 (before > 1 && t[before - 1] == ':' && t[before - 2] == ':'));
    bool scope = t[after] == '(' || (t[after] == ':' && t[after + 1] == ':');
    bool seen = false;
    for (int k = 0; k < n && !seen; k++) seen = strlen(names[k]) == e - i && strncmp(names[k], t + i, e - i) == 0;
    if (!member && !scope && !seen && !keyword(t + i, e - i)) {
      if (n == max || e - i >= 256) return -1;  // more than the caller holds: it refuses
      snprintf(names[n++], 256, "%.*s", (int)(e - i), t + i);
    }
    i = e;
  }
  return n;
}

void ir_region_assume_reached(IrRegion *r, const char *var, const char *kernel, SrcLoc loc) {
  IrAssume *a = add_assume(r, var, NULL, kernel, loc);
  if (a) a->sometimes = true;
}

void ir_region_assume_equal(IrRegion *r, const char *var, const char *other, const char *kernel, const char *param,
                            SrcLoc loc) {
  IrAssume *a = add_assume(r, var, other, kernel, loc);
  if (!a) return;
  a->param = ir_strdup(r, param);
  link_same(r, a->var, a->other);
}

//
// Types
//

static const struct {
  const char *name;
  int size;
} type_info[] = {
    [IR_VOID] = {"void", 0}, [IR_F32] = {"f32", 4}, [IR_F16] = {"f16", 2},
    [IR_BF16] = {"bf16", 2}, [IR_F64] = {"f64", 8}, [IR_I32] = {"i32", 4},
    [IR_I64] = {"i64", 8},   [IR_U32] = {"u32", 4},  [IR_U8] = {"u8", 1},
    [IR_I8] = {"i8", 1},     [IR_BOOL] = {"bool", 1},
};

const char *ir_type_name(IrType t) { return type_info[t].name; }
int ir_type_size(IrType t) { return type_info[t].size; }
bool ir_type_is_float(IrType t) { return t == IR_F32 || t == IR_F16 || t == IR_BF16 || t == IR_F64; }
bool ir_type_is_narrow(IrType t) { return t == IR_U8 || t == IR_I8 || t == IR_BOOL; }

static const struct {
  const char *name;
  IrType type;
} type_names[] = {
    {"ncclFloat", IR_F32},      {"ncclFloat32", IR_F32},   {"ncclHalf", IR_F16},
    {"ncclFloat16", IR_F16},    {"ncclBfloat16", IR_BF16}, {"ncclDouble", IR_F64},
    {"ncclFloat64", IR_F64},    {"ncclInt", IR_I32},       {"ncclInt32", IR_I32},
    {"ncclInt64", IR_I64},      {"ncclUint32", IR_U32},    {"float", IR_F32},
    {"__half", IR_F16},         {"half", IR_F16},          {"__nv_bfloat16", IR_BF16},
    {"nv_bfloat16", IR_BF16},   {"double", IR_F64},        {"int", IR_I32},
    {"int32_t", IR_I32},        {"long", IR_I64},          {"long long", IR_I64},
    {"int64_t", IR_I64},        {"size_t", IR_I64},        {"unsigned", IR_U32},
    {"unsigned int", IR_U32},   {"uint32_t", IR_U32},      {"CUDA_R_32F", IR_F32},
    {"CUDA_R_16F", IR_F16},     {"CUDA_R_16BF", IR_BF16},  {"CUDA_R_64F", IR_F64},
    {"ncclUint8", IR_U8},       {"ncclInt8", IR_I8},       {"ncclChar", IR_I8},
    {"unsigned char", IR_U8},   {"uint8_t", IR_U8},        {"signed char", IR_I8},
    {"int8_t", IR_I8},          {"bool", IR_BOOL},
};

// Round to a binary format with `mant` fraction bits and exponents emin..emax,
// to nearest even, with subnormals and overflow to infinity.
static double round_format(double x, int mant, int emin, int emax) {
  if (isnan(x) || isinf(x) || x == 0) return x;
  double a = fabs(x);
  int e;
  frexp(a, &e);
  int lead = e - 1 < emin ? emin : e - 1;
  double quantum = ldexp(1.0, lead - mant);
  double r = nearbyint(a / quantum) * quantum;
  if (r > ldexp(2.0 - ldexp(1.0, -mant), emax)) r = INFINITY;
  return copysign(r, x);
}

double ir_round(IrType t, double x) {
  switch (t) {
  case IR_F32: return (double)(float)x;
  case IR_F16: return round_format(x, 10, -14, 15);
  case IR_BF16: return round_format(x, 7, -126, 127);
  default: return x;
  }
}

IrType ir_type_from_name(const char *name) {
  for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
    if (strcmp(type_names[i].name, name) == 0) return type_names[i].type;
  return IR_VOID;
}

const char *ir_layout_name(IrLayout l) {
  static const char *names[] = {"?", "replicated", "local", "sliced"};
  return names[l];
}

// REPLICATED is the unit; LOCAL and SLICED absorb it; LOCAL with SLICED is a
// contradiction (a rank's slice of one value cannot be combined with another
// value that differs per rank element by element).
IrLayout ir_layout_join(IrLayout a, IrLayout b) {
  if (a == IR_LAYOUT_NONE || a == IR_LAYOUT_REPLICATED) return b;
  if (b == IR_LAYOUT_NONE || b == IR_LAYOUT_REPLICATED || a == b) return a;
  return IR_LAYOUT_NONE;
}

//
// Variables and sizes
//

// Copy text without whitespace (the identity of a variable or tensor).
// text without its blanks, in the arena.
// The text without blanks, but one between two words (`(unsigned short)n`).
static char *squeeze(IrRegion *r, const char *text) {
  char *s = ir_alloc(r, strlen(text) + 1), *o = s;
  for (const char *p = text; *p; p++) {
    if (!isspace((unsigned char)*p)) {
      *o++ = *p;
      continue;
    }
    while (isspace((unsigned char)p[1])) p++;
    if (o > s && text_ident_char(o[-1]) && text_ident_char(p[1])) *o++ = ' ';
  }
  *o = '\0';
  return s;
}

IrVar *ir_var_get(IrRegion *r, const char *text, IrType type) {
  char *key = squeeze(r, text);
  IrVar **tail = &r->vars;
  for (; *tail; tail = &(*tail)->next)
    if (strcmp((*tail)->text, key) == 0) return *tail;
  IrVar *v = ir_alloc(r, sizeof *v);
  v->id = ++r->nvars;
  v->text = key;
  v->type = type;
  *tail = v;
  for (const IrAssume *a = r->assumes; a; a = a->next)
    if (a->other && strcmp(a->var, key) == 0) link_same(r, key, a->other);
    else if (a->other && strcmp(a->other, key) == 0) link_same(r, a->var, key);
  return v;
}

IrSize *ir_size_const(IrRegion *r, long value) {
  IrSize *s = ir_alloc(r, sizeof *s);
  s->kind = IR_SIZE_CONST;
  s->value = value;
  return s;
}

IrSize *ir_size_var(IrRegion *r, const char *text) {
  IrSize *s = ir_alloc(r, sizeof *s);
  s->kind = IR_SIZE_VAR;
  s->var = ir_var_get(r, text, IR_I64);
  s->var->is_size = true;
  s->var->type = IR_I64;
  return s;
}

IrSize *ir_size_mul(IrRegion *r, IrSize *a, IrSize *b) {
  if (a->kind == IR_SIZE_CONST && b->kind == IR_SIZE_CONST) return ir_size_const(r, a->value * b->value);
  if (a->kind == IR_SIZE_CONST && a->value == 1) return b;
  if (b->kind == IR_SIZE_CONST && b->value == 1) return a;
  IrSize *s = ir_alloc(r, sizeof *s);
  s->kind = IR_SIZE_MUL;
  s->lhs = a;
  s->rhs = b;
  return s;
}

// One factor of a product: identifier, integer literal or sizeof(T); *len is
// its length (0 when the text there is not a factor).
static bool is_product(IrRegion *r, const char *s);

// The ')' closing the '(' at p, or NULL.
static const char *closing_paren(const char *p) {
  int depth = 0;
  for (; *p; p++) {
    depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
    if (depth == 0) return p;
  }
  return NULL;
}

// "(2*n)": the product inside, when it is one (else NULL).
static char *parenthesized_product(IrRegion *r, const char *p) {
  const char *close = *p == '(' ? closing_paren(p) : NULL;
  if (!close) return NULL;
  char *inner = ir_strdup(r, p + 1);
  inner[close - p - 1] = 0;
  return is_product(r, inner) ? inner : NULL;
}

static IrSize *parse_factor(IrRegion *r, const char *p, size_t *len) {
  const char *q = p;
  *len = 0;
  char *inner = parenthesized_product(r, p);
  if (inner) {
    *len = strlen(inner) + 2;
    return ir_size_parse(r, inner);
  }
  if (strncmp(q, "sizeof(", 7) == 0) {
    const char *close = strchr(q, ')');
    if (!close) return NULL;
    char *tname = ir_strdup(r, q + 7);
    tname[close - q - 7] = 0;
    IrType t = ir_type_from_name(tname);
    if (t == IR_VOID && strcmp(tname, "char") != 0) return NULL;
    *len = (size_t)(close + 1 - p);
    return ir_size_const(r, t == IR_VOID ? 1 : ir_type_size(t));  // sizeof(char) is 1
  }
  if (isdigit((unsigned char)*q)) {
    char *end;
    long v = strtol(q, &end, 0);
    while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L') end++;
    *len = (size_t)(end - p);
    return ir_size_const(r, v);
  }
  while (isalnum((unsigned char)*q) || *q == '_') q++;
  if (q == p) return NULL;
  // A member chain is one variable: p.n, layer->tokens.
  while ((*q == '.' && (isalpha((unsigned char)q[1]) || q[1] == '_')) ||
         (q[0] == '-' && q[1] == '>' && (isalpha((unsigned char)q[2]) || q[2] == '_'))) {
    q += *q == '.' ? 1 : 2;
    while (isalnum((unsigned char)*q) || *q == '_') q++;
  }
  *len = (size_t)(q - p);
  char *name = ir_strdup(r, p);
  name[*len] = 0;
  return ir_size_var(r, name);
}

// An integer type's name of 32 bits or more as squeeze leaves it (a count cast to it keeps its
// value; one cast to uint8_t, half or float may not).
bool ir_size_cast_skipped(const char *t) {
  static const char *const names[] = {"int", "long", "longlong", "longint", "unsigned", "unsignedint",
                                      "unsignedlong", "unsignedlonglong", "size_t", "std::size_t", "int32_t",
                                      "int64_t", "uint32_t", "uint64_t", "ptrdiff_t", NULL};
  char bare[64];  // (written with its blanks or without: "unsigned long")
  size_t k = 0;
  for (; *t && k + 1 < sizeof bare; t++)
    if (!isspace((unsigned char)*t)) bare[k++] = *t;
  bare[k] = '\0';
  for (const char *const *n = names; *n; n++)
    if (strcmp(bare, *n) == 0) return true;
  return false;
}

// Skip leading casts "(size_t)", "(long)" and similar.
static const char *skip_casts(IrRegion *r, const char *p) {
  while (*p == '(') {
    const char *close = strchr(p, ')');
    if (!close) return p;
    char *tname = ir_strdup(r, p + 1);
    tname[close - p - 1] = 0;
    if (!ir_size_cast_skipped(tname)) return p;
    p = close + 1;
  }
  return p;
}

// Whether s is a product of factors (a parenthesized product is one), checked
// without creating variables.
static bool is_product(IrRegion *r, const char *s) {
  for (const char *p = skip_casts(r, s);; p = skip_casts(r, p)) {
    const char *q = p;
    const char *inner = parenthesized_product(r, q);
    if (inner) {
      q += strlen(inner) + 2;
    } else if (strncmp(q, "sizeof(", 7) == 0) {
      q = strchr(q, ')');
      if (!q) return false;
      q++;
    } else if (isdigit((unsigned char)*q)) {
      while (isalnum((unsigned char)*q)) q++;
    } else {
      while (isalnum((unsigned char)*q) || *q == '_' || *q == '.' || (q[0] == '-' && q[1] == '>') ||
             (*q == '>' && q > p && q[-1] == '-'))
        q++;
    }
    if (q == p) return false;
    if (*q == 0) return true;
    if (*q != '*') return false;
    p = q + 1;
  }
}

IrSize *ir_size_parse(IrRegion *r, const char *text) {
  char *s = text_unwrap(squeeze(r, text));
  if (!is_product(r, s)) {
    // `(size_t)(n / 2)` is the size n / 2: a cast to an integer type keeps a count's value.
    const char *v = skip_casts(r, s);
    return ir_size_var(r, v != s && *v ? text_unwrap(ir_strdup(r, v)) : s);
  }
  IrSize *result = NULL;
  for (const char *p = s;;) {
    size_t len;
    IrSize *f = parse_factor(r, skip_casts(r, p), &len);
    if (!f) return ir_size_var(r, s);
    p = skip_casts(r, p) + len;
    result = result ? ir_size_mul(r, result, f) : f;
    if (*p == 0) return result;
    if (*p != '*') return ir_size_var(r, s);
    p++;
  }
}

// Flatten a product into its constant and its variables (sorted by id).
static void size_factors(const IrSize *s, long *konst, int *ids, int *n, int max) {
  switch (s->kind) {
  case IR_SIZE_CONST: *konst *= s->value; return;
  case IR_SIZE_VAR:
    if (*n < max) ids[(*n)++] = (s->var->same ? s->var->same : s->var)->id;
    return;
  case IR_SIZE_MUL:
    size_factors(s->lhs, konst, ids, n, max);
    size_factors(s->rhs, konst, ids, n, max);
    return;
  }
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

bool ir_size_equal(const IrSize *a, const IrSize *b) {
  if (!a || !b) return a == b;
  enum { MAXF = 16 };
  long ka = 1, kb = 1;
  int fa[MAXF], fb[MAXF], na = 0, nb = 0;
  size_factors(a, &ka, fa, &na, MAXF);
  size_factors(b, &kb, fb, &nb, MAXF);
  if (ka != kb || na != nb) return false;
  qsort(fa, (size_t)na, sizeof fa[0], cmp_int);
  qsort(fb, (size_t)nb, sizeof fb[0], cmp_int);
  return memcmp(fa, fb, (size_t)na * sizeof fa[0]) == 0;
}

long ir_size_eval(const IrSize *s, const double *vals) {
  switch (s->kind) {
  case IR_SIZE_CONST: return s->value;
  case IR_SIZE_VAR: return (long)vals[s->var->id];
  case IR_SIZE_MUL: return ir_size_eval(s->lhs, vals) * ir_size_eval(s->rhs, vals);
  }
  return 0;
}

//
// Tensors
//

IrTensor *ir_tensor_find(const IrRegion *r, const char *text) {
  for (IrTensor *t = r->tensors; t; t = t->next) {
    const char *a = t->text, *b = text;
    for (;; a++, b++) {
      while (isspace((unsigned char)*b)) b++;
      if (*a != *b) break;
      if (!*a) return t;
    }
  }
  return NULL;
}

void ir_tensor_count(IrTensor *t, IrSize *count) {
  if (!t || !count) return;
  if (!t->count) {
    t->count = count;
    return;
  }
  bool seen = ir_size_equal(t->count, count);
  for (int i = 0; i < t->nalso; i++) seen |= ir_size_equal(t->also[i], count);
  if (!seen && t->nalso < 4) t->also[t->nalso++] = count;
}

IrTensor *ir_tensor_get_or_add(IrRegion *r, const char *text, IrType type, IrSize *count,
                               SrcLoc loc) {
  IrTensor *t = ir_tensor_find(r, text);
  if (t) {
    ir_tensor_count(t, count);
    if (t->type == IR_VOID) t->type = type;
    return t;
  }
  t = ir_alloc(r, sizeof *t);
  t->region = r;
  t->id = ++r->ntensors;
  t->text = squeeze(r, text);
  t->name = text_is_identifier(t->text) ? t->text : ir_printf(r, "t%d", t->id);
  t->type = type;
  t->count = count;
  t->live_after = true;
  t->first_use = loc;
  IrTensor **tail = &r->tensors;
  while (*tail) tail = &(*tail)->next;
  *tail = t;
  return t;
}

const char *ir_text_as_written(const IrRegion *r, const char *text) {
  for (const IrHoist *h = r->hoists; h && text; h = h->next)
    if (strcmp(h->name, text) == 0) return h->text;
  return text;
}
