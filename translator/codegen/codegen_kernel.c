// codegen_kernel.c: generated kernels.
//
// A run of scheduled pointwise ops (the kernels reorder or overlap moved onto
// a slice or a chunk, fused into one pass over memory) becomes two functions:
//
//   __device__ __forceinline__ void coconet_R_slice_elem(size_t i, float &w, float g, ..., float lr, size_t hidden)
//       the ops' statements for element i, generated from the IR expressions:
//       buffers read and written at [i] are references, read-only ones values,
//       buffers read at [i % K], [i / K] or [K] pointers
//   __global__ void coconet_R_slice(float *w, const float *g, ..., size_t lo, size_t hi)
//       a grid-stride loop over [lo, hi) (i stays the absolute element index),
//       N elements at a time with one vector load/store per buffer when every
//       [i] buffer is aligned to N elements (checked at run time), then the rest
//       one by one
//   __device__ __forceinline__ void coconet_R_slice_block(float *w, ..., size_t lo, size_t hi)
//       (kernel_block, for the fused kernel of row-wise kernels) elements
//       [lo, hi) by the threads of one block
//
// A sum (atomicAdd(&acc[K], e) in the kernel) is a per-thread partial the
// element function adds to (float &acc_sum); after the loops the block sums
// the partials (coconet_block_sum) and thread 0 adds the block's sum to acc[K]
// with one atomicAdd, when the launch's `add` says so (the tail, which every
// rank computes, is added by rank 0 only).
//
// Only live statements are generated (a local nobody uses is dropped, a Philox
// draw nobody uses is drawn and discarded).
#include "codegen_impl.h"

#include <stdlib.h>
#include <string.h>

enum { KMAX = 128 };

typedef struct KTensor {
  const IrTensor *t;
  const char *name;   // parameter name
  const char *vec;    // the vector loop's array
  bool pointer;       // some read is not at [i]: passed as a pointer, read in memory
  bool written;
  bool load;          // read before its first write: the vector loop loads it
  bool read;          // the element function reads it
  bool summed;        // summed into (atomicAdd): the kernel adds to it after its loops
} KTensor;

typedef struct KSum {  // one accumulator element a kernel sums into
  const IrTensor *t;
  long k;              // the element
  const char *name;    // the thread's partial sum
} KSum;

typedef struct KScalar {
  const IrVar *var;
  IrType type;
  const char *name;
  const char *arg;    // the launch argument as written
} KScalar;

typedef struct KSize {
  const IrSize *k;
  const char *name;
} KSize;

typedef struct KState {  // one curand Philox state of one op
  int op;
  const IrExpr *seed, *offset;
  const char *name;
  int ndraws;            // draws up to the last live one
  const char *draw[KMAX];  // names of live draws (NULL: drawn and discarded)
} KState;

typedef struct KStmt {
  const IrStmt *s;
  int op;
  bool live;
  const char *name;      // lets
} KStmt;

typedef struct Plan {
  const IrRegion *r;
  Kernel *k;
  Names names;
  KTensor tensors[KMAX];
  int ntensors;
  KScalar scalars[KMAX];
  int nscalars;
  KSize sizes[KMAX];
  int nsizes;
  KState states[KMAX];
  int nstates;
  KStmt stmts[KMAX * 4];
  int nstmts;
  KSum sums[KMAX];
  int nsums;
  bool uses_i;
  bool full;             // a table overflowed
  int cur_op;            // while walking
  const char *unit;      // indentation step
} Plan;

//
// Tables
//

static KTensor *tensor_of(Plan *p, const IrTensor *t) {
  for (int i = 0; i < p->ntensors; i++)
    if (p->tensors[i].t == t) return &p->tensors[i];
  if (p->ntensors == KMAX) {
    p->full = true;
    return &p->tensors[0];
  }
  KTensor *kt = &p->tensors[p->ntensors++];
  *kt = (KTensor){.t = t};
  return kt;
}

static KStmt *stmt_of(Plan *p, const IrStmt *s) {
  for (int i = 0; i < p->nstmts; i++)
    if (p->stmts[i].s == s) return &p->stmts[i];
  COCONET_BUG("local '%s' of no statement", s->name);
}

static KState *state_of(Plan *p, const IrExpr *philox) {
  for (int i = 0; i < p->nstates; i++) {
    KState *st = &p->states[i];
    if (st->op == p->cur_op && st->seed == philox->a && st->offset == philox->b) return st;
  }
  if (p->nstates == KMAX) {
    p->full = true;
    return &p->states[0];
  }
  KState *st = &p->states[p->nstates++];
  *st = (KState){.op = p->cur_op, .seed = philox->a, .offset = philox->b};
  return st;
}

static void add_scalar(Plan *p, const IrParam *param) {
  for (int i = 0; i < p->nscalars; i++)
    if (p->scalars[i].var == param->var && p->scalars[i].type == param->type) return;
  if (p->nscalars == KMAX) {
    p->full = true;
    return;
  }
  p->scalars[p->nscalars++] = (KScalar){param->var, param->type, param->name, param->arg_text};
}

static KSum *sum_of(Plan *p, const IrStmt *s) {
  long k = s->target->k->value;
  for (int i = 0; i < p->nsums; i++)
    if (p->sums[i].t == s->tensor && p->sums[i].k == k) return &p->sums[i];
  if (p->nsums == KMAX) {
    p->full = true;
    return &p->sums[0];
  }
  p->sums[p->nsums] = (KSum){s->tensor, k, NULL};
  return &p->sums[p->nsums++];
}

// The element function takes a tensor unless the kernel only sums into it.
static bool elem_takes(const KTensor *kt) { return !kt->summed || kt->read; }

static void add_size(Plan *p, const IrSize *k) {
  if (!k || k->kind == IR_SIZE_CONST) return;
  for (int i = 0; i < p->nsizes; i++)
    if (ir_size_equal(p->sizes[i].k, k)) return;
  if (p->nsizes == KMAX) {
    p->full = true;
    return;
  }
  p->sizes[p->nsizes++] = (KSize){k, NULL};
}

//
// Liveness (backwards) and the parameters of live statements (forwards)
//

static void mark_live(Plan *p, const IrExpr *e) {
  if (!e) return;
  if (e->kind == IR_E_LOCAL) stmt_of(p, e->let)->live = true;
  if (e->kind == IR_E_PHILOX) {
    KState *st = state_of(p, e);
    if (e->draw >= KMAX) p->full = true;
    else if (e->draw >= st->ndraws) st->ndraws = e->draw + 1;
    if (e->draw < KMAX) st->draw[e->draw] = "";
  }
  mark_live(p, e->a);
  mark_live(p, e->b);
  mark_live(p, e->c);
}

static void liveness(Plan *p) {
  for (int i = p->nstmts - 1; i >= 0; i--) {
    KStmt *ks = &p->stmts[i];
    if (ks->s->kind != IR_S_LET) ks->live = true;
    p->cur_op = ks->op;
    if (ks->live) mark_live(p, ks->s->value);
  }
}

static void collect(Plan *p, const IrExpr *e) {
  if (!e) return;
  switch (e->kind) {
  case IR_E_READ: {
    KTensor *kt = tensor_of(p, e->tensor);
    kt->read = true;
    if (e->index != IR_IDX_I) {
      kt->pointer = true;
      p->uses_i |= e->index != IR_IDX_CONST;
      add_size(p, e->k);
    } else if (!kt->written) {
      kt->load = true;
    }
    break;
  }
  case IR_E_PARAM: add_scalar(p, e->param); break;
  case IR_E_INDEX: case IR_E_PHILOX: p->uses_i = true; break;
  default: break;
  }
  collect(p, e->a);
  collect(p, e->b);
  collect(p, e->c);
}

static int collect_all(Plan *p) {
  for (int i = 0; i < p->nstmts; i++) {
    const KStmt *ks = &p->stmts[i];
    if (!ks->live) continue;
    collect(p, ks->s->value);
    if (ks->s->kind == IR_S_STORE) tensor_of(p, ks->s->tensor)->written = true;
    if (ks->s->kind == IR_S_REDUCE) {
      KTensor *kt = tensor_of(p, ks->s->tensor);
      kt->written = kt->pointer = kt->summed = true;
      sum_of(p, ks->s);
    }
  }
  if (!p->full) return 0;
  diag_error(&p->k->ops[0]->loc, "codegen: kernel '%s' is too large to generate (more than %d buffers, "
                                 "parameters or statements)", p->k->ops[0]->pw.kernel, KMAX);
  return -1;
}

static int gather_stmts(Plan *p) {
  for (int o = 0; o < p->k->nops; o++) {
    for (const IrStmt *s = p->k->ops[o]->pw.body; s; s = s->next) {
      if (p->nstmts == KMAX * 4) {
        diag_error(&p->k->ops[0]->loc, "codegen: kernel '%s' has too many statements to generate",
                   p->k->ops[0]->pw.kernel);
        return -1;
      }
      p->stmts[p->nstmts++] = (KStmt){.s = s, .op = o};
    }
  }
  return 0;
}

//
// Names
//

static bool is_identifier(const char *s) {
  if (!*s || (*s >= '0' && *s <= '9')) return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
      return false;
  return true;
}

static void name_all(Plan *p) {
  static const char *reserved[] = {"i", "lo", "hi", "first", "stride", "nvec", "j", "i0", "k", "add"};
  for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++) names_add(&p->names, reserved[i]);
  for (int i = 0; i < p->ntensors; i++) p->tensors[i].name = names_add(&p->names, p->tensors[i].t->name);
  for (int i = 0; i < p->nscalars; i++) p->scalars[i].name = names_add(&p->names, p->scalars[i].name);
  for (int i = 0; i < p->nsizes; i++) {
    const IrSize *k = p->sizes[i].k;
    bool ident = k->kind == IR_SIZE_VAR && is_identifier(k->var->text);
    p->sizes[i].name = names_add(&p->names, ident ? k->var->text : "k");
  }
  char buf[256];
  for (int i = 0; i < p->ntensors; i++) {
    snprintf(buf, sizeof buf, "%s_v", p->tensors[i].name);
    p->tensors[i].vec = names_add(&p->names, buf);
  }
  for (int i = 0; i < p->nsums; i++) {
    if (p->sums[i].k) snprintf(buf, sizeof buf, "%s_sum%ld", p->sums[i].t->name, p->sums[i].k);
    else snprintf(buf, sizeof buf, "%s_sum", p->sums[i].t->name);
    p->sums[i].name = names_add(&p->names, buf);
  }
  for (int i = 0; i < p->nstmts; i++)
    if (p->stmts[i].live && p->stmts[i].s->kind == IR_S_LET) p->stmts[i].name = names_add(&p->names, p->stmts[i].s->name);
  for (int i = 0; i < p->nstates; i++) {
    KState *st = &p->states[i];
    st->name = names_add(&p->names, "st");
    for (int d = 0; d < st->ndraws; d++) {
      snprintf(buf, sizeof buf, "u%d", d);
      st->draw[d] = st->draw[d] ? names_add(&p->names, buf) : NULL;
    }
  }
}

static const char *nm_tensor(void *ctx, const IrTensor *t, bool *elementwise) {
  KTensor *kt = tensor_of(ctx, t);
  *elementwise = !kt->pointer;
  return kt->name;
}

static const char *nm_param(void *ctx, const IrParam *param) {
  Plan *p = ctx;
  for (int i = 0; i < p->nscalars; i++)
    if (p->scalars[i].var == param->var && p->scalars[i].type == param->type) return p->scalars[i].name;
  COCONET_BUG("parameter '%s' not collected", param->name);
}

static const char *nm_size(void *ctx, const IrSize *k) {
  Plan *p = ctx;
  for (int i = 0; i < p->nsizes; i++)
    if (ir_size_equal(p->sizes[i].k, k)) return p->sizes[i].name;
  COCONET_BUG("size not collected");
}

static const char *nm_local(void *ctx, const IrStmt *let) { return stmt_of(ctx, let)->name; }

static const char *nm_draw(void *ctx, const IrExpr *philox) { return state_of(ctx, philox)->draw[philox->draw]; }

//
// Text
//

// "adam_update (adam.cu:155)", "scale + shift (f.cu:20, 21)"
static void describe_ops(Buf *b, const Kernel *k) {
  for (int o = 0; o < k->nops; o++) buf_printf(b, "%s%s", o ? " + " : "", k->ops[o]->pw.kernel);
  buf_printf(b, " (%s:", cg_base_name(k->ops[0]->loc.file));
  for (int o = 0; o < k->nops; o++) buf_printf(b, "%s%u", o ? ", " : "", k->ops[o]->loc.line);
  buf_puts(b, ")");
}

static void elem_params(Plan *p, Buf *b) {
  const char *sep = "";
  if (p->uses_i) {
    buf_puts(b, "size_t i");
    sep = ", ";
  }
  for (int i = 0; i < p->ntensors; i++) {
    const KTensor *kt = &p->tensors[i];
    const char *ct = cg_ctype(kt->t->type);
    if (!elem_takes(kt)) continue;
    if (kt->pointer) buf_printf(b, "%s%s%s *%s", sep, kt->written && !kt->summed ? "" : "const ", ct, kt->name);
    else buf_printf(b, "%s%s %s%s", sep, ct, kt->written ? "&" : "", kt->name);
    sep = ", ";
  }
  for (int i = 0; i < p->nsums; i++) {
    buf_printf(b, "%s%s &%s", sep, cg_ctype(p->sums[i].t->type), p->sums[i].name);
    sep = ", ";
  }
  for (int i = 0; i < p->nscalars; i++) {
    buf_printf(b, "%s%s %s", sep, cg_ctype(p->scalars[i].type), p->scalars[i].name);
    sep = ", ";
  }
  for (int i = 0; i < p->nsizes; i++) {
    buf_printf(b, "%ssize_t %s", sep, p->sizes[i].name);
    sep = ", ";
  }
}

static void emit_philox(Plan *p, Buf *b, int op, const ExprNames *nm) {
  for (int i = 0; i < p->nstates; i++) {
    const KState *st = &p->states[i];
    if (st->op != op) continue;
    buf_printf(b, "%scurandStatePhilox4_32_10_t %s;\n%scurand_init(", p->unit, st->name, p->unit);
    cg_expr(b, nm, st->seed, IR_I64);
    buf_puts(b, ", i, ");
    cg_expr(b, nm, st->offset, IR_I64);
    buf_printf(b, ", &%s);\n", st->name);
    for (int d = 0; d < st->ndraws; d++) {
      if (st->draw[d]) buf_printf(b, "%sconst float %s = curand_uniform(&%s);\n", p->unit, st->draw[d], st->name);
      else buf_printf(b, "%scurand_uniform(&%s);\n", p->unit, st->name);
    }
  }
}

static void emit_stmt(Plan *p, Buf *b, const KStmt *ks, const ExprNames *nm) {
  const IrStmt *s = ks->s;
  if (s->kind == IR_S_LET) {
    buf_printf(b, "%sconst %s %s = ", p->unit, cg_ctype(s->value->type), ks->name);
    cg_expr(b, nm, s->value, s->value->type);
  } else if (s->kind == IR_S_REDUCE) {
    buf_printf(b, "%s%s += ", p->unit, sum_of(p, s)->name);
    cg_expr(b, nm, s->value, s->tensor->type);
  } else {
    const KTensor *kt = tensor_of(p, s->tensor);
    buf_printf(b, "%s%s%s = ", p->unit, kt->name, kt->pointer ? "[i]" : "");
    cg_expr(b, nm, s->value, s->tensor->type);
  }
  buf_puts(b, ";\n");
}

static void emit_elem(Plan *p, Buf *b) {
  ExprNames nm = {nm_tensor, nm_param, nm_size, nm_local, nm_draw, p};
  buf_puts(b, "// coconet: one element i of ");
  describe_ops(b, p->k);
  buf_puts(b, ", generated from the IR\n");
  buf_printf(b, "__device__ __forceinline__ void %s_elem(", p->k->name);
  elem_params(p, b);
  buf_puts(b, ")\n{\n");
  for (int o = 0; o < p->k->nops; o++) {
    p->cur_op = o;
    emit_philox(p, b, o, &nm);
    for (int i = 0; i < p->nstmts; i++)
      if (p->stmts[i].op == o && p->stmts[i].live) emit_stmt(p, b, &p->stmts[i], &nm);
  }
  buf_puts(b, "}\n\n");
}

// The element function's arguments; lane is NULL in the scalar loop, "k" in the
// vector loop; tensor `subst` (if any) is read from the variable `subst_name`.
static void elem_args_subst(Plan *p, Buf *b, const char *lane, const IrTensor *subst, const char *subst_name) {
  const char *sep = "";
  if (p->uses_i) {
    buf_puts(b, lane ? "i0 + k" : "i");
    sep = ", ";
  }
  for (int i = 0; i < p->ntensors; i++) {
    const KTensor *kt = &p->tensors[i];
    if (!elem_takes(kt)) continue;
    if (subst && kt->t == subst) buf_printf(b, "%s%s", sep, subst_name);
    else if (kt->pointer) buf_printf(b, "%s%s", sep, kt->name);
    else if (lane) buf_printf(b, "%s%s[k]", sep, kt->vec);
    else buf_printf(b, "%s%s[i]", sep, kt->name);
    sep = ", ";
  }
  for (int i = 0; i < p->nsums; i++) {
    buf_printf(b, "%s%s", sep, p->sums[i].name);
    sep = ", ";
  }
  for (int i = 0; i < p->nscalars; i++) {
    buf_printf(b, "%s%s", sep, p->scalars[i].name);
    sep = ", ";
  }
  for (int i = 0; i < p->nsizes; i++) {
    buf_printf(b, "%s%s", sep, p->sizes[i].name);
    sep = ", ";
  }
}

static void elem_args(Plan *p, Buf *b, const char *lane) { elem_args_subst(p, b, lane, NULL, NULL); }

// Elements per vector step: 16 bytes of the widest [i] buffer; 0 when none.
static int vector_width(const Plan *p) {
  int widest = 0;
  for (int i = 0; i < p->ntensors; i++)
    if (!p->tensors[i].pointer && ir_type_size(p->tensors[i].t->type) > widest) widest = ir_type_size(p->tensors[i].t->type);
  return widest ? 16 / widest : 0;
}

static void emit_vector_loop(Plan *p, Buf *b, int n) {
  const char *u = p->unit;
  buf_printf(b, "%sif (coconet_aligned<%d>(lo", u, n);
  for (int i = 0; i < p->ntensors; i++)
    if (!p->tensors[i].pointer) buf_printf(b, ", %s", p->tensors[i].name);
  buf_printf(b, ")) {\n%s%sconst size_t nvec = (hi - lo) / %d;\n", u, u, n);
  buf_printf(b, "%s%sfor (size_t j = first; j < nvec; j += stride) {\n", u, u);
  buf_printf(b, "%s%s%sconst size_t i0 = lo + %d * j;\n", u, u, u, n);
  for (int i = 0; i < p->ntensors; i++) {
    const KTensor *kt = &p->tensors[i];
    if (!kt->pointer) buf_printf(b, "%s%s%s%s %s[%d];\n", u, u, u, cg_ctype(kt->t->type), kt->vec, n);
  }
  for (int i = 0; i < p->ntensors; i++) {
    const KTensor *kt = &p->tensors[i];
    if (!kt->pointer && kt->load) buf_printf(b, "%s%s%scoconet_load(%s + i0, %s);\n", u, u, u, kt->name, kt->vec);
  }
  buf_printf(b, "%s%s%sfor (int k = 0; k < %d; k++)\n%s%s%s%s%s_elem(", u, u, u, n, u, u, u, u, p->k->name);
  elem_args(p, b, "k");
  buf_puts(b, ");\n");
  for (int i = 0; i < p->ntensors; i++) {
    const KTensor *kt = &p->tensors[i];
    if (!kt->pointer && kt->written) buf_printf(b, "%s%s%scoconet_store(%s + i0, %s);\n", u, u, u, kt->name, kt->vec);
  }
  buf_printf(b, "%s%s}\n%s%slo += %d * nvec;\n%s}\n", u, u, u, u, n, u);
}

static void kernel_params(Plan *p, Buf *b) {
  for (int i = 0; i < p->ntensors; i++) {
    const KTensor *kt = &p->tensors[i];
    buf_printf(b, "%s%s *%s, ", kt->written ? "" : "const ", cg_ctype(kt->t->type), kt->name);
  }
  for (int i = 0; i < p->nscalars; i++) buf_printf(b, "%s %s, ", cg_ctype(p->scalars[i].type), p->scalars[i].name);
  for (int i = 0; i < p->nsizes; i++) buf_printf(b, "size_t %s, ", p->sizes[i].name);
  buf_puts(b, "size_t lo, size_t hi");
  if (p->nsums) buf_puts(b, ", bool add");
}

static void emit_global(Plan *p, Buf *b) {
  const char *u = p->unit;
  int n = vector_width(p);
  buf_puts(b, "// coconet: ");
  describe_ops(b, p->k);
  buf_printf(b, " of region %s on elements [lo, hi)", p->r->name);
  if (n) buf_printf(b, ", %d at a time where the [i] buffers are aligned", n);
  buf_printf(b, "\n__global__ void %s(", p->k->name);
  kernel_params(p, b);
  buf_puts(b, ")\n{\n");
  buf_printf(b, "%sconst size_t first = blockIdx.x * (size_t)blockDim.x + threadIdx.x;\n", u);
  buf_printf(b, "%sconst size_t stride = (size_t)blockDim.x * gridDim.x;\n", u);
  for (int i = 0; i < p->nsums; i++) buf_printf(b, "%s%s %s = 0;\n", u, cg_ctype(p->sums[i].t->type), p->sums[i].name);
  if (n) emit_vector_loop(p, b, n);
  buf_printf(b, "%sfor (size_t i = lo + first; i < hi; i += stride)\n%s%s%s_elem(", u, u, u, p->k->name);
  elem_args(p, b, NULL);
  buf_puts(b, ");\n");
  if (p->nsums) buf_printf(b, "%s// the block's sums, added once per block (the tail's by rank 0 only)\n", u);
  for (int i = 0; i < p->nsums; i++) {
    const KSum *sm = &p->sums[i];
    buf_printf(b, "%s%s = coconet_block_sum(%s);\n", u, sm->name, sm->name);
  }
  if (p->nsums) buf_printf(b, "%sif (threadIdx.x == 0 && add) {\n", u);
  for (int i = 0; i < p->nsums; i++) {
    const KSum *sm = &p->sums[i];
    const char *acc = tensor_of(p, sm->t)->name;
    if (sm->k) buf_printf(b, "%s%satomicAdd(%s + %ld, %s);\n", u, u, acc, sm->k, sm->name);
    else buf_printf(b, "%s%satomicAdd(%s, %s);\n", u, u, acc, sm->name);
  }
  if (p->nsums) buf_printf(b, "%s}\n", u);
  buf_puts(b, "}\n");
}

static char *launch_args(Plan *p) {
  Buf b = {0};
  for (int i = 0; i < p->ntensors; i++) buf_printf(&b, "%s%s", i ? ", " : "", p->tensors[i].t->text);
  for (int i = 0; i < p->nscalars; i++) buf_printf(&b, "%s%s", b.len ? ", " : "", p->scalars[i].arg);
  for (int i = 0; i < p->nsizes; i++) {
    if (b.len) buf_puts(&b, ", ");
    cg_size(&b, p->sizes[i].k);
  }
  return buf_take(&b);
}

static int check_reads(const Plan *p, const IrExpr *e) {
  if (!e) return 0;
  if (e->kind == IR_E_READ && !cg_index_ok(e)) {
    diag_error(&p->k->ops[0]->loc, "codegen: kernel '%s' reads %s[%s]; a generated kernel can read only "
                                   "[i], [i %% K], [i / K] and [K]", p->k->ops[0]->pw.kernel, e->tensor->name, e->text);
    return -1;
  }
  return check_reads(p, e->a) || check_reads(p, e->b) || check_reads(p, e->c);
}

// The plan of k's ops: statements, liveness, tables, names; NULL after reporting why not.
static Plan *plan_make(const IrRegion *r, const char *unit, Kernel *k) {
  Plan *p = calloc(1, sizeof *p);
  if (!p) COCONET_BUG("out of memory");
  p->r = r;
  p->k = k;
  p->unit = unit;
  int rc = gather_stmts(p);
  for (int i = 0; i < p->nstmts && rc == 0; i++) rc = check_reads(p, p->stmts[i].s->value);
  if (rc == 0) {
    liveness(p);
    rc = collect_all(p);
  }
  if (rc == 0) {
    name_all(p);
    return p;
  }
  names_free(&p->names);
  free(p);
  return NULL;
}

static void plan_free(Plan *p) {
  names_free(&p->names);
  free(p);
}

//
// Fused kernels (codegen.c decides which groups get one)
//

static bool is_gathered(const FusedSpec *f, const IrTensor *t) {
  for (int i = 0; i < f->ngathered; i++)
    if (f->gathered[i] == t) return true;
  return false;
}


static const KTensor *reduced_tensor(const Plan *p, const FusedSpec *f) {
  for (int i = 0; i < p->ntensors; i++)
    if (p->tensors[i].t == f->reduced) return &p->tensors[i];
  return NULL;
}

static const char *reduced_name(const Plan *p, const FusedSpec *f) {
  const KTensor *red = reduced_tensor(p, f);
  return red ? red->vec : "coconet_unused";
}

// "T g_v = coconet_reduce<OP, T>(g_win, g_off, dev.lsaSize, i)": element i summed from every peer in rank order.
static void fused_reduce(const Plan *p, Buf *b, const FusedSpec *f, const char *u, bool tail) {
  const char *ct = cg_ctype(f->dtype), *in = f->window_names[0];
  buf_printf(b, "%s%s %s = ", u, ct, reduced_name(p, f));
  if (tail) buf_puts(b, "mine ? ");
  buf_printf(b, "coconet_reduce<%s, %s>(%s_win, %s_off, dev.lsaSize, i)", cg_coconet_red(f->red), ct, in, in);
  if (tail) buf_printf(b, " : %s()", ct);
  buf_puts(b, ";\n");
}

// Element i's ops, its local stores and (peers) its gathered buffers written to every peer.
static void fused_ops(Plan *p, Buf *b, const FusedSpec *f, const char *u, bool peers) {
  const KTensor *red = reduced_tensor(p, f);
  const char *rname = reduced_name(p, f);
  buf_printf(b, "%s%s_elem(", u, p->k->name);
  elem_args_subst(p, b, NULL, f->reduced, rname);
  buf_puts(b, ");\n");
  if (red && !f->reduced->scratch) buf_printf(b, "%s%s[i] = %s;\n", u, red->name, rname);
  for (int i = 0; i < p->ntensors && peers; i++) {
    const KTensor *kt = &p->tensors[i];
    if (!is_gathered(f, kt->t)) continue;
    buf_printf(b, "%sfor (int peer = 0; peer < dev.lsaSize; peer++)\n", u);
    buf_printf(b, "%s%sif (peer != dev.lsaRank) coconet_peer<%s>(%s_win, %s_off, peer)[i] = %s%s;\n", u, p->unit,
               cg_ctype(kt->t->type), kt->t->name, kt->t->name, kt == red ? rname : kt->name, kt == red ? "" : "[i]");
  }
}

// The reduced tensor is read from the peers; its pointer is passed only when it is stored.
static bool fused_passed(const KTensor *kt, const FusedSpec *f) { return kt->t != f->reduced || !f->reduced->scratch; }

static void fused_params(Plan *p, Buf *b, const FusedSpec *f) {
  buf_puts(b, "ncclDevComm dev");
  for (int w = 0; w < f->nwindows; w++) buf_printf(b, ", ncclWindow_t %s_win, size_t %s_off", f->window_names[w], f->window_names[w]);
  for (int i = 0; i < p->ntensors; i++) {
    const KTensor *kt = &p->tensors[i];
    if (!fused_passed(kt, f)) continue;
    bool store = kt->written || kt->t == f->reduced;
    buf_printf(b, ", %s%s *%s", store ? "" : "const ", cg_ctype(kt->t->type), kt->name);
  }
  for (int i = 0; i < p->nscalars; i++) buf_printf(b, ", %s %s", cg_ctype(p->scalars[i].type), p->scalars[i].name);
  for (int i = 0; i < p->nsizes; i++) buf_printf(b, ", size_t %s", p->sizes[i].name);
  buf_puts(b, f->oneshot ? ", size_t count" : ", size_t lo, size_t hi, size_t tail_lo, size_t tail_hi");
}

// The slice N elements at a time (one 4, 8 or 16-byte access per buffer and
// peer) while every local [i] buffer and every window is aligned to N elements
// (the windows' bases are page-aligned, so a peer's copy is aligned with ours).
static void fused_vector_loop(Plan *p, Buf *b, const FusedSpec *f, int n) {
  const char *u = p->unit;
  char u2[64], u3[64], u4[80];
  snprintf(u2, sizeof u2, "%s%s", u, u);
  snprintf(u3, sizeof u3, "%s%s%s", u, u, u);
  snprintf(u4, sizeof u4, "%s%s%s%s", u, u, u, u);
  const KTensor *red = reduced_tensor(p, f);
  buf_printf(b, "%sif (coconet_aligned<%d>(lo", u, n);
  for (int i = 0; i < p->ntensors; i++)
    if (!p->tensors[i].pointer && &p->tensors[i] != red) buf_printf(b, ", %s", p->tensors[i].name);
  buf_puts(b, ")");
  for (int w = 0; w < f->nwindows; w++) {
    const IrTensor *t = f->source;
    for (int g = 0; g < f->ngathered; g++)
      if (strcmp(f->gathered[g]->name, f->window_names[w]) == 0) t = f->gathered[g];
    buf_printf(b, " &&\n%s%scoconet_window_aligned<%d, %s>(%s_off, lo)", u, u, n, cg_ctype(t->type), f->window_names[w]);
  }
  buf_printf(b, ") {\n%sconst size_t nvec = (hi - lo) / %d;\n", u2, n);
  buf_printf(b, "%sfor (size_t j = first; j < nvec; j += stride) {\n%sconst size_t i0 = lo + %d * j;\n", u2, u3, n);
  buf_printf(b, "%s%s %s[%d];\n", u3, cg_ctype(f->dtype), reduced_name(p, f), n);
  buf_printf(b, "%scoconet_reduce_vec<%s, %s, %d>(%s_win, %s_off, dev.lsaSize, i0, %s);\n", u3, cg_coconet_red(f->red),
             cg_ctype(f->dtype), n, f->window_names[0], f->window_names[0], reduced_name(p, f));
  for (int i = 0; i < p->ntensors; i++) {
    const KTensor *kt = &p->tensors[i];
    if (kt->pointer || kt == red) continue;
    buf_printf(b, "%s%s %s[%d];\n", u3, cg_ctype(kt->t->type), kt->vec, n);
    if (kt->load) buf_printf(b, "%scoconet_load(%s + i0, %s);\n", u3, kt->name, kt->vec);
  }
  buf_printf(b, "%sfor (int k = 0; k < %d; k++)\n%s%s_elem(", u3, n, u4, p->k->name);
  elem_args(p, b, "k");
  buf_puts(b, ");\n");
  for (int i = 0; i < p->ntensors; i++) {
    const KTensor *kt = &p->tensors[i];
    if (!kt->pointer && (kt == red ? !f->reduced->scratch : kt->written))
      buf_printf(b, "%scoconet_store(%s + i0, %s);\n", u3, kt->name, kt->vec);
  }
  for (int i = 0; i < p->ntensors; i++) {
    const KTensor *kt = &p->tensors[i];
    if (!is_gathered(f, kt->t)) continue;
    buf_printf(b, "%sfor (int peer = 0; peer < dev.lsaSize; peer++)\n", u3);
    buf_printf(b, "%s%sif (peer != dev.lsaRank) coconet_store(coconet_peer<%s>(%s_win, %s_off, peer) + i0, %s);\n", u3, u,
               cg_ctype(kt->t->type), kt->t->name, kt->t->name, kt->vec);
  }
  buf_printf(b, "%s}\n%slo += %d * nvec;\n%s}\n", u2, u2, n, u);
}

// The elements per vector step of the fused kernel: 16 bytes of the widest [i] buffer or of the reduced type.
static int fused_vector_width(const Plan *p, const FusedSpec *f) {
  int n = vector_width(p), w = 16 / ir_type_size(f->dtype);
  return n && n < w ? n : w;
}

// Split: this rank's slice from every peer, written to every peer; block 0 the tail.
static void fused_split_body(Plan *p, Buf *b, const FusedSpec *f) {
  const char *u = p->unit;
  char u2[64], u3[64];
  snprintf(u2, sizeof u2, "%s%s", u, u);
  snprintf(u3, sizeof u3, "%s%s%s", u, u, u);
  buf_printf(b, "%sconst size_t first = blockIdx.x * (size_t)blockDim.x + threadIdx.x;\n", u);
  buf_printf(b, "%sconst size_t stride = (size_t)blockDim.x * gridDim.x;\n", u);
  fused_vector_loop(p, b, f, fused_vector_width(p, f));
  buf_printf(b, "%sfor (size_t i = lo + first; i < hi; i += stride) {\n", u);
  fused_reduce(p, b, f, u2, false);
  fused_ops(p, b, f, u2, true);
  buf_printf(b, "%s}\n%sif (blockIdx.x == 0) {\n", u, u);
  buf_printf(b, "%sconst size_t i = tail_lo + threadIdx.x;\n%sconst bool mine = i < tail_hi;\n", u2, u2);
  fused_reduce(p, b, f, u2, true);
  buf_printf(b, "%s// every rank has read the tail from its peers before any rank writes it\n", u2);
  buf_printf(b, "%sbar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);\n%sif (mine) {\n", u2, u2);
  fused_ops(p, b, f, u3, false);
  buf_printf(b, "%s}\n", u2);
  buf_printf(b, "%s}\n%s// every write to a peer is done before any rank goes on\n", u, u);
  buf_printf(b, "%sbar.sync(ncclCoopCta(), cuda::memory_order_release);\n", u);
}

// One-shot: every element from every peer, tile by tile; a tile is written
// only after every rank has read it (the buffer may be reduced in place).
static void fused_oneshot_body(Plan *p, Buf *b, const FusedSpec *f) {
  const char *u = p->unit;
  char u2[64], u3[64];
  snprintf(u2, sizeof u2, "%s%s", u, u);
  snprintf(u3, sizeof u3, "%s%s%s", u, u, u);
  buf_printf(b, "%sconst size_t tiles = (count + blockDim.x - 1) / blockDim.x;\n", u);
  buf_printf(b, "%sfor (size_t t = blockIdx.x; t < tiles; t += gridDim.x) {\n", u);
  buf_printf(b, "%sconst size_t i = t * blockDim.x + threadIdx.x;\n%sconst bool mine = i < count;\n", u2, u2);
  fused_reduce(p, b, f, u2, true);
  buf_printf(b, "%s// every rank has read this tile from its peers before any rank writes it\n", u2);
  buf_printf(b, "%sbar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);\n%sif (mine) {\n", u2, u2);
  fused_ops(p, b, f, u3, false);
  buf_printf(b, "%s}\n%s}\n", u2, u);
}

int kernel_fused(const IrRegion *r, const char *unit, Kernel *k, const FusedSpec *f) {
  Plan *p = plan_make(r, unit, k);
  if (!p) return -1;
  for (int i = 0; i < p->ntensors; i++) {
    const KTensor *kt = &p->tensors[i];
    if ((kt->t == f->reduced || is_gathered(f, kt->t)) && kt->pointer) {
      plan_free(p);
      return 1;  // read at another index than [i]: not fused
    }
  }
  Buf b = {0};
  if (k->text) buf_printf(&b, "%s\n", k->text);
  else emit_elem(p, &b);
  if (f->oneshot) {
    buf_printf(&b, "// coconet: %s of region %s as one kernel on symmetric memory (one-shot): every rank sums "
                   "each element of '%s' from every peer in rank order and runs the ops on its own copy; block b "
                   "of every rank meets its peers' block b at an LSA barrier between reading a tile and writing "
                   "it\n", f->flow, r->name, f->window_names[0]);
  } else {
    buf_printf(&b, "// coconet: %s of region %s as one kernel on symmetric memory: block b of every rank "
                   "meets its peers' block b at LSA barriers; each rank sums its slice [lo, hi) of '%s' from every "
                   "peer in rank order, runs the ops and writes ", f->flow, r->name, f->window_names[0]);
    for (int i = 0; i < f->ngathered; i++)
      buf_printf(&b, "%s'%s'", i ? (i + 1 == f->ngathered ? " and " : ", ") : "", f->gathered[i]->name);
    buf_printf(&b, "%s to every peer; block 0 also computes the tail [tail_lo, tail_hi) on every rank, as the "
                   "NCCL path does\n", f->ngathered ? "" : "nothing");
  }
  buf_printf(&b, "__global__ void %s(", k->fused_name);
  fused_params(p, &b, f);
  buf_puts(&b, ")\n{\n");
  buf_printf(&b, "%sncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), dev, ncclTeamTagLsa(), blockIdx.x};\n", unit);
  buf_printf(&b, "%s// the peers' inputs are ready (their earlier work on their streams is done)\n", unit);
  buf_printf(&b, "%sbar.sync(ncclCoopCta(), cuda::memory_order_acquire);\n", unit);
  if (f->oneshot) fused_oneshot_body(p, &b, f);
  else fused_split_body(p, &b, f);
  buf_puts(&b, "}\n");
  free(k->text);
  k->text = buf_take_wrapped(&b, 0);
  Buf a = {0};
  buf_printf(&a, "%s.dev", f->args);
  for (int w = 0; w < f->nwindows; w++) buf_printf(&a, ", %s.win[%d], %s.offset[%d]", f->args, w, f->args, w);
  for (int i = 0; i < p->ntensors; i++)
    if (fused_passed(&p->tensors[i], f)) buf_printf(&a, ", %s", p->tensors[i].t->text);
  for (int i = 0; i < p->nscalars; i++) buf_printf(&a, ", %s", p->scalars[i].arg);
  for (int i = 0; i < p->nsizes; i++) {
    buf_puts(&a, ", ");
    cg_size(&a, p->sizes[i].k);
  }
  k->fused_args = buf_take(&a);
  plan_free(p);
  return 0;
}

int kernel_block(const IrRegion *r, const char *unit, Kernel *k, const IrTensor *writable, Names *names,
                 KernelBlock *out) {
  Plan *p = plan_make(r, unit, k);
  if (!p) return -1;
  Buf b = {0}, decls = {0}, args = {0};
  buf_printf(&b, "%s\n// coconet: ", k->text);
  describe_ops(&b, k);
  buf_printf(&b, " on elements [lo, hi) by the threads of one block (the fused kernel of region %s)\n", r->name);
  buf_printf(&b, "__device__ __forceinline__ void %s_block(", k->name);
  kernel_params(p, &b);
  buf_printf(&b, ")\n{\n%sfor (size_t i = lo + coconet_thread_rank(); i < hi; i += coconet_block_threads())\n%s%s%s_elem(",
             unit, unit, unit, k->name);
  elem_args(p, &b, NULL);
  buf_puts(&b, ");\n}\n");
  free(k->text);
  k->text = buf_take_wrapped(&b, 0);
  *out = (KernelBlock){0};
  for (int i = 0; i < p->ntensors && out->ntensors < KERNEL_BLOCK_MAX; i++) {
    const KTensor *kt = &p->tensors[i];
    const char *n = names_add(names, kt->name);
    bool store = kt->written || kt->t == writable;
    buf_printf(&decls, ", %s%s *%s", store ? "" : "const ", cg_ctype(kt->t->type), n);
    buf_printf(&args, "%s, ", n);
    out->tensors[out->ntensors] = kt->t;
    out->names[out->ntensors++] = n;
  }
  for (int i = 0; i < p->nscalars; i++) {
    const char *n = names_add(names, p->scalars[i].name);
    buf_printf(&decls, ", %s %s", cg_ctype(p->scalars[i].type), n);
    buf_printf(&args, "%s, ", n);
  }
  for (int i = 0; i < p->nsizes; i++) {
    const char *n = names_add(names, p->sizes[i].name);
    buf_printf(&decls, ", size_t %s", n);
    buf_printf(&args, "%s, ", n);
  }
  out->decls = buf_take(&decls);
  out->args = buf_take(&args);
  plan_free(p);
  return 0;
}

int kernel_generate(const IrRegion *r, const char *unit, Kernel *k) {
  Plan *p = plan_make(r, unit, k);
  if (!p) return -1;
  Buf b = {0};
  emit_elem(p, &b);
  emit_global(p, &b);
  k->text = buf_take_wrapped(&b, 0);
  k->args = launch_args(p);
  k->sums = p->nsums > 0;
  plan_free(p);
  return 0;
}

void kernel_free(Kernel *k) {
  free(k->name);
  free(k->args);
  free(k->text);
  free(k->fused_name);
  free(k->fused_args);
}
