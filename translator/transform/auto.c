// auto.c: schedule(auto), the cheapest legal schedule by the cost model: each
// candidate clause list is applied to a copy, quietly, and costed.
#include "transform_impl.h"

enum { MAX_SEQ = 4 };

typedef struct Candidate {
  IrClauseKind seq[MAX_SEQ];
  int n;
  int chunks;  // for overlap
} Candidate;

static const Candidate base_candidates[] = {
    {{0}, 0, 0},
    {{IR_CL_SPLIT}, 1, 0},
    {{IR_CL_SPLIT, IR_CL_REORDER}, 2, 0},
    {{IR_CL_SPLIT, IR_CL_REORDER, IR_CL_FUSE}, 3, 0},
    {{IR_CL_FUSE}, 1, 0},
};

enum { NBASE = sizeof base_candidates / sizeof base_candidates[0] };

static void describe(const Candidate *cd, char *buf, size_t len) {
  int at = snprintf(buf, len, "%s", cd->n ? "" : "as written");
  for (int i = 0; i < cd->n && at < (int)len; i++) {
    if (cd->seq[i] == IR_CL_OVERLAP)
      at += snprintf(buf + at, len - (size_t)at, "%soverlap(chunks=%d)", i ? " " : "", cd->chunks);
    else at += snprintf(buf + at, len - (size_t)at, "%s%s", i ? " " : "", ir_clause_name(cd->seq[i]));
  }
}

// Apply a candidate to c (its list and state); 0 when legal.
static int apply_candidate(TfCtx *c, const Candidate *cd, SrcLoc loc) {
  for (int i = 0; i < cd->n; i++) {
    IrClause cl = {.kind = cd->seq[i], .loc = loc, .chunks = cd->chunks};
    if (tf_apply(c, &cl)) return -1;
  }
  return tf_finish(c);
}

static double try_candidate(TfCtx *c, const Candidate *cd, SrcLoc loc) {
  TfCtx probe = *c;
  probe.quiet = true;
  probe.steps = NULL;
  probe.list = tf_clone_list(c, c->list);
  if (apply_candidate(&probe, cd, loc)) return -1;
  return ir_cost_list(probe.list, c->model);
}

static int candidates(const TfCtx *c, Candidate *out) {
  int n = 0;
  bool gemm = false;
  for (const IrOp *op = c->list; op; op = op->next) gemm |= op->kind == IR_OP_GEMM;
  for (int i = 0; i < NBASE; i++) out[n++] = base_candidates[i];
  if (!gemm || c->split || c->chunks) return n;
  static const int ks[] = {2, 4, 8};
  for (int j = 0; j < 3; j++) {
    for (int i = 0; i < NBASE; i++) {
      Candidate cd = {{IR_CL_OVERLAP}, 1, ks[j]};
      for (int s = 0; s < base_candidates[i].n; s++) cd.seq[cd.n++] = base_candidates[i].seq[s];
      out[n++] = cd;
    }
  }
  return n;
}

int tf_auto(TfCtx *c, const IrClause *cl) {
  Candidate all[NBASE * 4];
  int n = candidates(c, all), best = -1;
  double best_cost = 0;
  char buf[160];
  for (int i = 0; i < n; i++) {
    double t = try_candidate(c, &all[i], cl->loc);
    describe(&all[i], buf, sizeof buf);
    if (t < 0) {
      tf_step(c, IR_CL_AUTO, "schedule(auto): %s: not legal here", buf);
      continue;
    }
    tf_step(c, IR_CL_AUTO, "schedule(auto): %s: predicted %.1f us", buf, t * 1e6);
    if (best < 0 || t < best_cost) {
      best = i;
      best_cost = t;
    }
  }
  if (best < 0) {
    tf_fail(c, &cl->loc, "schedule(auto): no candidate schedule is legal with the region's clauses");
    apply_candidate(c, &base_candidates[2], cl->loc);  // reports why split + reorder fails
    return -1;
  }
  describe(&all[best], buf, sizeof buf);
  tf_step(c, IR_CL_AUTO, "schedule(auto): chose %s (%.1f us)", buf, best_cost * 1e6);
  return apply_candidate(c, &all[best], cl->loc);
}
