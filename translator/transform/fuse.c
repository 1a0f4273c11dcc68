// fuse.c: fuse, the marking of which ops of a split (or one-shot) group become
// one generated kernel on symmetric memory (codegen makes it, with the NCCL
// schedule as its fallback).
#include "transform_impl.h"

#include <stdlib.h>
#include <string.h>

static bool generated(const IrOp *op, IrCollKind kind, IrPart part) {
  return op && op->kind == IR_OP_COLLECTIVE && op->generated && op->coll.kind == kind && op->span.part == part;
}

// Whether the kernels [first, end) of a group with row-wise kernels can become
// one fused kernel (codegen_rows.c): each row-wise kernel copyable, all launched
// alike (a block, warp or thread per row; the same block and shared memory),
// since the fused kernel runs the blocks of their grid with their block (the
// elementwise kernels among them run on those blocks' rows).
static int fuse_rows_check(TfCtx *c, const IrOp *first, const IrOp *end, const IrOp *row) {
  for (const IrOp *p = first; p != end; p = p->next) {
    if (!p->pw.row) continue;
    if (p->pw.row_fuse_why) return tf_fail(c, &p->pw.row_fuse_loc, "%s", p->pw.row_fuse_why);
    const IrPointwise *a = &row->pw, *b = &p->pw;
    if (a->row_threads != b->row_threads || !tf_same_text(a->block, b->block) || !tf_same_text(a->shmem, b->shmem))
      return tf_fail(c, &p->loc,
                     "fuse: kernels '%s' and '%s' are launched differently (%s, block %s, shared memory %s; %s, block "
                     "%s, shared memory %s); the fused kernel runs the blocks of one grid with one block size: drop "
                     "fuse, or launch them alike",
                     a->kernel, b->kernel, a->row_threads == 32 ? "a warp per row" : a->row_threads ? "a thread per row"
                     : "a block per row", a->block, a->shmem, b->row_threads == 32 ? "a warp per row"
                     : b->row_threads ? "a thread per row" : "a block per row", b->block, b->shmem);
  }
  return 0;
}

// RS, tail AR, slice/tail kernels, AllGathers of one chunk: a group when it has kernels.
static int fuse_split(TfCtx *c, IrOp *rs) {
  IrOp *end = rs->next, *p;
  int kernels = 0;
  if (generated(end, IR_ALLREDUCE, IR_PART_TAIL)) end = end->next;
  const IrOp *row = NULL;
  for (p = end; p && p->kind == IR_OP_POINTWISE && p->span.part != IR_PART_ALL && tf_same_chunk(p, rs); p = p->next) {
    if (p->pw.row && !row) row = p;
    kernels++;
  }
  if (kernels == 0) return 0;
  if (row && fuse_rows_check(c, end, p, row)) return -1;
  while (generated(p, IR_ALLGATHER, IR_PART_BODY) && tf_same_chunk(p, rs)) p = p->next;
  int group = ++c->nfuse;
  for (IrOp *q = rs; q != p; q = q->next) q->fuse_group = group;
  if (row)
    tf_step(c, IR_CL_FUSE,
            "fuse: ReduceScatter of '%s' + %d slice kernel launch(es) (row-wise ones among them) + AllGather(s) "
            "become one kernel (group %d): for each block of the row-wise kernels' grid it sums the block's rows "
            "from the peers, runs the kernels on them (a row-wise kernel's block with its body as written) and "
            "writes the gathered rows to the peers",
            rs->coll.out->name, kernels, group);
  else
    tf_step(c, IR_CL_FUSE,
            "fuse: ReduceScatter of '%s' + %d slice kernel launch(es) + AllGather(s) become one "
            "kernel (group %d)",
            rs->coll.out->name, kernels, group);
  return 1;
}

// AllReduce followed by kernels on its result (each element reduced, then used).
static int fuse_allreduce(TfCtx *c, IrOp *ar) {
  IrOp *chain[TF_MAX_CHAIN];
  int n = tf_chain(ar, ar->coll.out, chain, TF_MAX_CHAIN);
  // The one-shot kernel does not take sums: the kernels before the first one are fused, the rest run as written.
  for (int i = 0; i < n; i++)
    if (chain[i]->kind == IR_OP_MEMSET || ir_pw_reduction(chain[i])) n = i;
  if (n == 0) return 0;
  for (int i = 0; i < n; i++)
    if (tf_check_slice(c, "fuse", chain[i], ar, chain, n, true)) return -1;
  int group = ++c->nfuse;
  ar->fuse_group = group;
  for (int i = 0; i < n; i++) chain[i]->fuse_group = group;
  tf_step(c, IR_CL_FUSE, "fuse: AllReduce of '%s' + %d kernel(s) on its result become one kernel (group %d)",
          ar->coll.out->name, n, group);
  return 1;
}

int tf_fuse(TfCtx *c, const IrClause *cl) {
  for (const IrOp *op = c->list; op; op = op->next) {
    const IrStmt *sum = op->span.part != IR_PART_ALL ? ir_pw_reduction(op) : NULL;
    if (sum)
      return tf_fail(c, &op->loc,
                     "fuse: kernel '%s' sums into '%s' (atomicAdd) on this rank's slice; the fused kernel does not "
                     "take sums yet: drop fuse (split reorder alone sums the slice and all-reduces the partial sums)",
                     op->pw.kernel, sum->tensor->name);
  }
  int groups = 0;
  for (IrOp *op = c->list; op; op = op->next) {
    if (op->fuse_group || op->kind != IR_OP_COLLECTIVE) continue;
    int rc = 0;
    if (generated(op, IR_REDUCESCATTER, IR_PART_BODY)) rc = fuse_split(c, op);
    else if (op->coll.kind == IR_ALLREDUCE && op->span.part == IR_PART_ALL) rc = fuse_allreduce(c, op);
    if (rc < 0) return -1;
    groups += rc;
  }
  if (groups == 0)
    return tf_fail(c, &cl->loc,
                   "fuse: no collective is followed by pointwise work on its result; fuse needs "
                   "ReduceScatter + kernels + AllGather (split reorder) or AllReduce + kernels");
  return 0;
}
