// schedule.c: ir_schedule (the clauses in the order written, each in the file
// named for it), the helpers the transformations share, the information
// clauses, the final pass (dead AllGather elimination, shard and scratch
// checks) and --explain.
#include "transform_impl.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int tf_fail(TfCtx *c, const SrcLoc *loc, const char *fmt, ...) {
  if (!c->quiet) {
    va_list ap;
    va_start(ap, fmt);
    diag_vreport("error", loc, fmt, ap);
    va_end(ap);
  }
  return -1;
}

void tf_note(TfCtx *c, const SrcLoc *loc, const char *fmt, ...) {
  if (c->quiet) return;
  va_list ap;
  va_start(ap, fmt);
  diag_vreport("note", loc, fmt, ap);
  va_end(ap);
}

void tf_step(TfCtx *c, IrClauseKind clause, const char *fmt, ...) {
  char *buf = NULL;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&buf, fmt, ap) < 0) COCONET_BUG("out of memory");
  va_end(ap);
  IrStep *s = ir_alloc(c->r, sizeof *s);
  s->clause = clause;
  s->what = ir_strdup(c->r, buf);
  free(buf);
  IrStep **tail = &c->steps;
  while (*tail) tail = &(*tail)->next;
  *tail = s;
}

const IrUse *tf_read(const IrOp *op, const IrTensor *t) {
  for (const IrUse *u = op->reads; u; u = u->next)
    if (u->ref.t == t) return u;
  return NULL;
}

bool tf_writes(const IrOp *op, const IrTensor *t) {
  for (const IrUse *u = op->writes; u; u = u->next)
    if (u->ref.t == t) return true;
  return false;
}

static IrUse *clone_uses(TfCtx *c, const IrUse *u) {
  IrUse *head = NULL, **tail = &head;
  for (; u; u = u->next) {
    IrUse *n = ir_alloc(c->r, sizeof *n);
    *n = *u;
    n->next = NULL;
    *tail = n;
    tail = &n->next;
  }
  return head;
}

IrOp *tf_clone(TfCtx *c, const IrOp *op) {
  IrOp *n = ir_alloc(c->r, sizeof *n);
  *n = *op;
  n->next = NULL;
  n->reads = clone_uses(c, op->reads);
  n->writes = clone_uses(c, op->writes);
  if (!n->orig) n->orig = op;
  return n;
}

IrOp *tf_clone_list(TfCtx *c, const IrOp *list) {
  IrOp *head = NULL, **tail = &head;
  for (; list; list = list->next) {
    *tail = tf_clone(c, list);
    tail = &(*tail)->next;
  }
  return head;
}

IrOp *tf_collective(TfCtx *c, const IrOp *like, IrCollKind kind, IrTensor *in, IrTensor *out,
                    IrPart part) {
  IrOp *op = tf_clone(c, like);
  op->coll.kind = kind;
  op->coll.in = in;
  op->coll.out = out;
  if (kind == IR_ALLGATHER) op->coll.red = IR_RED_NONE;
  op->reads = op->writes = NULL;
  ir_use_add(c->r, &op->reads, in, like->loc);
  ir_use_add(c->r, &op->writes, out, like->loc);
  op->span.part = part;
  op->generated = true;
  op->fuse_group = 0;
  return op;
}

bool tf_same_chunk(const IrOp *a, const IrOp *b) {
  return a->span.chunk == b->span.chunk && a->span.nchunks == b->span.nchunks;
}

bool tf_same_text(const char *a, const char *b) {
  while (*a || *b) {
    if (*a == ' ') a++;
    else if (*b == ' ') b++;
    else if (*a++ != *b++) return false;
  }
  return true;
}

//
// Information clauses and the final pass
//

static const IrClause *clause_naming(const IrRegion *r, IrClauseKind kind, const IrTensor *t,
                                     const IrName **arg) {
  for (const IrClause *c = r->clauses; c; c = c->next) {
    if (c->kind != kind) continue;
    for (const IrName *n = c->args; n; n = n->next) {
      if (ir_tensor_find(r, n->text) != t) continue;
      *arg = n;
      return c;
    }
  }
  return NULL;
}

// shard(...) and scratch(...): mark the buffers (before any schedule clause).
static int mark_info(TfCtx *c) {
  IrRegion *r = c->r;
  for (IrTensor *t = r->tensors; t; t = t->next) {
    t->shard = t->scratch = false;
    t->live_after = true;
  }
  for (const IrClause *cl = r->clauses; cl; cl = cl->next) {
    if (cl->kind != IR_CL_SHARD && cl->kind != IR_CL_SCRATCH) continue;
    const char *what = ir_clause_name(cl->kind);
    for (const IrName *n = cl->args; n; n = n->next) {
      IrTensor *t = ir_tensor_find(r, n->text);
      if (!t && ir_opaque_mentions(r, n->text)) continue;  // the schedule's own error says why, first
      if (!t || !t->written) {
        tf_fail(c, &n->loc, "%s: '%s' is not %s in region '%s'", what, n->text, t ? "written" : "a buffer used", r->name);
        if (!c->quiet) ir_note_opaque(r);
        return -1;
      }
      if ((cl->kind == IR_CL_SHARD && t->scratch) || (cl->kind == IR_CL_SCRATCH && t->shard))
        return tf_fail(c, &n->loc, "%s: '%s' cannot be both shard and scratch", what, n->text);
      if (cl->kind == IR_CL_SHARD) t->shard = true;
      else t->scratch = true;
      t->live_after = false;
    }
  }
  return 0;
}

static bool slice_work(const IrOp *op) {
  if (op->span.part == IR_PART_SLICE || op->span.part == IR_PART_TAIL) return true;
  return op->kind == IR_OP_COLLECTIVE && op->coll.kind == IR_REDUCESCATTER && op->span.part == IR_PART_BODY;
}

// Ops on different chunks of an overlap touch disjoint elements.
static bool disjoint(const IrOp *a, const IrOp *b) {
  return a->span.nchunks > 1 && a->span.nchunks == b->span.nchunks && a->span.chunk != b->span.chunk;
}

// The first op after op that reads elements of t that op wrote. A statement
// coconet does not see into (an opaque launch, a call) may read anything.
// A pipeline send reads only this rank's slice and the tail.
static const IrOp *reader_after(const IrOp *op, const IrTensor *t) {
  for (const IrOp *q = op->next; q; q = q->next) {
    bool slice_send = q->kind == IR_OP_COLLECTIVE && q->coll.kind == IR_SEND && q->coll.pipe_tag;
    if (((q->kind == IR_OP_OPAQUE && !q->error_check) || tf_read(q, t)) && !disjoint(op, q) && !slice_send) return q;
  }
  return NULL;
}

// Remove generated AllGathers of shard/scratch buffers nobody reads afterwards.
static void dead_gathers(TfCtx *c) {
  for (IrOp **pp = &c->list; *pp;) {
    IrOp *op = *pp;
    IrTensor *t = op->kind == IR_OP_COLLECTIVE ? op->coll.out : NULL;
    bool dead = op->generated && op->coll.kind == IR_ALLGATHER && (t->shard || t->scratch) && !reader_after(op, t);
    if (!dead) {
      pp = &op->next;
      continue;
    }
    *pp = op->next;
    tf_step(c, t->shard ? IR_CL_SHARD : IR_CL_SCRATCH,
            "%s: the AllGather of '%s' is dead (only this rank's slice is needed after the region) and removed",
            t->shard ? "shard" : "scratch", t->name);
  }
}

// The AllGather of a kernel's output that reorder added (not of a reduced buffer).
static const IrOp *output_gather(const IrTensor *t, const IrOp *op) {
  bool is = op->kind == IR_OP_COLLECTIVE && op->generated && op->coll.kind == IR_ALLGATHER && op->coll.out == t;
  return is && op->orig->coll.out != t ? op : NULL;
}

// A shard buffer must be last written by slice work; a shard or scratch
// kernel output that is read later in the region keeps its AllGather, which is
// what shard/scratch promise to avoid (and wrong for data that differs per rank).
static int check_marked(TfCtx *c, const IrTensor *t) {
  IrClauseKind kind = t->shard ? IR_CL_SHARD : IR_CL_SCRATCH;
  const IrName *arg = NULL;
  clause_naming(c->r, kind, t, &arg);
  const IrOp *last = NULL;
  for (const IrOp *op = c->list; op; op = op->next) {
    if (output_gather(t, op)) {
      const IrOp *reader = reader_after(op, t);
      if (reader->kind == IR_OP_OPAQUE) {
        tf_fail(c, &arg->loc, "%s: '%s' may be read later in the region by a statement coconet does not see into, "
                              "so its slices would have to be gathered", ir_clause_name(kind), t->name);
        tf_note(c, &reader->loc, "this statement may read '%s'", t->name);
        return -1;
      }
      tf_fail(c, &arg->loc, "%s: '%s' is read by '%s' later in the region, so its slices would have to be gathered",
              ir_clause_name(kind), t->name, ir_op_title(reader));
      tf_note(c, &reader->loc, "'%s' is read here", t->name);
      return -1;
    }
    if (tf_writes(op, t)) last = op;
  }
  if (t->shard && last && !slice_work(last)) {
    tf_fail(c, &arg->loc,
            "shard: '%s' is computed by '%s' on every element, not on this rank's slice; shard "
            "needs split and reorder to move its writer between the ReduceScatter and the AllGather",
            t->name, ir_op_title(last));
    tf_note(c, &last->loc, "'%s' is written here", t->name);
    return -1;
  }
  return 0;
}

int tf_finish(TfCtx *c) {
  for (const IrClause *cl = c->r->clauses; cl; cl = cl->next)
    if (cl->kind == IR_CL_PIPELINE && tf_pipeline(c, cl)) return -1;
  dead_gathers(c);
  for (const IrTensor *t = c->r->tensors; t; t = t->next)
    if ((t->shard || t->scratch) && check_marked(c, t)) return -1;
  return 0;
}

int tf_apply(TfCtx *c, const IrClause *cl) {
  switch (cl->kind) {
  case IR_CL_SPLIT: return tf_split(c, cl);
  case IR_CL_REORDER: return tf_reorder(c, cl);
  case IR_CL_FUSE: return tf_fuse(c, cl);
  case IR_CL_OVERLAP: return tf_overlap(c, cl);
  case IR_CL_AUTO: return tf_auto(c, cl);
  case IR_CL_SHARD: case IR_CL_SCRATCH: case IR_CL_REPLICATED: return 0;
  case IR_CL_PIPELINE: return 0;  // after the other clauses (tf_finish)
  }
  return 0;
}

static void reset(IrRegion *r) {
  r->sched = NULL;
  r->steps = NULL;
  r->nfuse = r->overlap_chunks = 0;
  r->split_done = r->reorder_done = false;
}

// An explicit schedule the cost model predicts slower than the region as
// written, at sizes coconet knows (constant counts, or sizes the --model file
// gives): a warning with both predictions. Not for schedule(auto), which
// keeps the region as written when nothing is faster.
static void warn_if_slower(const TfCtx *c) {
  const IrRegion *r = c->r;
  for (const IrClause *cl = r->clauses; cl; cl = cl->next)
    if (cl->kind == IR_CL_AUTO) return;
  for (const IrVar *v = r->vars; v; v = v->next) {
    bool given = false;
    for (int i = 0; i < c->model->nsizes && !given; i++) given = strcmp(c->model->sizes[i].name, v->text) == 0;
    if (v->is_size && !given) return;  // a size coconet cannot see
  }
  double before = ir_cost_list(r->ops, c->model), after = ir_cost_list(c->list, c->model);
  if (!(after > before * 1.02)) return;
  diag_warning(&r->loc, "region '%s': at these sizes the cost model (%d ranks) predicts the schedule slower than the "
                        "region as written, %.2fx its speed (%.1f us scheduled, %.1f us as written): the extra launches "
                        "and collective steps cost more than the work they save at these sizes; see --explain, or let "
                        "schedule(auto) choose",
               r->name, c->model->nranks, before / after, after * 1e6, before * 1e6);
}

// A run of kernels, memsets and error checks (IrOp.error_check: they read and
// write nothing) that starts with a check: its kernels and memsets first, then
// its checks, each in its order, so that the kernels stay next to the collective
// whose result they use (`ncclAllReduce(...); sync_check_cuda_error();
// norm<<<...>>>(...);`). A check then checks them too: only when an error is
// reported changes.
static bool movable(const IrOp *op) { return op->kind == IR_OP_POINTWISE || op->kind == IR_OP_MEMSET; }
static bool is_check(const IrOp *op) { return op->kind == IR_OP_OPAQUE && op->error_check; }

static void sink_checks(TfCtx *c) {
  for (IrOp **pp = &c->list; *pp; pp = &(*pp)->next) {
    if (!is_check(*pp)) continue;
    IrOp *end = *pp, *last = NULL, *work = NULL, **wt = &work, *checks = NULL, **ct = &checks;
    for (; end && (is_check(end) || movable(end)); end = end->next)
      if (movable(end)) last = end;
    if (!last) continue;
    bool before = true;  // (a check after the run's last kernel stays where it is)
    for (IrOp *op = *pp, *next; op != end; op = next) {
      next = op->next;
      before &= op != last;
      if (!is_check(op)) {
        *wt = op, wt = &op->next;
        continue;
      }
      if (before)
        tf_step(c, c->r->clauses ? c->r->clauses->kind : IR_CL_SPLIT, "the error check '%s' (%s:%u:%u) runs "
                "after the kernels that follow it: it reads and writes no buffer", op->text,
                op->loc.file ? op->loc.file : "?", op->loc.line, op->loc.col);
      *ct = op, ct = &op->next;
    }
    *wt = checks;
    *ct = end;
    *pp = work;
    while (*pp != end) pp = &(*pp)->next;
    if (!*pp) return;
  }
}

int ir_schedule(IrRegion *r, const IrSchedOptions *opt) {
  reset(r);
  if (ir_infer(r)) return -1;
  IrCostModel defaults;
  ir_cost_default(&defaults);
  TfCtx c = {.r = r, .quiet = opt && opt->quiet, .model = opt && opt->model ? opt->model : &defaults};
  if (mark_info(&c) || tf_legal(&c)) return -1;
  c.list = tf_clone_list(&c, r->ops);
  sink_checks(&c);
  for (const IrClause *cl = r->clauses; cl; cl = cl->next)
    if (tf_apply(&c, cl)) return -1;
  if (tf_finish(&c)) return -1;
  if (!c.quiet) warn_if_slower(&c);
  r->sched = c.list;
  r->steps = c.steps;
  r->nfuse = c.nfuse;
  r->overlap_chunks = c.chunks;
  r->split_done = c.split;
  r->reorder_done = c.reorder;
  ir_infer_sched(r);
  return 0;
}

//
// --explain
//

static void explain_model(FILE *f, const IrRegion *r, const IrCostModel *m) {
  fprintf(f, "  cost model: %d ranks, link %.0f GB/s, alpha %.1f us/step, HBM %.0f GB/s, launch %.1f us\n",
          m->nranks, m->link_bw / 1e9, m->alpha * 1e6, m->hbm_bw / 1e9, m->launch * 1e6);
  for (const IrVar *v = r->vars; v; v = v->next) {
    if (!v->is_size) continue;
    bool set = false;
    for (int i = 0; i < m->nsizes; i++)
      if (strcmp(m->sizes[i].name, v->text) == 0) {
        fprintf(f, "  size %s = %.0f (model file)\n", v->text, m->sizes[i].value);
        set = true;
      }
    if (!set) fprintf(f, "  size %s = default (%.0f as a count, %.0f as a factor)\n", v->text, m->default_count, m->default_dim);
  }
}

// Each step once: with overlap the same step is taken for every chunk.
static void explain_steps(FILE *f, const IrRegion *r) {
  for (const IrStep *s = r->steps; s; s = s->next) {
    const IrStep *first = r->steps;
    while (strcmp(first->what, s->what) != 0) first = first->next;
    if (first != s) continue;  // said already
    int count = 0;
    for (const IrStep *t = s; t; t = t->next) count += strcmp(t->what, s->what) == 0;
    if (count == 1) fprintf(f, "  - %s\n", s->what);
    else if (count == r->overlap_chunks) fprintf(f, "  - %s (in each of the %d chunks)\n", s->what, count);
    else fprintf(f, "  - %s (%d times)\n", s->what, count);
  }
}

void ir_explain(FILE *f, const IrRegion *r, const IrCostModel *model) {
  IrCostModel defaults;
  ir_cost_default(&defaults);
  const IrCostModel *m = model ? model : &defaults;
  fprintf(f, "explain %s (%s:%u:%u):", r->name, r->loc.file ? r->loc.file : "?", r->loc.line, r->loc.col);
  for (const IrClause *c = r->clauses; c; c = c->next) fprintf(f, " %s", ir_clause_name(c->kind));
  fputs(r->clauses ? "\n" : " no clauses\n", f);
  for (const IrStep *s = r->notes; s; s = s->next) fprintf(f, "  - analysis: %s\n", s->what);
  for (const IrAssume *a = r->assumes; a; a = a->next)
    if (a->guard)
      fprintf(f, "  - analysis: the region runs %s only when %s (%s:%u:%u): the schedule is for it running, tested "
                 "at the top of the region; the region runs as written otherwise\n", a->kernel, a->test,
              a->loc.file ? a->loc.file : "?", a->loc.line, a->loc.col);
    else if (a->launcher)
      fprintf(f, "  - analysis: '%s' picks its kernel at run time: the schedule is for kernel '%s', which it launches "
                 "when %s (%s:%u:%u), tested at the top of the region; the region runs as written otherwise\n",
              a->launcher, a->kernel, a->test, a->loc.file ? a->loc.file : "?", a->loc.line, a->loc.col);
    else if (a->divisor)
      fprintf(f, "  - analysis: kernel '%s' reads its rows %d elements at a time (%s:%u:%u), rows of '%s' elements: "
                 "the schedule is for %s, tested at the top of the region; the region runs as written otherwise\n",
              a->kernel, a->divisor, a->loc.file ? a->loc.file : "?", a->loc.line, a->loc.col, a->var, a->test);
    else if (a->other)
      fprintf(f, "  - analysis: kernel '%s' steps from slice to slice by '%s' (%s:%u:%u), passed '%s', and its count is "
                 "passed '%s': the schedule is for %s == %s, tested at the top of the region; the region runs as "
                 "written otherwise\n", a->kernel, a->param, a->loc.file ? a->loc.file : "?", a->loc.line, a->loc.col,
              a->var, a->other, a->var, a->other);
    else
      fprintf(f, "  - analysis: kernel '%s' %s '%s' %s (%s:%u:%u) and the launch passes a variable: the schedule is "
                 "for %s, tested at the top of the region; the region runs as written otherwise\n",
              a->kernel, a->sometimes ? "reaches" : "tests", a->var,
              a->sometimes ? "only under a condition, where it may be NULL," : "against NULL",
              a->loc.file ? a->loc.file : "?", a->loc.line, a->loc.col, a->test);
  explain_steps(f, r);
  explain_model(f, r, m);
  double before = ir_cost_list(r->ops, m);
  if (!r->sched) {
    fprintf(f, "  predicted: %.1f us as written (not scheduled)\n", before * 1e6);
    return;
  }
  double after = ir_cost_list(r->sched, m);
  fprintf(f, "  predicted: %.1f us as written, %.1f us scheduled (%.2fx)\n", before * 1e6, after * 1e6,
          after > 0 ? before / after : 1.0);
}
