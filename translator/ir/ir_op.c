// ir_op.c: op builders (collectives, GEMMs, pointwise kernels, copies,
// memsets, events, opaque statements), clauses, spans and enum names.
#include "ir/ir.h"

#include <ctype.h>
#include <string.h>

static IrOp *new_op(IrRegion *r, IrOpKind kind, SrcRange range) {
  IrOp *op = ir_alloc(r, sizeof *op);
  op->kind = kind;
  op->id = ++r->nops;
  op->range = range;
  op->loc = range.begin;
  IrOp **tail = &r->ops;
  while (*tail) tail = &(*tail)->next;
  *tail = op;
  return op;
}

static void set_count(IrTensor *t, IrSize *count) { ir_tensor_count(t, count); }

IrOp *ir_op_collective(IrRegion *r, SrcRange range, const IrCollective *info) {
  IrOp *op = new_op(r, IR_OP_COLLECTIVE, range);
  IrCollective *c = &op->coll;
  *c = *info;
  c->dtype_text = ir_strdup(r, info->dtype_text);
  c->count_text = ir_strdup(r, info->count_text);
  c->comm = ir_strdup(r, info->comm);
  c->stream = ir_strdup(r, info->stream);
  c->wrapper = ir_strdup(r, info->wrapper);
  c->root = ir_strdup(r, info->root);
  c->peer = ir_strdup(r, info->peer);
  if (c->root) c->root_var = ir_var_get(r, c->root, IR_I32);
  if (c->kind == IR_ALLREDUCE || c->kind == IR_BROADCAST || c->kind == IR_REDUCE) {
    set_count(c->in, c->count);
    set_count(c->out, c->count);
  }
  if (c->kind == IR_SEND) set_count(c->in, c->count);
  if (c->kind == IR_RECV) set_count(c->out, c->count);
  if (c->in) ir_use_add(r, &op->reads, c->in, op->loc);
  if (c->out) ir_use_add(r, &op->writes, c->out, op->loc);
  return op;
}

// "&alpha" -> "alpha": cuBLAS takes scalars by pointer.
static const char *pointee(const char *text, const char *fallback) {
  if (!text) return fallback;
  return text[0] == '&' ? text + 1 : text;
}

IrOp *ir_op_gemm(IrRegion *r, SrcRange range, const IrGemm *info) {
  IrOp *op = new_op(r, IR_OP_GEMM, range);
  IrGemm *g = &op->gemm;
  *g = *info;
  g->fn = ir_strdup(r, info->fn);
  for (int i = 0; i < g->nargs; i++) g->args[i] = ir_strdup(r, info->args[i]);
  g->wrapper = ir_strdup(r, info->wrapper);
  g->alpha = ir_strdup(r, info->alpha);
  g->beta = ir_strdup(r, info->beta);
  if (!g->alpha_known) g->alpha_var = ir_var_get(r, pointee(g->alpha, "alpha"), IR_F32);
  if (!g->beta_known) g->beta_var = ir_var_get(r, pointee(g->beta, "beta"), IR_F32);
  if (g->compute == IR_VOID) g->compute = g->c && g->c->type == IR_F64 ? IR_F64 : IR_F32;
  set_count(g->a, ir_size_mul(r, g->lda, g->transa ? g->m : g->k));
  set_count(g->b, ir_size_mul(r, g->ldb, g->transb ? g->k : g->n));
  set_count(g->c, ir_size_mul(r, g->ldc, g->n));
  ir_use_add(r, &op->reads, g->a, op->loc);
  ir_use_add(r, &op->reads, g->b, op->loc);
  if (!g->beta_known || g->beta_value != 0) ir_use_add(r, &op->reads, g->c, op->loc);
  ir_use_add(r, &op->writes, g->c, op->loc);
  return op;
}

IrOp *ir_op_copy(IrRegion *r, SrcRange range, const IrCopy *info) {
  IrOp *op = new_op(r, IR_OP_COPY, range);
  op->copy = *info;
  op->copy.bytes_text = ir_strdup(r, info->bytes_text);
  op->copy.kind_text = ir_strdup(r, info->kind_text);
  op->copy.stream = ir_strdup(r, info->stream);
  set_count(info->src, info->count);
  set_count(info->dst, info->count);
  ir_use_add(r, &op->reads, info->src, op->loc);
  ir_use_add(r, &op->writes, info->dst, op->loc);
  return op;
}

IrOp *ir_op_memset(IrRegion *r, SrcRange range, const IrMemset *info) {
  IrOp *op = new_op(r, IR_OP_MEMSET, range);
  op->memset = *info;
  op->memset.bytes_text = ir_strdup(r, info->bytes_text);
  op->memset.stream = ir_strdup(r, info->stream);
  set_count(info->dst, info->count);
  ir_use_add(r, &op->writes, info->dst, op->loc);
  return op;
}

IrOp *ir_op_event(IrRegion *r, SrcRange range, const IrEvent *info) {
  IrOp *op = new_op(r, IR_OP_EVENT, range);
  op->event.wait = info->wait;
  op->event.event = ir_strdup(r, info->event);
  op->event.stream = ir_strdup(r, info->stream);
  return op;
}

IrOp *ir_op_opaque(IrRegion *r, SrcRange range, const char *text) {
  IrOp *op = new_op(r, IR_OP_OPAQUE, range);
  op->text = ir_strdup(r, text);
  return op;
}

void ir_note_opaque(const IrRegion *r) {
  for (const IrOp *op = r->ops; op; op = op->next)
    if (op->kind == IR_OP_OPAQUE && op->why_opaque) diag_note(&op->loc, "%s", op->why_opaque);
}

IrOp *ir_op_pointwise(IrRegion *r, SrcRange range, const IrPointwise *info) {
  IrOp *op = new_op(r, IR_OP_POINTWISE, range);
  IrPointwise *pw = &op->pw;
  pw->kernel = ir_strdup(r, info->kernel);
  pw->grid = ir_strdup(r, info->grid);
  pw->block = ir_strdup(r, info->block);
  pw->shmem = ir_strdup(r, info->shmem ? info->shmem : "0");
  pw->stream = ir_strdup(r, info->stream ? info->stream : "0");
  pw->args_text = ir_strdup(r, info->args_text);
  pw->count = info->count;
  pw->row = info->row;
  pw->row_roles = ir_strdup(r, info->row_roles);
  pw->row_loc = info->row_loc;
  pw->row_threads = info->row_threads;
  pw->row_fuse_why = ir_strdup(r, info->row_fuse_why);
  pw->row_fuse_loc = info->row_fuse_loc;
  return op;
}

//
// Clauses
//

IrClause *ir_clause_add(IrRegion *r, IrClauseKind kind, SrcLoc loc) {
  IrClause *c = ir_alloc(r, sizeof *c);
  c->kind = kind;
  c->loc = loc;
  IrClause **tail = &r->clauses;
  while (*tail) tail = &(*tail)->next;
  *tail = c;
  return c;
}

void ir_clause_add_arg(IrRegion *r, IrClause *c, const char *text, SrcLoc loc) {
  IrName *n = ir_alloc(r, sizeof *n);
  n->text = ir_strdup(r, text);
  n->loc = loc;
  IrName **tail = &c->args;
  while (*tail) tail = &(*tail)->next;
  *tail = n;
}

const char *ir_clause_name(IrClauseKind k) {
  static const char *names[] = {
      [IR_CL_SPLIT] = "split",     [IR_CL_REORDER] = "reorder", [IR_CL_SHARD] = "shard",
      [IR_CL_SCRATCH] = "scratch", [IR_CL_FUSE] = "fuse",       [IR_CL_OVERLAP] = "overlap",
      [IR_CL_AUTO] = "schedule(auto)", [IR_CL_REPLICATED] = "replicated",
      [IR_CL_PIPELINE] = "pipeline",
  };
  return names[k];
}

//
// Names of enumerators
//

const char *ir_coll_name(IrCollKind k) {
  static const char *names[] = {
      [IR_ALLREDUCE] = "AllReduce", [IR_REDUCESCATTER] = "ReduceScatter",
      [IR_ALLGATHER] = "AllGather", [IR_BROADCAST] = "Broadcast",
      [IR_REDUCE] = "Reduce",       [IR_SEND] = "Send",
      [IR_RECV] = "Recv",
  };
  return names[k];
}

static const char *red_names[] = {"none", "sum", "prod", "max", "min", "avg"};

const char *ir_op_title(const IrOp *op) {
  switch (op->kind) {
  case IR_OP_POINTWISE: return op->pw.kernel;
  case IR_OP_GEMM: return op->gemm.fn;
  case IR_OP_COLLECTIVE: return ir_coll_name(op->coll.kind);
  case IR_OP_COPY: return "cudaMemcpyAsync";
  case IR_OP_MEMSET: return "cudaMemsetAsync";
  case IR_OP_EVENT: return op->event.wait ? "cudaStreamWaitEvent" : "cudaEventRecord";
  case IR_OP_OPAQUE: return "statement";
  }
  return "?";
}

const char *ir_red_name(IrRedOp op) { return red_names[op]; }

IrRedOp ir_red_from_name(const char *nccl_name) {
  static const char *nccl[] = {"", "ncclSum", "ncclProd", "ncclMax", "ncclMin", "ncclAvg"};
  for (int i = 1; i < 6; i++)
    if (strcmp(nccl[i], nccl_name) == 0) return (IrRedOp)i;
  return IR_RED_NONE;
}

const char *ir_part_name(IrPart p) {
  static const char *names[] = {"all", "slice", "body", "tail"};
  return names[p];
}

void ir_span_bounds(const IrSpan *sp, long count, long unit, long grain, int rank, int nranks, long *lo,
                    long *hi) {
  long b = 0, l = count;
  if (sp->nchunks > 1) {
    long units = unit > 0 ? count / unit : count, q = units / sp->nchunks;
    b = sp->chunk * q * unit;
    l = sp->chunk == sp->nchunks - 1 ? count - b : q * unit;
  }
  long g = grain > 0 ? grain : 1, s = l / g / nranks * g;
  switch (sp->part) {
  case IR_PART_ALL: *lo = b; *hi = b + l; return;
  case IR_PART_SLICE: *lo = b + rank * s; *hi = b + (rank + 1) * s; return;
  case IR_PART_BODY: *lo = b; *hi = b + nranks * s; return;
  case IR_PART_TAIL: *lo = b + nranks * s; *hi = b + l; return;
  }
}

const char *ir_op_stream(const IrOp *op, char *buf, size_t len) {
  const char *s = NULL;
  switch (op->kind) {
  case IR_OP_COLLECTIVE: s = op->coll.stream; break;
  case IR_OP_POINTWISE: s = op->pw.stream; break;
  case IR_OP_COPY: s = op->copy.stream; break;
  case IR_OP_MEMSET: s = op->memset.stream; break;
  case IR_OP_EVENT: s = op->event.stream; break;
  case IR_OP_GEMM: case IR_OP_OPAQUE: return NULL;
  }
  if (!s) return NULL;
  size_t n = 0;
  for (; s && *s && n + 1 < len; s++)
    if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') buf[n++] = *s;
  buf[n] = '\0';
  if (n == 0 || strcmp(buf, "NULL") == 0 || strcmp(buf, "nullptr") == 0 || strcmp(buf, "(cudaStream_t)0") == 0)
    snprintf(buf, len, "0");
  return buf;
}

const char *ir_nccl_type_name(IrType t) {
  switch (t) {
  case IR_F32: return "ncclFloat";
  case IR_F16: return "ncclHalf";
  case IR_BF16: return "ncclBfloat16";
  case IR_F64: return "ncclDouble";
  case IR_I32: return "ncclInt32";
  case IR_I64: return "ncclInt64";
  case IR_U32: return "ncclUint32";
  case IR_U8: case IR_BOOL: return "ncclUint8";
  case IR_I8: return "ncclInt8";
  case IR_VOID: return "?";
  }
  return "?";
}

IrFusedForm ir_fused_form(const IrOp *op) {
  if (!op->fuse_group || op->span.nchunks > 1 || op->kind != IR_OP_COLLECTIVE) return IR_FUSED_NONE;
  if (op->generated && op->coll.kind == IR_REDUCESCATTER && op->span.part == IR_PART_BODY) return IR_FUSED_SPLIT;
  if (!op->generated && op->coll.kind == IR_ALLREDUCE && op->span.part == IR_PART_ALL) return IR_FUSED_ONESHOT;
  return IR_FUSED_NONE;
}

bool ir_opaque_mentions(const IrRegion *r, const char *text) {
  size_t n = strlen(text);
  for (const IrOp *op = r->ops; op; op = op->next) {
    if (op->kind != IR_OP_OPAQUE || !op->text) continue;
    for (const char *at = strstr(op->text, text); at; at = strstr(at + 1, text)) {
      bool start = at == op->text || !(isalnum((unsigned char)at[-1]) || at[-1] == '_');
      bool end = !(isalnum((unsigned char)at[n]) || at[n] == '_');
      if (start && end) return true;
    }
  }
  return false;
}
