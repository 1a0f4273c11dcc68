// interp.c: the reference interpreter. One region runs for N simulated ranks
// in one process: every tensor has one array per rank; collectives combine the
// ranks' arrays in rank order (deterministic, so the original and the
// scheduled program reduce in the same order and agree exactly); kernels run
// element by element in index order.
//
// Inputs come from the seed: variables (sizes small, down to 1..3, often not
// divisible by N; scalars in [0.05, 1) or small integers), tensor contents
// (floats in [0, 1), integers in [-8, 8)), identical on every rank for tensors
// that are replicated at region entry and different per rank otherwise.
// Collectives written by the user follow NCCL (out-of-place, compact slices);
// those created by split work in place on spans (see IrSpan in ir.h).
#include "interp_impl.h"
#include "common/text.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static double uniform(uint64_t h) { return (double)(h >> 11) / 9007199254740992.0; }

//
// Variables
//

static const IrBinding *pinned(const IrInterpConfig *cfg, const IrVar *v) {
  for (int i = 0; i < cfg->nbind; i++)
    if (strcmp(cfg->bind[i].text, v->text) == 0) return &cfg->bind[i];
  return NULL;
}

static double draw_var(const IrInterpConfig *cfg, const IrVar *v, long max) {
  uint64_t h = mix(cfg->seed ^ mix((uint64_t)v->id * 7919));
  if (v->is_size) {
    long range = (cfg->seed % 3 == 0) ? 3 : (cfg->seed % 3 == 1) ? 64 : max;
    return 1 + (double)(h % (uint64_t)range);
  }
  if (ir_type_is_float(v->type)) return 0.05 + 0.95 * uniform(h);
  return 1 + (double)(h % 8);
}

// A tensor's elements: the largest count the region's ops use it with.
static long tensor_count(const IrTensor *t, const double *vals) {
  long c = t->count ? ir_size_eval(t->count, vals) : 0;
  for (int i = 0; i < t->nalso; i++) {
    long o = ir_size_eval(t->also[i], vals);
    if (o > c) c = o;
  }
  return c;
}

static long max_count(const IrRegion *r, const double *vals) {
  long m = 0;
  for (const IrTensor *t = r->tensors; t; t = t->next) {
    long c = tensor_count(t, vals);
    if (c > m) m = c;
  }
  return m;
}

// A variable the schedule assumes equal to another takes its value.
static void same_values(const IrRegion *r, double *vals) {
  for (const IrVar *v = r->vars; v; v = v->next)
    if (v->same) vals[v->id] = vals[v->same->id];
}

// Draw the variables; halve the largest free size until every tensor fits.
static void bind_vars(const IrRegion *r, const IrInterpConfig *cfg, double *vals, long max) {
  for (const IrVar *v = r->vars; v; v = v->next) {
    const IrBinding *b = pinned(cfg, v);
    vals[v->id] = b ? b->value : draw_var(cfg, v, max);
  }
  same_values(r, vals);
  while (max_count(r, vals) > max) {
    const IrVar *big = NULL;
    for (const IrVar *v = r->vars; v; v = v->next)
      if (v->is_size && !v->same && !pinned(cfg, v) && vals[v->id] > 1 && (!big || vals[v->id] > vals[big->id]))
        big = v;
    if (!big) return;
    vals[big->id] = (double)((long)vals[big->id] / 2);
    same_values(r, vals);
  }
}

//
// Memory
//

static IrVal value_of(const IrTensor *t, uint64_t h) {
  IrVal v;
  if (ir_type_is_float(t->type)) v.f = ir_round(t->type, uniform(h));
  else if (t->type == IR_BOOL) v.i = (int64_t)(h % 2);
  else v.i = t->type == IR_U32 || t->type == IR_U8 ? (int64_t)(h % 16) : (int64_t)(h % 16) - 8;
  return v;
}

static IrVal initial(const IrTensor *t, int rank, long j, uint64_t seed) {
  bool same = t->layout_in == IR_LAYOUT_REPLICATED;
  return value_of(t, mix(seed ^ mix((uint64_t)t->id << 40 ^ (uint64_t)(same ? 0 : rank + 1) << 32 ^ (uint64_t)j)));
}

IrVal interp_received(const Interp *in, const IrTensor *t, int k, long j) {
  return value_of(t, mix(in->run->seed ^ mix(0x7265637600000000ull ^ (uint64_t)k << 40 ^ (uint64_t)j)));
}

IrRunMessage *interp_message(Interp *in, const IrOp *op, long count) {
  IrRun *run = in->run;
  run->sent = realloc(run->sent, (size_t)(run->nsent + 1) * sizeof *run->sent);
  if (!run->sent) COCONET_BUG("out of memory");
  IrRunMessage *m = &run->sent[run->nsent++];
  *m = (IrRunMessage){op, count, xcalloc((size_t)run->nranks, sizeof *m->data)};
  for (int r = 0; r < run->nranks; r++) m->data[r] = xcalloc((size_t)(count > 0 ? count : 1), sizeof(IrVal));
  return m;
}

static void alloc_tensor(IrRunTensor *rt, const IrTensor *t, int nranks, uint64_t seed) {
  rt->t = t;
  rt->init = xcalloc((size_t)nranks, sizeof *rt->init);
  rt->data = xcalloc((size_t)nranks, sizeof *rt->data);
  rt->written = xcalloc((size_t)nranks, sizeof *rt->written);
  rt->any_written = xcalloc((size_t)rt->count, sizeof(bool));
  for (int r = 0; r < nranks; r++) {
    rt->init[r] = xcalloc((size_t)rt->count, sizeof(IrVal));
    rt->data[r] = xcalloc((size_t)rt->count, sizeof(IrVal));
    rt->written[r] = xcalloc((size_t)rt->count, sizeof(bool));
    for (long j = 0; j < rt->count; j++) rt->init[r][j] = rt->data[r][j] = initial(t, r, j, seed);
  }
}

void ir_run_free(IrRun *run) {
  if (!run) return;
  for (int k = 0; k < run->ntensors; k++) {
    IrRunTensor *rt = &run->tensors[k];
    for (int r = 0; rt->init && r < run->nranks; r++) {
      free(rt->init[r]);
      free(rt->data[r]);
      free(rt->written[r]);
    }
    free(rt->init);
    free(rt->data);
    free(rt->written);
    free(rt->any_written);
  }
  for (int k = 0; k < run->nsent; k++) {
    for (int r = 0; r < run->nranks; r++) free(run->sent[k].data[r]);
    free(run->sent[k].data);
  }
  free(run->sent);
  free(run->tensors);
  free(run->vars);
  free(run);
}

static IrRun *run_new(const IrRegion *r, const IrInterpConfig *cfg) {
  IrRun *run = xcalloc(1, sizeof *run);
  run->nranks = cfg->nranks;
  run->seed = cfg->seed;
  run->nvars = r->nvars;
  run->vars = xcalloc((size_t)r->nvars + 1, sizeof(double));
  bind_vars(r, cfg, run->vars, cfg->max_elems > 0 ? cfg->max_elems : 4000);
  run->ntensors = r->ntensors;
  run->tensors = xcalloc((size_t)r->ntensors, sizeof *run->tensors);
  for (const IrTensor *t = r->tensors; t; t = t->next) {
    long count = tensor_count(t, run->vars);
    run->tensors[t->id - 1].count = count < 0 ? 0 : count;
    alloc_tensor(&run->tensors[t->id - 1], t, cfg->nranks, cfg->seed);
  }
  return run;
}

double ir_run_get(const IrRun *run, const IrTensor *t, int rank, long idx) {
  return interp_to_double(run->tensors[t->id - 1].data[rank][idx], t->type);
}

double ir_run_init(const IrRun *run, const IrTensor *t, int rank, long idx) {
  return interp_to_double(run->tensors[t->id - 1].init[rank][idx], t->type);
}

//
// Ops
//

IrRunTensor *interp_tensor(Interp *in, const IrTensor *t) { return &in->run->tensors[t->id - 1]; }

static bool slice_work(const IrOp *op) {
  if (op->span.part == IR_PART_SLICE || op->span.part == IR_PART_TAIL) return true;
  return op->kind == IR_OP_COLLECTIVE && op->coll.kind == IR_REDUCESCATTER && op->span.part == IR_PART_BODY;
}

void interp_store(Interp *in, const IrTensor *t, int rank, long j, IrVal v) {
  IrRunTensor *rt = interp_tensor(in, t);
  if (j < 0 || j >= rt->count) {
    interp_fail(in, "verify=ir: '%s' writes %s[%ld] out of bounds (%ld elements)", ir_op_title(in->op), t->name, j,
                rt->count);
    return;
  }
  rt->data[rank][j] = v;
  rt->any_written[j] = true;
  if (slice_work(in->op)) rt->written[rank][j] = true;
}

bool interp_in_bounds(Interp *in, const IrTensor *t, long lo, long hi) {
  if (lo >= hi) return true;
  if (lo >= 0 && hi <= interp_tensor(in, t)->count) return true;
  interp_fail(in, "verify=ir: '%s' touches %s[%ld, %ld) beyond its %ld elements", ir_op_title(in->op), t->name,
              lo, hi, interp_tensor(in, t)->count);
  return false;
}

long interp_size(Interp *in, const IrSize *s) { return s ? ir_size_eval(s, in->run->vars) : 0; }

void interp_span(Interp *in, const IrOp *op, const IrSize *count, int rank, long *lo, long *hi) {
  long unit = op->span.unit ? interp_size(in, op->span.unit) : 1;
  long grain = op->span.grain ? interp_size(in, op->span.grain) : 1;
  ir_span_bounds(&op->span, interp_size(in, count), unit, grain, rank, in->nranks, lo, hi);
}

// A sum (IR_S_REDUCE) over the op's elements on one rank: exact for integers
// (wrapping as the GPU does), in long double for floats; added to the
// accumulator and rounded once, at the end of the op (the GPU's order is not defined).
typedef struct Sum {
  const IrStmt *s;
  long double f;
  int64_t i;
} Sum;

enum { INTERP_MAX_SUMS = 16 };

static void add_sums(Interp *in, const Sum *sums, int nsums, int rank) {
  for (int k = 0; k < nsums && !in->failed; k++) {
    const IrTensor *t = sums[k].s->tensor;
    long at = interp_size(in, sums[k].s->target->k);
    if (!interp_in_bounds(in, t, at, at + 1)) return;
    IrVal v = interp_tensor(in, t)->data[rank][at];
    if (ir_type_is_float(t->type)) v.f = (double)((long double)v.f + sums[k].f);
    else v.i = (int64_t)((uint64_t)v.i + (uint64_t)sums[k].i);
    interp_store(in, t, rank, at, interp_convert(v, t->type, t->type));
  }
}

static void run_pointwise(Interp *in, const IrOp *op) {
  Sum sums[INTERP_MAX_SUMS];
  int nsums = 0;
  for (const IrStmt *s = op->pw.body; s; s = s->next)
    if (s->kind == IR_S_REDUCE && nsums < INTERP_MAX_SUMS) sums[nsums++] = (Sum){s, 0, 0};
    else if (s->kind == IR_S_REDUCE) interp_fail(in, "verify=ir: kernel '%s' has more than %d sums", op->pw.kernel,
                                                 INTERP_MAX_SUMS);
  for (int r = 0; r < in->nranks && !in->failed; r++) {
    long lo, hi;
    interp_span(in, op, op->pw.count, r, &lo, &hi);
    in->rank = r;
    for (int k = 0; k < nsums; k++) sums[k].f = 0, sums[k].i = 0;
    for (in->i = lo; in->i < hi && !in->failed; in->i++) {
      in->nlets = 0;
      int k = 0;
      for (const IrStmt *s = op->pw.body; s && !in->failed; s = s->next) {
        IrVal v = interp_eval(in, s->value);
        if (s->kind == IR_S_STORE) {
          interp_store(in, s->tensor, r, in->i, interp_convert(v, s->value->type, s->tensor->type));
        } else if (s->kind == IR_S_REDUCE) {
          IrVal x = interp_convert(v, s->value->type, s->tensor->type);
          if (ir_type_is_float(s->tensor->type)) sums[k].f += x.f;
          else sums[k].i = (int64_t)((uint64_t)sums[k].i + (uint64_t)x.i);
          k++;
        } else if (in->nlets < INTERP_MAX_LETS) {
          in->lets[in->nlets] = s;
          in->let_vals[in->nlets++] = v;
        } else {
          interp_fail(in, "verify=ir: kernel '%s' has more than %d locals", op->pw.kernel, INTERP_MAX_LETS);
        }
      }
    }
    // The tail is computed by every rank, but its sum is added by rank 0 only.
    if (op->span.part != IR_PART_TAIL || r == 0) add_sums(in, sums, nsums, r);
  }
}

// The value a row-wise kernel's read gives for column j of the row at b.
static double row_read(Interp *in, const IrUse *u, int rank, long b, long row, long j) {
  const IrRunTensor *rt = interp_tensor(in, u->ref.t);
  long at = u->index == IR_IDX_I ? b + j : u->index == IR_IDX_MOD ? j : u->index == IR_IDX_DIV ? b / row : 0;
  if (u->index == IR_IDX_CONST && u->expr) at = interp_size(in, u->expr->k);
  if (at < 0 || at >= rt->count) {
    interp_fail(in, "verify=ir: '%s' reads %s[%ld] out of bounds (%ld elements)", ir_op_title(in->op), u->ref.t->name, at,
                rt->count);
    return 0;
  }
  return interp_to_double(rt->data[rank][at], u->ref.t->type);
}

// A row-wise kernel's body is the user's code, which the interpreter does not
// run (--verify does). It stands for a fixed function of what the
// analysis proved each output row may depend on: the same row of the buffers
// read at [i], the columns of those read at [i % row], one element of those
// read at [i / row] or [K]. Every output element depends on every input
// element of its row and on its column (a per-row output, [row], on its whole
// row), so a schedule that gives a row the wrong data, or misses or repeats a
// row, changes the result.
static void run_rowwise(Interp *in, const IrOp *op) {
  long row = interp_size(in, op->pw.row);
  int nout = 0;
  for (const IrUse *w = op->writes; w; w = w->next) nout++;
  double *vals = calloc((size_t)(row > 0 ? row : 1) * (size_t)(nout ? nout : 1), sizeof *vals);
  if (!vals) COCONET_BUG("out of memory");
  for (int r = 0; r < in->nranks && !in->failed; r++) {
    long lo, hi;
    interp_span(in, op, op->pw.count, r, &lo, &hi);
    in->rank = r;
    if (row <= 0 || lo % row || hi % row) {
      interp_fail(in, "verify=ir: row-wise kernel '%s' runs on elements [%ld, %ld), not whole rows of %ld", op->pw.kernel,
                  lo, hi, row);
      break;
    }
    for (long b = lo; b < hi && !in->failed; b += row) {
      double mix = 0;
      int k = 0;
      for (const IrUse *u = op->reads; u; u = u->next, k++)
        for (long j = 0; j < row; j++) mix += row_read(in, u, r, b, row, j) / (double)(1 + (k * 7 + j * 3) % 11);
      mix /= (double)row;
      int m = 0;
      for (const IrUse *w = op->writes; w; w = w->next, m++)
        for (long j = 0; j < row; j++) {
          double own = 0;
          k = 0;
          for (const IrUse *u = op->reads; u; u = u->next, k++) own += (double)(k + 1) * row_read(in, u, r, b, row, j);
          vals[m * row + j] = (double)(m + 1) * mix + own / (double)(m + 2) + (double)(j % 5) / 8.0;
        }
      m = 0;
      for (const IrUse *w = op->writes; w && !in->failed; w = w->next, m++) {
        if (w->index == IR_IDX_DIV) {  // a per-row output: one value from the whole row
          double v = 0;
          for (long j = 0; j < row; j++) v += vals[m * row + j] / (double)(1 + j % 3);
          interp_store(in, w->ref.t, r, b / row, interp_from_double(v / (double)row, w->ref.t->type));
          continue;
        }
        for (long j = 0; j < row; j++)
          interp_store(in, w->ref.t, r, b + j, interp_from_double(vals[m * row + j], w->ref.t->type));
      }
    }
  }
  free(vals);
}

static void run_copy(Interp *in, const IrOp *op) {
  const IrCopy *c = &op->copy;
  for (int r = 0; r < in->nranks && !in->failed; r++) {
    long lo, hi;
    interp_span(in, op, c->count, r, &lo, &hi);
    if (!interp_in_bounds(in, c->src, lo, hi) || !interp_in_bounds(in, c->dst, lo, hi)) return;
    for (long j = lo; j < hi; j++)
      interp_store(in, c->dst, r, j, interp_convert(interp_tensor(in, c->src)->data[r][j], c->src->type, c->dst->type));
  }
}

// Every byte of each element set to value, read back as the element type.
static IrVal memset_value(IrType t, int value) {
  unsigned char bytes[8];
  memset(bytes, value, sizeof bytes);
  uint64_t u = 0;
  memcpy(&u, bytes, sizeof u);
  IrVal v;
  switch (t) {
  case IR_F32: { float f; memcpy(&f, bytes, 4); v.f = f; break; }
  case IR_F64: { double d; memcpy(&d, bytes, 8); v.f = d; break; }
  case IR_F16: case IR_BF16: v.f = value == 0 ? 0.0 : ir_round(t, (double)(u & 0xffff)); break;
  case IR_I32: v.i = (int32_t)(uint32_t)u; break;
  case IR_U32: v.i = (uint32_t)u; break;
  case IR_U8: case IR_BOOL: v.i = (uint8_t)u; break;
  case IR_I8: v.i = (int8_t)(uint8_t)u; break;
  default: v.i = (int64_t)u; break;
  }
  return v;
}

static void run_memset(Interp *in, const IrOp *op) {
  const IrMemset *m = &op->memset;
  if ((m->dst->type == IR_F16 || m->dst->type == IR_BF16) && m->value != 0) {
    interp_fail(in, "verify=ir: cudaMemsetAsync of a 16-bit float buffer to a non-zero byte is not modelled");
    return;
  }
  for (int r = 0; r < in->nranks && !in->failed; r++) {
    long lo, hi;
    interp_span(in, op, m->count, r, &lo, &hi);
    if (!interp_in_bounds(in, m->dst, lo, hi)) return;
    for (long j = lo; j < hi; j++) interp_store(in, m->dst, r, j, memset_value(m->dst->type, m->value));
  }
}

static void run_op(Interp *in, const IrOp *op) {
  in->op = op;
  switch (op->kind) {
  case IR_OP_COLLECTIVE: interp_collective(in, op); return;
  case IR_OP_GEMM: interp_gemm(in, op); return;
  case IR_OP_POINTWISE:
    if (op->pw.row) run_rowwise(in, op);
    else run_pointwise(in, op);
    return;
  case IR_OP_COPY: run_copy(in, op); return;
  case IR_OP_MEMSET: run_memset(in, op); return;
  case IR_OP_EVENT: case IR_OP_OPAQUE: return;
  }
}

IrRun *ir_interp_run(const IrRegion *r, bool scheduled, const IrInterpConfig *cfg) {
  Interp in = {.r = r, .nranks = cfg->nranks};
  in.run = run_new(r, cfg);
  for (const IrOp *op = scheduled ? r->sched : r->ops; op && !in.failed; op = op->next) run_op(&in, op);
  if (in.failed) {
    ir_run_free(in.run);
    return NULL;
  }
  return in.run;
}
