// codegen_fused.c: the call sites of fuse groups in a region's block. A split
// group (ReduceScatter, kernels on the slice and the tail, AllGathers) or a
// one-shot group (AllReduce and its kernels) becomes one kernel on symmetric
// memory (codegen_kernel.c's kernel_fused), launched when coconet_fused_ready
// says the buffers are symmetric and the ranks share memory, with the NCCL
// schedule as written by codegen.c as its run-time fallback.
#include "codegen_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cg_fuse_markers(Cg *cg, const Scope *sc, int at) {
  int group = at < sc->n ? sc->ops[at]->fuse_group : 0;
  if (group == cg->fuse_open) return;
  if (cg->fuse_open) cg_line(cg, "// coconet: fuse: end of the fused kernel's call site");
  cg->fuse_open = group;
  if (!group) return;
  int n = 0;
  while (at + n < sc->n && sc->ops[at + n]->fuse_group == group) n++;
  Buf b = {0};
  cg_flow(&b, &sc->ops[at], n);
  cg_line(cg, "// coconet: fuse: call site of the fused kernel for %s", buf_str(&b));
  cg_line(cg, "// coconet: fuse: (the one-shot fused kernel of an AllReduce and its kernels is not generated yet); this NCCL "
           "schedule runs:");
  buf_free(&b);
}

static void add_window(FusedSpec *f, const IrTensor *t) {
  for (int i = 0; i < f->nwindows; i++)
    if (strcmp(f->window_names[i], t->name) == 0) return;
  if (f->nwindows < FUSED_MAX_WINDOWS) f->window_names[f->nwindows++] = t->name;
}

static const IrTensor *window_tensor(const FusedSpec *f, int w) {
  if (strcmp(f->source->name, f->window_names[w]) == 0) return f->source;
  for (int i = 0; i < f->ngathered; i++)
    if (strcmp(f->gathered[i]->name, f->window_names[w]) == 0) return f->gathered[i];
  COCONET_BUG("window '%s' of no tensor", f->window_names[w]);
}

// The group's collectives as a FusedSpec; false when it is not RS + kernels +
// AllGathers, or AllReduce + kernels (one-shot).
static bool fused_spec(const Scope *sc, int at, int n, FusedSpec *f, Buf *flow_text) {
  const IrOp *rs = sc->ops[at];
  *f = (FusedSpec){.source = rs->coll.in, .reduced = rs->coll.out, .red = rs->coll.red, .dtype = rs->coll.dtype,
                   .oneshot = ir_fused_form(rs) == IR_FUSED_ONESHOT};
  add_window(f, f->source);
  int kernels = 0;
  for (int i = at + 1; i < at + n; i++) {
    const IrOp *op = sc->ops[i];
    if (op->kind == IR_OP_POINTWISE && (op->span.part == IR_PART_ALL) == f->oneshot) {
      kernels++;
      continue;
    }
    if (f->oneshot) return false;
    if (op->kind != IR_OP_COLLECTIVE) return false;
    if (op->coll.kind == IR_ALLREDUCE && op->span.part == IR_PART_TAIL) continue;
    if (op->coll.kind != IR_ALLGATHER || op->span.part != IR_PART_BODY || f->ngathered == FUSED_MAX_WINDOWS)
      return false;
    f->gathered[f->ngathered++] = op->coll.out;
    add_window(f, op->coll.out);
  }
  cg_flow(flow_text, &sc->ops[at], n);
  f->flow = buf_str(flow_text);
  return kernels > 0 && f->nwindows <= FUSED_MAX_WINDOWS;
}

// grid: the elements the grid covers; range: the kernel's last arguments.
static void emit_fused_launch(Cg *cg, const Kernel *k, const char *grid, const char *range, const char *stream) {
  if (cg->target == TARGET_HOST)
    cg_line(cg, "coconet_host_launch(COCONET_HOST_SYNC, %s, coconet_fused_grid(%s), COCONET_BLOCK_SIZE, 0, %s, %s, %s);",
         k->fused_name, grid, stream, k->fused_args, range);
  else
    cg_line(cg, "%s<<<coconet_fused_grid(%s), COCONET_BLOCK_SIZE, 0, %s>>>(%s, %s);", k->fused_name, grid, stream,
         k->fused_args, range);
  cg_line(cg, "%s(cudaGetLastError());", cg->cuda_check);
}

// config: "GRID, BLOCK, SHARED MEMORY" (rows_fused); the kernel is allowed the
// shared memory its row-wise kernels are launched with.
static void emit_rows_launch(Cg *cg, const Kernel *k, const char *config, const char *stream) {
  const char *shmem = strrchr(config, ',') + 2;
  if (strcmp(shmem, "0") != 0) cg_line(cg, "coconet_fused_shared((const void *)%s, %s);", k->fused_name, shmem);
  if (cg->target == TARGET_HOST)
    cg_line(cg, "coconet_host_launch(COCONET_HOST_SYNC, %s, %s, %s, %s);", k->fused_name, config, stream, k->fused_args);
  else
    cg_line(cg, "%s<<<%s, %s>>>(%s);", k->fused_name, config, stream, k->fused_args);
  cg_line(cg, "%s(cudaGetLastError());", cg->cuda_check);
}

// The group from sc->ops[at]: 0 when emitted, 1 when it gets no fused kernel
// (nothing emitted: the caller emits it on the NCCL path), -1 on errors.
int cg_emit_fused(Cg *cg, const Scope *sc, int at, int *consumed) {
  const IrOp *rs = sc->ops[at];
  int n = 0;
  while (at + n < sc->n && sc->ops[at + n]->fuse_group == rs->fuse_group) n++;
  FusedSpec f;
  Buf flow_text = {0};
  if (!fused_spec(sc, at, n, &f, &flow_text)) {
    buf_free(&flow_text);
    return 1;
  }
  bool rows = false;
  for (int i = at; i < at + n; i++) rows |= sc->ops[i]->kind == IR_OP_POINTWISE && sc->ops[i]->pw.row;
  Scope none = {NULL, 0};
  cg_fuse_markers(cg, &none, 0);
  const Part *p = cg_part_for(cg, sc, at, rs);
  const Rank *rk = cg_rank_for(cg, rs->coll.comm);
  // The NCCL path first, into a buffer of its own (its kernel is the one the fused kernel calls).
  Buf saved = cg->out;
  int saved_parts = cg->nparts, saved_ranks = cg->nranks, first_kernel = cg->nkernels;
  cg->out = (Buf){0};
  cg->depth++;
  cg->fusing = true;
  cg->rows_checked = rows;  // a row-wise launch's checks go before the call site, for both paths
  int rc = 0, c;
  for (int i = at; i < at + n && rc == 0; i += c) rc = cg_emit_op(cg, sc, i, &c);
  cg->fusing = false;
  cg->rows_checked = false;
  cg->depth--;
  char *nccl_path = buf_take(&cg->out);
  cg->out = saved;
  cg->nparts = saved_parts;
  cg->nranks = saved_ranks;
  if (cg->live_parts > cg->nparts) cg->live_parts = cg->nparts;
  if (cg->live_ranks > cg->nranks) cg->live_ranks = cg->nranks;
  Kernel *k = !rows && cg->nkernels == first_kernel + 1 ? &cg->kernels[first_kernel] : NULL;
  if (rc == 0 && f.oneshot && cg->nkernels == first_kernel && cg->nkernels < MAX_KERNELS) {
    // The kernels stay as written on the NCCL path: the fused kernel gets their element function.
    k = &cg->kernels[cg->nkernels++];
    *k = (Kernel){0};
    for (int i = at + 1; i < at + n && k->nops < (int)(sizeof k->ops / sizeof *k->ops); i++) k->ops[k->nops++] = sc->ops[i];
    if (asprintf(&k->name, "coconet_%s_oneshot", cg->r->name) < 0) COCONET_BUG("out of memory");
  }
  if (rc == 0 && rows && !k && cg->nkernels < MAX_KERNELS) {
    k = &cg->kernels[cg->nkernels++];
    *k = (Kernel){0};
  }
  char *rows_config = NULL;
  if (rc == 0 && k) {
    char name[256];
    snprintf(name, sizeof name, cg->nfused ? "coconet_%s_fused%d" : "coconet_%s_fused", cg->r->name, cg->nfused + 1);
    if (!(k->fused_name = strdup(name)) || (rows && !(k->name = strdup(name)))) COCONET_BUG("out of memory");
    f.args = names_add(&cg->names, "coconet_f");
    rc = rows ? rows_fused(cg, sc, at, n, &f, k, &rows_config) : kernel_fused(cg->r, cg->unit, k, &f);
  }
  if (rc != 0 || !k) {  // no fused kernel: the caller emits the group again, on the NCCL path
    free(rows_config);
    free(nccl_path);
    buf_free(&flow_text);
    while (cg->nkernels > first_kernel) kernel_free(&cg->kernels[--cg->nkernels]);
    return rc < 0 ? -1 : 1;
  }
  cg->nfused++;
  *consumed = n;
  if (rows) {
    for (int i = at; i < at + n; i++)
      if (sc->ops[i]->kind == IR_OP_POINTWISE && sc->ops[i]->pw.row && sc->ops[i]->span.part == IR_PART_SLICE)
        cg_row_checks(cg, sc->ops[i], cg_launch_of(cg, sc->ops[i]));
  }
  if (f.oneshot)
    cg_line(cg, "// coconet: fuse: %s as one kernel (%s, one-shot: every rank reduces every element from its peers) on "
             "symmetric memory up to COCONET_ONESHOT_MAX_BYTES, or as written below", f.flow, k->fused_name);
  else
    cg_line(cg, "// coconet: fuse: %s as one kernel (%s) on symmetric memory, or on the NCCL path below when a "
             "buffer is not symmetric or the ranks do not share memory", f.flow, k->fused_name);
  const char *names = names_add(&cg->names, "coconet_fused_names");
  const char *bufs = names_add(&cg->names, "coconet_fused_bufs");
  const char *bytes = names_add(&cg->names, "coconet_fused_bytes");
  const char *args = f.args;
  Buf nb = {0}, bb = {0}, sb = {0};
  for (int w = 0; w < f.nwindows; w++) {
    const IrTensor *t = window_tensor(&f, w);
    buf_printf(&nb, "%s\"%s\"", w ? ", " : "", t->name);
    buf_printf(&bb, "%s%s", w ? ", " : "", t->text);
    if (rows) {  // a per-row buffer has one element a row
      Buf c = {0};
      cg_size(&c, t->count);
      buf_printf(&sb, cg_simple(buf_str(&c)) ? "%s%s * sizeof(%s)" : "%s(%s) * sizeof(%s)", w ? ", " : "", buf_str(&c),
                 codegen_ctype(t->type));
      buf_free(&c);
    } else {
      buf_printf(&sb, "%s%s.count * sizeof(%s)", w ? ", " : "", p->name, codegen_ctype(t->type));
    }
  }
  cg_line(cg, "const char *const %s[] = {%s};", names, buf_str(&nb));
  cg_line(cg, "const void *const %s[] = {%s};", bufs, buf_str(&bb));
  cg_line(cg, "const size_t %s[] = {%s};", bytes, buf_str(&sb));
  cg_line(cg, "coconet_fused_args %s = {};", args);
  cg_line(cg, "if (coconet_fused_ready(&%s_state, %s, %s, %d, %s, %s, %s, %s, &%s)) {", k->fused_name, rs->coll.comm,
       rk->nranks, f.nwindows, names, bufs, bytes, f.oneshot ? "COCONET_ONESHOT_MAX_BYTES" : "0", args);
  cg->depth++;
  char grid[128], range[256];
  if (f.oneshot) {
    snprintf(grid, sizeof grid, "%s.count", p->name);
    snprintf(range, sizeof range, "%s.count", p->name);
  } else {
    snprintf(grid, sizeof grid, "%s.s", p->name);
    snprintf(range, sizeof range, "%s.slice_lo, %s.slice_hi, %s.tail_lo, %s.hi", p->name, p->name, p->name, p->name);
  }
  // (a collective the NCCL path runs as written runs its function's statements there only)
  for (int i = at; i < at + n; i++)
    if (cg_beside_is_written(cg, sc->ops[i])) cg_beside_call(cg, sc->ops[i]);
  if (rows) emit_rows_launch(cg, k, rows_config, cg_stream_of(cg, rs->coll.stream));
  else emit_fused_launch(cg, k, grid, range, cg_stream_of(cg, rs->coll.stream));
  free(rows_config);
  cg->depth--;
  cg_line(cg, "} else {");
  buf_puts(&cg->out, nccl_path);
  cg_line(cg, "}");
  buf_free(&nb), buf_free(&bb), buf_free(&sb);
  free(nccl_path);
  buf_free(&flow_text);
  return 0;
}
