// interp_coll.c: collectives (in rank order) and cuBLAS GEMMs for the interpreter.
#include "interp_impl.h"

#include <stdlib.h>

static IrVal combine(const IrCollective *c, IrType t, IrVal acc, IrVal v) {
  switch (c->red) {
  case IR_RED_PROD: return interp_arith(IR_MUL, t, acc, v);
  case IR_RED_MAX: return interp_arith(IR_GT, t, v, acc).i ? v : acc;
  case IR_RED_MIN: return interp_arith(IR_LT, t, v, acc).i ? v : acc;
  default: return interp_arith(IR_ADD, t, acc, v);
  }
}

// The reduction over ranks 0..N-1, in order, of in[j].
static IrVal reduce_at(Interp *in, const IrCollective *c, long j) {
  IrType t = c->in->type;
  IrRunTensor *rt = interp_tensor(in, c->in);
  IrVal acc = rt->data[0][j];
  for (int r = 1; r < in->nranks; r++) acc = combine(c, t, acc, rt->data[r][j]);
  if (c->red == IR_RED_AVG) acc = interp_arith(IR_DIV, t, acc, interp_convert((IrVal){.i = in->nranks}, IR_I64, t));
  return interp_convert(acc, t, c->out->type);
}

static IrVal *scratch(long n) {
  IrVal *v = calloc(n > 0 ? (size_t)n : 1, sizeof *v);
  if (!v) COCONET_BUG("out of memory");
  return v;
}

// AllReduce on a span (the same range on every rank).
static void allreduce(Interp *in, const IrOp *op) {
  const IrCollective *c = &op->coll;
  long lo, hi;
  interp_span(in, op, c->count, 0, &lo, &hi);
  if (!interp_in_bounds(in, c->in, lo, hi) || !interp_in_bounds(in, c->out, lo, hi)) return;
  IrVal *v = scratch(hi - lo);
  for (long j = lo; j < hi; j++) v[j - lo] = reduce_at(in, c, j);
  for (int r = 0; r < in->nranks; r++)
    for (long j = lo; j < hi; j++) interp_store(in, c->out, r, j, v[j - lo]);
  free(v);
}

// ReduceScatter: split's (in place on the body: rank r gets its slice at its
// offset) or the user's (NCCL: recvcount elements into a compact buffer).
static void reducescatter(Interp *in, const IrOp *op) {
  const IrCollective *c = &op->coll;
  bool user = op->span.part == IR_PART_ALL;
  long cnt = interp_size(in, c->count);
  for (int r = 0; r < in->nranks && !in->failed; r++) {
    long lo = r * cnt, hi = (r + 1) * cnt, out = 0;
    if (!user) {
      IrOp slice = *op;
      slice.span.part = IR_PART_SLICE;
      interp_span(in, &slice, c->count, r, &lo, &hi);
      out = lo;
    }
    if (!interp_in_bounds(in, c->in, lo, hi) || !interp_in_bounds(in, c->out, out, out + hi - lo)) return;
    IrVal *v = scratch(hi - lo);
    for (long j = lo; j < hi; j++) v[j - lo] = reduce_at(in, c, j);
    for (long j = lo; j < hi; j++) interp_store(in, c->out, r, out + j - lo, v[j - lo]);
    free(v);
  }
}

// AllGather: split's (slices in place on the body) or the user's (NCCL).
static void allgather(Interp *in, const IrOp *op) {
  const IrCollective *c = &op->coll;
  bool user = op->span.part == IR_PART_ALL;
  long cnt = interp_size(in, c->count);
  for (int r = 0; r < in->nranks && !in->failed; r++) {
    long lo = 0, hi = cnt, out = r * cnt;
    if (!user) {
      IrOp slice = *op;
      slice.span.part = IR_PART_SLICE;
      interp_span(in, &slice, c->count, r, &lo, &hi);
      out = lo;
    }
    if (!interp_in_bounds(in, c->in, lo, hi) || !interp_in_bounds(in, c->out, out, out + hi - lo)) return;
    IrVal *v = scratch(hi - lo);
    for (long j = lo; j < hi; j++) v[j - lo] = interp_convert(interp_tensor(in, c->in)->data[r][j], c->in->type, c->out->type);
    for (int q = 0; q < in->nranks; q++)
      for (long j = lo; j < hi; j++) interp_store(in, c->out, q, out + j - lo, v[j - lo]);
    free(v);
  }
}

static int root_of(Interp *in, const IrCollective *c) {
  long root = c->root_var ? (long)in->run->vars[c->root_var->id] : 0;
  return (int)(((root % in->nranks) + in->nranks) % in->nranks);
}

static void broadcast_or_reduce(Interp *in, const IrOp *op) {
  const IrCollective *c = &op->coll;
  long lo, hi;
  interp_span(in, op, c->count, 0, &lo, &hi);
  if (!interp_in_bounds(in, c->in, lo, hi) || !interp_in_bounds(in, c->out, lo, hi)) return;
  int root = root_of(in, c);
  IrVal *v = scratch(hi - lo);
  for (long j = lo; j < hi; j++)
    v[j - lo] = c->kind == IR_REDUCE ? reduce_at(in, c, j)
                                     : interp_convert(interp_tensor(in, c->in)->data[root][j], c->in->type, c->out->type);
  for (int r = 0; r < in->nranks; r++)
    for (long j = lo; j < hi && (c->kind == IR_BROADCAST || r == root); j++) interp_store(in, c->out, r, j, v[j - lo]);
  free(v);
}

// ncclSend: what each rank's peer receives is kept for the comparison. A
// pipeline send's peer r receives rank r's tail and every rank q's slice (q's
// own, received by q's peer and all-gathered on the receiving group).
static void send(Interp *in, const IrOp *op) {
  const IrCollective *c = &op->coll;
  long n = interp_size(in, c->count);
  if (!interp_in_bounds(in, c->in, 0, n)) return;
  IrRunTensor *rt = interp_tensor(in, c->in);
  IrRunMessage *m = interp_message(in, op, n);
  for (int r = 0; r < in->nranks; r++)
    for (long j = 0; j < n; j++) m->data[r][j] = rt->data[r][j];
  if (!c->pipe_tag) return;
  IrOp slice = *op;
  slice.span.part = IR_PART_SLICE;
  for (int q = 0; q < in->nranks; q++) {
    long lo, hi;
    interp_span(in, &slice, c->count, q, &lo, &hi);
    for (int r = 0; r < in->nranks; r++)
      for (long j = lo; j < hi; j++) m->data[r][j] = rt->data[q][j];
  }
}

// ncclRecv: the peer's data (interp_received), whole on every rank.
static void recv(Interp *in, const IrOp *op) {
  const IrCollective *c = &op->coll;
  long n = interp_size(in, c->count);
  if (!interp_in_bounds(in, c->out, 0, n)) return;
  int k = in->run->nrecv++;
  for (int r = 0; r < in->nranks; r++)
    for (long j = 0; j < n; j++) interp_store(in, c->out, r, j, interp_received(in, c->out, k, j));
}

void interp_collective(Interp *in, const IrOp *op) {
  switch (op->coll.kind) {
  case IR_ALLREDUCE: allreduce(in, op); return;
  case IR_REDUCESCATTER: reducescatter(in, op); return;
  case IR_ALLGATHER: allgather(in, op); return;
  case IR_BROADCAST: case IR_REDUCE: broadcast_or_reduce(in, op); return;
  case IR_SEND: send(in, op); return;
  case IR_RECV: recv(in, op); return;
  }
}

//
// GEMM: C = alpha op(A) op(B) + beta C, column-major, accumulated in order
// p = 0..k-1 in the compute type.
//

typedef struct Gemm {
  long m, n, k, lda, ldb, ldc;
  double alpha, beta;
} Gemm;

static double element(Interp *in, const IrTensor *t, int rank, long idx) {
  IrRunTensor *rt = interp_tensor(in, t);
  if (idx < 0 || idx >= rt->count) {
    interp_fail(in, "verify=ir: GEMM reads %s[%ld] beyond its %ld elements", t->name, idx, rt->count);
    return 0;
  }
  return interp_to_double(rt->data[rank][idx], t->type);
}

static double dot(Interp *in, const IrGemm *g, const Gemm *d, int rank, long row, long col) {
  double acc = 0;
  float facc = 0;
  for (long p = 0; p < d->k && !in->failed; p++) {
    double a = element(in, g->a, rank, g->transa ? p + row * d->lda : row + p * d->lda);
    double b = element(in, g->b, rank, g->transb ? col + p * d->ldb : p + col * d->ldb);
    if (g->compute == IR_F64) {
      double prod = a * b;
      acc = acc + prod;
    } else {
      float prod = (float)a * (float)b;
      facc = facc + prod;
    }
  }
  return g->compute == IR_F64 ? acc : facc;
}

static Gemm gemm_dims(Interp *in, const IrGemm *g) {
  const double *vals = in->run->vars;
  Gemm d = {interp_size(in, g->m), interp_size(in, g->n), interp_size(in, g->k), interp_size(in, g->lda),
            interp_size(in, g->ldb), interp_size(in, g->ldc), g->alpha_value, g->beta_value};
  if (!g->alpha_known) d.alpha = vals[g->alpha_var->id];
  if (!g->beta_known) d.beta = vals[g->beta_var->id];
  return d;
}

void interp_gemm(Interp *in, const IrOp *op) {
  const IrGemm *g = &op->gemm;
  Gemm d = gemm_dims(in, g);
  long c0 = 0, c1 = d.n;
  if (op->span.nchunks > 1) {
    long q = d.n / op->span.nchunks;
    c0 = op->span.chunk * q;
    c1 = op->span.chunk == op->span.nchunks - 1 ? d.n : c0 + q;
  }
  for (int r = 0; r < in->nranks && !in->failed; r++) {
    for (long col = c0; col < c1 && !in->failed; col++) {
      for (long row = 0; row < d.m && !in->failed; row++) {
        long idx = row + col * d.ldc;
        double v = d.alpha * dot(in, g, &d, r, row, col);
        if (d.beta != 0) v += d.beta * element(in, g->c, r, idx);
        if (g->compute != IR_F64) v = (float)v;
        interp_store(in, g->c, r, idx, interp_from_double(v, g->c->type));
      }
    }
  }
}
