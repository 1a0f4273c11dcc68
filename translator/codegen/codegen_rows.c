// codegen_rows.c: `split reorder fuse` of row-wise kernels. A row-wise
// kernel's body is kept as the user wrote it, so its fused kernel cannot be
// made from IR expressions as a pointwise group's is. Instead each kernel of
// the group is copied, as written, into a __device__ function that runs one
// block of the grid it is launched with: blockIdx and gridDim are parameters
// of the copy, which shadow the built-ins in its body. The fused __global__
// then takes, block by block, the grid the kernels are launched with on this
// rank's rows (on the NCCL path): it sums the block's rows of the reduced
// buffer from every peer's symmetric memory into this rank's copy, runs the
// kernels' block (an elementwise kernel of the group through its generated
// kernel's _block function, on the block's rows), and writes the block's rows
// of each gathered buffer to every peer; then the same for the rows left over
// (the tail), which every rank reduces and computes, with an LSA barrier
// between reading a chunk from the peers and writing it (a peer may still be
// reading this rank's copy).
//
// The copy is the user's text with these edits: __ldg becomes coconet_ld, a
// coherent load, and the reduced buffer's parameters lose __restrict__ (the
// kernel reads rows that the fused kernel has just written, which the
// read-only cache does not see); for --target=host, its `extern __shared__`
// declarations are lowered as host.c lowers the file's.
#include "codegen_impl.h"
#include "common/text.h"

#include <stdlib.h>
#include <string.h>

static enum CXCursorKind kind_of(CXCursor c) { return clang_getCursorKind(c); }

//
// The __device__ copy of a kernel
//

// Remove every whole word w from s (in place), and the blank after it.
static void drop_word(char *s, const char *w) {
  size_t n = strlen(w);
  for (char *p = strstr(s, w); p; p = strstr(p, w)) {
    bool left = p == s || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z') ||
                            (p[-1] >= '0' && p[-1] <= '9'));
    char r = p[n];
    bool right = !(r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'));
    if (!left || !right) {
      p += n;
      continue;
    }
    size_t cut = n;
    while (p[cut] == ' ') cut++;
    memmove(p, p + cut, strlen(p + cut) + 1);
  }
}

// One kernel of the group: a row-wise kernel, or an elementwise one (its
// generated kernel's _block function).
typedef struct RowKernel {
  const IrOp *op;         // its slice op
  const Launch *l;        // a row-wise kernel's launch (NULL: an elementwise kernel)
  char *call;             // the copy as the fused kernel calls it: "ns::coconet_r_k<float, 256>"
  char *params[64];       // the fused kernel's parameter for each launch argument (NULL: not passed, the rows)
  const Kernel *ek;       // an elementwise kernel: its generated kernel
  KernelBlock blk;        // ... and its parameters in the fused kernel
} RowKernel;

// The namespaces a definition is in, outermost first ("a::b::"; "" at file scope).
static void namespaces(CXCursor def, Buf *open, Buf *close, Buf *qual) {
  CXCursor chain[16];
  int n = 0;
  for (CXCursor p = clang_getCursorSemanticParent(def); !clang_Cursor_isNull(p) && n < 16;
       p = clang_getCursorSemanticParent(p))
    if (kind_of(p) == CXCursor_Namespace) chain[n++] = p;  // (not extern "C": the copy is a C++ function)
  for (int i = n - 1; i >= 0; i--) {
    char *name = fe_spelling(chain[i]);
    buf_printf(open, "namespace %s%s{\n", name, *name ? " " : "");
    if (*name) buf_printf(qual, "%s::", name);
    free(name);
  }
  for (int i = 0; i < n; i++) {
    char *name = fe_spelling(chain[i]);
    buf_printf(close, "}  // namespace %s\n", *name ? name : "(anonymous)");
    free(name);
  }
}

// A location's byte offset in the file it is written in, and that file.
static unsigned file_offset(CXSourceLocation loc, CXFile *file) {
  unsigned offset = 0;
  clang_getFileLocation(loc, file, NULL, NULL, &offset);
  return offset;
}

// The copy of rk's kernel: `template <...> __device__ void NAME(params, blockIdx, gridDim) BODY`,
// its texts read where the kernel is defined (this file or a header of the user's).
static int copy_kernel(Cg *cg, RowKernel *rk, const IrTensor *reduced, const char *name, bool beside, Buf *out) {
  const Frontend *fe = cg->fe;
  const KernelDef *def = rk->l->def;
  CXCursor tparams[16], parms[64];
  int nt = def->is_template ? fe_kids_of_kind(def->cursor, CXCursor_TemplateTypeParameter, CXCursor_NonTypeTemplateParameter,
                                     CXCursor_TemplateTemplateParameter, tparams, 16)
                            : 0;
  int np = fe_kids_of_kind(def->cursor, CXCursor_ParmDecl, CXCursor_ParmDecl, CXCursor_ParmDecl, parms, 64);
  CXCursor body = fe_kids(def->cursor).last;
  SrcLoc at = fe_any_loc(fe, clang_getCursorLocation(def->cursor));
  if (kind_of(body) != CXCursor_CompoundStmt) {
    diag_error(&at, "codegen: kernel '%s' has no body to copy into the fused kernel", rk->l->kernel);
    return -1;
  }
  Buf open = {0}, close = {0}, qual = {0};
  if (!beside) namespaces(def->cursor, &open, &close, &qual);  // beside the function, in its namespaces already
  size_t header = out->len;  // the comment and the signature are coconet's; the body is the user's
  buf_printf(out, "// coconet: %s (%s:%u) as one block of the grid it is launched with (blockIdx and gridDim are "
                  "parameters); the fused kernel of region %s runs it on this rank's rows\n",
             rk->l->kernel, text_base_name(at.file), at.line, cg->r->name);
  buf_puts(out, buf_str(&open));
  if (nt) {
    buf_puts(out, "template <");
    for (int i = 0; i < nt; i++) {
      char *t = fe_cursor_text(fe, tparams[i]);
      buf_printf(out, "%s%s", i ? ", " : "", t);
      free(t);
    }
    buf_puts(out, ">\n");
  }
  buf_printf(out, "__device__ __forceinline__ void %s(", name);
  for (int i = 0; i < np; i++) {
    char *t = fe_cursor_text(fe, parms[i]);
    drop_word(t, "__grid_constant__");
    if (i < rk->l->nargs && ir_tensor_find(cg->r, rk->l->args[i].text) == reduced) {
      drop_word(t, "__restrict__");
      drop_word(t, "__restrict");
    }
    buf_printf(out, "%s, ", t);
    free(t);
  }
  buf_puts(out, "[[maybe_unused]] const uint3 blockIdx, [[maybe_unused]] const dim3 gridDim)\n");
  buf_wrap_tail(out, header);
  // The body with __ldg made coherent and, for the host backend, its dynamic shared memory lowered.
  CXFile file = NULL;
  CXSourceRange extent = clang_getCursorExtent(body);
  unsigned begin = file_offset(clang_getRangeStart(extent), &file), end = file_offset(clang_getRangeEnd(extent), NULL);
  SourceFile src = {fe->src.path, NULL, 0};
  src.buf = (char *)fe_file_bytes(fe, file, &src.len);
  Edit *edits = NULL;
  CXToken *toks = NULL;
  unsigned ntoks = 0;
  clang_tokenize(fe->tu, extent, &toks, &ntoks);
  for (unsigned i = 0; i < ntoks; i++) {
    if (clang_getTokenKind(toks[i]) != CXToken_Identifier) continue;
    CXString t = clang_getTokenSpelling(fe->tu, toks[i]);
    if (strcmp(clang_getCString(t), "__ldg") == 0) {
      CXSourceRange r = clang_getTokenExtent(fe->tu, toks[i]);
      edit_add(&edits, file_offset(clang_getRangeStart(r), NULL), file_offset(clang_getRangeEnd(r), NULL),
               "coconet_ld");
    }
    clang_disposeString(t);
  }
  clang_disposeTokens(fe->tu, toks, ntoks);
  int rc = cg->target == TARGET_HOST ? host_lower_in(fe, body, &edits) : 0;
  char *text = src.buf && end <= src.len ? edits_apply_span(&src, edits, begin, end) : strdup("{}");
  buf_printf(out, "%s\n%s", text, buf_str(&close));
  free(text);
  edits_free(edits);
  rk->call = xasprintf("%s%s%s%s%s", buf_str(&qual), name, def->is_template ? "<" : "",
                       def->is_template ? def->args : "", def->is_template ? ">" : "");
  buf_free(&open), buf_free(&close), buf_free(&qual);
  return rc;
}

// The kernel's `__launch_bounds__(...)` as written (malloc'd), or NULL: none,
// or a template's, whose arguments may name its parameters.
static char *launch_bounds(const Frontend *fe, const KernelDef *def) {
  if (def->is_template) return NULL;
  CXToken *toks = NULL;
  unsigned n = 0;
  CXSourceRange head = clang_getRange(clang_getRangeStart(clang_getCursorExtent(def->cursor)),
                                      clang_getRangeStart(clang_getCursorExtent(fe_kids(def->cursor).last)));
  clang_tokenize(fe->tu, head, &toks, &n);
  char *out = NULL;
  for (unsigned i = 0; i < n && !out; i++) {
    CXString t = clang_getTokenSpelling(fe->tu, toks[i]);
    bool lb = strcmp(clang_getCString(t), "__launch_bounds__") == 0;
    clang_disposeString(t);
    if (!lb) continue;
    int depth = 0;
    for (unsigned j = i + 1; j < n && !out; j++) {
      CXString u = clang_getTokenSpelling(fe->tu, toks[j]);
      const char *c = clang_getCString(u);
      depth += strcmp(c, "(") == 0;
      if (strcmp(c, ")") == 0 && --depth == 0)
        out = fe_between(fe, clang_getTokenLocation(fe->tu, toks[i]),
                         clang_getRangeEnd(clang_getTokenExtent(fe->tu, toks[j])));
      clang_disposeString(u);
    }
  }
  clang_disposeTokens(fe->tu, toks, n);
  return out;
}

//
// The fused kernel
//

typedef struct Rows {
  Cg *cg;
  const FusedSpec *f;
  RowKernel k[8];
  int nk;
  const RowKernel *first;  // the first row-wise kernel (its launch is the fused kernel's)
  int row_threads;        // 0: a block per row; 32: a warp; 1: a thread
  const char *reduced;    // the parameter that holds this rank's copy of the reduced buffer
  const char *gathered[FUSED_MAX_WINDOWS];  // ... of each gathered buffer
  bool per_row[FUSED_MAX_WINDOWS];          // ... and whether it holds one element per row
  Names names;            // the fused kernel's parameters
} Rows;

// The type a kernel parameter has in the launch's instance, restrict dropped.
static char *param_type(const KernelDef *def, int i) {
  CXCursor parms[64];
  bool instance = def->is_template && def->inst_fe;
  int np = fe_kids_of_kind(instance ? def->inst : def->cursor, CXCursor_ParmDecl, CXCursor_ParmDecl, CXCursor_ParmDecl, parms, 64);
  if (i >= np) return strdup(i < def->nparams ? def->params[i].type : "int");
  CXString s = clang_getTypeSpelling(clang_getCanonicalType(clang_getCursorType(parms[i])));
  char *t = strdup(clang_getCString(s));
  clang_disposeString(s);
  drop_word(t, "__restrict__");
  drop_word(t, "__restrict");
  drop_word(t, "restrict");
  return t;
}

static void fused_params(Rows *x, Buf *b) {
  const FusedSpec *f = x->f;
  buf_puts(b, "ncclDevComm coconet_dev");
  for (int w = 0; w < f->nwindows; w++)
    buf_printf(b, ", ncclWindow_t coconet_%s_win, size_t coconet_%s_off", f->window_names[w], f->window_names[w]);
  for (int i = 0; i < x->nk; i++) {
    const RowKernel *rk = &x->k[i];
    if (!rk->l) buf_puts(b, rk->blk.decls);
    for (int a = 0; rk->l && a < rk->l->nargs; a++) {
      if (!rk->params[a]) continue;
      const IrTensor *t = ir_tensor_find(x->cg->r, rk->l->args[a].text);
      char *type = t == f->reduced ? xasprintf("%s *", codegen_ctype(t->type)) : param_type(rk->l->def, a);
      size_t n = strlen(type);
      buf_printf(b, ", %s%s%s", type, n && type[n - 1] == '*' ? "" : " ", rk->params[a]);
      free(type);
    }
  }
  buf_puts(b, ", size_t coconet_h, size_t coconet_lo, size_t coconet_hi, size_t coconet_tail_lo, size_t coconet_tail_hi");
}

// Which parameter holds the reduced buffer and each gathered one; -1 after reporting.
static int find_buffers(Rows *x) {
  const FusedSpec *f = x->f;
  for (int i = 0; i < x->nk; i++) {
    const RowKernel *rk = &x->k[i];
    for (int t = 0; !rk->l && t < rk->blk.ntensors; t++) {  // an elementwise kernel's buffers, read at [i]
      if (rk->blk.tensors[t] == f->reduced && !x->reduced) x->reduced = rk->blk.names[t];
      for (int g = 0; g < f->ngathered; g++)
        if (f->gathered[g] == rk->blk.tensors[t] && !x->gathered[g]) x->gathered[g] = rk->blk.names[t];
    }
    for (int a = 0; rk->l && a < rk->l->nargs; a++) {
      char role = rk->op->pw.row_roles[a];
      const IrTensor *t = ir_tensor_find(x->cg->r, rk->l->args[a].text);
      if (!t || !rk->params[a]) continue;
      if (t == f->reduced && (role == 'p' || role == 'P') && !x->reduced) x->reduced = rk->params[a];
      for (int g = 0; g < f->ngathered; g++)
        if (f->gathered[g] == t && !x->gathered[g] && role != 'x' && role != 's' && role != 'r') {
          x->gathered[g] = rk->params[a];
          x->per_row[g] = role == 'o' || role == 'O';
        }
    }
  }
  if (!x->reduced) {
    diag_error(&x->k[0].op->loc, "codegen: no kernel of region '%s' reads the rows of '%s' that the fused "
                                 "kernel reduces", x->cg->r->name, f->reduced->name);
    return -1;
  }
  for (int g = 0; g < f->ngathered; g++)
    if (!x->gathered[g]) {
      diag_error(&x->k[0].op->loc, "codegen: no kernel of region '%s' holds '%s', which the fused kernel "
                                   "gathers", x->cg->r->name, f->gathered[g]->name);
      return -1;
    }
  return 0;
}

// One part of the rows (this rank's, or the rows left over): a loop over the
// blocks of the grid the kernels are launched with on it.
static void emit_part(Rows *x, Buf *b, bool tail) {
  const FusedSpec *f = x->f;
  const char *u = x->cg->unit;
  char u2[64];
  snprintf(u2, sizeof u2, "%s%s", u, u);
  const char *lo = tail ? "coconet_tail_lo" : "coconet_lo", *hi = tail ? "coconet_tail_hi" : "coconet_hi";
  const char *rows = tail ? "coconet_tail_rows" : "coconet_rows";
  const char *blocks = x->row_threads ? (tail ? "coconet_tail_blocks" : "coconet_blocks") : rows;
  if (tail)
    buf_printf(b, "%s// the rows left over: every rank sums them from its peers into its own copy (its block meets\n"
                  "%s// the peers' between reading a chunk and writing it) and runs the kernels on them\n", u, u);
  else
    buf_printf(b, "%s// this rank's rows, a block of the kernels' grid at a time: summed from every peer, computed,\n"
                  "%s// the gathered rows written to every peer\n", u, u);
  buf_printf(b, "%sconst size_t %s = (%s - %s) / coconet_h;\n", u, rows, hi, lo);
  if (x->row_threads)
    buf_printf(b, "%sconst size_t %s = (%s + coconet_per_block - 1) / coconet_per_block;\n", u, blocks, rows);
  buf_printf(b, "%sfor (size_t coconet_v = blockIdx.x; coconet_v < %s; coconet_v += gridDim.x) {\n", u, blocks);
  if (x->row_threads) {
    buf_printf(b, "%sconst size_t coconet_e0 = %s + coconet_v * coconet_per_block * coconet_h;\n", u2, lo);
    buf_printf(b, "%sconst size_t coconet_e1 = %s - coconet_e0 > coconet_per_block * coconet_h ? coconet_e0 + "
                  "coconet_per_block * coconet_h : %s;\n", u2, hi, hi);
  } else {
    buf_printf(b, "%sconst size_t coconet_e0 = %s + coconet_v * coconet_h, coconet_e1 = coconet_e0 + coconet_h;\n", u2,
               lo);
  }
  const char *src = f->window_names[0];
  if (tail)
    buf_printf(b, "%scoconet_reduce_span_shared<%s>(coconet_bar, coconet_%s_win, coconet_%s_off, coconet_dev.lsaSize, "
                  "%s, coconet_e0, coconet_e1);\n", u2, cg_coconet_red(f->red), src, src, x->reduced);
  else
    buf_printf(b, "%scoconet_reduce_span<%s>(coconet_%s_win, coconet_%s_off, coconet_dev.lsaSize, %s, coconet_e0, "
                  "coconet_e1);\n", u2, cg_coconet_red(f->red), src, src, x->reduced);
  buf_printf(b, "%s__syncthreads();\n", u2);
  for (int i = 0; i < x->nk; i++) {
    const RowKernel *rk = &x->k[i];
    if (!rk->l) {
      buf_printf(b, "%s%s_block(%scoconet_e0, coconet_e1);\n%s__syncthreads();\n", u2, rk->ek->name, rk->blk.args, u2);
      continue;
    }
    buf_printf(b, "%s%s(", u2, rk->call);
    for (int a = 0; a < rk->l->nargs; a++) {
      const char *p = rk->params[a];
      switch (rk->op->pw.row_roles[a]) {
      case 'p': case 'P': buf_printf(b, "%s + %s, ", p, lo); break;
      case 'o': case 'O': buf_printf(b, "%s + %s / coconet_h, ", p, lo); break;
      case 'r': {
        char *type = param_type(rk->l->def, a);
        drop_word(type, "const");
        buf_printf(b, "(%s)%s, ", type, rows);
        free(type);
        break;
      }
      default: buf_printf(b, "%s, ", p); break;
      }
    }
    buf_printf(b, "make_uint3((unsigned)coconet_v, 0, 0), dim3((unsigned)%s));\n%s__syncthreads();\n", blocks, u2);
  }
  for (int g = 0; g < f->ngathered && !tail; g++) {
    const char *t = f->gathered[g]->name;
    buf_printf(b, "%scoconet_gather_span(coconet_dev, coconet_%s_win, coconet_%s_off, %s, coconet_e0%s, coconet_e1%s);\n",
               u2, t, t, x->gathered[g], x->per_row[g] ? " / coconet_h" : "", x->per_row[g] ? " / coconet_h" : "");
  }
  buf_printf(b, "%s}\n", u);
}

static void fused_comment(Rows *x, Buf *b) {
  const FusedSpec *f = x->f;
  const char *who = x->row_threads == 32 ? "a warp" : x->row_threads == 1 ? "a thread" : "a block";
  buf_printf(b, "// coconet: %s of region %s as one kernel on symmetric memory. Block b of every rank meets its "
                "peers' block b at LSA barriers; it takes blocks of the grid the kernels are launched with on this "
                "rank's rows [lo, hi) (%s per row), sums their rows of '%s' from every peer in rank order, runs the "
                "kernels' block and writes ", f->flow, x->cg->r->name, who, f->window_names[0]);
  for (int i = 0; i < f->ngathered; i++)
    buf_printf(b, "%s'%s'", i ? (i + 1 == f->ngathered ? " and " : ", ") : "", f->gathered[i]->name);
  buf_printf(b, "%s to every peer; then every rank does the same with the rows left over [tail_lo, tail_hi), "
                "writing only its own copy\n", f->ngathered ? "" : "nothing");
}

// An elementwise kernel of the group: the generated kernel the NCCL path
// launches on the slice gets a _block function, which the fused kernel calls
// on a block's rows (once per generated kernel: it may hold a run of kernels).
static int add_elementwise(Rows *x, const IrOp *op) {
  Cg *cg = x->cg;
  Kernel *ek = NULL;
  for (int i = 0; i < cg->nkernels && !ek; i++)
    for (int j = 0; j < cg->kernels[i].nops && !ek; j++)
      if (cg_orig(cg->kernels[i].ops[j]) == cg_orig(op)) ek = &cg->kernels[i];
  for (int i = 0; i < x->nk; i++)
    if (x->k[i].ek == ek && ek) return 0;
  if (!ek || x->nk == 8) {
    diag_error(&op->loc, "codegen: cannot run kernel '%s' in the fused kernel of region '%s'", op->pw.kernel,
               cg->r->name);
    return -1;
  }
  RowKernel *rk = &x->k[x->nk++];
  rk->op = op;
  rk->ek = ek;
  return kernel_block(cg->r, cg->unit, ek, x->f->reduced, &x->names, &rk->blk);
}

int rows_fused(Cg *cg, const Scope *sc, int at, int n, const FusedSpec *f, Kernel *k, char **config) {
  Rows *x = calloc(1, sizeof *x);
  if (!x) COCONET_BUG("out of memory");
  x->cg = cg;
  x->f = f;
  int rc = 0;
  Buf b = {0};
  // Beside the region's function when every row-wise kernel is in its namespaces (before it), else above it.
  bool beside = true, placed = true;
  for (int i = at; i < at + n; i++) {
    const IrOp *op = sc->ops[i];
    const Launch *l = op->kind == IR_OP_POINTWISE && op->pw.row ? cg_launch_of(cg, op) : NULL;
    bool ok = true;
    if (l && l->def) beside &= place_copy_beside(cg->fe, l->def, cg->fr->range.begin.offset, &ok);
  }
  for (int i = at; i < at + n && !beside; i++) {
    const IrOp *op = sc->ops[i];
    const Launch *l = op->kind == IR_OP_POINTWISE && op->pw.row ? cg_launch_of(cg, op) : NULL;
    if (l && l->def && l->def->range.end.offset > place_decl(cg->fe, cg->fr->range.begin.offset)) {
      diag_error(&op->loc, "codegen: the fused kernel of region '%s' goes above the declaration that holds it, but "
                           "kernel '%s' is defined in it (the region's row-wise kernels are in different namespaces)",
                 cg->r->name, op->pw.kernel);
      placed = false;
    }
  }
  if (!placed) rc = -1;
  k->late = beside;
  for (int i = at; i < at + n && rc == 0; i++) {
    const IrOp *op = sc->ops[i];
    if (op->kind != IR_OP_POINTWISE || op->span.part != IR_PART_SLICE) continue;
    if (!op->pw.row) {
      rc = add_elementwise(x, op);
      continue;
    }
    const Launch *l = cg_launch_of(cg, op);
    if (!l || !l->def || x->nk == 8 || l->nargs > 64) {
      diag_error(&op->loc, "codegen: cannot copy kernel '%s' into the fused kernel of region '%s'", op->pw.kernel,
                 cg->r->name);
      rc = -1;
      break;
    }
    RowKernel *rk = &x->k[x->nk++];
    rk->op = op;
    rk->l = l;
    x->row_threads = op->pw.row_threads;
    if (!x->first) x->first = rk;
    bool copied = false;
    for (int j = 0; j < x->nk - 1; j++)
      if (x->k[j].l && clang_equalCursors(x->k[j].l->def->cursor, l->def->cursor)) {
        rk->call = strdup(x->k[j].call);
        copied = true;
      }
    if (!copied) {
      // (a region's second fused kernel copies its kernels under names of its own)
      char *name = cg->nfused ? xasprintf("coconet_%s_%s_%d", cg->r->name, l->def->name, cg->nfused + 1)
                              : xasprintf("coconet_%s_%s", cg->r->name, l->def->name);
      rc = copy_kernel(cg, rk, f->reduced, name, beside, &b);
      free(name);
    }
    for (int a = 0; a < l->nargs; a++) {
      if (op->pw.row_roles[a] == 'r') continue;
      const char *want = a < l->def->nparams && l->def->params[a].name && *l->def->params[a].name
                             ? l->def->params[a].name : "coconet_arg";
      rk->params[a] = strdup(names_add(&x->names, want));
    }
  }
  if (rc == 0) rc = find_buffers(x);
  if (rc == 0) {
    size_t generated = b.len;  // the kernels' copies before it stay as written
    fused_comment(x, &b);
    // The kernels' launch bounds, when they agree: the fused kernel runs with their block.
    char *bounds = launch_bounds(cg->fe, x->first->l->def);
    for (int i = 0; i < x->nk && bounds; i++) {
      if (!x->k[i].l) continue;
      char *other = launch_bounds(cg->fe, x->k[i].l->def);
      if (!other || strcmp(other, bounds) != 0) {
        free(bounds);
        bounds = NULL;
      }
      free(other);
    }
    buf_printf(&b, "__global__ void %s%s%s(", bounds ? bounds : "", bounds ? " " : "", k->fused_name);
    free(bounds);
    fused_params(x, &b);
    const char *u = cg->unit;
    buf_printf(&b, ")\n{\n%sncclLsaBarrierSession<ncclCoopCta> coconet_bar{ncclCoopCta(), coconet_dev, ncclTeamTagLsa(), "
                   "blockIdx.x};\n", u);
    buf_printf(&b, "%s// the peers' inputs are ready (their earlier work on their streams is done)\n", u);
    buf_printf(&b, "%scoconet_bar.sync(ncclCoopCta(), cuda::memory_order_acquire);\n", u);
    if (x->row_threads)
      buf_printf(&b, "%sconst size_t coconet_per_block = blockDim.x / %d;  // rows a block of the kernels runs\n", u,
                 x->row_threads);
    emit_part(x, &b, false);
    emit_part(x, &b, true);
    buf_printf(&b, "%s// every write to a peer is done before any rank goes on\n", u);
    buf_printf(&b, "%scoconet_bar.sync(ncclCoopCta(), cuda::memory_order_release);\n}\n", u);
    k->text = buf_take_wrapped(&b, generated);
    // Its launch: the arguments, and the grid, block and shared memory.
    Buf a = {0};
    buf_printf(&a, "%s.dev", f->args);
    for (int w = 0; w < f->nwindows; w++) buf_printf(&a, ", %s.win[%d], %s.offset[%d]", f->args, w, f->args, w);
    for (int i = 0; i < x->nk; i++) {
      if (!x->k[i].l) buf_printf(&a, ", %s", x->k[i].ek->args);
      for (int j = 0; x->k[i].l && j < x->k[i].l->nargs; j++)
        if (x->k[i].params[j]) buf_printf(&a, ", %s", cg_piece(cg, &x->k[i].l->args[j]));
    }
    const Part *p = cg_part_for(cg, sc, at, sc->ops[at]);
    Buf h = {0};
    cg_size(&h, x->first->op->pw.row);
    const char *ht = buf_str(&h);
    bool simple = cg_simple(ht) || strspn(ht, "0123456789") == strlen(ht);
    buf_printf(&a, ", %s, %s.slice_lo, %s.slice_hi, %s.tail_lo, %s.hi", ht, p->name, p->name, p->name, p->name);
    k->fused_args = buf_take(&a);
    const Launch *l = x->first->l;
    char *per_block = x->row_threads ? xasprintf("(%s) / %d", cg_piece(cg, &l->block), x->row_threads) : strdup("1");
    *config = xasprintf(simple ? "coconet_fused_rows_grid(%s.s / %s, %s.tail / %s, %s), %s, %s"
                               : "coconet_fused_rows_grid(%s.s / (%s), %s.tail / (%s), %s), %s, %s",
                        p->name, ht, p->name, ht, per_block, cg_piece(cg, &l->block),
                        l->shmem.text ? cg_piece(cg, &l->shmem) : "0");
    free(per_block);
    buf_free(&h);
  }
  buf_free(&b);
  for (int i = 0; i < x->nk; i++) {
    free(x->k[i].call);
    free(x->k[i].blk.decls);
    free(x->k[i].blk.args);
    for (int a = 0; a < 64; a++) free(x->k[i].params[a]);
  }
  names_free(&x->names);
  free(x);
  return rc;
}
