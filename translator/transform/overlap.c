// overlap.c: overlap(chunks=K): a GEMM and the collective that consumes its
// output are cut into K chunks along C's contiguous columns and pipelined.
#include "transform_impl.h"

static bool is_barrier(const IrOp *op) { return op->kind == IR_OP_OPAQUE || op->kind == IR_OP_EVENT; }

static IrOp *find_allreduce(IrOp *gemm) {
  for (IrOp *q = gemm->next; q; q = q->next)
    if (q->kind == IR_OP_COLLECTIVE && q->coll.kind == IR_ALLREDUCE && q->span.part == IR_PART_ALL &&
        q->coll.in == gemm->gemm.c)
      return q;
  return NULL;
}

// Nothing between the GEMM and its AllReduce may be a barrier, touch C, or
// write A or B; after an out-of-place AllReduce nothing may read C.
static int check_between(TfCtx *c, const IrOp *gemm, const IrOp *ar) {
  const IrGemm *g = &gemm->gemm;
  for (const IrOp *q = gemm->next; q != ar; q = q->next) {
    if (is_barrier(q))
      return tf_fail(c, &q->loc, "overlap: '%s' between the GEMM and the AllReduce is an ordering "
                                 "barrier; overlap cannot move work across it", ir_op_title(q));
    if (tf_read(q, g->c) || tf_writes(q, g->c) || tf_writes(q, g->a) || tf_writes(q, g->b)) {
      tf_fail(c, &q->loc, "overlap: '%s' uses the GEMM's buffers between the GEMM and the "
                          "AllReduce; overlap needs the GEMM's output consumed only by the collective",
              ir_op_title(q));
      tf_note(c, &gemm->loc, "the GEMM is here");
      return -1;
    }
  }
  if (ar->coll.out == g->c) return 0;
  for (const IrOp *q = ar->next; q && !tf_writes(q, g->c); q = q->next) {
    if (!tf_read(q, g->c)) continue;
    tf_fail(c, &q->loc, "overlap: '%s' reads '%s' besides the AllReduce; overlap needs the GEMM's "
                        "output consumed only by the collective", ir_op_title(q), g->c->name);
    tf_note(c, &gemm->loc, "the GEMM that writes '%s' is here", g->c->name);
    return -1;
  }
  return 0;
}

static int check_shape(TfCtx *c, const IrOp *gemm, const IrOp *ar, int k) {
  const IrGemm *g = &gemm->gemm;
  IrSize *mn = ir_size_mul(c->r, g->m, g->n);
  if (!ir_size_equal(ar->coll.count, mn))
    return tf_fail(c, &ar->loc, "overlap: the AllReduce's count is not the GEMM's m * n; overlap "
                                "needs the collective to consume exactly the GEMM's output");
  if (!ir_size_equal(g->ldc, g->m))
    return tf_fail(c, &gemm->loc, "overlap: ldc differs from m, so the columns of C are not "
                                  "contiguous and cannot be chunked");
  if (g->n->kind == IR_SIZE_CONST && k > g->n->value)
    return tf_fail(c, &gemm->loc, "overlap: chunks=%d exceeds the GEMM's %ld columns", k, g->n->value);
  return 0;
}

static IrOp *chunk_clone(TfCtx *c, const IrOp *op, int chunk, int k, IrSize *unit) {
  IrOp *n = tf_clone(c, op);
  n->span.chunk = chunk;
  n->span.nchunks = k;
  n->span.unit = unit;
  return n;
}

// The kernels after the AllReduce that can run chunk by chunk (maximal prefix).
// One that writes the GEMM's A or B stops it: chunk c's copy would run on the
// second stream before chunk c + 1's GEMM reads A and B on the user's stream.
static int chunkable(TfCtx *c, const IrOp *gemm, const IrOp *ar, IrOp **chain) {
  int n = tf_chain(ar, ar->coll.out, chain, TF_MAX_CHAIN);
  for (int i = 0; i < n; i++)
    if (tf_writes(chain[i], gemm->gemm.a) || tf_writes(chain[i], gemm->gemm.b) ||
        tf_check_slice(c, "overlap", chain[i], ar, chain, n, false))
      return i;
  return n;
}

// gemm, (ops between), ar, chain...  ->  ops between, K x (gemm_c, ar_c, chain_c).
static IrOp *pipeline(TfCtx *c, IrOp *gemm, IrOp *ar, int k) {
  IrOp *chain[TF_MAX_CHAIN];
  int n = chunkable(c, gemm, ar, chain);
  IrOp *rest = n ? chain[n - 1]->next : ar->next;
  IrOp *head = gemm->next == ar ? NULL : gemm->next, **tail = &head;
  if (head) {
    IrOp *q = head;
    while (q->next != ar) q = q->next;
    tail = &q->next;
  }
  IrSize *unit = gemm->gemm.m;
  for (int ch = 0; ch < k; ch++) {
    *tail = chunk_clone(c, gemm, ch, k, unit);
    tail = &(*tail)->next;
    *tail = chunk_clone(c, ar, ch, k, unit);
    tail = &(*tail)->next;
    for (int i = 0; i < n; i++) {
      *tail = chunk_clone(c, chain[i], ch, k, unit);
      tail = &(*tail)->next;
    }
  }
  *tail = rest;
  tf_step(c, IR_CL_OVERLAP,
          "overlap: %s (%s:%u:%u) and the AllReduce of '%s' run in %d chunks of C's columns, "
          "pipelined on two streams, with %d kernel(s) per chunk; checked: C consumed only by the "
          "AllReduce, count = m * n, ldc = m",
          gemm->gemm.fn, gemm->loc.file ? gemm->loc.file : "?", gemm->loc.line, gemm->loc.col,
          gemm->gemm.c->name, k, n);
  return head;
}

int tf_overlap(TfCtx *c, const IrClause *cl) {
  int k = cl->chunks ? cl->chunks : 4;
  if (c->split)
    return tf_fail(c, &cl->loc, "overlap: write overlap before split (it chunks the AllReduce, "
                                "which split then splits chunk by chunk)");
  if (k < 2) return tf_fail(c, &cl->loc, "overlap: chunks=%d; at least 2 chunks are needed", k);
  if (k > IR_MAX_CHUNKS)
    return tf_fail(c, &cl->loc, "overlap: chunks=%d; the runtime pipelines at most %d chunks (COCONET_MAX_CHUNKS)",
                   k, IR_MAX_CHUNKS);
  int done = 0;
  for (IrOp **pp = &c->list; *pp; pp = &(*pp)->next) {
    IrOp *gemm = *pp;
    if (gemm->kind != IR_OP_GEMM || gemm->span.nchunks > 1) continue;
    IrOp *ar = find_allreduce(gemm);
    if (!ar) continue;
    if (check_between(c, gemm, ar) || check_shape(c, gemm, ar, k)) return -1;
    *pp = pipeline(c, gemm, ar, k);
    done++;
    while ((*pp)->next && (*pp)->next->span.nchunks == k) pp = &(*pp)->next;
  }
  if (!done)
    return tf_fail(c, &cl->loc, "overlap: no cuBLAS GEMM in region '%s' produces the input of an "
                                "ncclAllReduce", c->r->name);
  c->chunks = k;
  return 0;
}
