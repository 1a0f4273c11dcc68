// ir_expr.c: pointwise expressions (constructors with C's type rules), math
// functions, kernel parameters and per-element statements.
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

static IrExpr *new_expr(IrRegion *r, IrExprKind kind, IrType type) {
  IrExpr *e = ir_alloc(r, sizeof *e);
  e->kind = kind;
  e->type = type;
  return e;
}

static bool is_16bit(IrType t) { return t == IR_F16 || t == IR_BF16; }

// C's usual arithmetic conversions, with CUDA's 16-bit operators: __half op
// __half stays __half, a 16-bit type with an integer stays 16-bit, 16-bit
// mixed with another floating type is f32 (or f64).
IrType ir_type_promote(IrType a, IrType b) {
  if (ir_type_is_narrow(a)) a = IR_I32;  // integer promotion
  if (ir_type_is_narrow(b)) b = IR_I32;
  if (a == IR_F64 || b == IR_F64) return IR_F64;
  if (a == IR_F32 || b == IR_F32) return IR_F32;
  if (is_16bit(a) && is_16bit(b)) return a == b ? a : IR_F32;
  if (is_16bit(a)) return a;
  if (is_16bit(b)) return b;
  if (a == IR_I64 || b == IR_I64) return IR_I64;
  if (a == IR_U32 || b == IR_U32) return IR_U32;
  return IR_I32;
}

IrExpr *ir_expr_int(IrRegion *r, int64_t v, IrType type) {
  IrExpr *e = new_expr(r, IR_E_INT, type);
  e->ival = v;
  return e;
}

IrExpr *ir_expr_float(IrRegion *r, double v, IrType type) {
  IrExpr *e = new_expr(r, IR_E_FLOAT, type);
  e->fval = v;
  return e;
}

IrExpr *ir_expr_index(IrRegion *r) { return new_expr(r, IR_E_INDEX, IR_I64); }

IrExpr *ir_expr_read(IrRegion *r, IrTensor *t, IrIndexKind index, IrSize *k) {
  IrExpr *e = new_expr(r, IR_E_READ, t->type);
  e->tensor = t;
  e->index = index;
  e->k = k;
  return e;
}

IrExpr *ir_expr_read_other(IrRegion *r, IrTensor *t, const char *index_text) {
  IrExpr *e = ir_expr_read(r, t, IR_IDX_OTHER, NULL);
  e->text = ir_strdup(r, index_text);
  return e;
}

IrExpr *ir_expr_param(IrRegion *r, IrParam *p) {
  IrExpr *e = new_expr(r, IR_E_PARAM, p->type);
  e->param = p;
  return e;
}

IrExpr *ir_expr_unary(IrRegion *r, IrUnaryOp op, IrExpr *a) {
  IrType t = op == IR_NOT ? IR_I32 : ir_type_promote(a->type, IR_I32);
  IrExpr *e = new_expr(r, IR_E_UNARY, t);
  e->op = op;
  e->a = a;
  return e;
}

IrExpr *ir_expr_binary(IrRegion *r, IrBinaryOp op, IrExpr *a, IrExpr *b) {
  IrType t;
  switch (op) {
  case IR_LT: case IR_LE: case IR_GT: case IR_GE: case IR_EQ: case IR_NE:
  case IR_LAND: case IR_LOR:
    t = IR_I32;
    break;
  case IR_SHL: case IR_SHR:
    t = ir_type_promote(a->type, IR_I32);
    break;
  default:
    t = ir_type_promote(a->type, b->type);
    break;
  }
  IrExpr *e = new_expr(r, IR_E_BINARY, t);
  e->op = op;
  e->a = a;
  e->b = b;
  return e;
}

IrExpr *ir_expr_select(IrRegion *r, IrExpr *cond, IrExpr *a, IrExpr *b) {
  IrExpr *e = new_expr(r, IR_E_SELECT, ir_type_promote(a->type, b->type));
  e->a = cond;
  e->b = a;
  e->c = b;
  return e;
}

IrExpr *ir_expr_cast(IrRegion *r, IrType type, IrExpr *a) {
  IrExpr *e = new_expr(r, IR_E_CAST, type);
  e->a = a;
  return e;
}

IrExpr *ir_expr_call(IrRegion *r, IrMathFn fn, IrType type, IrExpr *a, IrExpr *b) {
  IrExpr *e = new_expr(r, IR_E_CALL, type);
  e->fn = fn;
  e->a = a;
  e->b = b;
  return e;
}

IrExpr *ir_expr_fma(IrRegion *r, IrType type, IrExpr *a, IrExpr *b, IrExpr *c) {
  IrExpr *e = ir_expr_call(r, IR_FN_FMA, type, a, b);
  e->c = c;
  return e;
}

IrExpr *ir_expr_philox(IrRegion *r, IrExpr *seed, IrExpr *offset, int draw) {
  IrExpr *e = new_expr(r, IR_E_PHILOX, IR_F32);
  e->a = seed;
  e->b = offset;
  e->draw = draw;
  return e;
}

IrExpr *ir_expr_bitcast(IrRegion *r, IrType type, IrExpr *a) {
  IrExpr *e = new_expr(r, IR_E_BITCAST, type);
  e->a = a;
  return e;
}

IrExpr *ir_expr_opaque(IrRegion *r, IrType type, const char *text, IrExpr *a, IrExpr *b, IrExpr *c) {
  IrExpr *e = new_expr(r, IR_E_OPAQUE, type);
  e->text = ir_strdup(r, text);
  e->a = a;
  e->b = b;
  e->c = c;
  return e;
}

static const IrExpr *opaque_in(const IrExpr *e) {
  if (!e || e->kind == IR_E_LOCAL) return NULL;
  if (e->kind == IR_E_OPAQUE) return e;
  const IrExpr *a = opaque_in(e->a), *b = a ? a : opaque_in(e->b);
  return b ? b : opaque_in(e->c);
}

const IrExpr *ir_pw_opaque(const IrOp *op) {
  if (op->kind != IR_OP_POINTWISE) return NULL;
  for (const IrStmt *s = op->pw.body; s; s = s->next) {
    const IrExpr *e = opaque_in(s->value);
    if (e) return e;
  }
  return NULL;
}

IrExpr *ir_expr_at(IrExpr *e, SrcLoc loc) {
  e->loc = loc;
  return e;
}

//
// Math functions
//

static const struct {
  IrMathFn fn;
  int arity;
  const char *f32, *f64;  // CUDA names of the float and double versions
} math_fns[] = {
    {IR_FN_SQRT, 1, "sqrtf", "sqrt"},    {IR_FN_RSQRT, 1, "rsqrtf", "rsqrt"},
    {IR_FN_EXP, 1, "expf", "exp"},       {IR_FN_EXP2, 1, "exp2f", "exp2"},
    {IR_FN_LOG, 1, "logf", "log"},       {IR_FN_LOG2, 1, "log2f", "log2"},
    {IR_FN_LOG1P, 1, "log1pf", "log1p"}, {IR_FN_TANH, 1, "tanhf", "tanh"},
    {IR_FN_ERF, 1, "erff", "erf"},       {IR_FN_SIN, 1, "sinf", "sin"},
    {IR_FN_COS, 1, "cosf", "cos"},       {IR_FN_FABS, 1, "fabsf", "fabs"},
    {IR_FN_FLOOR, 1, "floorf", "floor"}, {IR_FN_CEIL, 1, "ceilf", "ceil"},
    {IR_FN_FMIN, 2, "fminf", "fmin"},    {IR_FN_FMAX, 2, "fmaxf", "fmax"},
    {IR_FN_POW, 2, "powf", "pow"},       {IR_FN_COPYSIGN, 2, "copysignf", "copysign"},
    {IR_FN_FMA, 3, "fmaf", "fma"},
};

enum { NMATH = sizeof math_fns / sizeof math_fns[0] };

// CUDA's fast intrinsics map to the same function (the interpreter computes
// the accurate value; both sides of a comparison use it).
static const struct {
  const char *name;
  IrMathFn fn;
} intrinsics[] = {
    {"__expf", IR_FN_EXP},     {"__logf", IR_FN_LOG},         {"__fsqrt_rn", IR_FN_SQRT},
    {"__frsqrt_rn", IR_FN_RSQRT}, {"__powf", IR_FN_POW},       {"__sinf", IR_FN_SIN},
    {"__cosf", IR_FN_COS},     {"__log2f", IR_FN_LOG2},       {"exp2f", IR_FN_EXP2},
    {"__fmaf_rn", IR_FN_FMA},
};

bool ir_math_lookup(const char *name, IrMathFn *fn, IrType *type) {
  for (int i = 0; i < NMATH; i++) {
    if (strcmp(math_fns[i].f32, name) == 0 || strcmp(math_fns[i].f64, name) == 0) {
      *fn = math_fns[i].fn;
      *type = strcmp(math_fns[i].f32, name) == 0 ? IR_F32 : IR_F64;
      return true;
    }
  }
  for (size_t i = 0; i < sizeof intrinsics / sizeof intrinsics[0]; i++) {
    if (strcmp(intrinsics[i].name, name) == 0) {
      *fn = intrinsics[i].fn;
      *type = IR_F32;
      return true;
    }
  }
  return false;
}

int ir_math_arity(IrMathFn fn) {
  for (int i = 0; i < NMATH; i++)
    if (math_fns[i].fn == fn) return math_fns[i].arity;
  return 1;
}

const char *ir_math_name(IrMathFn fn, IrType type) {
  for (int i = 0; i < NMATH; i++)
    if (math_fns[i].fn == fn) return type == IR_F64 ? math_fns[i].f64 : math_fns[i].f32;
  return "?";
}

//
// Pointwise kernels: parameters, statements and the derived read/write lists
//

IrParam *ir_pw_param(IrRegion *r, IrOp *op, const char *name, IrType type, const char *arg_text) {
  IrParam *p = ir_alloc(r, sizeof *p);
  p->name = ir_strdup(r, name);
  p->arg_text = ir_strdup(r, arg_text);
  p->type = type;
  p->var = ir_var_get(r, arg_text, type);
  IrParam **tail = &op->pw.params;
  while (*tail) tail = &(*tail)->next;
  *tail = p;
  return p;
}

static int index_rank(IrIndexKind k) {
  switch (k) {
  case IR_IDX_I: return 0;
  case IR_IDX_MOD: case IR_IDX_DIV: return 1;
  case IR_IDX_CONST: return 2;
  case IR_IDX_OTHER: return 3;
  }
  return 3;
}

static bool larger_const(const IrExpr *a, const IrExpr *b) {
  return a && b && a->k && b->k && a->k->kind == IR_SIZE_CONST && b->k->kind == IR_SIZE_CONST && a->k->value > b->k->value;
}

// Add t to a use list (once), keeping the least slice-friendly read (of
// constant indices t[K], the largest K: it sizes a device scalar's buffer).
static IrUse *use_add(IrRegion *r, IrUse **list, IrTensor *t, IrIndexKind index,
                      const IrExpr *expr, SrcLoc loc) {
  IrUse **tail = list;
  for (; *tail; tail = &(*tail)->next) {
    IrUse *u = *tail;
    if (u->ref.t != t) continue;
    bool larger = index == IR_IDX_CONST && u->index == IR_IDX_CONST && larger_const(expr, u->expr);
    if (index_rank(index) > index_rank(u->index) || larger) {
      u->index = index;
      u->expr = expr;
      if (expr && expr->loc.file) u->loc = expr->loc;
    }
    return u;
  }
  IrUse *u = ir_alloc(r, sizeof *u);
  u->ref.t = t;
  u->index = index;
  u->expr = expr;
  u->loc = expr && expr->loc.file ? expr->loc : loc;
  *tail = u;
  return u;
}

IrUse *ir_use_add(IrRegion *r, IrUse **list, IrTensor *t, SrcLoc loc) {
  return use_add(r, list, t, IR_IDX_I, NULL, loc);
}

static void collect_reads(IrRegion *r, IrOp *op, const IrExpr *e) {
  if (!e) return;
  if (e->kind == IR_E_READ) use_add(r, &op->reads, e->tensor, e->index, e, op->loc);
  if (e->kind == IR_E_LOCAL) return;
  collect_reads(r, op, e->a);
  collect_reads(r, op, e->b);
  collect_reads(r, op, e->c);
}

// What a statement reads: its value's reads, and a reduction's accumulator.
static void collect_stmt(IrRegion *r, IrOp *op, const IrStmt *s) {
  collect_reads(r, op, s->value);
  collect_reads(r, op, s->target);
}

static void recollect(IrRegion *r, IrOp *op) {
  op->reads = NULL;
  for (const IrStmt *s = op->pw.body; s; s = s->next) collect_stmt(r, op, s);
}

static IrStmt *add_stmt(IrRegion *r, IrOp *op, IrStmtKind kind, IrExpr *value, IrExpr *target, SrcLoc loc) {
  IrStmt *s = ir_alloc(r, sizeof *s);
  s->kind = kind;
  s->value = value;
  s->target = target;
  s->loc = loc;
  IrStmt **tail = &op->pw.body;
  while (*tail) tail = &(*tail)->next;
  *tail = s;
  collect_stmt(r, op, s);
  return s;
}

IrExpr *ir_pw_let(IrRegion *r, IrOp *op, const char *name, IrExpr *value, SrcLoc loc) {
  IrStmt *s = add_stmt(r, op, IR_S_LET, value, NULL, loc);
  s->name = ir_strdup(r, name);
  IrExpr *e = new_expr(r, IR_E_LOCAL, value->type);
  e->let = s;
  e->loc = loc;
  return e;
}

static bool reads_tensor(const IrExpr *e, const IrTensor *t) {
  if (!e || e->kind == IR_E_LOCAL) return false;
  if (e->kind == IR_E_READ && e->tensor == t) return true;
  return reads_tensor(e->a, t) || reads_tensor(e->b, t) || reads_tensor(e->c, t);
}

// A store is dead when a later store of the same tensor follows and nothing
// between them (nor the later store's value) reads the tensor.
static bool dead_store(const IrStmt *s) {
  for (const IrStmt *n = s->next; n; n = n->next) {
    if (reads_tensor(n->value, s->tensor)) return false;
    if (n->kind == IR_S_STORE && n->tensor == s->tensor) return true;
  }
  return false;
}

void ir_pw_drop_dead_stores(IrRegion *r, IrOp *op) {
  bool dropped = false, again = true;
  while (again) {  // (a store only a dropped one read is dead in turn)
    again = false;
    for (IrStmt **p = &op->pw.body; *p;) {
      if ((*p)->kind == IR_S_STORE && dead_store(*p)) {
        *p = (*p)->next;
        dropped = again = true;
      } else {
        p = &(*p)->next;
      }
    }
  }
  if (dropped) recollect(r, op);
}

typedef struct Lets {
  const IrStmt **v;
  int n, cap;
} Lets;

static bool lets_has(const Lets *l, const IrStmt *s) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i] == s) return true;
  return false;
}

// The lets e uses directly (not through other lets: those come from their own values).
static void mark_lets(Lets *l, const IrExpr *e) {
  if (!e) return;
  if (e->kind == IR_E_LOCAL) {
    if (lets_has(l, e->let)) return;
    if (l->n == l->cap) {
      l->cap = l->cap ? 2 * l->cap : 32;
      l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
      if (!l->v) COCONET_BUG("out of memory");
    }
    l->v[l->n++] = e->let;
    return;
  }
  mark_lets(l, e->a);
  mark_lets(l, e->b);
  mark_lets(l, e->c);
}

void ir_pw_drop_dead_lets(IrRegion *r, IrOp *op) {
  int n = 0;
  for (const IrStmt *s = op->pw.body; s; s = s->next) n++;
  const IrStmt **order = malloc((size_t)(n ? n : 1) * sizeof *order);
  if (!order) COCONET_BUG("out of memory");
  n = 0;
  for (const IrStmt *s = op->pw.body; s; s = s->next) order[n++] = s;
  Lets live = {0};
  for (int i = n - 1; i >= 0; i--)  // a let uses only earlier ones
    if (order[i]->kind != IR_S_LET || lets_has(&live, order[i])) mark_lets(&live, order[i]->value);
  free(order);
  bool dropped = false;
  for (IrStmt **p = &op->pw.body; *p;) {
    if ((*p)->kind == IR_S_LET && !lets_has(&live, *p)) {
      *p = (*p)->next;
      dropped = true;
    } else {
      p = &(*p)->next;
    }
  }
  free(live.v);
  if (dropped) recollect(r, op);
}

static bool same_text(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

// a and b compute the same value: lets are compared by their values (names
// and places aside), tensors and parameters by name. *budget bounds the work.
static bool same_expr(const IrExpr *a, const IrExpr *b, long *budget) {
  if (--*budget < 0) return false;
  if (a && a->kind == IR_E_LOCAL) return same_expr(a->let->value, b, budget);
  if (b && b->kind == IR_E_LOCAL) return same_expr(a, b->let->value, budget);
  if (!a || !b) return a == b;
  if (a->kind != b->kind || a->type != b->type || a->ival != b->ival || a->op != b->op || a->fn != b->fn ||
      a->draw != b->draw || a->index != b->index || !same_text(a->text, b->text))
    return false;
  if (a->kind == IR_E_FLOAT && a->fval != b->fval && !(a->fval != a->fval && b->fval != b->fval)) return false;
  if (a->kind == IR_E_READ && (strcmp(a->tensor->name, b->tensor->name) != 0 || (a->k == NULL) != (b->k == NULL) ||
                               (a->k && !ir_size_equal(a->k, b->k))))
    return false;
  if (a->kind == IR_E_PARAM && (strcmp(a->param->name, b->param->name) != 0 || !same_text(a->param->arg_text, b->param->arg_text)))
    return false;
  return same_expr(a->a, b->a, budget) && same_expr(a->b, b->b, budget) && same_expr(a->c, b->c, budget);
}

bool ir_pw_same_stores(const IrOp *a, const IrOp *b) {
  long budget = 1000000;
  const IrStmt *x = a->pw.body, *y = b->pw.body;
  for (;;) {
    while (x && x->kind == IR_S_LET) x = x->next;
    while (y && y->kind == IR_S_LET) y = y->next;
    if (!x || !y) return x == y;
    if (x->kind != y->kind || strcmp(x->tensor->name, y->tensor->name) != 0 ||
        !same_expr(x->target, y->target, &budget) || !same_expr(x->value, y->value, &budget))
      return false;
    x = x->next;
    y = y->next;
  }
}

void ir_pw_store(IrRegion *r, IrOp *op, IrTensor *t, IrExpr *value, SrcLoc loc) {
  IrStmt *s = add_stmt(r, op, IR_S_STORE, value, NULL, loc);
  s->tensor = t;
  ir_tensor_count(t, op->pw.count);
  use_add(r, &op->writes, t, IR_IDX_I, NULL, loc.file ? loc : op->loc);
}

void ir_pw_reduce(IrRegion *r, IrOp *op, IrTensor *t, long k, IrExpr *value, SrcLoc loc) {
  IrExpr *target = ir_expr_at(ir_expr_read(r, t, IR_IDX_CONST, ir_size_const(r, k)), loc);
  IrStmt *s = add_stmt(r, op, IR_S_REDUCE, value, target, loc);
  s->tensor = t;
  if (!t->count) t->count = ir_size_const(r, k + 1);  // at least; a memset before it sizes it
  use_add(r, &op->writes, t, IR_IDX_CONST, target, loc.file ? loc : op->loc);
}

bool ir_sched_reassociates(const IrRegion *r) {
  for (const IrOp *op = r->sched; op; op = op->next)
    if (op->span.part != IR_PART_ALL && ir_pw_reduction(op)) return true;
  return false;
}

bool ir_pw_sums_into(const IrOp *op, const IrTensor *t) {
  if (op->kind != IR_OP_POINTWISE) return false;
  for (const IrStmt *s = op->pw.body; s; s = s->next)
    if (s->kind == IR_S_REDUCE && s->tensor == t) return true;
  return false;
}

static bool read_always(const IrExpr *e, const IrTensor *t) {
  if (!e || e->kind == IR_E_LOCAL) return false;
  if (e->kind == IR_E_READ && e->tensor == t && !e->sometimes) return true;
  return read_always(e->a, t) || read_always(e->b, t) || read_always(e->c, t);
}

bool ir_pw_reads_always(const IrOp *op, const IrTensor *t) {
  if (op->kind != IR_OP_POINTWISE) return false;
  for (const IrStmt *s = op->pw.body; s; s = s->next)
    if (read_always(s->value, t) || read_always(s->target, t)) return true;
  return false;
}

bool ir_region_collective_buffer(const IrRegion *r, const IrTensor *t) {
  for (const IrOp *op = r->ops; op; op = op->next)
    if (op->kind == IR_OP_COLLECTIVE && (op->coll.in == t || op->coll.out == t)) return true;
  return false;
}

bool ir_pw_reads_lazily(const IrRegion *r, const IrOp *op, const IrTensor *t) {
  for (const IrUse *u = op->writes; u; u = u->next)
    if (u->ref.t == t) return false;
  return !ir_pw_reads_always(op, t) && !ir_region_collective_buffer(r, t);
}

bool ir_pw_reaches_sometimes(const IrRegion *r, const IrOp *op, const IrTensor *t) {
  if (op->kind != IR_OP_POINTWISE || ir_pw_reads_always(op, t) || ir_region_collective_buffer(r, t)) return false;
  bool reached = false;
  for (const IrUse *u = op->reads; u; u = u->next) reached |= u->ref.t == t;
  for (const IrStmt *s = op->pw.body; s; s = s->next) {
    if ((s->kind == IR_S_STORE && s->tensor == t && !s->sometimes) || (s->kind == IR_S_REDUCE && s->tensor == t))
      return false;
    reached |= s->kind == IR_S_STORE && s->tensor == t;
  }
  return reached;
}

static bool read_eager(const IrExpr *e, const IrTensor *t) {
  if (!e || e->kind == IR_E_LOCAL) return false;
  if (e->kind == IR_E_READ && e->tensor == t) return true;
  if (e->kind == IR_E_SELECT || (e->kind == IR_E_BINARY && (e->op == IR_LAND || e->op == IR_LOR)))
    return read_eager(e->a, t);
  return read_eager(e->a, t) || read_eager(e->b, t) || read_eager(e->c, t);
}

bool ir_pw_reads_eagerly(const IrOp *op, const IrTensor *t) {
  if (op->kind != IR_OP_POINTWISE) return false;
  for (const IrStmt *s = op->pw.body; s; s = s->next)
    if (read_eager(s->value, t)) return true;
  return false;
}

const IrStmt *ir_pw_reduction(const IrOp *op) {
  if (op->kind != IR_OP_POINTWISE) return NULL;
  for (const IrStmt *s = op->pw.body; s; s = s->next)
    if (s->kind == IR_S_REDUCE) return s;
  return NULL;
}
