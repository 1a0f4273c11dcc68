// analyze_stmt.c: the statements of the element body and of inlined helpers,
// as per-element IR: locals become lets, stores t[i] = e, and control flow
// becomes conditions, since every element runs the same straight-line code:
//
//   - `if (c) A else B`: A runs under c, B under !c; a store under c is
//     t[i] = c ? e : t[i], a local assigned under c is x = c ? e : x (a local
//     declared under c that divides integers is c ? e : 0, so that it never
//     traps where the condition is false);
//   - `return` (a helper's, or the kernel's in an `if (i < n)` guard) and
//     `continue` (of a grid-stride loop) end the element: what follows runs
//     under "not returned", a helper's value is the returns' under theirs;
//   - `for (int k = A; k < B; k++)` with constant bounds is unrolled;
//   - a void __device__ helper called as a statement is inlined and may store
//     through its pointer parameters (&t[i]);
//   - atomicAdd(acc, e), atomicAdd(&acc[K], e) as a statement is a reduction:
//     acc[K] += e over the elements (e is 0 where the statement does not run).
// curand draws are refused under a condition curand_init is not under (an
// `if`, a ?: branch): the draw number would depend on the path. See analyze.c.
#include "analyze_impl.h"

#include <stdlib.h>
#include <string.h>

#define MAX_UNROLLED 1024  // loop iterations unrolled per kernel

static enum CXChildVisitResult each_stmt(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Az *az = data;
  az_stmt(az, c);
  return az_failed(az) || az->done ? CXChildVisit_Break : CXChildVisit_Continue;
}

static IrType type_of(CXCursor c) { return az_type_of(clang_getCursorType(c)); }

static bool is_counter(const Az *az, CXCursor d) {
  for (int i = 0; i < az->ncounters; i++)
    if (same(az->counters[i], d)) return true;
  return false;
}

// An expression whose value does not depend on when it is evaluated: it reads
// no buffer other than through lets (computed where they are defined).
static bool stable(const IrExpr *e) {
  if (!e || e->kind == IR_E_LOCAL) return true;
  return e->kind != IR_E_READ && stable(e->a) && stable(e->b) && stable(e->c);
}

// Whether e reads none of the tensors stored by `from` and the statements after it,
// and calls nothing the IR does not model: evaluated later, it has the same value.
static bool same_later(const IrExpr *e, const IrStmt *from) {
  if (!e || e->kind == IR_E_LOCAL) return true;
  if (e->kind == IR_E_OPAQUE) return false;
  if (e->kind == IR_E_READ)
    for (const IrStmt *s = from; s; s = s->next)
      if ((s->kind == IR_S_STORE || s->kind == IR_S_REDUCE) && s->tensor == e->tensor) return false;
  return same_later(e->a, from) && same_later(e->b, from) && same_later(e->c, from);
}

IrExpr *az_stored(Az *az, const IrTensor *t) {
  const IrStmt *last = NULL;
  for (const IrStmt *st = az->op->pw.body; st; st = st->next) {
    if (st->kind == IR_S_REDUCE && st->tensor == t) return NULL;
    if (st->kind == IR_S_STORE && st->tensor == t) last = st;
  }
  return last && same_later(last->value, last) ? last->value : NULL;
}

static bool earlier_read(const IrExpr *e, const IrTensor *t) {
  return e->kind == IR_E_READ && e->tensor == t && e->index == IR_IDX_I && e->sometimes;
}

// As same_later, but t[i] as it was before a store (old_value's read) may be read: a select
// reaches it only where the store kept it.
static bool only_earlier_reads(const IrExpr *e, const IrStmt *from, const IrTensor *t) {
  if (!e || e->kind == IR_E_LOCAL || earlier_read(e, t)) return true;
  if (e->kind == IR_E_OPAQUE) return false;
  if (e->kind == IR_E_READ)
    for (const IrStmt *s = from; s; s = s->next)
      if ((s->kind == IR_S_STORE || s->kind == IR_S_REDUCE) && s->tensor == e->tensor) return false;
  return only_earlier_reads(e->a, from, t) && only_earlier_reads(e->b, from, t) && only_earlier_reads(e->c, from, t);
}

// What t[i] holds when a store under `cond` does not happen: the value this
// element last stored there when that is known (with `if (c) { t[i] = a;
// return; } ... t[i] = b;` the second store's else is a: the first store's
// `c ? a : t[i]` taken where c holds), else t[i] as read then.
static IrExpr *old_value(Az *az, IrTensor *t, IrExpr *cond) {
  const IrStmt *last = NULL;
  for (const IrStmt *st = az->op->pw.body; st; st = st->next)
    if (st->kind == IR_S_STORE && st->tensor == t) last = st;
  IrExpr *v = last ? last->value : NULL;
  if (v && v->kind == IR_E_SELECT && cond->kind == IR_E_UNARY && cond->op == IR_NOT && cond->a == v->a) v = v->b;
  // (a value read again now is the same when nothing since stored what it reads: `out[i] = y[i];
  // if (y[i] < 0) return; out[i] += 1;` keeps y[i] where the second store does not happen)
  if (v && (stable(v) || same_later(v, last))) return v;
  // The last store's value read again now is what it stored, where its t[i] as it was before is
  // read only on the path where that store kept it (`c ? a : t[i]` holds the same value before and
  // after storing it): nested early returns and else-if chains (only_earlier_reads).
  if (v && only_earlier_reads(v, last, t)) return v;
  IrExpr *old = ir_expr_read(az->ir, t, IR_IDX_I, NULL);
  old->sometimes = true;  // the IR's, where the store does not happen: the program reads nothing there
  return old;
}

// Does e read t[i] as it was before the store (old_value's read, or the
// program's own read under a condition)?
static bool reads_before(const IrExpr *e, const IrTensor *t) {
  if (!e) return false;
  if (earlier_read(e, t)) return true;
  return reads_before(e->a, t) || reads_before(e->b, t) || reads_before(e->c, t);
}

// The conditions a store's selects test, as truth functions of their atoms:
// the operands of !, && and || that are none of them (`v > hi`, `flag`), each
// taken as free to be true or false.
enum { MAX_ATOMS = 10 };
typedef struct Atoms {
  const IrExpr *atom[MAX_ATOMS];
  int n;
  bool many;  // more than MAX_ATOMS
} Atoms;

static bool connective(const IrExpr *e) {
  return (e->kind == IR_E_UNARY && e->op == IR_NOT) ||
         (e->kind == IR_E_BINARY && (e->op == IR_LAND || e->op == IR_LOR));
}

static void add_atoms(const IrExpr *c, Atoms *a) {
  if (connective(c)) {
    add_atoms(c->a, a);
    if (c->kind == IR_E_BINARY) add_atoms(c->b, a);
    return;
  }
  for (int i = 0; i < a->n; i++)
    if (a->atom[i] == c) return;
  if (a->n == MAX_ATOMS) a->many = true;
  else a->atom[a->n++] = c;
}

static void select_atoms(const IrExpr *e, Atoms *a) {
  if (!e || a->many) return;
  if (e->kind == IR_E_SELECT) add_atoms(e->a, a);
  select_atoms(e->a, a);
  select_atoms(e->b, a);
  select_atoms(e->c, a);
}

static bool truth(const IrExpr *c, const Atoms *a, unsigned bits) {
  if (c->kind == IR_E_UNARY && c->op == IR_NOT) return !truth(c->a, a, bits);
  if (c->kind == IR_E_BINARY && c->op == IR_LAND) return truth(c->a, a, bits) && truth(c->b, a, bits);
  if (c->kind == IR_E_BINARY && c->op == IR_LOR) return truth(c->a, a, bits) || truth(c->b, a, bits);
  for (int i = 0; i < a->n; i++)
    if (a->atom[i] == c) return bits >> i & 1;
  return true;  // (not an atom: not reached, every leaf is one)
}

// Does e read t[i] as it was, with the atoms as `bits` say?
static bool earlier_reached(const IrExpr *e, const IrTensor *t, const Atoms *a, unsigned bits) {
  if (!e) return false;
  if (earlier_read(e, t)) return true;
  if (e->kind == IR_E_SELECT)
    return earlier_reached(e->a, t, a, bits) ||
           earlier_reached(truth(e->a, a, bits) ? e->b : e->c, t, a, bits);
  return earlier_reached(e->a, t, a, bits) || earlier_reached(e->b, t, a, bits) || earlier_reached(e->c, t, a, bits);
}

// e with t[i] as it was replaced by zero (where no path reaches it).
static IrExpr *without_earlier(Az *az, IrExpr *e, const IrTensor *t) {
  if (!e) return NULL;
  if (earlier_read(e, t)) return az_cast_to(az, e->type, ir_expr_int(az->ir, 0, IR_I32));
  IrExpr *a = without_earlier(az, e->a, t), *b = without_earlier(az, e->b, t), *c = without_earlier(az, e->c, t);
  if (a == e->a && b == e->b && c == e->c) return e;
  IrExpr *copy = ir_alloc(az->ir, sizeof *copy);
  *copy = *e;
  copy->a = a;
  copy->b = b;
  copy->c = c;
  return copy;
}

// A store whose selects reach t[i] as it was on no path (`if (v > hi) { t[i] = hi; return; }
// if (v < lo) { t[i] = lo; return; } t[i] = v;`, an if / else-if / else): the element
// stores t[i] on every path, and its value reads nothing before.
static IrExpr *every_path(Az *az, IrExpr *value, const IrTensor *t) {
  if (!reads_before(value, t)) return value;
  Atoms a = {.n = 0};
  select_atoms(value, &a);
  if (a.many) return value;
  for (unsigned bits = 0; bits < 1u << a.n; bits++)
    if (earlier_reached(value, t, &a, bits)) return value;
  return without_earlier(az, value, t);
}

void az_store(Az *az, CXCursor at, IrTensor *t, IrExpr *value) {
  if (!t || !value) return;
  if (az->lanes > 1 && !az->lane_store) {
    char *text = az_text_of(az, at);
    az_fail(az, at, "kernel '%s' stores a scalar (%s) in a kernel whose element is a vector of %d lanes (i counts "
                    "vectors, so the lanes of a vector would all write it); store whole vectors", az->launch->kernel,
            text, az->lanes);
    free(text);
    return;
  }
  if (az->depth > 0 && !az->stores_ok) {
    az_fail(az, at, "kernel '%s': a helper that stores must be called as a statement", az->launch->kernel);
    return;
  }
  value = az_cast_to(az, t->type, value);
  IrExpr *cond = az_cond(az);
  if (az->tail_guard) cond = cond ? ir_expr_binary(az->ir, IR_LAND, az->tail_guard, cond) : az->tail_guard;
  if (cond) {
    IrExpr *kept = az_cast_to(az, t->type, old_value(az, t, cond));
    value = every_path(az, ir_expr_select(az->ir, cond, value, kept), t);
  }
  ir_pw_store(az->ir, az->op, t, value, fe_loc(az->fe, clang_getCursorLocation(at)));
  IrStmt *last = az->op->pw.body;
  while (last->next) last = last->next;
  // Under a condition, the element keeps what it held where the store does not happen, unless
  // an earlier store covers those elements (`if (c) { t[i] = a; return; } t[i] = b;` stores
  // every element): then the program stores t[i] on every path.
  last->sometimes = (az_cond(az) && reads_before(value, t)) || az->outer;
}

// A new value of a local: a let, or under a condition a select of the old one.
static void set_local(Az *az, CXCursor s, CXCursor d, Binding *b, IrExpr *value) {
  IrType t = type_of(d);
  value = az_cast_to(az, t, value);
  IrExpr *cond = az_cond(az);
  if (cond) value = az_cast_to(az, t, ir_expr_select(az->ir, cond, value, b->value));
  char *name = fe_spelling(d);
  b->value = ir_pw_let(az->ir, az->op, name, value, fe_loc(az->fe, clang_getCursorLocation(s)));
  b->index = false;  // (a helper's parameter passed the index no longer holds it)
  free(name);
}

bool az_carries(Az *az, CXCursor s, const Binding *b) {
  if (b - az->locals >= az->carried) return false;
  char *name = fe_spelling(b->decl);
  az_fail(az, s, "kernel '%s' assigns '%s', declared before its grid-stride loop, in the loop: the value carries "
                 "from one element to the next element of the same thread, which depends on the grid; declare it "
                 "inside the loop", az->launch->kernel, name);
  free(name);
  return true;
}

IrExpr *az_assigned_value(Az *az, CXCursor s, CXCursor lhs, CXCursor rhs, const char *op) {
  if (strcmp(op, "=") == 0) return az_expr(az, rhs);
  char bop[3] = {op[0], op[1] == '=' ? '\0' : op[1], '\0'};
  return az_binary_expr(az, s, lhs, rhs, bop);
}

// `s += e` (or -=) in the grid-stride loop of a local declared 0 before it:
// a thread's running sum, which only atomicAdd(acc, s) after the loop may use.
// False when it is not one (az_carries then says why).
static bool partial_add(Az *az, CXCursor d, Binding *b, CXCursor rhs, const char *op) {
  bool zero = false, plus = strcmp(op, "+=") == 0;
  if (az->depth > 0 || az->lanes > 1 || (!plus && strcmp(op, "-=") != 0) || b->loop_read) return false;
  IrType t = type_of(d);
  if (t == IR_VOID || t == IR_F16 || t == IR_BF16) return false;
  const IrExpr *init = b->value->kind == IR_E_LOCAL ? b->value->let->value : b->value;
  if (!b->partial && !(az_constant_truth(init, &zero) && !zero)) {
    char *name = fe_spelling(d);
    az_fail(az, d, "kernel '%s' adds to '%s' in its grid-stride loop, but '%s' does not start at 0 there: a thread's "
                   "running sum is taken as a sum over its elements only from 0 (a start value would be added once "
                   "per thread, which depends on the grid)", az->launch->kernel, name, name);
    free(name);
    return true;
  }
  b->partial = true;
  IrExpr *e = az_cast_to(az, t, az_expr(az, rhs));
  if (!e) return true;  // the reason is recorded
  if (!plus) e = ir_expr_unary(az->ir, IR_NEG, e);
  IrExpr *cond = az_cond(az);
  if (cond) e = ir_expr_select(az->ir, cond, e, az_cast_to(az, t, ir_expr_int(az->ir, 0, IR_I32)));
  b->sum = b->sum ? az_cast_to(az, t, ir_expr_binary(az->ir, IR_ADD, b->sum, e)) : e;
  return true;
}

// x = e, x op= e: a store to an element or a new value of a local.
static void assign(Az *az, CXCursor s, CXCursor lhs, CXCursor rhs, const char *op) {
  if (az->lanes > 1 && az_vector_assign(az, s, lhs, rhs, op)) return;
  CXCursor l = az_strip(lhs);
  CXCursor d = kind(l) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(l) : clang_getNullCursor();
  Binding *b = clang_Cursor_isNull(d) ? NULL : az_find_local(az, d);
  // A running sum before its value is computed: `s += e` does not read s's value.
  if (b && b->value && b - az->locals < az->carried && partial_add(az, d, b, rhs, op)) return;
  IrExpr *value = az_assigned_value(az, s, lhs, rhs, op);
  if (!value) return;  // the reason is recorded
  if (b && b->value) {
    if (az_carries(az, s, b)) return;
    if (is_counter(az, d))
      az_fail(az, s, "kernel '%s' assigns the counter of an unrolled loop in its body", az->launch->kernel);
    else
      set_local(az, s, d, b, value);
    return;
  }
  az_store(az, s, az_element_target(az, lhs), value);
}

// x = e, x op= e; for class types (__half) these are calls of operator=, operator+=, ...
bool az_is_assignment(const Az *az, CXCursor s, CXCursor *lhs, CXCursor *rhs, char **op) {
  if (kind(s) == CXCursor_CallExpr && clang_Cursor_getNumArguments(s) == 2) {
    char *name = fe_spelling(clang_getCursorReferenced(s));
    size_t n = strlen(name);
    bool assign = strncmp(name, "operator", 8) == 0 && n > 8 && name[n - 1] == '=' &&
                  strcmp(name + 8, "==") != 0 && strcmp(name + 8, "!=") != 0 &&
                  strcmp(name + 8, "<=") != 0 && strcmp(name + 8, ">=") != 0;
    if (assign) {
      *op = strdup(name + 8);
      *lhs = clang_Cursor_getArgument(s, 0);
      *rhs = clang_Cursor_getArgument(s, 1);
    }
    free(name);
    return assign;
  }
  Kids k = kids(s);
  if ((kind(s) != CXCursor_BinaryOperator && kind(s) != CXCursor_CompoundAssignOperator) || k.n != 2)
    return false;
  *op = az_op_between(az, k.v[0], k.v[1]);
  size_t n = strlen(*op);
  if (n == 0 || (*op)[n - 1] != '=' || strcmp(*op, "==") == 0 || strcmp(*op, "<=") == 0 ||
      strcmp(*op, ">=") == 0 || strcmp(*op, "!=") == 0) {
    free(*op);
    return false;
  }
  *lhs = k.v[0];
  *rhs = k.v[1];
  return true;
}

typedef struct Writes {
  const Az *az;
  CXCursor var;
  bool found;
} Writes;

static enum CXChildVisitResult find_write(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Writes *w = data;
  CXCursor lhs, rhs;
  char *op = NULL;
  if (az_is_assignment(w->az, c, &lhs, &rhs, &op)) {
    free(op);
    if (az_refers_to(lhs, w->var)) w->found = true;
  } else if (kind(c) == CXCursor_UnaryOperator && kids(c).n == 1 && az_refers_to(kids(c).v[0], w->var)) {
    char *o = az_unary_op(w->az, c, kids(c).v[0]);
    w->found |= strstr(o, "++") || strstr(o, "--") || strchr(o, '&');
    free(o);
  }
  return w->found ? CXChildVisit_Break : CXChildVisit_Recurse;
}

bool az_writes(const Az *az, CXCursor within, CXCursor var) {
  Writes w = {az, var, false};
  clang_visitChildren(within, find_write, &w);
  return w.found;
}

// An integer division or remainder outside a ?: branch (which runs only when taken).
static bool may_trap(const IrExpr *e) {
  if (!e || e->kind == IR_E_LOCAL) return false;
  if (e->kind == IR_E_BINARY && (e->op == IR_DIV || e->op == IR_MOD) && !ir_type_is_float(e->type)) return true;
  if (e->kind == IR_E_SELECT) return may_trap(e->a);
  return may_trap(e->a) || may_trap(e->b) || may_trap(e->c);
}

void az_decl_stmt(Az *az, CXCursor s) {
  Kids vars = kids(s);
  for (int i = 0; i < vars.n && !az_failed(az); i++) {
    CXCursor v = vars.v[i];
    CXString ts = clang_getTypeSpelling(clang_getCursorType(v));
    bool state = strstr(clang_getCString(ts), "curandStatePhilox4_32_10") != NULL;
    clang_disposeString(ts);
    if (state) {
      az->philox = v;
      continue;
    }
    if (az->lanes > 1 && az_vector_type(clang_getCursorType(v), NULL)) {
      az_vector_decl(az, v);
      continue;
    }
    if (az_slice_decl(az, v)) continue;
    Kids init = kids(v);
    CXCursor last = init.n ? init.last : clang_getNullCursor();
    IrType t = type_of(v);
    if (t == IR_VOID) {
      char *name = fe_spelling(v);
      CXString ts = clang_getTypeSpelling(clang_getCursorType(v));
      az_fail(az, v, "kernel '%s': local '%s' of type '%s' is not supported (arithmetic scalars only)",
              az->launch->kernel, name, clang_getCString(ts));
      clang_disposeString(ts);
      free(name);
      return;
    }
    if (init.n == 0 || kind(last) == CXCursor_TypeRef) {
      // `float step;` assigned on every path later: reading it first would be
      // undefined, so any value is the program's; it starts as 0.
      az_bind(az, v, az_cast_to(az, t, ir_expr_int(az->ir, 0, IR_I32)));
      continue;
    }
    if (az_is_pointer(v)) {
      az_fail(az, v, "kernel '%s': a local pointer is not supported; index the buffer parameter", az->launch->kernel);
      return;
    }
    IrExpr *value = az_cast_to(az, t, az_expr(az, last));
    if (!value) return;
    // Declared under a condition, it is used only where that holds; computed
    // everywhere, an integer division must not trap where it does not.
    IrExpr *cond = az_cond(az);
    if (cond && may_trap(value)) value = ir_expr_select(az->ir, cond, value, ir_expr_int(az->ir, 0, t));
    char *name = fe_spelling(v);
    az_bind(az, v, ir_pw_let(az->ir, az->op, name, value, fe_loc(az->fe, clang_getCursorLocation(v))));
    free(name);
  }
}

static void curand_init_call(Az *az, CXCursor c) {
  int n = clang_Cursor_getNumArguments(c);
  CXCursor state = n == 4 ? az_strip(clang_Cursor_getArgument(c, 3)) : clang_getNullCursor();
  Kids k = kids(state);
  if (n != 4 || !az_is_index(az, clang_Cursor_getArgument(c, 1)) || k.n != 1 ||
      clang_Cursor_isNull(az->philox) || !same(az_referenced(k.v[0]), az->philox)) {
    az_fail(az, c, "kernel '%s': curand_init must be keyed by the element index: curand_init(seed, i, offset, &state)",
            az->launch->kernel);
    return;
  }
  az->draw_outer = az->outer;
  az->draw_cond = az->cond;
  az->seed = az_cast_to(az, IR_I64, az_expr(az, clang_Cursor_getArgument(c, 0)));
  az->offset = az_cast_to(az, IR_I64, az_expr(az, clang_Cursor_getArgument(c, 2)));
  az->draws = 0;
}

// if (c) A [else B]
// `if (c) then [else els]`, c the IR of the condition at `at`.
static void if_expr(Az *az, CXCursor at, IrExpr *c, CXCursor then, CXCursor els) {
  bool truth;
  if (az_constant_truth(c, &truth)) {  // a constant condition (a template flag, a NULL test): one branch runs
    if (truth) az_stmt(az, then);
    else if (!clang_Cursor_isNull(els)) az_stmt(az, els);
    return;
  }
  // Evaluated once: the branch may store to what the condition reads.
  if (!stable(c)) c = ir_pw_let(az->ir, az->op, "cond", c, fe_loc(az->fe, clang_getCursorLocation(at)));
  IrExpr *saved = az->cond;
  az->cond = saved ? ir_expr_binary(az->ir, IR_LAND, saved, c) : c;
  az_stmt(az, then);
  if (!clang_Cursor_isNull(els) && !az->done) {
    IrExpr *not_c = ir_expr_unary(az->ir, IR_NOT, c);
    az->cond = saved ? ir_expr_binary(az->ir, IR_LAND, saved, not_c) : not_c;
    az_stmt(az, els);
  }
  az->cond = saved;
}

static void if_stmt(Az *az, CXCursor s) {
  Kids k = kids(s);
  if (k.n != 2 && k.n != 3) {
    az_fail(az, s, "kernel '%s': this form of 'if' is not supported in a pointwise kernel", az->launch->kernel);
    return;
  }
  IrExpr *c = az_expr(az, k.v[0]);
  if (c) if_expr(az, k.v[0], c, k.v[1], k.n == 3 ? k.v[2] : clang_getNullCursor());
}

// The rest of an element loop's guard: `if (i < n && A && B) BODY` runs BODY when A && B
// (op IR_LAND), `if (i >= n || A) return;` returns when A (op IR_LOR): the conditions in order.
void az_if_all(Az *az, const CXCursor *conds, int n, IrBinaryOp op, CXCursor then) {
  IrExpr *c = NULL;
  for (int i = 0; i < n; i++) {
    // A test of the row against the grid's rows holds (`row < rows` under dim3(X, rows)): left out.
    if (az_slice_in_grid(az, conds[i], op == IR_LAND ? "<" : ">=")) continue;
    IrExpr *e = az_expr(az, conds[i]);
    if (!e) return;
    c = c ? ir_expr_binary(az->ir, op, c, e) : e;
  }
  if (c) if_expr(az, conds[0], c, then, clang_getNullCursor());
  else if (op == IR_LAND) az_stmt(az, then);  // (|| of returns: none happens)
}

// return [e] (a helper's, or the element's in a guarded kernel), continue (the element's).
static void return_stmt(Az *az, CXCursor s) {
  bool is_continue = kind(s) == CXCursor_ContinueStmt;
  if (az->depth == 0 && (is_continue ? az->guarded || az->ncounters : !az->guarded)) {
    az_fail(az, s, is_continue ? "kernel '%s': 'continue' is supported only as the grid-stride loop's, "
                                 "outside unrolled loops"
                               : "kernel '%s': 'return' in a grid-stride loop ends the thread, not the element: "
                                 "write 'continue'",
            az->launch->kernel);
    return;
  }
  Kids r = kids(s);
  if (az->depth > 0 && !is_continue && r.n == 1 && az->ret_vector) {  // the lanes of a vector helper's value
    IrExpr *v[4];
    if (!az_vector_expr(az, r.v[0], v)) return;
    IrExpr *outer = az->outer;
    az->outer = NULL;
    IrExpr *c = az_cond(az);
    az->outer = outer;
    for (int l = 0; l < az->lanes; l++)
      az->ret_lane[l] = c && az->ret_lane[l] ? ir_expr_select(az->ir, c, v[l], az->ret_lane[l]) : v[l];
  } else if (az->depth > 0 && !is_continue && r.n == 1) {
    IrExpr *v = az_cast_to(az, az->ret_type, az_expr(az, r.v[0]));
    if (!v) return;
    IrExpr *outer = az->outer;
    az->outer = NULL;  // the condition within the helper
    IrExpr *c = az_cond(az);
    az->outer = outer;
    az->ret = c && az->ret ? az_cast_to(az, az->ret_type, ir_expr_select(az->ir, c, v, az->ret)) : v;
  }
  if (!az->cond) az->done = true;
  else az->returned = az->returned ? ir_expr_binary(az->ir, IR_LOR, az->returned, az->cond) : az->cond;
}

// The step of `k++`, `++k`, `k--`, `k += C`, `k -= C`; 0 if it is not one.
static long long loop_step(Az *az, CXCursor inc, CXCursor counter) {
  Kids k = kids(inc);
  long long step = 0;
  if (kind(inc) == CXCursor_UnaryOperator && k.n == 1 && az_refers_to(k.v[0], counter)) {
    char *op = az_unary_op(az, inc, k.v[0]);
    step = strcmp(op, "++") == 0 ? 1 : strcmp(op, "--") == 0 ? -1 : 0;
    free(op);
  } else if (kind(inc) == CXCursor_CompoundAssignOperator && k.n == 2 && az_refers_to(k.v[0], counter) &&
             az_int_constant(k.v[1], &step)) {
    char *op = az_op_between(az, k.v[0], k.v[1]);
    step = strcmp(op, "+=") == 0 ? step : strcmp(op, "-=") == 0 ? -step : 0;
    free(op);
  }
  return step;
}

static bool holds(const char *op, long long v, long long bound) {
  return strcmp(op, "<") == 0 ? v < bound : strcmp(op, "<=") == 0 ? v <= bound : strcmp(op, ">") == 0 ? v > bound
         : strcmp(op, ">=") == 0 ? v >= bound : strcmp(op, "!=") == 0 && v != bound;
}

// for (int k = A; k < B; k++) body, with A and B constants: the body once per k.
static void for_stmt(Az *az, CXCursor s) {
  Kids k = kids(s);
  Kids init = k.n == 4 && kind(k.v[0]) == CXCursor_DeclStmt ? kids(k.v[0]) : (Kids){0};
  CXCursor counter = init.n == 1 ? init.v[0] : clang_getNullCursor();
  Kids cinit = init.n == 1 ? kids(counter) : (Kids){0};
  Kids cond = k.n == 4 && kind(k.v[1]) == CXCursor_BinaryOperator ? kids(k.v[1]) : (Kids){0};
  long long v = 0, bound = 0, step = 0;
  char *op = cond.n == 2 ? az_op_between(az, cond.v[0], cond.v[1]) : strdup("");
  bool ok = init.n == 1 && az_is_integer_var(counter) && cinit.n >= 1 && az_int_constant(cinit.last, &v) &&
            cond.n == 2 && az_refers_to(cond.v[0], counter) && az_int_constant(cond.v[1], &bound) &&
            (step = loop_step(az, k.v[2], counter)) != 0;
  if (!ok || az->ncounters == (int)(sizeof az->counters / sizeof *az->counters)) {
    free(op);
    az_fail(az, s, "kernel '%s': a loop in the element body must have constant bounds to be unrolled "
                "(for (int k = 0; k < 4; k++), at most %zu deep)", az->launch->kernel,
            sizeof az->counters / sizeof *az->counters);
    return;
  }
  az->counters[az->ncounters++] = counter;
  IrType t = type_of(counter);
  for (; holds(op, v, bound) && !az_failed(az) && !az->done; v += step) {
    if (++az->unrolled > MAX_UNROLLED) {
      az_fail(az, s, "kernel '%s': more than %d loop iterations to unroll", az->launch->kernel, MAX_UNROLLED);
      break;
    }
    az_bind(az, counter, ir_expr_int(az->ir, v, t));
    az_stmt(az, k.v[3]);
  }
  az->ncounters--;
  free(op);
}

// The element an atomicAdd adds to: `acc` (element 0), `&acc[K]` or `acc + K`
// with acc a pointer parameter of the kernel and K a constant.
static bool accumulator(Az *az, CXCursor e, CXCursor *decl, long long *k) {
  e = az_strip(e);
  Kids c = kids(e);
  bool element = false;
  *k = 0;
  if (kind(e) == CXCursor_UnaryOperator && c.n == 1 && kind(az_strip(c.v[0])) == CXCursor_ArraySubscriptExpr) {
    char *op = az_unary_op(az, e, c.v[0]);
    Kids sub = kids(az_strip(c.v[0]));
    bool ok = strcmp(op, "&") == 0 && sub.n == 2 && az_buffer(az, sub.v[0], decl, &element) && az_int_constant(sub.v[1], k);
    free(op);
    return ok && !element;
  }
  if (kind(e) == CXCursor_BinaryOperator && c.n == 2) {
    char *op = az_op_between(az, c.v[0], c.v[1]);
    bool ok = strcmp(op, "+") == 0 && az_buffer(az, c.v[0], decl, &element) && az_int_constant(c.v[1], k);
    free(op);
    return ok && !element;
  }
  return az_buffer(az, e, decl, &element) && !element;
}

// The buffer and element an atomicAdd statement sums into (NULL: the reason is recorded).
IrTensor *az_sum_target(Az *az, CXCursor s, long long *at) {
  const char *k = az->launch->kernel;
  CXCursor decl;
  if (az->depth > 0 || az->lanes > 1) {
    az_fail(az, s, "kernel '%s': atomicAdd is taken as a sum over the elements only in the body of a kernel whose "
                   "element is a scalar, not in a __device__ helper%s", k, az->lanes > 1 ? " or a vector kernel" : "");
    return NULL;
  }
  if (clang_Cursor_getNumArguments(s) != 2 || !accumulator(az, clang_Cursor_getArgument(s, 0), &decl, at) ||
      *at < 0 || *at > 1 << 20) {
    char *t = az_text_of(az, s);
    az_fail(az, s, "kernel '%s': %s: atomicAdd is taken as a sum into one element, at acc, &acc[K] or acc + K with acc "
                   "a pointer parameter and K a constant", k, t);
    free(t);
    return NULL;
  }
  IrType t = az_buffer_type(az, decl, s);
  if (t == IR_VOID) return NULL;
  if (t != IR_F32 && t != IR_F64 && t != IR_I32 && t != IR_U32) {
    char *name = fe_spelling(decl);
    az_fail(az, s, "kernel '%s': atomicAdd into '%s' of %s elements: coconet sums into float, double, int and "
                   "unsigned accumulators", k, name, ir_type_name(t));
    free(name);
    return NULL;
  }
  return az_buffer_tensor(az, decl, s);
}

// atomicAdd(acc, v) as a statement: every element adds its v (0 where the
// statement does not run) to one element of acc; the sum's order is not defined.
static void atomic_add(Az *az, CXCursor s) {
  long long at = 0;
  IrTensor *acc = az_sum_target(az, s, &at);
  IrExpr *v = acc ? az_cast_to(az, acc->type, az_expr(az, clang_Cursor_getArgument(s, 1))) : NULL;
  if (!v) return;
  IrExpr *cond = az_cond(az);
  if (cond) v = ir_expr_select(az->ir, cond, v, az_cast_to(az, acc->type, ir_expr_int(az->ir, 0, IR_I32)));
  ir_pw_reduce(az->ir, az->op, acc, (long)at, v, fe_loc(az->fe, clang_getCursorLocation(s)));
}

// A call as a statement: curand_init, atomicAdd, or a __device__ helper of the file.
static void call_stmt(Az *az, CXCursor s) {
  CXCursor callee = az_callee(s);
  char *name = fe_spelling(callee);
  CXCursor def = clang_getCursorDefinition(callee);
  if (strcmp(name, "curand_init") == 0) curand_init_call(az, s);
  else if (strcmp(name, "atomicAdd") == 0) atomic_add(az, s);
  else if (!clang_Cursor_isNull(def) && fe_in_user_code(az->fe, clang_getCursorLocation(def)))
    az_inline_helper(az, s, def, true);
  else
    az_fail(az, s, "kernel '%s' calls '%s' as a statement: not supported in a pointwise kernel", az->launch->kernel, name);
  free(name);
}

void az_stmt(Az *az, CXCursor s) {
  if (az_failed(az) || az->done) return;
  s = az_strip(s);  // expression statements may be wrapped in implicit nodes
  CXCursor lhs, rhs;
  char *op;
  if (az_is_assignment(az, s, &lhs, &rhs, &op)) {
    assign(az, s, lhs, rhs, op);
    free(op);
    return;
  }
  switch (kind(s)) {
  case CXCursor_CompoundStmt: clang_visitChildren(s, each_stmt, az); break;
  case CXCursor_DeclStmt:
    if (!az_slice_alias_decl(az, s)) az_decl_stmt(az, s);  // the row's local may follow the guard
    break;
  case CXCursor_NullStmt: break;
  case CXCursor_IfStmt: if_stmt(az, s); break;
  case CXCursor_ForStmt: for_stmt(az, s); break;
  case CXCursor_ReturnStmt:
  case CXCursor_ContinueStmt: return_stmt(az, s); break;
  case CXCursor_CallExpr: call_stmt(az, s); break;
  default: {
    char *t = az_text_of(az, s);
    az_fail(az, s, "kernel '%s': '%s' is not supported in a pointwise kernel", az->launch->kernel, t);
    free(t);
  }
  }
}
