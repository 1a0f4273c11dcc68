// codegen.c: a scheduled region (region->sched) becomes CUDA C++ text.
//
// The region's statement is replaced by a block that runs the schedule, in
// order, on the user's stream, communicator and error-check wrappers:
//
//   - arguments with side effects (IrHoist) are evaluated once, first, into
//     const locals that every use reads;
//   - ops that no clause changed are copied as written;
//   - split's collectives run on their spans of the buffer, with
//     rank, rank count (coconet_comm_info) and spans (coconet_slice, the
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
// declaration that holds the region, between marker comments. codegen.c emits
// each op; codegen_region.c the overlap loop and the block as a whole.
#include "codegen_impl.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

// One line at the block's current depth; generated ones are wrapped at CG_WIDTH.
static void emit_line(Cg *cg, const char *text, bool generated) {
  Buf b = {0};
  buf_puts(&b, cg->indent);
  for (int i = 0; i < cg->depth; i++) buf_puts(&b, cg->unit);
  buf_printf(&b, "%s\n", text);
  char *line = generated ? buf_take_wrapped(&b, 0) : buf_take(&b);
  buf_puts(&cg->out, line);
  free(line);
}

void cg_line(Cg *cg, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text;
  if (vasprintf(&text, fmt, ap) < 0) COCONET_BUG("out of memory");
  va_end(ap);
  emit_line(cg, text, true);
  free(text);
}

void cg_line_as_written(Cg *cg, const char *text) { emit_line(cg, text, false); }

//
// What an op is to the generator
//

bool cg_is_rewritten(const IrOp *op) {
  if (op->kind == IR_OP_COLLECTIVE && op->coll.pipe_tag) return true;
  return op->span.nchunks > 1 || op->span.part != IR_PART_ALL || op->generated;
}

bool cg_needs_rank(const IrOp *op) {
  return (op->kind == IR_OP_COLLECTIVE || op->kind == IR_OP_POINTWISE) && op->span.part != IR_PART_ALL;
}

// The communicator whose ranks an op's span uses; *last tracks the latest collective.
const char *cg_op_comm(const IrOp *op, const char **last) {
  if (op->kind == IR_OP_COLLECTIVE) *last = op->coll.comm;
  return op->kind == IR_OP_COLLECTIVE ? op->coll.comm : *last;
}

//
// Ranks and parts
//

const Rank *cg_rank_for(Cg *cg, const char *comm) {
  for (int i = cg->live_ranks; i < cg->nranks; i++)
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
    const char *comm = cg_op_comm(op, &last);
    if (!cg_needs_rank(op) || (op->span.nchunks > 1) != (unit != NULL)) continue;
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
  const char *comm = cg_needs_rank(op) ? cg_op_comm(op, &last) : NULL;
  for (int i = cg->live_parts; i < cg->nparts; i++) {
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
  if (cg->chunk || unit) {  // chunk c of the overlap loop's: coconet_part_of(count, unit, c, chunks, ...)
    buf_puts(&b, ", ");
    if (unit) cg_size(&b, unit);
    else buf_puts(&b, "1");
  }
  if (p->grain) {
    buf_puts(&b, ", ");
    cg_size(&b, p->grain);
  }
  if (cg->chunk || unit)
    cg_line(cg, "const coconet_part %s = coconet_part_%s(%s, %s, %d, %s, %s);", p->name, p->grain ? "rows" : "of",
            buf_str(&b), cg->chunk ? cg->chunk : "0", cg->chunk ? cg->nchunks : 1, rk ? rk->rank : "0",
            rk ? rk->nranks : "1");
  else
    cg_line(cg, "const coconet_part %s = coconet_slice%s(%s, %s, %s);", p->name, p->grain ? "_rows" : "",
            buf_str(&b), rk ? rk->rank : "0", rk ? rk->nranks : "1");
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
            cg->r->name, c->in->text, codegen_ctype(t->type), buf_str(&count), p->name, rk->rank, rk->nranks, c->dtype_text,
            c->peer, c->comm, stream, c->pipe_tag, op->loc.line);
  } else {
    cg_line(cg, "// coconet: pipeline(tag=%s): the peer's slice of %s and the tail, gathered on %s", c->pipe_tag,
            t->name, c->pipe_group);
    cg_line(cg, "coconet_pipe_recv(&coconet_%s_pipe, %s, sizeof(%s), %s, %s, %s, %s, %s, %s, \"%s\", __FILE__, %u);",
            cg->r->name, c->out->text, codegen_ctype(t->type), buf_str(&count), c->dtype_text, c->peer,
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

// Whether edit e changes bytes inside [begin, end) (an insertion at either end does not).
static bool edit_inside(const Edit *e, unsigned begin, unsigned end) {
  return e->begin == e->end ? e->begin > begin && e->begin < end : e->begin < end && begin < e->end;
}

// An op of the region written inside another's text (an error check inside the `if` of a guarded
// collective, Stmt.error_check): the other, or NULL.
static const IrOp *written_inside(const IrRegion *r, const IrOp *op) {
  for (const IrOp *q = r->ops; q; q = q->next)
    if (q->range.begin.offset <= op->range.begin.offset && op->range.end.offset <= q->range.end.offset &&
        q->range.end.offset - q->range.begin.offset > op->range.end.offset - op->range.begin.offset)
      return q;
  return NULL;
}

int cg_emit_verbatim(Cg *cg, const IrOp *op) {
  // (as written, an op inside another's text is in it; else the other's text goes without it: it
  // is emitted on its own, where the schedule put it)
  if (cg->written && written_inside(cg->r, op)) return 0;
  cg_beside_written(cg, op);
  if (emit_host_launch(cg, op)) return 0;
  unsigned at = op->range.begin.offset, end = op->range.end.offset;
  Edit *edits = NULL;
  const Stmt *s = stmt_at(cg->fr, at);
  int rc = cg->target == TARGET_HOST && s ? host_lower_in(cg->fe, s->cursor, &edits) : 0;
  for (const IrOp *q = cg->r->ops; q && !cg->written; q = q->next) {
    if (q->range.begin.offset <= at || q->range.end.offset > end || !written_inside(cg->r, q)) continue;
    // (its line with it, when nothing else is on it)
    const char *src = cg->fe->src.buf;
    unsigned b = q->range.begin.offset, e = q->range.end.offset;
    while (b > at && (src[b - 1] == ' ' || src[b - 1] == '\t')) b--;
    while (e < end && (src[e] == ' ' || src[e] == '\t')) e++;
    bool line = (b == at || src[b - 1] == '\n') && e < end && src[e] == '\n';
    edit_add(&edits, line ? b : q->range.begin.offset, line ? e + 1 : q->range.end.offset, "");
  }
  for (const IrHoist *h = cg->r->hoists; h && rc == 0; h = h->next) {
    if (h->range.begin.offset < at || h->range.end.offset > end) continue;
    for (const Edit *e = edits; e && rc == 0; e = e->next)
      if (edit_inside(e, h->range.begin.offset, h->range.end.offset)) {
        diag_error(&h->range.begin, "codegen: --target=host: a launch inside this argument, which the schedule "
                                    "evaluates first, cannot be lowered; evaluate it into a local before the region");
        rc = -1;
      }
    if (rc == 0) edit_add(&edits, h->range.begin.offset, h->range.end.offset, h->name);
  }
  if (rc == 0) {
    char *text = edits_apply_span(&cg->fe->src, edits, at, end);
    emit_line(cg, text, false);
    // A statement coconet does not see into may assign the count or the communicator
    // of what follows (`n = n / 2;`, `comm = sub;`), and so may a recognised call's
    // argument (`n--`): later spans and ranks are computed again from the values at
    // that point, never reused by their text.
    bool assigns = op->kind == IR_OP_OPAQUE || !s;
    for (int i = 0; s && !assigns && i < s->nargs; i++) assigns = source_has_effects(s->args[i].text);
    if (assigns) {
      cg->live_parts = cg->nparts;
      cg->live_ranks = cg->nranks;
    }
    free(text);
  }
  edits_free(edits);
  return rc;
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
  if (op->kind == IR_OP_COLLECTIVE && cg_is_rewritten(op)) return emit_collective(cg, sc, at);
  if (op->kind == IR_OP_GEMM && op->span.nchunks > 1) return emit_gemm_chunk(cg, sc, at);
  if (cg_is_rewritten(op)) {
    diag_error(&op->loc, "codegen: cannot generate a scheduled %s", op->text ? op->text : "statement");
    return -1;
  }
  return cg_emit_verbatim(cg, op);
}
