// split.c: split, CoCoNet's first transformation: each AllReduce the clause
// names becomes a ReduceScatter on the body, an AllReduce of the count % nranks
// tail and an AllGather on the body.
#include "transform_impl.h"

#include <stdarg.h>
#include <string.h>

static bool named(const IrClause *cl, const IrTensor *t) {
  for (const IrName *n = cl->args; n; n = n->next)
    if (t && ir_tensor_find(t->region, n->text) == t) return true;
  return false;
}

static bool is_allreduce(const IrOp *op) {
  return op->kind == IR_OP_COLLECTIVE && op->coll.kind == IR_ALLREDUCE && op->span.part == IR_PART_ALL;
}

// AllReduce(x) -> ReduceScatter(x) on the body, AllReduce(x) on the tail,
// AllGather(x) on the body.
static IrOp *split_one(TfCtx *c, IrOp *ar) {
  IrOp *rs = tf_collective(c, ar, IR_REDUCESCATTER, ar->coll.in, ar->coll.out, IR_PART_BODY);
  IrOp *tail = tf_collective(c, ar, IR_ALLREDUCE, ar->coll.in, ar->coll.out, IR_PART_TAIL);
  IrOp *ag = tf_collective(c, ar, IR_ALLGATHER, ar->coll.out, ar->coll.out, IR_PART_BODY);
  rs->next = tail;
  tail->next = ag;
  ag->next = ar->next;
  tf_step(c, IR_CL_SPLIT,
          "split: %s(%s, %s) at %s:%u:%u -> ReduceScatter + AllGather, and an AllReduce of the "
          "count %% nranks tail",
          ir_coll_name(ar->coll.kind), ir_red_name(ar->coll.red), ar->coll.in->name,
          ar->loc.file ? ar->loc.file : "?", ar->loc.line, ar->loc.col);
  return rs;
}

int tf_split(TfCtx *c, const IrClause *cl) {
  int n = 0;
  for (IrOp **pp = &c->list; *pp; pp = &(*pp)->next) {
    if (!is_allreduce(*pp)) continue;
    if (cl->args && !named(cl, (*pp)->coll.out) && !named(cl, (*pp)->coll.in)) continue;
    if ((*pp)->nccl_group)
      return tf_fail(c, &(*pp)->loc,
                     "split: the AllReduce of '%s' is inside ncclGroupStart()/ncclGroupEnd(); its "
                     "ReduceScatter and the AllGather that reads the ReduceScatter's output cannot share a "
                     "group (NCCL runs a group's calls in no order); move the AllReduce out of the group",
                     (*pp)->coll.out->name);
    *pp = split_one(c, *pp);
    pp = &(*pp)->next->next;
    n++;
  }
  for (const IrName *a = cl->args; a; a = a->next) {
    bool found = false;
    for (const IrOp *op = c->list; op; op = op->next) {
      const IrTensor *t = ir_tensor_find(c->r, a->text);
      found |= op->kind == IR_OP_COLLECTIVE && op->generated && op->coll.kind == IR_REDUCESCATTER &&
               t && (op->coll.in == t || op->coll.out == t);
    }
    if (!found) return tf_fail(c, &a->loc, "split: no ncclAllReduce on '%s' in region '%s'", a->text, c->r->name);
  }
  if (n == 0 && !cl->args) {
    int status = tf_fail(c, &cl->loc, "split: region '%s' has no ncclAllReduce to split", c->r->name);
    // An AllReduce may be inside a call coconet did not see through: say why.
    if (!c->quiet) ir_note_opaque(c->r);
    return status;
  }
  c->split = true;
  return 0;
}

