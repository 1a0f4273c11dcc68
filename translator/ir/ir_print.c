// ir_print.c: the text form of a region (--dump=ir).
//
// The format, one item per line (stable: golden tests compare it):
//
//   region NAME (FILE:LINE:COL)                       the pragma's location
//     clauses: split reorder shard(m, v) fuse         as written ("none" if none)
//     var n : size                                    host values: sizes and scalars
//     var lr : f32
//     tensor g : f32[n] local -> replicated (scratch) entry -> exit layout, markings
//     g1 = AllReduce(sum, g)[n]  # adam.cu:59:5       one op per line: outputs =
//     (w1, m1, v1) = adam_update(g1, w, m, v; lr, beta1)[i < n]  # adam.cu:60:5
//         m[i] = beta1 * m[i] + (1.0f - beta1) * g[i] the kernel body, one
//         let mh = m[i] / (1.0f - powf(beta1, t))     statement per line
//         norm2[0] += g[i] * g[i]                     a reduction (atomicAdd) into one element
//
// Values are versioned as in CoCoNet's DSL: `g` is the value at region entry,
// `g1` after its first write, `g2` after the second (`x1_2` for a name that ends
// in a digit). Collectives print as Kind(reduction, input)[count]; GEMMs as
// fn(a, b^T [, c]; alpha=.., beta=..)[m x n x k]; pointwise kernels as
// (outputs) = kernel(inputs; scalar params)[i < count], a parameter bound to a
// different launch argument as name=argument; a row-wise kernel (no body: it
// runs as written) ends in `rows of H`, and its spans are in whole rows.
//
// The scheduled form (dump after ir_schedule) starts with
//   scheduled NAME: CLAUSES
// lists tensors with their scheduled exit layouts, then the scheduled ops; each
// scheduled op carries its span and fused group after the op:
//   g1 = ReduceScatter(sum, g)[n] @body fuse=1  # adam.cu:59:5
//   (w1, m1, v1) = adam_update(g1, w, m, v; ...)[i < n] @slice fuse=1  # ...
// Spans: @body, @slice, @tail, @all (only shown when chunked), chunks as
// @chunk(2/4).slice, meaning chunk 2 of 4 (1-based), this rank's slice in it.
#include "ir/ir.h"

#include <string.h>

// A factor of a product: a variable whose text is a sum or a quotient
// (`rows-1`) in parentheses, so that `(rows-1) * H` does not read `rows-1 * H`.
static void print_factor(FILE *f, const IrSize *s) {
  bool wrap = s && s->kind == IR_SIZE_VAR && strpbrk(s->var->text, "+-/%<>?");
  if (wrap) fputc('(', f);
  ir_print_size(f, s);
  if (wrap) fputc(')', f);
}

void ir_print_size(FILE *f, const IrSize *s) {
  if (!s) {
    fputs("?", f);
    return;
  }
  switch (s->kind) {
  case IR_SIZE_CONST: fprintf(f, "%ld", s->value); return;
  case IR_SIZE_VAR: fputs(s->var->text, f); return;
  case IR_SIZE_MUL:
    print_factor(f, s->lhs);
    fputs(" * ", f);
    print_factor(f, s->rhs);
    return;
  }
}

const char *ir_version_name(const IrRef *ref, char *buf, size_t len) {
  const char *name = ref->t->name;
  size_t n = strlen(name);
  if (ref->version == 0) snprintf(buf, len, "%s", name);
  else if (n && name[n - 1] >= '0' && name[n - 1] <= '9') snprintf(buf, len, "%s_%d", name, ref->version);
  else snprintf(buf, len, "%s%d", name, ref->version);
  return buf;
}

static void print_ref(FILE *f, const IrRef *ref) {
  char buf[128];
  fputs(ir_version_name(ref, buf, sizeof buf), f);
}

//
// Expressions, with C's precedence (parentheses only where needed)
//

int ir_binary_prec(int op) {
  switch (op) {
  case IR_MUL: case IR_DIV: case IR_MOD: return 13;
  case IR_ADD: case IR_SUB: return 12;
  case IR_SHL: case IR_SHR: return 11;
  case IR_LT: case IR_LE: case IR_GT: case IR_GE: return 10;
  case IR_EQ: case IR_NE: return 9;
  case IR_BITAND: return 8;
  case IR_BITXOR: return 7;
  case IR_BITOR: return 6;
  case IR_LAND: return 5;
  default: return 4;  // IR_LOR
  }
}

const char *ir_binary_text(int op) {
  static const char *t[] = {"+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=",
                            "&&", "||", "&", "|", "^", "<<", ">>"};
  return t[op];
}

static int prec(const IrExpr *e) {
  switch (e->kind) {
  case IR_E_BINARY: return ir_binary_prec(e->op);
  case IR_E_SELECT: return 3;
  case IR_E_UNARY: case IR_E_CAST: return 14;
  default: return 16;
  }
}

static void print_prec(FILE *f, const IrExpr *e, int min);

static void print_const(FILE *f, const IrExpr *e) {
  if (e->kind == IR_E_INT) {
    fprintf(f, "%lld%s", (long long)e->ival, e->type == IR_U32 ? "u" : "");
    return;
  }
  char buf[64];
  snprintf(buf, sizeof buf, e->type == IR_F64 ? "%.17g" : "%.9g", e->fval);
  bool plain = strspn(buf, "-0123456789") == strlen(buf);
  if (e->type == IR_F16 || e->type == IR_BF16) fprintf(f, "(%s)", ir_type_name(e->type));
  fprintf(f, "%s%s%s", buf, plain ? ".0" : "", e->type == IR_F32 ? "f" : "");
}

static void print_read(FILE *f, const IrExpr *e) {
  fprintf(f, "%s[", e->tensor->name);
  switch (e->index) {
  case IR_IDX_I: fputs("i", f); break;
  case IR_IDX_MOD: fputs("i % ", f); ir_print_size(f, e->k); break;
  case IR_IDX_DIV: fputs("i / ", f); ir_print_size(f, e->k); break;
  case IR_IDX_CONST: ir_print_size(f, e->k); break;
  case IR_IDX_OTHER: fputs(e->text, f); break;
  }
  fputs("]", f);
}

static void print_expr_body(FILE *f, const IrExpr *e) {
  static const char *unary[] = {"-", "!", "~"};
  switch (e->kind) {
  case IR_E_INT: case IR_E_FLOAT: print_const(f, e); return;
  case IR_E_INDEX: fputs("i", f); return;
  case IR_E_READ: print_read(f, e); return;
  case IR_E_PARAM: fputs(e->param->name, f); return;
  case IR_E_LOCAL: fputs(e->let->name, f); return;
  case IR_E_UNARY:
    fputs(unary[e->op], f);
    print_prec(f, e->a, 14);
    return;
  case IR_E_BINARY:
    print_prec(f, e->a, ir_binary_prec(e->op));
    fprintf(f, " %s ", ir_binary_text(e->op));
    print_prec(f, e->b, ir_binary_prec(e->op) + 1);
    return;
  case IR_E_SELECT:
    print_prec(f, e->a, 4);
    fputs(" ? ", f);
    print_prec(f, e->b, 3);
    fputs(" : ", f);
    print_prec(f, e->c, 3);
    return;
  case IR_E_CAST:
    fprintf(f, "(%s)", ir_type_name(e->type));
    print_prec(f, e->a, 14);
    return;
  case IR_E_CALL:
    fprintf(f, "%s(", ir_math_name(e->fn, e->type));
    ir_print_expr(f, e->a);
    if (e->b) {
      fputs(", ", f);
      ir_print_expr(f, e->b);
    }
    if (e->c) {
      fputs(", ", f);
      ir_print_expr(f, e->c);
    }
    fputs(")", f);
    return;
  case IR_E_PHILOX:
    fputs("philox_uniform(", f);
    ir_print_expr(f, e->a);
    fputs(", i, ", f);
    ir_print_expr(f, e->b);
    fprintf(f, ", %d)", e->draw);
    return;
  case IR_E_OPAQUE:
    fputs(e->text, f);
    return;
  case IR_E_BITCAST:
    fprintf(f, "bits_as_%s(", ir_type_name(e->type));
    ir_print_expr(f, e->a);
    fputs(")", f);
    return;
  }
}

static void print_prec(FILE *f, const IrExpr *e, int min) {
  bool paren = prec(e) < min;
  if (paren) fputs("(", f);
  print_expr_body(f, e);
  if (paren) fputs(")", f);
}

void ir_print_expr(FILE *f, const IrExpr *e) { print_prec(f, e, 0); }

//
// Ops
//

static void print_outputs(FILE *f, const IrOp *op) {
  int n = 0;
  for (const IrUse *u = op->writes; u; u = u->next) n++;
  if (n == 0) return;
  if (n > 1) fputs("(", f);
  for (const IrUse *u = op->writes; u; u = u->next) {
    print_ref(f, &u->ref);
    if (u->next) fputs(", ", f);
  }
  fputs(n > 1 ? ") = " : " = ", f);
}

static void print_collective(FILE *f, const IrOp *op) {
  const IrCollective *c = &op->coll;
  fprintf(f, "%s(", ir_coll_name(c->kind));
  if (c->red != IR_RED_NONE) fprintf(f, "%s, ", ir_red_name(c->red));
  if (op->reads) print_ref(f, &op->reads->ref);
  if (c->root) fprintf(f, "; root=%s", c->root);
  if (c->peer) fprintf(f, "%speer=%s", op->reads ? "; " : "", c->peer);
  if (c->pipe_tag) fprintf(f, "; pipeline=%s", c->pipe_tag);
  if (c->pipe_tag && c->kind == IR_RECV) fprintf(f, "; gathered on %s", c->pipe_group);
  fputs(")[", f);
  ir_print_size(f, c->count);
  fputs("]", f);
}

static const IrUse *find_use(const IrUse *list, const IrTensor *t) {
  for (; list; list = list->next)
    if (list->ref.t == t) return list;
  return NULL;
}

static void print_gemm(FILE *f, const IrOp *op) {
  const IrGemm *g = &op->gemm;
  const IrUse *a = find_use(op->reads, g->a), *b = find_use(op->reads, g->b);
  const IrUse *c = g->c != g->a && g->c != g->b ? find_use(op->reads, g->c) : NULL;
  fprintf(f, "%s(", g->fn);
  print_ref(f, &a->ref);
  fputs(g->transa ? "^T, " : ", ", f);
  print_ref(f, &b->ref);
  fputs(g->transb ? "^T" : "", f);
  if (c) {
    fputs(", ", f);
    print_ref(f, &c->ref);
  }
  fprintf(f, "; alpha=%s, beta=%s)[", g->alpha ? g->alpha : "?", g->beta ? g->beta : "?");
  ir_print_size(f, g->m);
  fputs(" x ", f);
  ir_print_size(f, g->n);
  fputs(" x ", f);
  ir_print_size(f, g->k);
  fputs("]", f);
}

static void print_pointwise_head(FILE *f, const IrOp *op) {
  fprintf(f, "%s(", op->pw.kernel);
  for (const IrUse *u = op->reads; u; u = u->next) {
    print_ref(f, &u->ref);
    if (u->next) fputs(", ", f);
  }
  if (op->pw.params) fputs("; ", f);
  for (const IrParam *p = op->pw.params; p; p = p->next) {
    fputs(p->name, f);
    if (strcmp(p->name, p->arg_text) != 0) fprintf(f, "=%s", p->arg_text);
    if (p->next) fputs(", ", f);
  }
  fputs(")[i < ", f);
  ir_print_size(f, op->pw.count);
  fputs("]", f);
  if (op->pw.row) {
    fputs(" rows of ", f);
    ir_print_size(f, op->pw.row);
  }
}

static void print_op_head(FILE *f, const IrOp *op) {
  print_outputs(f, op);
  switch (op->kind) {
  case IR_OP_COLLECTIVE: print_collective(f, op); break;
  case IR_OP_GEMM: print_gemm(f, op); break;
  case IR_OP_POINTWISE: print_pointwise_head(f, op); break;
  case IR_OP_COPY:
    fputs("copy(", f);
    print_ref(f, &op->reads->ref);
    fputs(")[", f);
    ir_print_size(f, op->copy.count);
    fputs("]", f);
    break;
  case IR_OP_MEMSET:
    fprintf(f, "memset(%d)[", op->memset.value);
    ir_print_size(f, op->memset.count);
    fputs("]", f);
    break;
  case IR_OP_EVENT:
    fprintf(f, "event %s %s on %s", op->event.wait ? "wait" : "record", op->event.event,
            op->event.stream);
    break;
  case IR_OP_OPAQUE: fprintf(f, "opaque \"%s\"", op->text ? op->text : ""); break;
  }
}

static void print_span(FILE *f, const IrOp *op) {
  const IrSpan *sp = &op->span;
  if (sp->nchunks > 1) fprintf(f, " @chunk(%d/%d)%s", sp->chunk + 1, sp->nchunks, sp->part ? "." : "");
  else if (sp->part != IR_PART_ALL) fputs(" @", f);
  if (sp->part != IR_PART_ALL) fputs(ir_part_name(sp->part), f);
  if (op->fuse_group) fprintf(f, " fuse=%d", op->fuse_group);
}

static void print_loc(FILE *f, const SrcLoc *loc) {
  if (loc->file) fprintf(f, "%s:%u:%u", loc->file, loc->line, loc->col);
  else fputs("?", f);
}

static void print_body(FILE *f, const IrOp *op) {
  for (const IrStmt *s = op->pw.body; s; s = s->next) {
    if (s->kind == IR_S_LET) fprintf(f, "      let %s = ", s->name);
    else if (s->kind == IR_S_REDUCE) {
      fputs("      ", f);
      ir_print_expr(f, s->target);
      fputs(" += ", f);
    } else fprintf(f, "      %s[i] = ", s->tensor->name);
    ir_print_expr(f, s->value);
    fputs("\n", f);
  }
}

static void print_op(FILE *f, const IrOp *op, bool body) {
  fputs("  ", f);
  print_op_head(f, op);
  print_span(f, op);
  fputs("  # ", f);
  print_loc(f, &op->loc);
  fputs("\n", f);
  if (body && op->kind == IR_OP_POINTWISE) print_body(f, op);
}

//
// Regions
//

static void print_clauses(FILE *f, const IrRegion *r) {
  if (!r->clauses) fputs(" none", f);
  for (const IrClause *c = r->clauses; c; c = c->next) {
    fprintf(f, " %s", ir_clause_name(c->kind));
    if (c->kind == IR_CL_OVERLAP && c->chunks) fprintf(f, "(chunks=%d)", c->chunks);
    for (const IrName *n = c->args; n; n = n->next)
      fprintf(f, "%s%s%s", n == c->args ? "(" : ", ", n->text, n->next ? "" : ")");
  }
  fputs("\n", f);
}

static void print_tensor(FILE *f, const IrTensor *t, bool scheduled) {
  fprintf(f, "  tensor %s : %s[", t->name, ir_type_name(t->type));
  ir_print_size(f, t->count);
  fprintf(f, "] %s -> %s", ir_layout_name(t->layout_in),
          ir_layout_name(scheduled ? t->layout_sched : t->layout_out));
  if (strcmp(t->name, t->text) != 0) fprintf(f, " = %s", t->text);
  if (t->shard) fputs(" (shard)", f);
  if (t->scratch) fputs(" (scratch)", f);
  if (!t->written) fputs(" (read only)", f);
  fputs("\n", f);
}

void ir_dump(FILE *f, const IrRegion *r, bool scheduled) {
  if (scheduled && !r->sched) return;
  if (scheduled) fprintf(f, "scheduled %s:", r->name);
  else {
    fprintf(f, "region %s (", r->name);
    print_loc(f, &r->loc);
    fputs(")\n  clauses:", f);
  }
  print_clauses(f, r);
  for (const IrVar *v = r->vars; v; v = v->next)
    fprintf(f, "  var %s : %s\n", v->text, v->is_size ? "size" : ir_type_name(v->type));
  for (const IrTensor *t = r->tensors; t; t = t->next) print_tensor(f, t, scheduled);
  for (const IrOp *op = scheduled ? r->sched : r->ops; op; op = op->next) print_op(f, op, !scheduled);
}
