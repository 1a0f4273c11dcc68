// codegen_kernel.c: generated kernels.
//
// A run of scheduled pointwise ops (the kernels reorder or overlap moved onto
// a slice or a chunk, fused into one pass over memory) becomes two functions:
//
//   __device__ __forceinline__ void coconet_R_slice_elem(size_t i, float &w, float g, ..., float lr, size_t hidden)
//       element i of each op: a call of the kernel's own text for an element
//       (codegen_text.c) where the analysis has it, else the op's statements
//       generated from the IR expressions; buffers read and written at [i] are
//       references, read-only ones values, buffers read at [i % K], [i / K] or
//       [K] (or named otherwise in a kernel's text) pointers
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
// Only live IR statements are generated (a local nobody uses is dropped, a
// Philox draw nobody uses is drawn and discarded); a kernel's text is run whole.
#include "codegen_kernel_impl.h"
#include "common/text.h"

#include <stdlib.h>
#include <string.h>

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

// A buffer the kernels read only under a condition (ir_pw_reads_lazily) is passed as a
// pointer and read where the text or the IR reads it, never loaded for every element.
static void lazy_buffers(Plan *p) {
  for (int i = 0; i < p->ntensors; i++) {
    KTensor *kt = &p->tensors[i];
    bool lazily = kt->read && !kt->written && !kt->pointer;
    for (int o = 0; o < p->k->nops && lazily; o++) lazily = ir_pw_reads_lazily(p->r, p->k->ops[o], kt->t);
    if (lazily) {
      kt->pointer = true;
      kt->load = false;
      p->uses_i = true;  // read as name[i]
    }
  }
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
  if (!p->full) {
    lazy_buffers(p);
    return 0;
  }
  diag_error(&p->k->ops[0]->loc, "codegen: kernel '%s' is too large to generate (more than %d buffers, "
                                 "parameters or statements)", p->k->ops[0]->pw.kernel, KMAX);
  return -1;
}

// The size the plan has for a launch argument (`cols` of i / cols), NULL if none.
static const KSize *size_named(const Plan *p, const char *arg) {
  for (int i = 0; i < p->nsizes; i++) {
    const IrSize *k = p->sizes[i].k;
    if (k->kind == IR_SIZE_VAR && arg && strcmp(k->var->text, arg) == 0) return &p->sizes[i];
  }
  return NULL;
}

// What the ops' texts name: buffers (one the IR no longer reads, a dead read, is
// loaded; one named otherwise than as t[i] is passed as a pointer), scalars (a
// size the plan has already is passed as that), i.
static void text_plan(Plan *p) {
  for (int o = 0; o < p->k->nops; o++) {
    const IrText *t = p->k->ops[o]->pw.text;
    for (int i = 0; t && i < t->nparams; i++) {
      const IrTextParam *tp = &t->params[i];
      if (tp->tensor) {
        int before = p->ntensors;
        KTensor *kt = tensor_of(p, tp->tensor);
        if (p->ntensors > before) kt->read = kt->load = true;
        if (tp->raw) kt->pointer = true;
      } else if (tp->param && !size_named(p, tp->param->arg_text)) {
        add_scalar(p, tp->param);
      } else if (!tp->param) {
        p->uses_i = true;
      }
    }
  }
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

static void name_all(Plan *p) {
  static const char *reserved[] = {"i", "lo", "hi", "first", "stride", "nvec", "j", "i0", "k", "add"};
  for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++) names_add(&p->names, reserved[i]);
  for (int i = 0; i < p->ntensors; i++) p->tensors[i].name = names_add(&p->names, p->tensors[i].t->name);
  for (int i = 0; i < p->nscalars; i++) p->scalars[i].name = names_add(&p->names, p->scalars[i].name);
  for (int i = 0; i < p->nsizes; i++) {
    const IrSize *k = p->sizes[i].k;
    bool ident = k->kind == IR_SIZE_VAR && text_is_identifier(k->var->text);
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
  buf_printf(b, " (%s:", text_base_name(k->ops[0]->loc.file));
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
    const char *ct = codegen_ctype(kt->t->type);
    if (!elem_takes(kt)) continue;
    if (kt->pointer) buf_printf(b, "%s%s%s *%s", sep, kt->written && !kt->summed ? "" : "const ", ct, kt->name);
    else buf_printf(b, "%s%s %s%s", sep, ct, kt->written ? "&" : "", kt->name);
    sep = ", ";
  }
  for (int i = 0; i < p->nsums; i++) {
    buf_printf(b, "%s%s &%s", sep, codegen_ctype(p->sums[i].t->type), p->sums[i].name);
    sep = ", ";
  }
  for (int i = 0; i < p->nscalars; i++) {
    buf_printf(b, "%s%s %s", sep, codegen_ctype(p->scalars[i].type), p->scalars[i].name);
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
    buf_printf(b, "%sconst %s %s = ", p->unit, codegen_ctype(s->value->type), ks->name);
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

// How the element function passes each parameter of op o's text.
static TextArg *text_args(Plan *p, int o) {
  const IrText *t = p->k->ops[o]->pw.text;
  TextArg *args = calloc((size_t)t->nparams + 1, sizeof *args);
  if (!args) COCONET_BUG("out of memory");
  for (int i = 0; i < t->nparams; i++) {
    const IrTextParam *tp = &t->params[i];
    if (tp->tensor) {
      const KTensor *kt = tensor_of(p, tp->tensor);
      bool const_elem = strncmp(tp->elem, "const ", 6) == 0 || strstr(tp->elem, " const");
      args[i] = (TextArg){kt->name, !kt->pointer, kt->pointer && !kt->written && !const_elem};
    } else {
      const KSize *size = tp->param ? size_named(p, tp->param->arg_text) : NULL;
      args[i] = (TextArg){size ? size->name : tp->param ? nm_param(p, tp->param) : "i", false, false};
    }
  }
  return args;
}

// "coconet_R_slice_adam_update": the function of op o's text.
static char *text_name(const Plan *p, int o) {
  const char *kernel = p->k->ops[o]->pw.kernel;
  size_t len = strcspn(kernel, "<");  // a template's name without its arguments
  int same = 0;
  for (int q = 0; q < o; q++) {
    const char *other = p->k->ops[q]->pw.kernel;
    same += strcspn(other, "<") == len && strncmp(other, kernel, len) == 0;
  }
  char *name = NULL;
  if ((same ? asprintf(&name, "%s_%.*s_%d", p->k->name, (int)len, kernel, same + 1)
            : asprintf(&name, "%s_%.*s", p->k->name, (int)len, kernel)) < 0)
    COCONET_BUG("out of memory");
  // A kernel launched by its qualified name (a::step): one identifier.
  for (char *c = name; *c; c++)
    if (!text_ident_char(*c)) *c = '_';
  return name;
}

void emit_elem(Plan *p, Buf *b) {
  ExprNames nm = {nm_tensor, nm_param, nm_size, nm_local, nm_draw, p};
  int texts = 0;
  for (int o = 0; o < p->k->nops; o++) {
    if (!p->k->ops[o]->pw.text) continue;
    char *name = text_name(p, o);
    TextArg *args = text_args(p, o);
    text_function(b, name, p->k->ops[o], args, p->unit, p->k->late);
    free(args);
    free(name);
    texts++;
  }
  buf_puts(b, "// coconet: one element i of ");
  describe_ops(b, p->k);
  if (texts == p->k->nops) buf_puts(b, ", by the kernels' own text above\n");
  for (int o = 0; o < p->k->nops && texts < p->k->nops; o++) {
    const IrOp *op = p->k->ops[o];
    if (!op->pw.text)
      buf_printf(b, "%s%s generated from the IR (%s)", o ? "; " : ", ", op->pw.kernel,
                 op->pw.text_why ? op->pw.text_why : "no text");
    if (o + 1 == p->k->nops) buf_puts(b, "\n");
  }
  buf_printf(b, "__device__ __forceinline__ void %s_elem(", p->k->name);
  elem_params(p, b);
  buf_puts(b, ")\n{\n");
  for (int o = 0; o < p->k->nops; o++) {
    p->cur_op = o;
    if (p->k->ops[o]->pw.text) {
      char *name = text_name(p, o);
      TextArg *args = text_args(p, o);
      text_call(b, name, p->k->ops[o], args, p->unit, p->k->late);
      free(args);
      free(name);
      continue;
    }
    emit_philox(p, b, o, &nm);
    for (int i = 0; i < p->nstmts; i++)
      if (p->stmts[i].op == o && p->stmts[i].live) emit_stmt(p, b, &p->stmts[i], &nm);
  }
  buf_puts(b, "}\n\n");
}

void elem_args_subst(Plan *p, Buf *b, const char *lane, const IrTensor *subst, const char *subst_name) {
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

void elem_args(Plan *p, Buf *b, const char *lane) { elem_args_subst(p, b, lane, NULL, NULL); }

int vector_width(const Plan *p) {
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
    if (!kt->pointer) buf_printf(b, "%s%s%s%s %s[%d];\n", u, u, u, codegen_ctype(kt->t->type), kt->vec, n);
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
    buf_printf(b, "%s%s *%s, ", kt->written ? "" : "const ", codegen_ctype(kt->t->type), kt->name);
  }
  for (int i = 0; i < p->nscalars; i++) buf_printf(b, "%s %s, ", codegen_ctype(p->scalars[i].type), p->scalars[i].name);
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
  for (int i = 0; i < p->nsums; i++) buf_printf(b, "%s%s %s = 0;\n", u, codegen_ctype(p->sums[i].t->type), p->sums[i].name);
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

Plan *plan_make(const IrRegion *r, const char *unit, Kernel *k) {
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
  if (rc == 0) text_plan(p);
  if (rc == 0) {
    name_all(p);
    return p;
  }
  names_free(&p->names);
  free(p);
  return NULL;
}

void plan_free(Plan *p) {
  names_free(&p->names);
  free(p);
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
    buf_printf(&decls, ", %s%s *%s", store ? "" : "const ", codegen_ctype(kt->t->type), n);
    buf_printf(&args, "%s, ", n);
    out->tensors[out->ntensors] = kt->t;
    out->names[out->ntensors++] = n;
  }
  for (int i = 0; i < p->nscalars; i++) {
    const char *n = names_add(names, p->scalars[i].name);
    buf_printf(&decls, ", %s %s", codegen_ctype(p->scalars[i].type), n);
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

// Whether k goes beside the region's function (an op's kernel is defined in its
// namespace block, before it); -1 after reporting an op whose kernel is in
// other namespaces, which that place cannot reopen.
static int text_beside(const Kernel *k) {
  bool beside = false;
  for (int o = 0; o < k->nops; o++) beside |= k->ops[o]->pw.text && k->ops[o]->pw.text->beside;
  for (int o = 0; o < k->nops && beside; o++) {
    const IrText *t = k->ops[o]->pw.text;
    if (t && !t->beside && *t->ns_open) {
      diag_error(&k->ops[o]->loc, "codegen: kernel '%s' is in other namespaces than the kernels of its generated "
                                  "kernel defined beside the region's function; move it next to them",
                 k->ops[o]->pw.kernel);
      return -1;
    }
  }
  return beside;
}

int kernel_generate(const IrRegion *r, const char *unit, Kernel *k) {
  int beside = text_beside(k);
  if (beside < 0) return -1;
  k->late = beside;
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
