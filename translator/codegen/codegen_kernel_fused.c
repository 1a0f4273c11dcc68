// codegen_kernel_fused.c: a fuse group's fused __global__ (codegen.c decides
// which groups get one): on the device API's symmetric memory, each rank sums
// its slice of the reduced buffer from every peer, runs the group's element
// function on it and writes the gathered buffers to every peer (one-shot:
// every rank sums every element and runs the ops on its own copy).
#include "codegen_kernel_impl.h"

#include <stdlib.h>
#include <string.h>

static bool is_gathered(const FusedSpec *f, const IrTensor *t) {
  for (int i = 0; i < f->ngathered; i++)
    if (f->gathered[i] == t) return true;
  return false;
}


static const KTensor *reduced_tensor(const Plan *p, const FusedSpec *f) {
  for (int i = 0; i < p->ntensors; i++)
    if (p->tensors[i].t == f->reduced) return &p->tensors[i];
  return NULL;
}

static const char *reduced_name(const Plan *p, const FusedSpec *f) {
  const KTensor *red = reduced_tensor(p, f);
  return red ? red->vec : "coconet_unused";
}

// "T g_v = coconet_reduce<OP, T>(g_win, g_off, dev.lsaSize, i)": element i summed from every peer in rank order.
static void fused_reduce(const Plan *p, Buf *b, const FusedSpec *f, const char *u, bool tail) {
  const char *ct = codegen_ctype(f->dtype), *in = f->window_names[0];
  buf_printf(b, "%s%s %s = ", u, ct, reduced_name(p, f));
  if (tail) buf_puts(b, "mine ? ");
  buf_printf(b, "coconet_reduce<%s, %s>(%s_win, %s_off, dev.lsaSize, i)", cg_coconet_red(f->red), ct, in, in);
  if (tail) buf_printf(b, " : %s{}", ct);
  buf_puts(b, ";\n");
}

// Element i's ops, its local stores and (peers) its gathered buffers written to every peer.
static void fused_ops(Plan *p, Buf *b, const FusedSpec *f, const char *u, bool peers) {
  const KTensor *red = reduced_tensor(p, f);
  const char *rname = reduced_name(p, f);
  buf_printf(b, "%s%s_elem(", u, p->k->name);
  elem_args_subst(p, b, NULL, f->reduced, rname);
  buf_puts(b, ");\n");
  if (red && !f->reduced->scratch) buf_printf(b, "%s%s[i] = %s;\n", u, red->name, rname);
  for (int i = 0; i < p->ntensors && peers; i++) {
    const KTensor *kt = &p->tensors[i];
    if (!is_gathered(f, kt->t)) continue;
    buf_printf(b, "%sfor (int peer = 0; peer < dev.lsaSize; peer++)\n", u);
    buf_printf(b, "%s%sif (peer != dev.lsaRank) coconet_peer<%s>(%s_win, %s_off, peer)[i] = %s%s;\n", u, p->unit,
               codegen_ctype(kt->t->type), kt->t->name, kt->t->name, kt == red ? rname : kt->name, kt == red ? "" : "[i]");
  }
}

// The reduced tensor is read from the peers; its pointer is passed only when it is stored.
static bool fused_passed(const KTensor *kt, const FusedSpec *f) { return kt->t != f->reduced || !f->reduced->scratch; }

static void fused_params(Plan *p, Buf *b, const FusedSpec *f) {
  buf_puts(b, "ncclDevComm dev");
  for (int w = 0; w < f->nwindows; w++) buf_printf(b, ", ncclWindow_t %s_win, size_t %s_off", f->window_names[w], f->window_names[w]);
  for (int i = 0; i < p->ntensors; i++) {
    const KTensor *kt = &p->tensors[i];
    if (!fused_passed(kt, f)) continue;
    bool store = kt->written || kt->t == f->reduced;
    buf_printf(b, ", %s%s *%s", store ? "" : "const ", codegen_ctype(kt->t->type), kt->name);
  }
  for (int i = 0; i < p->nscalars; i++) buf_printf(b, ", %s %s", codegen_ctype(p->scalars[i].type), p->scalars[i].name);
  for (int i = 0; i < p->nsizes; i++) buf_printf(b, ", size_t %s", p->sizes[i].name);
  buf_puts(b, f->oneshot ? ", size_t count" : ", size_t lo, size_t hi, size_t tail_lo, size_t tail_hi");
}

// The slice N elements at a time (one 4, 8 or 16-byte access per buffer and
// peer) while every local [i] buffer and every window is aligned to N elements
// (the windows' bases are page-aligned, so a peer's copy is aligned with ours).
static void fused_vector_loop(Plan *p, Buf *b, const FusedSpec *f, int n) {
  const char *u = p->unit;
  char u2[64], u3[64], u4[80];
  snprintf(u2, sizeof u2, "%s%s", u, u);
  snprintf(u3, sizeof u3, "%s%s%s", u, u, u);
  snprintf(u4, sizeof u4, "%s%s%s%s", u, u, u, u);
  const KTensor *red = reduced_tensor(p, f);
  buf_printf(b, "%sif (coconet_aligned<%d>(lo", u, n);
  for (int i = 0; i < p->ntensors; i++)
    if (!p->tensors[i].pointer && &p->tensors[i] != red) buf_printf(b, ", %s", p->tensors[i].name);
  buf_puts(b, ")");
  for (int w = 0; w < f->nwindows; w++) {
    const IrTensor *t = f->source;
    for (int g = 0; g < f->ngathered; g++)
      if (strcmp(f->gathered[g]->name, f->window_names[w]) == 0) t = f->gathered[g];
    buf_printf(b, " &&\n%s%scoconet_window_aligned<%d, %s>(%s_off, lo)", u, u, n, codegen_ctype(t->type), f->window_names[w]);
  }
  buf_printf(b, ") {\n%sconst size_t nvec = (hi - lo) / %d;\n", u2, n);
  buf_printf(b, "%sfor (size_t j = first; j < nvec; j += stride) {\n%sconst size_t i0 = lo + %d * j;\n", u2, u3, n);
  buf_printf(b, "%s%s %s[%d];\n", u3, codegen_ctype(f->dtype), reduced_name(p, f), n);
  buf_printf(b, "%scoconet_reduce_vec<%s, %s, %d>(%s_win, %s_off, dev.lsaSize, i0, %s);\n", u3, cg_coconet_red(f->red),
             codegen_ctype(f->dtype), n, f->window_names[0], f->window_names[0], reduced_name(p, f));
  for (int i = 0; i < p->ntensors; i++) {
    const KTensor *kt = &p->tensors[i];
    if (kt->pointer || kt == red) continue;
    buf_printf(b, "%s%s %s[%d];\n", u3, codegen_ctype(kt->t->type), kt->vec, n);
    if (kt->load) buf_printf(b, "%scoconet_load(%s + i0, %s);\n", u3, kt->name, kt->vec);
  }
  buf_printf(b, "%sfor (int k = 0; k < %d; k++)\n%s%s_elem(", u3, n, u4, p->k->name);
  elem_args(p, b, "k");
  buf_puts(b, ");\n");
  for (int i = 0; i < p->ntensors; i++) {
    const KTensor *kt = &p->tensors[i];
    if (!kt->pointer && (kt == red ? !f->reduced->scratch : kt->written))
      buf_printf(b, "%scoconet_store(%s + i0, %s);\n", u3, kt->name, kt->vec);
  }
  for (int i = 0; i < p->ntensors; i++) {
    const KTensor *kt = &p->tensors[i];
    if (!is_gathered(f, kt->t)) continue;
    buf_printf(b, "%sfor (int peer = 0; peer < dev.lsaSize; peer++)\n", u3);
    buf_printf(b, "%s%sif (peer != dev.lsaRank) coconet_store(coconet_peer<%s>(%s_win, %s_off, peer) + i0, %s);\n", u3, u,
               codegen_ctype(kt->t->type), kt->t->name, kt->t->name, kt->vec);
  }
  buf_printf(b, "%s}\n%slo += %d * nvec;\n%s}\n", u2, u2, n, u);
}

// The elements per vector step of the fused kernel: 16 bytes of the widest [i] buffer or of the reduced type.
static int fused_vector_width(const Plan *p, const FusedSpec *f) {
  int n = vector_width(p), w = 16 / ir_type_size(f->dtype);
  return n && n < w ? n : w;
}

// Split: this rank's slice from every peer, written to every peer; block 0 the tail.
static void fused_split_body(Plan *p, Buf *b, const FusedSpec *f) {
  const char *u = p->unit;
  char u2[64], u3[64];
  snprintf(u2, sizeof u2, "%s%s", u, u);
  snprintf(u3, sizeof u3, "%s%s%s", u, u, u);
  buf_printf(b, "%sconst size_t first = blockIdx.x * (size_t)blockDim.x + threadIdx.x;\n", u);
  buf_printf(b, "%sconst size_t stride = (size_t)blockDim.x * gridDim.x;\n", u);
  fused_vector_loop(p, b, f, fused_vector_width(p, f));
  buf_printf(b, "%sfor (size_t i = lo + first; i < hi; i += stride) {\n", u);
  fused_reduce(p, b, f, u2, false);
  fused_ops(p, b, f, u2, true);
  buf_printf(b, "%s}\n%sif (blockIdx.x == 0) {\n", u, u);
  buf_printf(b, "%sconst size_t i = tail_lo + threadIdx.x;\n%sconst bool mine = i < tail_hi;\n", u2, u2);
  fused_reduce(p, b, f, u2, true);
  buf_printf(b, "%s// every rank has read the tail from its peers before any rank writes it\n", u2);
  buf_printf(b, "%sbar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);\n%sif (mine) {\n", u2, u2);
  fused_ops(p, b, f, u3, false);
  buf_printf(b, "%s}\n", u2);
  buf_printf(b, "%s}\n%s// every write to a peer is done before any rank goes on\n", u, u);
  buf_printf(b, "%sbar.sync(ncclCoopCta(), cuda::memory_order_release);\n", u);
}

// One-shot: every element from every peer, tile by tile; a tile is written
// only after every rank has read it (the buffer may be reduced in place).
static void fused_oneshot_body(Plan *p, Buf *b, const FusedSpec *f) {
  const char *u = p->unit;
  char u2[64], u3[64];
  snprintf(u2, sizeof u2, "%s%s", u, u);
  snprintf(u3, sizeof u3, "%s%s%s", u, u, u);
  buf_printf(b, "%sconst size_t tiles = (count + blockDim.x - 1) / blockDim.x;\n", u);
  buf_printf(b, "%sfor (size_t t = blockIdx.x; t < tiles; t += gridDim.x) {\n", u);
  buf_printf(b, "%sconst size_t i = t * blockDim.x + threadIdx.x;\n%sconst bool mine = i < count;\n", u2, u2);
  fused_reduce(p, b, f, u2, true);
  buf_printf(b, "%s// every rank has read this tile from its peers before any rank writes it\n", u2);
  buf_printf(b, "%sbar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);\n%sif (mine) {\n", u2, u2);
  fused_ops(p, b, f, u3, false);
  buf_printf(b, "%s}\n%s}\n", u2, u);
}

int kernel_fused(const IrRegion *r, const char *unit, Kernel *k, const FusedSpec *f) {
  Plan *p = plan_make(r, unit, k);
  if (!p) return -1;
  for (int i = 0; i < p->ntensors; i++) {
    const KTensor *kt = &p->tensors[i];
    if ((kt->t == f->reduced || is_gathered(f, kt->t)) && kt->pointer) {
      plan_free(p);
      return 1;  // read at another index than [i]: not fused
    }
  }
  Buf b = {0};
  if (k->text) buf_printf(&b, "%s\n", k->text);
  else emit_elem(p, &b);
  if (f->oneshot) {
    buf_printf(&b, "// coconet: %s of region %s as one kernel on symmetric memory (one-shot): every rank sums "
                   "each element of '%s' from every peer in rank order and runs the ops on its own copy; block b "
                   "of every rank meets its peers' block b at an LSA barrier between reading a tile and writing "
                   "it\n", f->flow, r->name, f->window_names[0]);
  } else {
    buf_printf(&b, "// coconet: %s of region %s as one kernel on symmetric memory: block b of every rank "
                   "meets its peers' block b at LSA barriers; each rank sums its slice [lo, hi) of '%s' from every "
                   "peer in rank order, runs the ops and writes ", f->flow, r->name, f->window_names[0]);
    for (int i = 0; i < f->ngathered; i++)
      buf_printf(&b, "%s'%s'", i ? (i + 1 == f->ngathered ? " and " : ", ") : "", f->gathered[i]->name);
    buf_printf(&b, "%s to every peer; block 0 also computes the tail [tail_lo, tail_hi) on every rank, as the "
                   "NCCL path does\n", f->ngathered ? "" : "nothing");
  }
  buf_printf(&b, "__global__ void %s(", k->fused_name);
  fused_params(p, &b, f);
  buf_puts(&b, ")\n{\n");
  buf_printf(&b, "%sncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), dev, ncclTeamTagLsa(), blockIdx.x};\n", unit);
  buf_printf(&b, "%s// the peers' inputs are ready (their earlier work on their streams is done)\n", unit);
  buf_printf(&b, "%sbar.sync(ncclCoopCta(), cuda::memory_order_acquire);\n", unit);
  if (f->oneshot) fused_oneshot_body(p, &b, f);
  else fused_split_body(p, &b, f);
  buf_puts(&b, "}\n");
  free(k->text);
  k->text = buf_take_wrapped(&b, 0);
  Buf a = {0};
  buf_printf(&a, "%s.dev", f->args);
  for (int w = 0; w < f->nwindows; w++) buf_printf(&a, ", %s.win[%d], %s.offset[%d]", f->args, w, f->args, w);
  for (int i = 0; i < p->ntensors; i++)
    if (fused_passed(&p->tensors[i], f)) buf_printf(&a, ", %s", p->tensors[i].t->text);
  for (int i = 0; i < p->nscalars; i++) buf_printf(&a, ", %s", p->scalars[i].arg);
  for (int i = 0; i < p->nsizes; i++) {
    buf_puts(&a, ", ");
    cg_size(&a, p->sizes[i].k);
  }
  k->fused_args = buf_take(&a);
  plan_free(p);
  return 0;
}

