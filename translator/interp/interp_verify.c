// interp_verify.c: comparing two runs and ir_verify (--verify=ir).
//
// What must agree: every tensor on every rank, except scratch tensors (not
// compared) and shard tensors (compared where the scheduled run computed them
// on a rank, i.e. that rank's slice and the tail, and every element the
// original wrote must have been computed by some rank); and what each
// ncclSend sends to each rank's peer (interp_coll.c).
//
// Tolerance: the interpreter reduces in rank order on both sides and slice
// work computes each element with the same operations, so the runs agree
// exactly unless a transformation is wrong; the tolerances only absorb what a
// different but legal reduction order would change (about one rounding of the
// type: f32 1e-5, f64 1e-12 relative; f16 1e-3 and bf16 8e-3, one ulp);
// integers must be exact. A sum (atomicAdd) on slices is the same sum in
// another order: the interpreter sums each op's part exactly and rounds once,
// so it too differs only by about a rounding per rank; what depends on it may
// cancel, so in such a region a float element is compared relative to the
// largest magnitude of its buffer (ir_sched_reassociates).
#include "interp_impl.h"

#include <math.h>
#include <stdlib.h>

static double tolerance(IrType t) {
  switch (t) {
  case IR_F32: return 1e-5;
  case IR_F64: return 1e-12;
  case IR_F16: return 1e-3;
  case IR_BF16: return 8e-3;
  default: return 0;
  }
}

// The difference relative to the larger value, or to floor when larger.
static double rel_error(IrType t, IrVal a, IrVal b, double floor) {
  if (!ir_type_is_float(t)) return a.i == b.i ? 0 : INFINITY;
  if (isnan(a.f) || isnan(b.f)) return isnan(a.f) && isnan(b.f) ? 0 : INFINITY;
  if (a.f == b.f) return 0;
  if (isinf(a.f) || isinf(b.f)) return INFINITY;
  double scale = fmax(fmax(fabs(a.f), fabs(b.f)), floor);
  return fabs(a.f - b.f) / (scale > 1e-30 ? scale : 1e-30);
}

// The largest finite magnitude of a tensor on any rank (the normwise scale).
static double magnitude(const IrRunTensor *x, int nranks, IrType t) {
  double m = 0;
  for (int r = 0; r < nranks && ir_type_is_float(t); r++)
    for (long j = 0; j < x->count; j++)
      if (isfinite(x->data[r][j].f)) m = fmax(m, fabs(x->data[r][j].f));
  return m;
}

typedef struct Mismatch {
  int rank;
  long idx;
  double err;
} Mismatch;

// Max relative error of one tensor; the worst element in *worst.
static double compare_tensor(const IrTensor *t, const IrRun *a, const IrRun *b, Mismatch *worst) {
  const IrRunTensor *x = &a->tensors[t->id - 1], *y = &b->tensors[t->id - 1];
  *worst = (Mismatch){-1, -1, 0};
  if (t->scratch) return 0;
  double floor = ir_sched_reassociates(t->region) ? magnitude(x, a->nranks, t->type) : 0;
  for (long j = 0; j < x->count; j++) {
    bool covered = false;
    for (int r = 0; r < a->nranks; r++) {
      if (t->shard && !y->written[r][j]) continue;
      covered = true;
      double e = rel_error(t->type, x->data[r][j], y->data[r][j], floor);
      if (e > worst->err || (worst->rank < 0 && e > 0)) *worst = (Mismatch){r, j, e};
    }
    if (t->shard && x->any_written[j] && !covered) {
      *worst = (Mismatch){0, j, INFINITY};
      return INFINITY;
    }
  }
  return worst->err;
}

double ir_run_compare(const IrRegion *r, const IrRun *a, const IrRun *b, const IrTensor **bad) {
  double max = 0;
  *bad = NULL;
  for (const IrTensor *t = r->tensors; t; t = t->next) {
    Mismatch m;
    double e = compare_tensor(t, a, b, &m);
    if (e > tolerance(t->type) && !*bad) *bad = t;
    if (e > max) max = e;
  }
  return max;
}

static void report_mismatch(FILE *f, const IrRegion *r, const IrTensor *t, const IrRun *a, const IrRun *b,
                            int nranks, int trial, uint64_t seed) {
  Mismatch m;
  compare_tensor(t, a, b, &m);
  if (!f) return;
  fprintf(f, "verify=ir %s: MISMATCH in '%s' with %d rank(s), trial %d (seed 0x%llx): ", r->name, t->name,
          nranks, trial, (unsigned long long)seed);
  if (m.err == INFINITY && t->shard && !b->tensors[t->id - 1].written[m.rank][m.idx])
    fprintf(f, "element %ld is computed by no rank\n", m.idx);
  else
    fprintf(f, "rank %d element %ld: %.9g as written, %.9g scheduled\n", m.rank, m.idx,
            ir_run_get(a, t, m.rank, m.idx), ir_run_get(b, t, m.rank, m.idx));
}

// What the k-th ncclSend sent, as written vs scheduled: 0 agree, 1 mismatch (reported).
static int compare_sent(const IrRegion *r, const IrRun *a, const IrRun *b, int k, double *err, FILE *f, int trial,
                        uint64_t seed) {
  const IrRunMessage *x = &a->sent[k], *y = &b->sent[k];
  const IrTensor *t = x->op->coll.in;
  Mismatch worst = {-1, -1, 0};
  for (int rank = 0; rank < a->nranks; rank++)
    for (long j = 0; j < x->count && j < y->count; j++) {
      double e = rel_error(t->type, x->data[rank][j], y->data[rank][j], 0);
      if (e > worst.err) worst = (Mismatch){rank, j, e};
    }
  if (worst.err > *err) *err = worst.err;
  if (worst.err <= tolerance(t->type) && x->count == y->count) return 0;
  if (f && worst.rank < 0)
    fprintf(f, "verify=ir %s: MISMATCH in what the ncclSend of '%s' (line %u) sends with %d rank(s), trial %d (seed "
               "0x%llx): %ld elements as written, %ld scheduled\n", r->name, t->name, x->op->loc.line, a->nranks, trial,
            (unsigned long long)seed, x->count, y->count);
  else if (f)
    fprintf(f, "verify=ir %s: MISMATCH in what the ncclSend of '%s' (line %u) sends with %d rank(s), trial %d (seed "
               "0x%llx): rank %d's peer receives %.9g as written, %.9g scheduled at element %ld\n", r->name, t->name,
            x->op->loc.line, a->nranks, trial, (unsigned long long)seed, worst.rank,
            interp_to_double(x->data[worst.rank][worst.idx], t->type),
            interp_to_double(y->data[worst.rank][worst.idx], t->type), worst.idx);
  return 1;
}

static uint64_t verify_seed(int nranks, int trial) {
  return 0x5eed0000ull + (uint64_t)nranks * 1000003ull + (uint64_t)trial * 7919ull;
}

// One configuration: 0 agree, 1 mismatch, -1 cannot run. errs[t->id] keeps maxima.
static int verify_one(const IrRegion *r, int nranks, int trial, double *errs, double *sent_err, FILE *report) {
  IrInterpConfig cfg = {.nranks = nranks, .seed = verify_seed(nranks, trial)};
  IrRun *a = ir_interp_run(r, false, &cfg), *b = a ? ir_interp_run(r, true, &cfg) : NULL;
  int rc = a && b ? 0 : -1;
  for (const IrTensor *t = r->tensors; t && rc == 0; t = t->next) {
    Mismatch m;
    double e = compare_tensor(t, a, b, &m);
    if (e > errs[t->id]) errs[t->id] = e;
    if (e > tolerance(t->type)) {
      report_mismatch(report, r, t, a, b, nranks, trial, cfg.seed);
      rc = 1;
    }
  }
  if (rc == 0 && a->nsent != b->nsent) COCONET_BUG("region '%s' sends %d times as written, %d scheduled", r->name,
                                                   a->nsent, b->nsent);
  for (int k = 0; rc == 0 && k < a->nsent; k++) rc = compare_sent(r, a, b, k, &sent_err[k], report, trial, cfg.seed);
  ir_run_free(a);
  ir_run_free(b);
  return rc;
}

// Whether the schedule is the region as written (nothing to compare).
static bool as_written(const IrRegion *r) {
  if (!r->sched) return true;  // --schedule=none, or nothing in the region
  const IrOp *o = r->ops;
  for (const IrOp *op = r->sched; op; op = op->next, o = o->next) {
    if (!o || op->orig != o || op->generated || op->fuse_group || op->span.part != IR_PART_ALL || op->span.nchunks > 1)
      return false;
    if (op->kind == IR_OP_COLLECTIVE && op->coll.pipe_tag) return false;
  }
  return o == NULL;
}

int ir_verify(const IrRegion *r, int max_ranks, int trials, FILE *report) {
  if (as_written(r)) {
    if (report) fprintf(report, "verify=ir %s: ok (the schedule leaves the region as written: nothing to compare)\n", r->name);
    return 0;
  }
  int nsends = 0;
  for (const IrOp *op = r->ops; op; op = op->next) nsends += op->kind == IR_OP_COLLECTIVE && op->coll.kind == IR_SEND;
  double *errs = calloc((size_t)r->ntensors + 1, sizeof *errs), *sent_err = calloc((size_t)nsends + 1, sizeof *errs);
  if (!errs || !sent_err) COCONET_BUG("out of memory");
  int rc = 0;
  for (int n = 1; n <= max_ranks && rc == 0; n++)
    for (int trial = 0; trial < trials && rc == 0; trial++) rc = verify_one(r, n, trial, errs, sent_err, report);
  if (!report || rc < 0) {
    free(errs);
    free(sent_err);
    return rc;
  }
  for (const IrTensor *t = r->tensors; t; t = t->next) {
    if (!t->written) continue;
    fprintf(report, "verify=ir %s: %s '%s' (%s): max relative error %.3g over 1..%d ranks x %d inputs%s\n", r->name,
            t->scratch ? "scratch" : t->shard ? "shard" : "output", t->name, ir_type_name(t->type), errs[t->id],
            max_ranks, trials, t->scratch ? " (not compared)" : "");
  }
  int k = 0;
  for (const IrOp *op = r->sched; op && rc == 0; op = op->next) {
    if (op->kind != IR_OP_COLLECTIVE || (op->coll.kind != IR_SEND && op->coll.kind != IR_RECV)) continue;
    if (op->coll.kind == IR_SEND)
      fprintf(report, "verify=ir %s: what the ncclSend of '%s' (line %u) sends%s: max relative error %.3g over 1..%d "
                      "ranks x %d inputs\n", r->name, op->coll.in->name, op->loc.line,
              op->coll.pipe_tag ? " (each rank's slice and the tail, as its peer's group assembles them)" : "",
              sent_err[k++], max_ranks, trials);
    else
      fprintf(report, "verify=ir %s: the ncclRecv of '%s' (line %u) is modelled as receiving the same data on every "
                      "rank%s\n", r->name, op->coll.out->name, op->loc.line,
              op->coll.pipe_tag ? " (what a pipeline sender sends); the host backend runs the exchange itself" : "");
  }
  for (const IrOp *op = r->ops; op && rc == 0; op = op->next)
    if (ir_pw_opaque(op))
      fprintf(report, "verify=ir %s: kernel '%s' calls %s, which the IR models as a fixed function of its "
                      "arguments (the data flow is checked, not its value); --verify runs its code\n", r->name,
              op->pw.kernel, ir_pw_opaque(op)->text);
  for (const IrOp *op = r->ops; op && rc == 0; op = op->next)
    if (op->kind == IR_OP_POINTWISE && op->pw.row)
      fprintf(report, "verify=ir %s: row-wise kernel '%s' is modelled (each output row a fixed function of the rows and "
                      "columns it reads); --verify runs its code\n", r->name, op->pw.kernel);
  for (const IrOp *op = r->sched; op && rc == 0; op = op->next) {
    const IrStmt *sum = op->span.part == IR_PART_SLICE ? ir_pw_reduction(op) : NULL;
    if (sum)
      fprintf(report, "verify=ir %s: kernel '%s' sums into '%s' on each rank's slice, then an AllReduce adds the partial "
                      "sums: the same sum in another order, %s\n", r->name, op->pw.kernel, sum->tensor->name,
              ir_type_is_float(sum->tensor->type) ? "so what depends on it is compared within the relative tolerance"
                                                  : "exact for integers");
  }
  for (const IrAssume *a = r->assumes; a && rc == 0; a = a->next)
    fprintf(report, "verify=ir %s: the schedule checked is for %s (the region runs as written otherwise)\n", r->name,
            a->test);
  if (rc == 0) fprintf(report, "verify=ir %s: ok\n", r->name);
  free(errs);
  free(sent_err);
  return rc;
}
