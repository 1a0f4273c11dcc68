// codegen.c: a scheduled region (region->sched) becomes CUDA C++ text.
//
// The region's statement is replaced by a block that runs the schedule, in
// order, on the user's stream, communicator and error-check wrappers:
//
//   - arguments with side effects (IrHoist) are evaluated once, first, into
//     const locals that every use reads;
//   - ops that no clause changed are copied as written;
//   - split's collectives run on their spans of the buffer, with
//     rank, rank count (coconet_comm_info) and spans (coconet_part_of, the
//     formulas of ir_span_bounds) from runtime/include/coconet.h:
//       ncclReduceScatter(g + lo, g + slice_lo, s, ...)     in place, NCCL's convention
//       ncclAllReduce(g + tail_lo, g + tail_lo, tail, ...)  the count % nranks tail
//       ncclAllGather(w + slice_lo, w + lo, s, ...)          in place
//   - a run of pointwise ops on a slice, the tail or a chunk becomes one
//     generated kernel (codegen_kernel.c), launched once per span;
//   - overlap's chunks become a loop: chunk c's GEMM (columns of C, pointers
//     offset) on the user's stream, an event, then the chunk's collectives and
//     kernels on the region's second stream; the user's stream waits at the end;
//   - fuse groups run the NCCL schedule above between comments that mark where
//     the fused kernel (symmetric memory, a later version) will be called.
//
// Generated kernels and the region's static state go before the top-level
// declaration that holds the region, between marker comments.
#include "codegen.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void cg_line(Cg *cg, const char *fmt, ...) {
  buf_puts(&cg->out, cg->indent);
  for (int i = 0; i < cg->depth; i++) buf_puts(&cg->out, cg->unit);
  va_list ap;
  va_start(ap, fmt);
  char *text;
  if (vasprintf(&text, fmt, ap) < 0) COCONET_BUG("out of memory");
  va_end(ap);
  buf_puts(&cg->out, text);
  buf_puts(&cg->out, "\n");
  free(text);
}

//
// What an op is to the generator
//

static bool is_rewritten(const IrOp *op) {
  if (op->kind == IR_OP_COLLECTIVE && op->coll.pipe_tag) return true;
  return op->span.nchunks > 1 || op->span.part != IR_PART_ALL || op->generated;
}

static bool needs_rank(const IrOp *op) {
  return (op->kind == IR_OP_COLLECTIVE || op->kind == IR_OP_POINTWISE) && op->span.part != IR_PART_ALL;
}

// The communicator whose ranks an op's span uses; *last tracks the latest collective.
static const char *op_comm(const IrOp *op, const char **last) {
  if (op->kind == IR_OP_COLLECTIVE) *last = op->coll.comm;
  return op->kind == IR_OP_COLLECTIVE ? op->coll.comm : *last;
}

//
// Ranks and parts
//

const Rank *cg_rank_for(Cg *cg, const char *comm) {
  for (int i = 0; i < cg->nranks; i++)
    if (strcmp(cg->ranks[i].comm, comm) == 0) return &cg->ranks[i];
  if (cg->nranks == MAX_RANKS) COCONET_BUG("more than %d communicators in region", MAX_RANKS);
  Rank *rk = &cg->ranks[cg->nranks++];
  rk->comm = comm;
  rk->rank = names_add(&cg->names, "coconet_rank");
  rk->nranks = names_add(&cg->names, "coconet_nranks");
  cg_line(cg, "int %s, %s;", rk->rank, rk->nranks);
  cg_line(cg, "coconet_comm_info(%s, &%s, &%s);", comm, rk->rank, rk->nranks);
  return rk;
}

static bool same_unit(const IrSize *a, const IrSize *b) { return a == b || (a && b && ir_size_equal(a, b)); }

static IrSize op_count(const IrOp *op) {
  switch (op->kind) {
  case IR_OP_COLLECTIVE: return *op->coll.count;
  case IR_OP_POINTWISE: return *op->pw.count;
  case IR_OP_GEMM: return (IrSize){.kind = IR_SIZE_MUL, .lhs = op->gemm.m, .rhs = op->gemm.n};
  default: COCONET_BUG("op %d has no span", op->id);
  }
}

// The count as the user wrote it: a collective's count argument if one in
// scope has this count, else the size.
static void count_text(Buf *b, const Scope *sc, const IrSize *count) {
  for (int i = 0; i < sc->n; i++) {
    const IrOp *op = sc->ops[i];
    if (op->kind == IR_OP_COLLECTIVE && op->coll.count_text && ir_size_equal(op->coll.count, count)) {
      buf_puts(b, op->coll.count_text);
      return;
    }
  }
  cg_size(b, count);
}

// Which communicator the first op of the scope that needs ranks of this
// count uses (NULL when none does).
static const char *comm_for(const Scope *sc, int from, const IrSize *count, const IrSize *unit, const char *last) {
  for (int i = from; i < sc->n; i++) {
    const IrOp *op = sc->ops[i];
    const char *comm = op_comm(op, &last);
    if (!needs_rank(op) || (op->span.nchunks > 1) != (unit != NULL)) continue;
    IrSize c = op_count(op);
    if (ir_size_equal(&c, count) && same_unit(op->span.unit, unit)) return comm;
  }
  return NULL;
}

const Part *cg_part_for(Cg *cg, const Scope *sc, int at, const IrOp *op) {
  cg->runtime = true;
  IrSize count = op_count(op);
  const IrSize *unit = op->span.nchunks > 1 ? op->span.unit : NULL;
  const char *last = cg->last_comm;
  const char *comm = needs_rank(op) ? op_comm(op, &last) : NULL;
  for (int i = 0; i < cg->nparts; i++) {
    const Part *p = &cg->parts[i];
    if (ir_size_equal(&p->count, &count) && same_unit(p->unit, unit) && same_unit(p->grain, op->span.grain) &&
        (!comm || (p->comm && !strcmp(p->comm, comm))))
      return p;
  }
  if (!comm) comm = comm_for(sc, at, &count, unit, cg->last_comm);
  if (cg->nparts == MAX_PARTS) COCONET_BUG("more than %d spans in region", MAX_PARTS);
  const Rank *rk = comm ? cg_rank_for(cg, comm) : NULL;
  Part *p = &cg->parts[cg->nparts++];
  *p = (Part){count, unit, op->span.grain, comm, names_add(&cg->names, "coconet_p")};
  Buf b = {0};
  count_text(&b, sc, &count);
  buf_puts(&b, ", ");
  if (unit) cg_size(&b, unit);
  else buf_puts(&b, "1");
  if (p->grain) {
    buf_puts(&b, ", ");
    cg_size(&b, p->grain);
  }
  cg_line(cg, "const coconet_part %s = coconet_part_%s(%s, %s, %d, %s, %s);", p->name, p->grain ? "rows" : "of",
       buf_str(&b), cg->chunk ? cg->chunk : "0", cg->chunk ? cg->nchunks : 1, rk ? rk->rank : "0",
       rk ? rk->nranks : "1");
  buf_free(&b);
  return p;
}

//
// Collectives and GEMMs on spans
//

// "g + coconet_p.slice_lo"; off NULL: the pointer itself.
static void ptr_plus(Buf *b, const char *ptr, const char *part, const char *off) {
  if (!off) {
    buf_puts(b, ptr);
    return;
  }
  buf_printf(b, cg_simple(ptr) ? "%s + %s.%s" : "(%s) + %s.%s", ptr, part, off);
}

const char *cg_stream_of(const Cg *cg, const char *user) { return cg->side ? cg->side : user; }

// The AllReduce of a sum computed on slices (reorder): the ranks' partial sums, whole.
static void emit_sum_allreduce(Cg *cg, const IrOp *op) {
  const IrCollective *c = &op->coll;
  Buf b = {0};
  buf_printf(&b, "%s(ncclAllReduce(%s, %s, ", c->wrapper ? c->wrapper : "COCONET_NCCL_CHECK", c->in->text, c->out->text);
  cg_size(&b, c->count);
  buf_printf(&b, ", %s, ncclSum, %s, %s));", c->dtype_text, c->comm, cg_stream_of(cg, c->stream));
  cg_line(cg, "%s", buf_str(&b));
  buf_free(&b);
  cg->last_comm = c->comm;
}

// pipeline: a Send of this rank's slice and the tail (over the group the
// slices are of), or a Recv of the peer's and the AllGather on the group.
static void emit_pipeline(Cg *cg, const Scope *sc, int at) {
  const IrOp *op = sc->ops[at];
  const IrCollective *c = &op->coll;
  const IrTensor *t = c->kind == IR_SEND ? c->in : c->out;
  Buf count = {0};
  count_text(&count, sc, c->count);
  cg->pipeline = cg->runtime = true;
  const char *stream = cg_stream_of(cg, c->stream);
  if (c->kind == IR_SEND) {
    IrOp on_group = *op;
    on_group.coll.comm = c->pipe_group;
    on_group.span.part = IR_PART_BODY;
    const Part *p = cg_part_for(cg, sc, at, &on_group);
    const Rank *rk = cg_rank_for(cg, c->pipe_group);
    cg_line(cg, "// coconet: pipeline(tag=%s): this rank's slice of %s and the tail to its peer", c->pipe_tag, t->name);
    cg_line(cg, "coconet_pipe_send(&coconet_%s_pipe, %s, sizeof(%s), %s, %s, %s, %s, %s, %s, %s, %s, \"%s\", %u);",
            cg->r->name, c->in->text, cg_ctype(t->type), buf_str(&count), p->name, rk->rank, rk->nranks, c->dtype_text,
            c->peer, c->comm, stream, c->pipe_tag, op->loc.line);
  } else {
    cg_line(cg, "// coconet: pipeline(tag=%s): the peer's slice of %s and the tail, gathered on %s", c->pipe_tag,
            t->name, c->pipe_group);
    cg_line(cg, "coconet_pipe_recv(&coconet_%s_pipe, %s, sizeof(%s), %s, %s, %s, %s, %s, %s, \"%s\", __FILE__, %u);",
            cg->r->name, c->out->text, cg_ctype(t->type), buf_str(&count), c->dtype_text, c->peer,
            c->comm, c->pipe_group, stream, c->pipe_tag, op->loc.line);
  }
  buf_free(&count);
}

static int emit_collective(Cg *cg, const Scope *sc, int at) {
  const IrOp *op = sc->ops[at];
  const IrCollective *c = &op->coll;
  if (c->pipe_tag) {
    emit_pipeline(cg, sc, at);
    return 0;
  }
  if (op->generated && c->kind == IR_ALLREDUCE && op->span.part == IR_PART_ALL && op->span.nchunks <= 1) {
    emit_sum_allreduce(cg, op);
    return 0;
  }
  const Part *p = cg_part_for(cg, sc, at, op);
  bool chunked = op->span.nchunks > 1;
  const char *in_off, *out_off, *count;
  const char *fn = ir_coll_name(c->kind);
  if (c->kind == IR_REDUCESCATTER && op->span.part == IR_PART_BODY) {
    in_off = chunked ? "lo" : NULL, out_off = "slice_lo", count = "s";
  } else if (c->kind == IR_ALLGATHER && op->span.part == IR_PART_BODY) {
    in_off = "slice_lo", out_off = chunked ? "lo" : NULL, count = "s";
  } else if (c->kind == IR_ALLREDUCE && op->span.part == IR_PART_TAIL) {
    in_off = out_off = "tail_lo", count = "tail";
  } else if (c->kind == IR_ALLREDUCE && op->span.part == IR_PART_ALL) {
    in_off = out_off = "lo", count = "count";
  } else {
    diag_error(&op->loc, "codegen: cannot generate a %s on the %s span", fn, ir_part_name(op->span.part));
    return -1;
  }
  Buf b = {0};
  buf_printf(&b, "%s(nccl%s(", c->wrapper ? c->wrapper : "COCONET_NCCL_CHECK", fn);
  ptr_plus(&b, c->in->text, p->name, in_off);
  buf_puts(&b, ", ");
  ptr_plus(&b, c->out->text, p->name, out_off);
  buf_printf(&b, ", %s.%s, %s, ", p->name, count, c->dtype_text);
  if (c->kind != IR_ALLGATHER) buf_printf(&b, "%s, ", cg_nccl_red(c->red));
  buf_printf(&b, "%s, %s));", c->comm, cg_stream_of(cg, c->stream));
  bool tail = op->span.part == IR_PART_TAIL;
  if (tail) cg_line(cg, "if (%s.tail > 0) {", p->name);
  cg->depth += tail;
  cg_line(cg, "%s", buf_str(&b));
  cg->depth -= tail;
  if (tail) cg_line(cg, "}");
  buf_free(&b);
  cg->last_comm = c->comm;
  return 0;
}

// cublasSgemm/Hgemm: (h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
// cublasGemmEx: (h, ta, tb, m, n, k, alpha, A, At, lda, B, Bt, ldb, beta, C, Ct, ldc, compute, algo).
static int emit_gemm_chunk(Cg *cg, const Scope *sc, int at) {
  const IrOp *op = sc->ops[at];
  const IrGemm *g = &op->gemm;
  bool ex = strcmp(g->fn, "cublasGemmEx") == 0;
  int bi = ex ? 10 : 9, ldb = ex ? 12 : 10, ci = ex ? 14 : 12, ldc = ex ? 16 : 13;
  const Part *p = cg_part_for(cg, sc, at, op);
  Buf b = {0};
  if (g->wrapper) buf_printf(&b, "%s(", g->wrapper);
  buf_printf(&b, "%s(", g->fn);
  for (int i = 0; i < g->nargs; i++) {
    const char *a = g->args[i];
    if (i) buf_puts(&b, ", ");
    if (i == 4) {
      buf_printf(&b, "(int)%s.units", p->name);
    } else if (i == bi || i == ci) {
      const char *ld = g->args[i == bi ? ldb : ldc];
      bool by_row = i == bi && g->transb;  // op(B) = B^T: a column of op(B) is a row of B
      buf_printf(&b, cg_simple(a) ? "%s + %s.first_unit" : "(%s) + %s.first_unit", a, p->name);
      if (!by_row) buf_printf(&b, cg_simple(ld) || strspn(ld, "0123456789") == strlen(ld) ? " * %s" : " * (%s)", ld);
    } else {
      buf_puts(&b, a);
    }
  }
  buf_puts(&b, g->wrapper ? "));" : ");");
  cg_line(cg, "%s", buf_str(&b));
  buf_free(&b);
  return 0;
}

//
// Generated kernels
//

// The ops of a run of pointwise ops on spans of one chunk, from sc->ops[at].
static int run_length(const Scope *sc, int at) {
  int n = 1;
  const IrOp *first = sc->ops[at];
  while (at + n < sc->n && cg_pointwise_run(sc->ops[at + n]) && !sc->ops[at + n]->pw.row &&
         sc->ops[at + n]->span.chunk == first->span.chunk &&
         sc->ops[at + n]->span.nchunks == first->span.nchunks)
    n++;
  return n;
}

static char *kernel_name(Cg *cg, bool slice) {
  char base[256];
  snprintf(base, sizeof base, "coconet_%s_%s", cg->r->name, slice ? "slice" : "chunk");
  int same = 0;
  for (int i = 0; i < cg->nkernels; i++)
    if (strncmp(cg->kernels[i].name, base, strlen(base)) == 0) same++;
  char *name;
  if (same ? asprintf(&name, "%s%d", base, same + 1) < 0 : !(name = strdup(base))) COCONET_BUG("out of memory");
  return name;
}

// The distinct ops of the run and its parts in order; -1 if the run is not ops x parts.
static int run_shape(const Scope *sc, int at, int n, Kernel *k, IrPart *parts, int *nparts) {
  *nparts = 0;
  for (int i = at; i < at + n; i++) {
    const IrOp *op = sc->ops[i];
    bool seen = false;
    for (int j = 0; j < k->nops; j++) seen |= cg_orig(k->ops[j]) == cg_orig(op);
    if (!seen && k->nops < (int)(sizeof k->ops / sizeof *k->ops)) k->ops[k->nops++] = op;
    seen = false;
    for (int j = 0; j < *nparts; j++) seen |= parts[j] == op->span.part;
    if (!seen && *nparts < 4) parts[(*nparts)++] = op->span.part;
  }
  return k->nops * *nparts == n ? 0 : -1;
}

// add: a kernel that sums (k->sums) adds its sums on this launch; NULL otherwise.
static void emit_launch(Cg *cg, const Kernel *k, const IrOp *op, const char *count, const char *lo, const char *hi,
                        const char *add) {
  const char *stream = cg_stream_of(cg, op->pw.stream);
  char range[512];
  snprintf(range, sizeof range, "%s, %s%s%s", lo, hi, add ? ", " : "", add ? add : "");
  const char *grid = k->sums ? "coconet_sum_grid_size" : "coconet_grid_size";
  if (cg->target == TARGET_HOST)  // a block sum needs the threads of a block as fibers
    cg_line(cg, "coconet_host_launch(%s, %s, %s(%s), COCONET_BLOCK_SIZE, 0, %s, %s, %s);",
         k->sums ? "COCONET_HOST_SYNC" : "COCONET_HOST_SIMPLE", k->name, grid, count, stream, k->args, range);
  else
    cg_line(cg, "%s<<<%s(%s), COCONET_BLOCK_SIZE, 0, %s>>>(%s, %s);", k->name, grid, count, stream, k->args, range);
}

static void emit_part_launch(Cg *cg, const Kernel *k, const IrOp *op, const Part *p, IrPart part) {
  char count[128], lo[128], hi[128];
  const char *n = p->name;
  switch (part) {
  case IR_PART_SLICE:
    snprintf(count, sizeof count, "%s.s", n), snprintf(lo, sizeof lo, "%s.slice_lo", n);
    snprintf(hi, sizeof hi, "%s.slice_hi", n);
    break;
  case IR_PART_TAIL:
    snprintf(count, sizeof count, "%s.tail", n), snprintf(lo, sizeof lo, "%s.tail_lo", n);
    snprintf(hi, sizeof hi, "%s.hi", n);
    break;
  case IR_PART_BODY:
    snprintf(count, sizeof count, "%s.tail_lo - %s.lo", n, n), snprintf(lo, sizeof lo, "%s.lo", n);
    snprintf(hi, sizeof hi, "%s.tail_lo", n);
    break;
  case IR_PART_ALL:
    snprintf(count, sizeof count, "%s.count", n), snprintf(lo, sizeof lo, "%s.lo", n);
    snprintf(hi, sizeof hi, "%s.hi", n);
    break;
  }
  char add[128];
  if (part == IR_PART_TAIL && p->comm) snprintf(add, sizeof add, "%s == 0", cg_rank_for(cg, p->comm)->rank);
  else snprintf(add, sizeof add, "true");  // this rank's slice, or rank 0 without a communicator
  if (part == IR_PART_TAIL) cg_line(cg, "if (%s.tail > 0) {", n);
  cg->depth += part == IR_PART_TAIL;
  emit_launch(cg, k, op, count, lo, hi, k->sums ? add : NULL);
  cg->depth -= part == IR_PART_TAIL;
  if (part == IR_PART_TAIL) cg_line(cg, "}");
}

static int emit_run(Cg *cg, const Scope *sc, int at, int *consumed) {
  int n = run_length(sc, at);
  *consumed = n;
  if (cg->nkernels == MAX_KERNELS) COCONET_BUG("more than %d generated kernels in region", MAX_KERNELS);
  Kernel *k = &cg->kernels[cg->nkernels];
  *k = (Kernel){0};
  IrPart parts[4];
  int nparts;
  if (run_shape(sc, at, n, k, parts, &nparts)) {
    diag_error(&sc->ops[at]->loc, "codegen: the scheduled kernels of region '%s' are not one set of kernels "
                                  "on each span; cannot generate them", cg->r->name);
    return -1;
  }
  bool slice = false;
  for (int i = 0; i < nparts; i++) slice |= parts[i] != IR_PART_ALL;
  k->name = kernel_name(cg, slice);
  cg->nkernels++;
  if (kernel_generate(cg->r, cg->unit, k)) return -1;
  const Part *p = cg_part_for(cg, sc, at, sc->ops[at]);
  for (int i = 0; i < nparts; i++) emit_part_launch(cg, k, sc->ops[at], p, parts[i]);
  cg_line(cg, "%s(cudaGetLastError());", cg->cuda_check);
  return 0;
}

//
// Fuse markers
//

//
// Ops
//

static const Stmt *stmt_at(const Region *fr, unsigned offset) {
  for (const Stmt *s = fr->stmts; s; s = s->next)
    if (s->range.begin.offset == offset) return s;
  return NULL;
}

const Launch *cg_launch_of(const Cg *cg, const IrOp *op) {
  const Stmt *s = stmt_at(cg->fr, cg_orig(op)->range.begin.offset);
  return s && s->kind == STMT_LAUNCH ? s->launch : NULL;
}

// A piece of a statement as the generated code reads it: its hoisted local, or its text.
const char *cg_piece(const Cg *cg, const Piece *p) {
  for (const IrHoist *h = cg->r->hoists; h; h = h->next)
    if (h->range.begin.offset == p->range.begin.offset && h->range.end.offset == p->range.end.offset) return h->name;
  return p->text;
}

// A launch of l's kernel with the grid and arguments given (the rest as
// written): through the host backend for --target=host (sync: the kernel may
// wait at barriers).
static void emit_user_launch(Cg *cg, const Launch *l, bool sync, const char *grid, const char *args) {
  const char *shmem = l->shmem.text ? cg_piece(cg, &l->shmem) : "0";
  const char *stream = l->stream.text ? cg_piece(cg, &l->stream) : "0";
  Buf b = {0};
  if (cg->target == TARGET_HOST) {
    // A template's arguments are all written out (some may be deduced): the host launch takes a function pointer.
    const char *targs = l->def && l->def->is_template && l->def->args ? l->def->args : l->template_args;
    buf_printf(&b, "coconet_host_launch(%s, ", sync ? "COCONET_HOST_SYNC" : "COCONET_HOST_SIMPLE");
    buf_printf(&b, targs ? "(%s<%s>)" : "%s", l->kernel, targs);
    buf_printf(&b, ", %s, %s, %s, %s%s%s);", grid, cg_piece(cg, &l->block), shmem, stream, *args ? ", " : "", args);
  } else {
    buf_printf(&b, l->template_args ? "%s<%s>" : "%s", l->kernel, l->template_args);
    buf_printf(&b, "<<<%s, %s, %s, %s>>>(%s);", grid, cg_piece(cg, &l->block), shmem, stream, args);
  }
  cg_line(cg, "%s", buf_str(&b));
  buf_free(&b);
}

// --target=host: a launch kept as written goes through the host backend
// (COCONET_HOST_SIMPLE when it is a proven pointwise kernel).
static bool emit_host_launch(Cg *cg, const IrOp *op) {
  const Stmt *s = stmt_at(cg->fr, op->range.begin.offset);
  // A launch seen through a host function stays that function's call (lowered in it).
  if (cg->target != TARGET_HOST || !s || s->kind != STMT_LAUNCH || s->launch->wrapper) return false;
  const Launch *l = s->launch;
  Buf args = {0};
  for (int i = 0; i < l->nargs; i++) buf_printf(&args, "%s%s", i ? ", " : "", cg_piece(cg, &l->args[i]));
  bool simple = op->kind == IR_OP_POINTWISE && !op->pw.row;
  emit_user_launch(cg, l, !simple, cg_piece(cg, &l->grid), buf_str(&args));
  buf_free(&args);
  return true;
}

// What a row-wise launch on this rank's rows needs first: the buffers it tests
// against null there, a row stride equal to the row length, and with a warp
// or a thread per row a launch as written that gives every row its warp (thread).
void cg_row_checks(Cg *cg, const IrOp *op, const Launch *l) {
  const IrPointwise *pw = &op->pw;
  Buf h = {0};
  cg_size(&h, pw->row);
  for (int i = 0; i < l->nargs; i++) {
    const char *a = cg_piece(cg, &l->args[i]);
    if (pw->row_roles[i] == 'P' || pw->row_roles[i] == 'O')
      cg_line(cg, "coconet_require_buffer(%s, \"%s\", __FILE__, __LINE__);", a, a);
    else if (pw->row_roles[i] == 's')
      cg_line(cg, "coconet_check_stride(%s, %s, \"%s\", \"%s\", __FILE__, __LINE__);", a, buf_str(&h), a, pw->kernel);
  }
  for (int i = 0; i < l->nargs && pw->row_threads; i++)
    if (pw->row_roles[i] == 'r')
      cg_line(cg, "coconet_check_rows(%s, %s, %d, %s, \"%s\", __FILE__, __LINE__);", cg_piece(cg, &l->grid),
           cg_piece(cg, &l->block), pw->row_threads, cg_piece(cg, &l->args[i]), pw->kernel);
  buf_free(&h);
}

// A row-wise kernel on a span of whole rows: the user's kernel, its grid and
// row count the span's rows, its row pointers moved to the span's first row.
static int emit_rowwise(Cg *cg, const Scope *sc, int at) {
  const IrOp *op = sc->ops[at];
  const IrPointwise *pw = &op->pw;
  const Stmt *s = stmt_at(cg->fr, cg_orig(op)->range.begin.offset);
  if (!s || s->kind != STMT_LAUNCH || (op->span.part != IR_PART_SLICE && op->span.part != IR_PART_TAIL)) {
    diag_error(&op->loc, "codegen: cannot generate row-wise kernel '%s' on the %s span", pw->kernel,
               ir_part_name(op->span.part));
    return -1;
  }
  const Launch *l = s->launch;
  const Part *p = cg_part_for(cg, sc, at, op);
  bool tail = op->span.part == IR_PART_TAIL;
  const char *n = tail ? "tail" : "s", *first = tail ? "tail_lo" : "slice_lo";
  if (!tail && !cg->rows_checked) cg_row_checks(cg, op, l);
  Buf h = {0}, rows = {0}, args = {0};
  cg_size(&h, pw->row);
  const char *ht = buf_str(&h);
  bool simple = cg_simple(ht) || strspn(ht, "0123456789") == strlen(ht);
  buf_printf(&rows, simple ? "%s.%s / %s" : "%s.%s / (%s)", p->name, n, ht);
  for (int i = 0; i < l->nargs; i++) {
    const char *a = cg_piece(cg, &l->args[i]);
    if (i) buf_puts(&args, ", ");
    switch (pw->row_roles[i]) {
    case 'P':
    case 'O':
    case 'p':
    case 'o':
      ptr_plus(&args, a, p->name, first);
      if (tolower(pw->row_roles[i]) == 'o') buf_printf(&args, simple ? " / %s" : " / (%s)", ht);
      break;
    case 'r': {
      const char *type = l->def && i < l->def->nparams ? l->def->params[i].type : "int";
      if (strncmp(type, "const ", 6) == 0) type += 6;
      buf_printf(&args, "(%s)(%s)", type, buf_str(&rows));
      break;
    }
    default: buf_puts(&args, a); break;
    }
  }
  char *grid;
  if (pw->row_threads) {
    if (asprintf(&grid, "coconet_rows_grid(%s, %s, %d)", buf_str(&rows), cg_piece(cg, &l->block), pw->row_threads) < 0)
      COCONET_BUG("out of memory");
  } else if (asprintf(&grid, "(unsigned)(%s)", buf_str(&rows)) < 0) {
    COCONET_BUG("out of memory");
  }
  cg_line(cg, "if (%s.%s > 0) {", p->name, n);
  cg->depth++;
  emit_user_launch(cg, l, true, grid, buf_str(&args));
  cg_line(cg, "%s(cudaGetLastError());", cg->cuda_check);
  cg->depth--;
  cg_line(cg, "}");
  free(grid);
  buf_free(&h);
  buf_free(&rows);
  buf_free(&args);
  return 0;
}

// A statement kept as written, its hoisted arguments read from their locals.
static void emit_verbatim(Cg *cg, const IrOp *op) {
  const SourceFile *src = &cg->fe->src;
  if (emit_host_launch(cg, op)) return;
  Buf b = {0};
  unsigned at = op->range.begin.offset, end = op->range.end.offset;
  for (const IrHoist *h = cg->r->hoists; h; h = h->next) {
    if (h->range.begin.offset < at || h->range.end.offset > end) continue;
    buf_printf(&b, "%.*s%s", (int)(h->range.begin.offset - at), src->buf + at, h->name);
    at = h->range.end.offset;
  }
  buf_printf(&b, "%.*s", (int)(end - at), src->buf + at);
  cg_line(cg, "%s", buf_str(&b));
  buf_free(&b);
}

// Emit sc->ops[at] (and the ops it takes with it); *consumed gets how many.
int cg_emit_op(Cg *cg, const Scope *sc, int at, int *consumed) {
  const IrOp *op = sc->ops[at];
  *consumed = 1;
  if (!cg->fusing && ir_fused_form(op) != IR_FUSED_NONE) {
    int rc = cg_emit_fused(cg, sc, at, consumed);
    if (rc <= 0) return rc;
    *consumed = 1;
  }
  if (!cg->fusing) cg_fuse_markers(cg, sc, at);
  if (cg_pointwise_run(op) && op->pw.row) return emit_rowwise(cg, sc, at);
  if (cg_pointwise_run(op)) return emit_run(cg, sc, at, consumed);
  if (op->kind == IR_OP_COLLECTIVE && is_rewritten(op)) return emit_collective(cg, sc, at);
  if (op->kind == IR_OP_GEMM && op->span.nchunks > 1) return emit_gemm_chunk(cg, sc, at);
  if (is_rewritten(op)) {
    diag_error(&op->loc, "codegen: cannot generate a scheduled %s", op->text ? op->text : "statement");
    return -1;
  }
  emit_verbatim(cg, op);
  return 0;
}

//
// overlap: the chunk loop
//

static bool same_shape(const IrOp *a, const IrOp *b) {
  if (cg_orig(a) != cg_orig(b) || a->kind != b->kind || a->span.part != b->span.part || a->generated != b->generated)
    return false;
  return a->kind != IR_OP_COLLECTIVE || a->coll.kind == b->coll.kind;
}

// The chunked ops from at: chunk 0's ops into tmpl (every chunk must repeat them).
static int chunk_template(Cg *cg, const Scope *sc, int at, Scope *tmpl, int *consumed) {
  int k = sc->ops[at]->span.nchunks, n = 0;
  while (at + n < sc->n && sc->ops[at + n]->span.nchunks == k) n++;
  *consumed = n;
  tmpl->ops = &sc->ops[at];
  tmpl->n = 0;
  while (tmpl->n < n && tmpl->ops[tmpl->n]->span.chunk == 0) tmpl->n++;
  bool ok = tmpl->n * k == n;
  for (int i = 0; i < n && ok; i++) {
    const IrOp *op = sc->ops[at + i];
    ok = op->span.chunk == i / tmpl->n && same_shape(op, tmpl->ops[i % tmpl->n]);
  }
  if (ok) return 0;
  diag_error(&sc->ops[at]->loc, "codegen: the chunks of region '%s' do not repeat one schedule; cannot "
                                "generate the overlap loop", cg->r->name);
  return -1;
}

static const char *user_stream(const Scope *tmpl) {
  for (int i = 0; i < tmpl->n; i++) {
    if (tmpl->ops[i]->kind == IR_OP_COLLECTIVE) return tmpl->ops[i]->coll.stream;
    if (tmpl->ops[i]->kind == IR_OP_POINTWISE) return tmpl->ops[i]->pw.stream;
  }
  return NULL;
}

static int emit_chunk_body(Cg *cg, const Scope *tmpl, const char *side, const char *stream) {
  int consumed;
  for (int i = 0; i < tmpl->n; i += consumed) {
    if (cg_emit_op(cg, tmpl, i, &consumed)) return -1;
    if (tmpl->ops[i]->kind != IR_OP_GEMM || cg->side) continue;
    cg_line(cg, "%s(cudaEventRecord(%s->chunk[%s], %s));", cg->cuda_check, side, cg->chunk, stream);
    cg_line(cg, "%s(cudaStreamWaitEvent(%s->stream, %s->chunk[%s], 0));", cg->cuda_check, side, side, cg->chunk);
    char *s;
    if (asprintf(&s, "%s->stream", side) < 0) COCONET_BUG("out of memory");
    cg->side = names_add(&cg->names, s);
    free(s);
  }
  Scope none = {NULL, 0};
  cg_fuse_markers(cg, &none, 0);
  return 0;
}

static int emit_overlap(Cg *cg, const Scope *sc, int at, int *consumed) {
  Scope tmpl;
  if (chunk_template(cg, sc, at, &tmpl, consumed)) return -1;
  const char *stream = user_stream(&tmpl);
  if (!stream) {
    diag_error(&sc->ops[at]->loc, "codegen: overlap in region '%s' has no collective to run on a stream", cg->r->name);
    return -1;
  }
  int k = sc->ops[at]->span.nchunks;
  Scope none = {NULL, 0};
  cg_fuse_markers(cg, &none, 0);
  const char *side = names_add(&cg->names, "coconet_side");
  cg->overlap = true;
  cg_line(cg, "const coconet_streams *%s = coconet_region_streams(&coconet_%s_overlap, %d);", side, cg->r->name, k);
  const char *last = cg->last_comm;
  for (int i = 0; i < tmpl.n; i++) {
    const char *comm = op_comm(tmpl.ops[i], &last);
    if (needs_rank(tmpl.ops[i])) cg_rank_for(cg, comm);
  }
  cg->chunk = names_add(&cg->names, "coconet_c");
  cg->nchunks = k;
  cg_line(cg, "for (int %s = 0; %s < %d; %s++) {", cg->chunk, cg->chunk, k, cg->chunk);
  int saved_parts = cg->nparts;
  cg->depth++;
  int rc = emit_chunk_body(cg, &tmpl, side, stream);
  cg->depth--;
  cg_line(cg, "}");
  cg->nparts = saved_parts;
  cg->chunk = NULL;
  cg->side = NULL;
  cg_line(cg, "%s(cudaEventRecord(%s->done, %s->stream));", cg->cuda_check, side, side);
  cg_line(cg, "%s(cudaStreamWaitEvent(%s, %s->done, 0));", cg->cuda_check, stream, side);
  return rc;
}

//
// The region
//

// One indentation step: how far the block's first statement is indented past its brace.
static char *indent_unit(const Frontend *fe, const Region *fr, const char *indent) {
  const char *buf = fe->src.buf;
  unsigned at = fr->stmts ? fr->stmts->range.begin.offset : fr->range.begin.offset;
  unsigned ls = at;
  while (ls > 0 && buf[ls - 1] != '\n') ls--;
  size_t lead = strspn(buf + ls, " \t");
  size_t n = strlen(indent);
  bool nested = fr->stmts && ls + lead == at && lead > n && strncmp(buf + ls, indent, n) == 0;
  char *unit = nested ? strndup(buf + ls + n, lead - n) : strdup(indent[0] == '\t' ? "\t" : "    ");
  if (!unit) COCONET_BUG("out of memory");
  return unit;
}

static bool unchanged(const IrRegion *r, const IrOp *list) {
  const IrOp *o = r->ops;
  for (const IrOp *op = list; op; op = op->next, o = o ? o->next : NULL)
    if (is_rewritten(op) || op->fuse_group || !o || cg_orig(op) != o) return false;
  return o == NULL;
}

static const char *cuda_wrapper(const Region *fr) {
  for (const Stmt *s = fr->stmts; s; s = s->next)
    if (s->kind == STMT_CUDA && s->wrapper) return s->wrapper;
  return "COCONET_CUDA_CHECK";
}

// The kernels that go beside the region's function (Kernel.late), or NULL.
static char *late_text(Cg *cg) {
  Buf b = {0};
  for (int i = 0; i < cg->nkernels; i++) {
    const Kernel *k = &cg->kernels[i];
    if (!k->late) continue;
    if (!b.len) buf_printf(&b, "// coconet: begin generated code for region %s, beside its function\n\n", cg->r->name);
    buf_printf(&b, "%s\n", k->text);
    if (k->fused_name)
      buf_printf(&b, "// coconet: the path %s's call site takes, said once under COCONET_DEBUG=INFO\n"
                     "static coconet_fused_state %s_state = {\"%s\", false, false};\n\n",
                 k->fused_name, k->fused_name, cg->r->name);
  }
  if (b.len) buf_printf(&b, "// coconet: end generated code for region %s, beside its function\n\n", cg->r->name);
  return b.len ? buf_take(&b) : NULL;
}

static char *kernels_text(Cg *cg) {
  Buf b = {0};
  buf_printf(&b, "// coconet: begin generated code for region %s\n#include <%s>\n", cg->r->name,
             cg->nfused ? "coconet_fused.h" : "coconet.h");
  // The headers of the types and functions the generated kernels use, those only
  // (curand_kernel.h alone costs nvcc 0.7 s).
  static const char *const headers[][2] = {
      {"__half", "cuda_fp16.h"}, {"__nv_bfloat16", "cuda_bf16.h"}, {"curand", "curand_kernel.h"}};
  for (size_t h = 0; h < sizeof headers / sizeof *headers; h++) {
    bool used = false;
    for (int i = 0; i < cg->nkernels && !used; i++) used = strstr(cg->kernels[i].text, headers[h][0]) != NULL;
    if (used) buf_printf(&b, "#include <%s>\n", headers[h][1]);
  }
  buf_puts(&b, "\n");
  if (cg->overlap)
    buf_printf(&b, "// coconet: the second stream and events of region %s (created once per device)\n"
                   "static coconet_region_state coconet_%s_overlap;\n\n", cg->r->name, cg->r->name);
  if (cg->pipeline)
    buf_printf(&b, "// coconet: the pipeline header buffer of region %s (allocated once per device)\n"
                   "static coconet_pipe_state coconet_%s_pipe;\n\n", cg->r->name, cg->r->name);
  for (int i = 0; i < cg->nkernels; i++) {
    if (cg->kernels[i].late) continue;
    buf_printf(&b, "%s\n", cg->kernels[i].text);
    if (cg->kernels[i].fused_name)
      buf_printf(&b, "// coconet: the path %s's call site takes, said once under COCONET_DEBUG=INFO\n"
                     "static coconet_fused_state %s_state = {\"%s\", false, false};\n\n",
                 cg->kernels[i].fused_name, cg->kernels[i].fused_name, cg->r->name);
  }
  buf_printf(&b, "// coconet: end generated code for region %s\n\n", cg->r->name);
  return buf_take(&b);
}

static Scope scope_of(const IrOp *list) {
  Scope sc = {NULL, 0};
  for (const IrOp *op = list; op; op = op->next) sc.n++;
  sc.ops = calloc(sc.n ? (size_t)sc.n : 1, sizeof *sc.ops);
  if (!sc.ops) COCONET_BUG("out of memory");
  sc.n = 0;
  for (const IrOp *op = list; op; op = op->next) sc.ops[sc.n++] = op;
  return sc;
}

// (void)NAME for what only the replaced launches' configurations used.
// Whether `name` is an identifier of the generated text.
static bool names_identifier(const char *text, const char *name) {
  size_t n = strlen(name);
  for (const char *p = text ? strstr(text, name) : NULL; p; p = strstr(p + 1, name)) {
    bool left = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
    bool right = !(isalnum((unsigned char)p[n]) || p[n] == '_');
    if (left && right) return true;
  }
  return false;
}

// (void)NAME for what only the replaced statements used and the generated
// block (`body`, emitted after these lines) does not.
static void unused_lines(Cg *cg, const Scope *sc, const char *body) {
  SrcRange replaced[64];
  int n = 0;
  for (const IrOp *o = cg->r->ops; o && n < 64; o = o->next) {
    bool kept = false;
    for (int i = 0; i < sc->n; i++) kept |= cg_orig(sc->ops[i]) == o && !is_rewritten(sc->ops[i]);
    if (!kept) replaced[n++] = o->range;
  }
  char *names[16];
  int k = unused_config(cg->fe, cg->fr, replaced, n, names, 16);
  bool said = false;
  for (int i = 0; i < k; i++) {
    if (!names_identifier(body, names[i])) {
      if (!said) cg_line(cg, "// coconet: the generated kernels pick their own grid and arguments; this was for the launches they replace");
      said = true;
      cg_line(cg, "(void)%s;", names[i]);
    }
    free(names[i]);
  }
}

static int generate(Cg *cg, const Scope *sc) {
  buf_puts(&cg->out, "{\n");
  cg->depth = 1;
  Buf comment = {0};
  cg_schedule_comment(&comment, cg->r, sc->ops, sc->n);
  for (char *ln = comment.s; ln && *ln;) {
    char *nl = strchr(ln, '\n');
    cg_line(cg, "// coconet: %.*s", (int)(nl ? nl - ln : (long)strlen(ln)), ln);
    ln = nl ? nl + 1 : ln + strlen(ln);
  }
  buf_free(&comment);
  if (cg->r->hoists) cg_line(cg, "// coconet: arguments with side effects, evaluated once, in the order written");
  for (const IrHoist *h = cg->r->hoists; h; h = h->next)
    cg_line(cg, "[[maybe_unused]] const auto %s = %s;", names_add(&cg->names, h->name), h->text);
  Buf head = cg->out;  // the ops go to a buffer of their own, the (void) lines before them
  cg->out = (Buf){0};
  int consumed, rc = 0;
  // Run-time preconditions (a pointer a kernel tests against NULL): the
  // schedule when they hold, the region as written otherwise.
  Buf test = {0};
  for (const IrAssume *a = cg->r->assumes; a; a = a->next) {
    SrcLoc at = a->loc;
    cg_line(cg, "// coconet: kernel '%s' tests '%s' against NULL (%s:%u:%u): the schedule is for %s; the region runs "
             "as written otherwise", a->kernel, a->var, cg_base_name(at.file), at.line, at.col, a->test);
    buf_printf(&test, "%s%s", test.len ? " && " : "", a->test);
  }
  if (cg->r->assumes) {
    cg_line(cg, "if (%s) {", buf_str(&test));
    cg->depth++;
  }
  for (int i = 0; i < sc->n && rc == 0; i += consumed) {
    if (sc->ops[i]->span.nchunks > 1) rc = emit_overlap(cg, sc, i, &consumed);
    else rc = cg_emit_op(cg, sc, i, &consumed);
  }
  if (cg->r->assumes) {
    cg->depth--;
    cg_line(cg, "} else {");
    cg->depth++;
    for (const IrOp *op = cg->r->ops; op && rc == 0; op = op->next) emit_verbatim(cg, op);
    cg->depth--;
    cg_line(cg, "}");
  }
  buf_free(&test);
  char *ops = buf_take(&cg->out);
  cg->out = head;
  unused_lines(cg, sc, ops);
  if (ops) buf_puts(&cg->out, ops);
  free(ops);
  Scope none = {NULL, 0};
  cg_fuse_markers(cg, &none, 0);
  buf_printf(&cg->out, "%s}", cg->indent);
  return rc;
}

int codegen_region(const Frontend *fe, const Region *fr, const IrRegion *r, Target target, const char *indent,
                   RegionCode *out) {
  *out = (RegionCode){0};
  const IrOp *list = r->sched ? r->sched : r->ops;
  if (unchanged(r, list)) {
    out->body = fe_text(fe, fr->range);
    return 0;
  }
  Cg *cg = calloc(1, sizeof *cg);
  if (!cg) COCONET_BUG("out of memory");
  *cg = (Cg){.fe = fe, .fr = fr, .r = r, .target = target, .indent = indent, .cuda_check = cuda_wrapper(fr)};
  cg->unit = indent_unit(fe, fr, indent);
  Scope sc = scope_of(list);
  int rc = generate(cg, &sc);
  if (rc == 0) {
    out->body = buf_take(&cg->out);
    out->kernels = cg->runtime ? kernels_text(cg) : NULL;
    out->kernels_at = cg->runtime ? place_decl(fe, fr->range.begin.offset) : 0;
    CXCursor fn;
    out->late = cg->runtime ? late_text(cg) : NULL;
    out->late_at = out->late ? place_fn(fe, fr->range.begin.offset, &fn) : 0;
  }
  buf_free(&cg->out);
  for (int i = 0; i < cg->nkernels; i++) kernel_free(&cg->kernels[i]);
  names_free(&cg->names);
  free(cg->unit);
  free(sc.ops);
  free(cg);
  return rc;
}

void region_code_free(RegionCode *c) {
  free(c->body);
  free(c->kernels);
  free(c->late);
  *c = (RegionCode){0};
}

void codegen_explain(FILE *f, const IrRegion *r) {
  if (r->nfuse == 0) return;
  int split = 0, oneshot = 0;
  const IrOp *list = r->sched ? r->sched : r->ops;
  for (const IrOp *op = list; op; op = op->next) split += ir_fused_form(op) == IR_FUSED_SPLIT, oneshot += ir_fused_form(op) == IR_FUSED_ONESHOT;
  if (split)
    fprintf(f, "  - codegen: fuse: %d group(s) become a fused kernel on NCCL's device API (symmetric memory, LSA "
               "barriers); each call site keeps the NCCL path as its run-time fallback (a buffer not symmetric, "
               "ranks that do not share memory)\n", split);
  if (oneshot)
    fprintf(f, "  - codegen: fuse: %d AllReduce group(s) become a one-shot fused kernel (every rank reduces every "
               "element from its peers' symmetric memory, then runs the kernels) up to COCONET_ONESHOT_MAX_BYTES; "
               "larger buffers, buffers not symmetric and ranks that do not share memory run as written\n", oneshot);
  if (r->nfuse > split + oneshot)
    fprintf(f, "  - codegen: fuse: %d group(s) inside overlap chunks run unfused on the NCCL path, their call sites "
               "marked\n", r->nfuse - split - oneshot);
}
