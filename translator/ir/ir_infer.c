// ir_infer.c: versions and layout inference (CoCoNet's rules, see ir_infer in ir.h).
//
// A tensor's entry layout is decided first, from what is proven or declared:
//   - declared replicated(...)                                  REPLICATED
//   - declared shard(...): the replicated optimizer state, of    REPLICATED
//     which each rank keeps only its slice (every rank would
//     hold the same values there)
//   - read only by an AllGather (its input is this rank's slice) SLICED
//   - anything else                                             LOCAL
// Nothing is assumed identical on every rank because of how it is used: a
// bias read as t[i % K] or weights updated in place from reduced gradients
// are replicated in a data-parallel program only by the program's own
// invariant, which the region cannot see; the user declares it.
// Then the ops are walked in order; each write makes a new version whose
// layout follows from the op (see layout_of); a sum (atomicAdd) over a slice
// or the tail is LOCAL: each rank's partial sum. After an opaque statement
// (which may write anything) no buffer is replicated until an op writes it.
#include "ir/ir.h"

#include <stdlib.h>

typedef struct State {
  int *version;        // per tensor id: current version
  IrLayout *layout;    // per tensor id: layout of the current version
  const IrOp **origin; // per tensor id: the op that produced it (NULL: region entry)
} State;

// Report SLICED combined with LOCAL: the op, where the sliced value came from
// and where the local one is first used.
static void report_contradiction(const IrOp *op, const State *st) {
  const IrUse *sliced = NULL, *local = NULL;
  for (const IrUse *u = op->reads; u; u = u->next) {
    if (u->ref.layout == IR_LAYOUT_SLICED && !sliced) sliced = u;
    if (u->ref.layout == IR_LAYOUT_LOCAL && !local) local = u;
  }
  if (!sliced || !local) return;
  diag_error(&op->loc,
             "layout: '%s' combines sliced '%s' with local '%s'; a rank's slice cannot be "
             "combined with data that differs per rank",
             ir_op_title(op), sliced->ref.t->name, local->ref.t->name);
  const IrOp *from = st->origin[sliced->ref.t->id];
  if (from)
    diag_note(&from->loc, "'%s' is sliced by this %s", sliced->ref.t->name, ir_op_title(from));
  else
    diag_note(&sliced->ref.t->first_use, "'%s' is sliced on entry (an AllGather input)",
              sliced->ref.t->name);
  diag_note(&local->ref.t->first_use, "'%s' is local (differs per rank) from here",
            local->ref.t->name);
}

static IrLayout join_reads(const IrOp *op) {
  IrLayout l = IR_LAYOUT_REPLICATED;
  for (const IrUse *u = op->reads; u; u = u->next) l = ir_layout_join(l, u->ref.layout);
  return l;
}

// The layout of what op writes; IR_LAYOUT_NONE on a contradiction.
static IrLayout layout_of(const IrOp *op, const State *st) {
  bool slice_work = op->span.part == IR_PART_SLICE || op->span.part == IR_PART_TAIL;
  switch (op->kind) {
  case IR_OP_COLLECTIVE:
    switch (op->coll.kind) {
    case IR_ALLREDUCE:
      if (op->span.part == IR_PART_TAIL && st->layout[op->coll.out->id] == IR_LAYOUT_SLICED)
        return IR_LAYOUT_SLICED;
      return IR_LAYOUT_REPLICATED;
    case IR_REDUCESCATTER: return IR_LAYOUT_SLICED;
    case IR_ALLGATHER: case IR_BROADCAST: return IR_LAYOUT_REPLICATED;
    default: return IR_LAYOUT_LOCAL;
    }
  case IR_OP_MEMSET: return IR_LAYOUT_REPLICATED;
  case IR_OP_GEMM: case IR_OP_POINTWISE: case IR_OP_COPY: {
    IrLayout l = join_reads(op);
    return slice_work ? IR_LAYOUT_SLICED : l;
  }
  default: return IR_LAYOUT_LOCAL;
  }
}

// A sum over this rank's part of the elements: each rank holds its own partial sum.
static bool partial_sum(const IrOp *op, const IrTensor *t) {
  return (op->span.part == IR_PART_SLICE || op->span.part == IR_PART_TAIL) && ir_pw_sums_into(op, t);
}

// Walk list; 0 or the number of contradictions (reported when report is set).
static int walk(IrRegion *r, IrOp *list, State *st, bool report) {
  int errors = 0;
  for (IrTensor *t = r->tensors; t; t = t->next) {
    st->version[t->id] = 0;
    st->layout[t->id] = t->layout_in;
    st->origin[t->id] = NULL;
  }
  for (IrOp *op = list; op; op = op->next) {
    // A statement coconet does not see into may change any buffer: from there on
    // nothing is known to be the same on every rank until an op writes it.
    if (op->kind == IR_OP_OPAQUE && !op->error_check)
      for (IrTensor *t = r->tensors; t; t = t->next)
        if (st->layout[t->id] == IR_LAYOUT_REPLICATED) st->layout[t->id] = IR_LAYOUT_LOCAL;
    for (IrUse *u = op->reads; u; u = u->next) {
      u->ref.version = st->version[u->ref.t->id];
      u->ref.layout = st->layout[u->ref.t->id];
    }
    IrLayout l = layout_of(op, st);
    if (l == IR_LAYOUT_NONE) {
      errors++;
      if (report) report_contradiction(op, st);
      l = IR_LAYOUT_LOCAL;
    }
    for (IrUse *u = op->writes; u; u = u->next) {
      int id = u->ref.t->id;
      u->ref.version = ++st->version[id];
      u->ref.layout = st->layout[id] = partial_sum(op, u->ref.t) ? IR_LAYOUT_LOCAL : l;
      st->origin[id] = op;
    }
  }
  return errors;
}

static bool writes(const IrOp *op, const IrTensor *t) {
  for (const IrUse *u = op->writes; u; u = u->next)
    if (u->ref.t == t) return true;
  return false;
}

static const IrUse *find_read(const IrOp *op, const IrTensor *t) {
  for (const IrUse *u = op->reads; u; u = u->next)
    if (u->ref.t == t) return u;
  return NULL;
}

// Read only by AllGathers, never written before.
static bool gather_input(const IrRegion *r, const IrTensor *t) {
  bool read = false;
  for (const IrOp *op = r->ops; op; op = op->next) {
    if (writes(op, t)) return read;
    if (!find_read(op, t)) continue;
    if (op->kind != IR_OP_COLLECTIVE || op->coll.kind != IR_ALLGATHER) return false;
    read = true;
  }
  return read;
}

// Whether a clause of this kind names t.
static bool clause_names(const IrRegion *r, IrClauseKind kind, const IrTensor *t) {
  for (const IrClause *c = r->clauses; c; c = c->next)
    for (const IrName *n = c->args; n && c->kind == kind; n = n->next)
      if (ir_tensor_find(r, n->text) == t) return true;
  return false;
}

static IrLayout entry_layout(const IrRegion *r, const IrTensor *t) {
  if (t->replicated || clause_names(r, IR_CL_SHARD, t)) return IR_LAYOUT_REPLICATED;
  if (gather_input(r, t)) return IR_LAYOUT_SLICED;
  return IR_LAYOUT_LOCAL;
}

static State state_new(const IrRegion *r) {
  size_t n = (size_t)r->ntensors + 1;
  State st = {calloc(n, sizeof(int)), calloc(n, sizeof(IrLayout)), calloc(n, sizeof(IrOp *))};
  if (!st.version || !st.layout || !st.origin) COCONET_BUG("out of memory");
  return st;
}

static void state_free(State *st) {
  free(st->version);
  free(st->layout);
  free(st->origin);
}

// replicated(b, ...): mark the named buffers. One that only statements coconet
// does not see into use is no error here: what the schedule then cannot do is
// the first error, with its reason.
static int apply_replicated(IrRegion *r) {
  int errors = 0;
  for (const IrClause *c = r->clauses; c; c = c->next) {
    if (c->kind != IR_CL_REPLICATED) continue;
    for (const IrName *n = c->args; n; n = n->next) {
      IrTensor *t = ir_tensor_find(r, n->text);
      if (t) t->replicated = true;
      else if (!ir_opaque_mentions(r, n->text)) {
        diag_error(&n->loc, "replicated: '%s' is not a buffer used in region '%s'", n->text, r->name);
        if (!errors) ir_note_opaque(r);
        errors++;
      }
    }
  }
  return errors;
}

int ir_infer(IrRegion *r) {
  if (apply_replicated(r)) return -1;
  State st = state_new(r);
  for (IrTensor *t = r->tensors; t; t = t->next) {
    t->written = false;
    for (const IrOp *op = r->ops; op; op = op->next) t->written |= writes(op, t);
    t->layout_in = entry_layout(r, t);
  }
  int errors = walk(r, r->ops, &st, true);
  for (IrTensor *t = r->tensors; t; t = t->next) t->layout_out = t->layout_sched = st.layout[t->id];
  state_free(&st);
  r->inferred = errors == 0;
  return errors ? -1 : 0;
}

void ir_infer_sched(IrRegion *r) {
  State st = state_new(r);
  walk(r, r->sched, &st, false);
  for (IrTensor *t = r->tensors; t; t = t->next) t->layout_sched = st.layout[t->id];
  state_free(&st);
}
