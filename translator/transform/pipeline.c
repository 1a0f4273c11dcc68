// pipeline.c: pipeline(tag=T[, group=C]), CoCoNet's pipeline-parallel
// transformation. It runs after the other clauses, whatever their order:
//
//   - a sending region's ncclSend(x, count, ...) of a buffer that split
//     reorder computes on this rank's slice and then all-gathers, and that is
//     the same on every rank of the group as written, sends only this rank's
//     slice and the tail, laid out as that AllGather's (whole rows of a
//     row-wise kernel); when nothing else in the region reads x and it is
//     scratch(x) or shard(x), the AllGather itself goes;
//   - a receiving region's ncclRecv(x, count, ...) receives the peer's slice
//     and the tail and all-gathers the slices on group=C, the receiving
//     stage's group, so x holds all of the count on every rank of it.
//
// The two ends are paired at run time: a header goes first, and the receiver
// stops with a located message when its tag, group size, rank in the group,
// count or element size differ from the sender's (runtime/include/coconet.h).
#include "transform_impl.h"

#include <string.h>

static const char *peer_name(const IrOp *op) { return op->coll.kind == IR_SEND ? "ncclSend" : "ncclRecv"; }

static bool is_p2p(const IrOp *op) {
  return op->kind == IR_OP_COLLECTIVE && (op->coll.kind == IR_SEND || op->coll.kind == IR_RECV);
}

// The last op before `send` in the working list that writes t (NULL: none).
static const IrOp *last_writer(const IrOp *list, const IrOp *send, const IrTensor *t) {
  const IrOp *w = NULL;
  for (const IrOp *op = list; op && op != send; op = op->next)
    if (tf_writes(op, t) || (op->kind == IR_OP_OPAQUE && !op->error_check)) w = op;
  return w;
}

static int pipeline_send(TfCtx *c, const IrClause *cl, IrOp *send) {
  const IrTensor *t = send->coll.in;
  const IrUse *u = tf_read(send, t);
  if (!u || u->ref.layout != IR_LAYOUT_REPLICATED) {
    tf_fail(c, &send->loc,
            "pipeline: '%s' may differ from rank to rank of the sending group here, so sending each rank's slice "
            "would not send what this ncclSend sends; it must be computed from reduced values, the element index, "
            "scalars and buffers declared replicated(...)",
            t->name);
    tf_note(c, &cl->loc, "pipeline(tag=%s) is requested here", cl->tag);
    return -1;
  }
  const IrOp *w = last_writer(c->list, send, t);
  if (w && w->kind == IR_OP_OPAQUE) {
    tf_fail(c, &send->loc, "pipeline: a statement coconet does not see into comes before this ncclSend and may "
                           "change '%s' differently on each rank; move it out of the region", t->name);
    tf_note(c, &w->loc, "this statement may write '%s'", t->name);
    return -1;
  }
  if (w && w->span.nchunks > 1)
    return tf_fail(c, &send->loc, "pipeline: '%s' is last written by the chunks of overlap; its slices are laid out "
                                  "per chunk, which a pipeline send does not take: drop overlap or pipeline",
                   t->name);
  if (!w || w->kind != IR_OP_COLLECTIVE || !w->generated || w->coll.kind != IR_ALLGATHER) {
    tf_fail(c, &send->loc, "pipeline: '%s' is not gathered by split reorder before this ncclSend, so coconet does "
                           "not know which ranks hold it whole; pipeline sends the slices of the kernel output that "
                           "reorder moves onto this rank's slice and gathers", t->name);
    if (w) tf_note(c, &w->loc, "'%s' is last written here, by '%s'", t->name, ir_op_title(w));
    return -1;
  }
  if (!ir_size_equal(w->coll.count, send->coll.count) || w->coll.dtype != send->coll.dtype)
    return tf_fail(c, &send->loc, "pipeline: this ncclSend's count or datatype is not that of the AllGather of '%s' "
                                  "(%s, %s); send the whole buffer, in its own datatype", t->name,
                   w->coll.count_text ? w->coll.count_text : "its count", ir_nccl_type_name(w->coll.dtype));
  send->coll.pipe_tag = cl->tag;
  send->coll.pipe_group = w->coll.comm;
  send->span.grain = w->span.grain;
  tf_step(c, IR_CL_PIPELINE,
          "pipeline(tag=%s): the ncclSend of '%s' at %s:%u:%u sends this rank's slice of '%s' (split over the "
          "ranks of '%s') and the tail, not all of it; the receiving region all-gathers the slices",
          cl->tag, t->name, send->loc.file ? send->loc.file : "?", send->loc.line, send->loc.col, t->name,
          w->coll.comm);
  return 0;
}

static int pipeline_recv(TfCtx *c, const IrClause *cl, IrOp *recv) {
  if (!cl->group) {
    tf_fail(c, &cl->loc, "pipeline: region '%s' receives with ncclRecv, so pipeline needs 'group=COMM', the "
                         "communicator of the receiving stage's group on which the received slices are gathered",
            c->r->name);
    tf_note(c, &recv->loc, "the ncclRecv is here");
    return -1;
  }
  recv->coll.pipe_tag = cl->tag;
  recv->coll.pipe_group = cl->group;
  tf_step(c, IR_CL_PIPELINE,
          "pipeline(tag=%s): the ncclRecv of '%s' at %s:%u:%u receives the peer's slice (and the tail) and "
          "all-gathers the slices on '%s'",
          cl->tag, recv->coll.out->name, recv->loc.file ? recv->loc.file : "?", recv->loc.line, recv->loc.col,
          cl->group);
  return 0;
}

int tf_pipeline(TfCtx *c, const IrClause *cl) {
  int sends = 0, recvs = 0;
  for (IrOp *op = c->list; op; op = op->next) {
    if (!is_p2p(op)) continue;
    if (op->nccl_group) {
      tf_fail(c, &op->loc, "pipeline: this %s is inside ncclGroupStart()/ncclGroupEnd(); a pipeline exchange "
                           "checks its header before it receives the slices, which a group would defer to "
                           "ncclGroupEnd: move the %s out of the group", peer_name(op), peer_name(op));
      return -1;
    }
    if (op->coll.kind == IR_SEND ? pipeline_send(c, cl, op) : pipeline_recv(c, cl, op)) return -1;
    sends += op->coll.kind == IR_SEND;
    recvs += op->coll.kind == IR_RECV;
  }
  if (!sends && !recvs)
    return tf_fail(c, &cl->loc, "pipeline: region '%s' has no ncclSend or ncclRecv", c->r->name);
  if (cl->group && !recvs)
    return tf_fail(c, &cl->group_loc, "pipeline: 'group=' is for a region that receives; region '%s' only sends "
                                      "(its slices are those of its own collectives' group)", c->r->name);
  return 0;
}
