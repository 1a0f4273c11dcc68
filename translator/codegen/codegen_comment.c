// codegen_comment.c: the comment a region's block starts with, which says its
// schedule in one line ("split reorder: ReduceScatter(g) -> adam on this rank's
// slice -> AllGather(w)"), and the flow text fused kernels are described by.
#include "codegen_impl.h"

static void flow_item(Buf *b, const IrOp *op, const IrOp *prev) {
  bool gather = op->kind == IR_OP_COLLECTIVE && op->coll.kind == IR_ALLGATHER && op->span.part == IR_PART_BODY;
  bool prev_gather = prev && prev->kind == IR_OP_COLLECTIVE && prev->coll.kind == IR_ALLGATHER &&
                     prev->span.part == IR_PART_BODY;
  if (gather && prev_gather) {
    b->len -= 1;  // "AllGather(w)" -> "AllGather(w, out)"
    b->s[b->len] = '\0';
    buf_printf(b, ", %s)", op->coll.out->name);
    return;
  }
  if (b->len) buf_puts(b, " -> ");
  switch (op->kind) {
  case IR_OP_COLLECTIVE: {
    const IrCollective *c = &op->coll;
    buf_printf(b, "%s(%s)", ir_coll_name(c->kind), (c->out ? c->out : c->in)->name);
    if (c->pipe_tag && c->kind == IR_SEND) buf_puts(b, " of this rank's slice");
    if (c->pipe_tag && c->kind == IR_RECV)
      buf_printf(b, " of the peer's slice -> AllGather(%s) on %s", c->out->name, c->pipe_group);
    break;
  }
  case IR_OP_POINTWISE: buf_puts(b, op->pw.kernel); break;
  case IR_OP_GEMM: buf_puts(b, op->gemm.fn); break;
  case IR_OP_COPY: buf_puts(b, "cudaMemcpyAsync"); break;
  case IR_OP_MEMSET: buf_puts(b, "cudaMemsetAsync"); break;
  case IR_OP_EVENT: buf_puts(b, op->event.wait ? "cudaStreamWaitEvent" : "cudaEventRecord"); break;
  case IR_OP_OPAQUE: buf_puts(b, "(statement)"); break;
  }
}

static bool skip_in_flow(const IrOp *op, const IrOp *prev) {
  if (op->span.part == IR_PART_TAIL) return true;  // said once, on its own line
  return cg_pointwise_run(op) && prev && cg_pointwise_run(prev) && prev->span.chunk == op->span.chunk;
}

static void flow_run(Buf *b, const IrOp **ops, int n, int at) {
  int i = at;
  bool slice = false;
  while (i < n && cg_pointwise_run(ops[i]) && ops[i]->span.chunk == ops[at]->span.chunk) slice |= ops[i++]->span.part == IR_PART_SLICE;
  const IrOp *seen[64];
  int nseen = 0;
  if (b->len) buf_puts(b, " -> ");
  for (int j = at; j < i; j++) {
    bool dup = false;
    for (int s = 0; s < nseen; s++) dup |= seen[s] == cg_orig(ops[j]);
    if (dup || nseen == 64) continue;
    seen[nseen++] = cg_orig(ops[j]);
    buf_printf(b, "%s%s", nseen > 1 ? " + " : "", ops[j]->pw.kernel);
  }
  buf_puts(b, !slice ? " on the chunk" : ops[at]->span.grain ? " on this rank's rows" : " on this rank's slice");
}

void cg_flow(Buf *b, const IrOp **ops, int n) {
  const IrOp *prev = NULL;
  for (int i = 0; i < n; prev = ops[i++]) {
    if (skip_in_flow(ops[i], prev)) continue;
    if (cg_pointwise_run(ops[i])) flow_run(b, ops, n, i);
    else flow_item(b, ops[i], prev);
  }
}

static void clauses_text(Buf *b, const IrRegion *r) {
  for (const IrClause *c = r->clauses; c; c = c->next) {
    buf_printf(b, "%s%s", c == r->clauses ? "" : " ", ir_clause_name(c->kind));
    if (c->kind == IR_CL_OVERLAP && c->chunks) buf_printf(b, "(chunks=%d)", c->chunks);
    if (c->kind == IR_CL_PIPELINE) buf_printf(b, "(tag=%s%s%s)", c->tag, c->group ? ", group=" : "", c->group ? c->group : "");
    for (const IrName *a = c->args; a; a = a->next) buf_printf(b, "%s%s%s", a == c->args ? "(" : ", ", a->text, a->next ? "" : ")");
  }
}

static bool has_tail(const IrOp **ops, int n) {
  for (int i = 0; i < n; i++)
    if (ops[i]->span.part == IR_PART_TAIL) return true;
  return false;
}

static bool in_rows(const IrOp **ops, int n) {
  for (int i = 0; i < n; i++)
    if (ops[i]->span.grain) return true;
  return false;
}

static bool has_tail_work(const IrOp **ops, int n) {
  for (int i = 0; i < n; i++)
    if (ops[i]->span.part == IR_PART_TAIL && ops[i]->kind == IR_OP_POINTWISE) return true;
  return false;
}

void cg_schedule_comment(Buf *out, const IrRegion *r, const IrOp **ops, int n) {
  Buf f = {0};
  clauses_text(out, r);
  for (int i = 0, j; i < n; i = j) {
    int k = ops[i]->span.nchunks;
    for (j = i; j < n && (ops[j]->span.nchunks > 1) == (k > 1); j++) {}
    if (k <= 1) {
      cg_flow(&f, &ops[i], j - i);
      continue;
    }
    int t = 0;
    while (t < j - i && ops[i + t]->span.chunk == 0) t++;
    Buf chunk = {0};
    cg_flow(&chunk, &ops[i], t);
    buf_printf(&f, "%sin %d chunks of %s's columns, each on a second stream after its GEMM: [%s]", f.len ? " -> " : "",
               k, ops[i]->kind == IR_OP_GEMM ? ops[i]->gemm.c->name : "C", buf_str(&chunk));
    buf_free(&chunk);
  }
  buf_printf(out, ": %s", buf_str(&f));
  if (has_tail(ops, n) && in_rows(ops, n))
    buf_printf(out, "\nthe rows left over (rows %% nranks, the tail) are all-reduced%s by every rank",
               has_tail_work(ops, n) ? " and computed" : "");
  else if (has_tail(ops, n))
    buf_printf(out, "\nthe count %% nranks elements left over (the tail) are all-reduced%s by every rank",
               has_tail_work(ops, n) ? " and computed" : "");
  buf_free(&f);
}
