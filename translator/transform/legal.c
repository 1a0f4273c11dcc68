// legal.c: what a region must satisfy before any schedule clause
// runs, whatever the clauses are: no kernel inside an NCCL group (the group's
// collectives start only at ncclGroupEnd, so nothing can be ordered around
// them), and one stream unless the region orders its streams with events.
#include "transform_impl.h"

#include <string.h>

static bool schedules(const IrRegion *r) {
  for (const IrClause *c = r->clauses; c; c = c->next)
    if (c->kind == IR_CL_SPLIT || c->kind == IR_CL_REORDER || c->kind == IR_CL_FUSE ||
        c->kind == IR_CL_OVERLAP || c->kind == IR_CL_AUTO || c->kind == IR_CL_PIPELINE)
      return true;
  return false;
}

// The ncclGroupStart() statement of group k.
static const IrOp *group_start(const IrRegion *r, int k) {
  for (const IrOp *op = r->ops; op; op = op->next)
    if (op->nccl_group == k) return op;
  return NULL;
}

static int check_groups(TfCtx *c) {
  for (const IrOp *op = c->r->ops; op; op = op->next) {
    if (!op->nccl_group || op->kind == IR_OP_COLLECTIVE || op->kind == IR_OP_OPAQUE || op->kind == IR_OP_EVENT)
      continue;
    tf_fail(c, &op->loc,
            "'%s' runs inside ncclGroupStart()/ncclGroupEnd(): NCCL starts the group's collectives only at "
            "ncclGroupEnd, after this work is queued, so coconet cannot order the schedule around it; move "
            "it after ncclGroupEnd()",
            ir_op_title(op));
    tf_note(c, &group_start(c->r, op->nccl_group)->loc, "the group starts here");
    return -1;
  }
  return 0;
}

static int check_streams(TfCtx *c) {
  const IrOp *first = NULL;
  char a[256], b[256];
  bool events = false;
  for (const IrOp *op = c->r->ops; op; op = op->next) events |= op->kind == IR_OP_EVENT;
  if (events) return 0;
  for (const IrOp *op = c->r->ops; op; op = op->next) {
    if (!ir_op_stream(op, b, sizeof b)) continue;
    if (!first) {
      first = op;
      ir_op_stream(op, a, sizeof a);
      continue;
    }
    if (strcmp(a, b) == 0) continue;
    tf_fail(c, &op->loc,
            "'%s' runs on stream '%s' but '%s' before it on stream '%s', and the region orders nothing "
            "between the two streams; coconet cannot tell which work may overlap: put the region's work on "
            "one stream, or order the streams with cudaEventRecord/cudaStreamWaitEvent inside the region",
            ir_op_title(op), ir_text_as_written(c->r, b), ir_op_title(first), ir_text_as_written(c->r, a));
    tf_note(c, &first->loc, "'%s' runs on '%s' here", ir_op_title(first), ir_text_as_written(c->r, a));
    return -1;
  }
  return 0;
}

int tf_legal(TfCtx *c) {
  if (!schedules(c->r)) return 0;
  return check_groups(c) || check_streams(c) ? -1 : 0;
}
