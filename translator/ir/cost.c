// cost.c: the alpha-beta cost model (schedule(auto), --explain, --model=FILE).
//
// Collectives (ring algorithms, N ranks, B bytes of the whole buffer):
//   AllReduce                  2 (N-1)/N * B / link_bw + 2 (N-1) alpha
//   ReduceScatter, AllGather     (N-1)/N * B / link_bw +   (N-1) alpha
//   Broadcast, Reduce                      B / link_bw +   (N-1) alpha   (pipelined)
//   Send, Recv                             B / link_bw +         alpha
// link_bw is NCCL's "bus bandwidth" (nccl-tests busbw), which is exactly the
// quantity these formulas divide by.
// Kernels are memory bound: bytes moved / hbm_bw + launch. GEMMs take
// max(2 m n k / flops, bytes / hbm_bw) + launch.
// A fused group (one generated kernel) overlaps its communication and its
// memory traffic: max(sum of collective times, sum of kernel times) + one launch.
// The one-shot form's communication is every rank reading the N-1 other copies,
// (N-1) B / link_bw + alpha; above IR_ONESHOT_MAX_BYTES it runs as written and
// is priced so. Groups inside overlap chunks run unfused and are priced so.
// An overlapped GEMM + collective in K chunks is a two-stage pipeline:
//   A_0 + sum_{c=1..K-1} max(A_c, B_{c-1}) + B_{K-1}
// with A_c the GEMM chunk and B_c the collective and kernels of chunk c.
//
// Defaults: one node of 8 H200 GPUs on NVLink 4 / NVSwitch.
//   link_bw 450 GB/s: 900 GB/s bidirectional NVLink per GPU = 450 GB/s per
//     direction (NVIDIA H200 datasheet); nccl-tests report ~360-480 GB/s busbw
//     for large AllReduce on 8 x H100/H200, so the per-direction figure is used.
//   alpha 1 us per ring step: nccl-tests small-message AllReduce on 8 GPUs
//     takes ~15 us = 14 ring steps of about 1 us.
//   hbm_bw 4.0 TB/s: 4.8 TB/s HBM3e peak (datasheet), ~83% reached by
//     streaming kernels.
//   launch 3 us per kernel launch (typical CUDA launch + scheduling gap).
//   flops: 70% of datasheet dense peaks: BF16/FP16 989 -> 700 TFLOP/s,
//     TF32 494 -> 350 TFLOP/s (f32 GEMMs with tensor-op math), FP64 67 -> 47.
//   size variables: 16 Mi elements for a count, 4096 for a factor (m, n, k).
#include "common/text.h"
#include "ir/ir.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void ir_cost_default(IrCostModel *m) {
  memset(m, 0, sizeof *m);
  m->nranks = 8;
  m->link_bw = 450e9;
  m->alpha = 1e-6;
  m->hbm_bw = 4.0e12;
  m->launch = 3e-6;
  m->flops_f32 = 350e12;
  m->flops_f16 = 700e12;
  m->flops_f64 = 47e12;
  m->default_count = 16777216;
  m->default_dim = 4096;
}

double ir_cost_allreduce(const IrCostModel *m, double bytes) {
  int n = m->nranks;
  if (n <= 1 || bytes <= 0) return 0;
  return 2.0 * (n - 1) / n * bytes / m->link_bw + 2.0 * (n - 1) * m->alpha;
}

double ir_cost_reducescatter(const IrCostModel *m, double bytes) {
  int n = m->nranks;
  if (n <= 1 || bytes <= 0) return 0;
  return (double)(n - 1) / n * bytes / m->link_bw + (n - 1) * m->alpha;
}

//
// Sizes under the model
//

static double var_value(const IrCostModel *m, const IrVar *v, bool factor) {
  for (int i = 0; i < m->nsizes; i++)
    if (strcmp(m->sizes[i].name, v->text) == 0) return m->sizes[i].value;
  return factor ? m->default_dim : m->default_count;
}

static double size_value(const IrCostModel *m, const IrSize *s, bool factor) {
  if (!s) return 0;
  switch (s->kind) {
  case IR_SIZE_CONST: return (double)s->value;
  case IR_SIZE_VAR: return var_value(m, s->var, factor);
  case IR_SIZE_MUL: return size_value(m, s->lhs, true) * size_value(m, s->rhs, true);
  }
  return 0;
}

// Elements of a span of `count` elements (per rank).
static double span_elems(const IrCostModel *m, const IrSpan *sp, const IrSize *count) {
  double l = size_value(m, count, false), n = m->nranks;
  if (sp->nchunks > 1) l /= sp->nchunks;
  double s = l >= n ? (double)(long)(l / n) : 0;
  switch (sp->part) {
  case IR_PART_ALL: return l;
  case IR_PART_SLICE: return s;
  case IR_PART_BODY: return s * n;
  case IR_PART_TAIL: return l - s * n;
  }
  return l;
}

//
// Ops
//

static double collective_cost(const IrCostModel *m, const IrOp *op) {
  const IrCollective *c = &op->coll;
  double esize = ir_type_size(c->dtype), e = span_elems(m, &op->span, c->count);
  bool user = op->span.part == IR_PART_ALL;
  switch (c->kind) {
  case IR_ALLREDUCE: return ir_cost_allreduce(m, e * esize);
  case IR_REDUCESCATTER: case IR_ALLGATHER:
    return ir_cost_reducescatter(m, (user ? e * m->nranks : e) * esize);
  case IR_BROADCAST: case IR_REDUCE:
    return m->nranks > 1 ? e * esize / m->link_bw + (m->nranks - 1) * m->alpha : 0;
  case IR_SEND: case IR_RECV:
    if (!c->pipe_tag) return e * esize / m->link_bw + m->alpha;
    // pipeline: a header, then this rank's slice; the receiver gathers the slices
    return e / m->nranks * esize / m->link_bw + 2 * m->alpha +
           (c->kind == IR_RECV ? ir_cost_reducescatter(m, e * esize) : 0);
  }
  return 0;
}

static double pointwise_bytes(const IrOp *op) {
  double b = 0;
  for (const IrUse *u = op->reads; u; u = u->next)
    if (u->index == IR_IDX_I || u->index == IR_IDX_OTHER) b += ir_type_size(u->ref.t->type);
  for (const IrUse *u = op->writes; u; u = u->next) b += ir_type_size(u->ref.t->type);
  return b;
}

static double gemm_cost(const IrCostModel *m, const IrOp *op) {
  const IrGemm *g = &op->gemm;
  double mm = size_value(m, g->m, true), n = size_value(m, g->n, true), k = size_value(m, g->k, true);
  if (op->span.nchunks > 1) n /= op->span.nchunks;
  IrType t = g->c->type;
  double flops = t == IR_F64 ? m->flops_f64 : t == IR_F32 ? m->flops_f32 : m->flops_f16;
  bool beta = !g->beta_known || g->beta_value != 0;
  double bytes = (mm * k + k * n + mm * n * (beta ? 2 : 1)) * ir_type_size(t);
  double tc = 2 * mm * n * k / flops, tm = bytes / m->hbm_bw;
  return (tc > tm ? tc : tm) + m->launch;
}

// Time of one op without its launch overhead split out.
static double kernel_time(const IrCostModel *m, const IrOp *op) {
  switch (op->kind) {
  case IR_OP_POINTWISE: return span_elems(m, &op->span, op->pw.count) * pointwise_bytes(op) / m->hbm_bw;
  case IR_OP_COPY:
    return 2 * span_elems(m, &op->span, op->copy.count) * ir_type_size(op->copy.dst->type) / m->hbm_bw;
  case IR_OP_MEMSET:
    return span_elems(m, &op->span, op->memset.count) * ir_type_size(op->memset.dst->type) / m->hbm_bw;
  default: return 0;
  }
}

static bool empty_span(const IrCostModel *m, const IrOp *op) {
  const IrSize *count = op->kind == IR_OP_POINTWISE ? op->pw.count
                        : op->kind == IR_OP_COPY    ? op->copy.count
                        : op->kind == IR_OP_MEMSET  ? op->memset.count
                                                    : NULL;
  return count && span_elems(m, &op->span, count) <= 0;
}

double ir_cost_op(const IrOp *op, const IrCostModel *m) {
  switch (op->kind) {
  case IR_OP_COLLECTIVE: return collective_cost(m, op);
  case IR_OP_GEMM: return gemm_cost(m, op);
  case IR_OP_POINTWISE: case IR_OP_COPY: case IR_OP_MEMSET:
    return empty_span(m, op) ? 0 : kernel_time(m, op) + m->launch;
  case IR_OP_EVENT: case IR_OP_OPAQUE: return 0;
  }
  return 0;
}

// A fused group from op (its first op): *next gets what follows; < 0 when it
// is priced op by op (the one-shot form above its size limit).
static double fused_cost(const IrOp *op, const IrCostModel *m, const IrOp **next) {
  IrFusedForm form = ir_fused_form(op);
  double comm = 0, work = 0;
  const IrOp *q = op;
  for (; q && q->fuse_group == op->fuse_group; q = q->next) {
    if (q->kind == IR_OP_COLLECTIVE) comm += collective_cost(m, q);
    else work += kernel_time(m, q);
  }
  if (form == IR_FUSED_ONESHOT) {
    double bytes = span_elems(m, &op->span, op->coll.count) * ir_type_size(op->coll.dtype);
    if (bytes > IR_ONESHOT_MAX_BYTES) return -1;
    comm = m->nranks > 1 ? (m->nranks - 1) * bytes / m->link_bw + m->alpha : 0;
  }
  *next = q;
  return (comm > work ? comm : work) + m->launch;
}

// The cost of op, or of the fused group it starts; *next is what follows.
static double unit_cost(const IrOp *op, const IrCostModel *m, const IrOp **next) {
  if (ir_fused_form(op) != IR_FUSED_NONE) {
    double t = fused_cost(op, m, next);
    if (t >= 0) return t;
  }
  *next = op->next;
  return ir_cost_op(op, m);
}

// A run of chunked ops: GEMM chunks on one stream, the rest on the other.
static double pipeline_cost(const IrOp *op, const IrCostModel *m, const IrOp **next) {
  enum { MAXK = 64 };
  double a[MAXK] = {0}, b[MAXK] = {0};
  int k = op->span.nchunks < MAXK ? op->span.nchunks : MAXK;
  const IrOp *q = op;
  while (q && q->span.nchunks == op->span.nchunks) {
    const IrOp *after;
    double t = unit_cost(q, m, &after);
    int c = q->span.chunk < k ? q->span.chunk : k - 1;
    if (q->kind == IR_OP_GEMM) a[c] += t;
    else b[c] += t;
    q = after;
  }
  *next = q;
  double total = a[0];
  for (int c = 1; c < k; c++) total += a[c] > b[c - 1] ? a[c] : b[c - 1];
  return total + b[k - 1];
}

double ir_cost_list(const IrOp *list, const IrCostModel *m) {
  double total = 0;
  for (const IrOp *op = list; op;) {
    const IrOp *next;
    total += op->span.nchunks > 1 ? pipeline_cost(op, m, &next) : unit_cost(op, m, &next);
    op = next;
  }
  return total;
}

//
// Model files: `key = value` lines, '#' comments
//

static const struct {
  const char *key;
  double scale;
  size_t offset;
} keys[] = {
    {"link_bw_gbps", 1e9, offsetof(IrCostModel, link_bw)},
    {"alpha_us", 1e-6, offsetof(IrCostModel, alpha)},
    {"hbm_bw_gbps", 1e9, offsetof(IrCostModel, hbm_bw)},
    {"launch_us", 1e-6, offsetof(IrCostModel, launch)},
    {"tflops_f32", 1e12, offsetof(IrCostModel, flops_f32)},
    {"tflops_f16", 1e12, offsetof(IrCostModel, flops_f16)},
    {"tflops_f64", 1e12, offsetof(IrCostModel, flops_f64)},
    {"default_count", 1, offsetof(IrCostModel, default_count)},
    {"default_dim", 1, offsetof(IrCostModel, default_dim)},
};

static int set_key(IrCostModel *m, const SrcLoc *loc, const char *key, double v) {
  if (strcmp(key, "nranks") == 0) {
    if (v < 1 || v != (int)v) {
      diag_error(loc, "model: 'nranks' needs a positive integer");
      return -1;
    }
    m->nranks = (int)v;
    return 0;
  }
  if (strncmp(key, "size.", 5) == 0 && key[5]) {
    if (m->nsizes == (int)(sizeof m->sizes / sizeof m->sizes[0]) || strlen(key + 5) >= sizeof m->sizes[0].name) {
      diag_error(loc, "model: too many size entries or name too long ('%s')", key);
      return -1;
    }
    snprintf(m->sizes[m->nsizes].name, sizeof m->sizes[0].name, "%s", key + 5);
    m->sizes[m->nsizes++].value = v;
    return 0;
  }
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    if (strcmp(keys[i].key, key) != 0) continue;
    *(double *)((char *)m + keys[i].offset) = v * keys[i].scale;
    return 0;
  }
  diag_error(loc, "model: unknown key '%s'", key);
  return -1;
}

static int parse_line(IrCostModel *m, const SrcLoc *loc, char *line) {
  char *hash = strchr(line, '#');
  if (hash) *hash = 0;
  char *s = text_trim(line);
  if (!*s) return 0;
  char *eq = strchr(s, '=');
  if (!eq) {
    diag_error(loc, "model: expected 'key = value', got '%s'", s);
    return -1;
  }
  *eq = 0;
  char *key = text_trim(s), *val = text_trim(eq + 1), *end;
  errno = 0;
  double v = strtod(val, &end);
  if (!*val || *end || errno || !(v > 0)) {
    diag_error(loc, "model: '%s' needs a positive number, got '%s'", key, val);
    return -1;
  }
  return set_key(m, loc, key, v);
}

int ir_cost_parse(IrCostModel *m, const char *path, const char *text) {
  int errors = 0;
  unsigned line = 1;
  for (const char *p = text; *p; line++) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    char *buf = malloc(len + 1);
    if (!buf) COCONET_BUG("out of memory");
    memcpy(buf, p, len);
    buf[len] = 0;
    SrcLoc loc = {path, line, 1, (unsigned)(p - text)};
    errors += parse_line(m, &loc, buf) != 0;
    free(buf);
    p += len + (eol != NULL);
  }
  return errors ? -1 : 0;
}

int ir_cost_load(IrCostModel *m, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    diag_error(NULL, "model: cannot read '%s': %s", path, strerror(errno));
    return -1;
  }
  char *text = NULL;
  size_t cap = 0, len = 0;
  for (;;) {
    if (len + 4096 + 1 > cap) {
      cap = cap * 2 + 8192;
      char *grown = realloc(text, cap);
      if (!grown) COCONET_BUG("out of memory");
      text = grown;
    }
    size_t got = fread(text + len, 1, cap - len - 1, f);
    len += got;
    if (got == 0) break;
  }
  fclose(f);
  text[len] = 0;
  int rc = ir_cost_parse(m, path, text);
  free(text);
  return rc;
}
