// codegen_region.c: a region's block as a whole (codegen_region): its
// indentation, the overlap loop over chunks, the generated kernels and static
// state that go above the region's function, variables only the replaced
// launches used, and --explain's account of fuse groups. codegen.c emits each op.
#include "codegen_impl.h"
#include "common/text.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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
    const char *comm = cg_op_comm(tmpl.ops[i], &last);
    if (cg_needs_rank(tmpl.ops[i])) cg_rank_for(cg, comm);
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
  if (cg->live_parts > cg->nparts) cg->live_parts = cg->nparts;
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
    if (cg_is_rewritten(op) || op->fuse_group || !o || cg_orig(op) != o) return false;
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
  if (cg_beside_copies(cg, NULL, true)) {
    buf_printf(&b, "// coconet: begin generated code for region %s, beside its function\n\n", cg->r->name);
    cg_beside_copies(cg, &b, true);
  }
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

// The generated code above the region's top-level declaration (the runtime's
// #include is the driver's, once per file), or NULL when there is none.
static char *kernels_text(Cg *cg) {
  // The headers of the types and functions the generated kernels use, those only
  // (curand_kernel.h alone costs nvcc 0.7 s).
  static const char *const headers[][2] = {
      {"__half", "cuda_fp16.h"}, {"__nv_bfloat16", "cuda_bf16.h"}, {"curand", "curand_kernel.h"}};
  Buf h = {0};
  for (size_t j = 0; j < sizeof headers / sizeof *headers; j++) {
    bool used = false;
    for (int i = 0; i < cg->nkernels && !used; i++) used = strstr(cg->kernels[i].text, headers[j][0]) != NULL;
    if (used) buf_printf(&h, "#include <%s>\n", headers[j][1]);
  }
  bool any = cg->overlap || cg->pipeline || h.len || cg_beside_copies(cg, NULL, false);
  for (int i = 0; i < cg->nkernels; i++) any = any || !cg->kernels[i].late;
  if (!any) return NULL;
  Buf b = {0};
  buf_printf(&b, "// coconet: begin generated code for region %s\n%s\n", cg->r->name, h.len ? buf_str(&h) : "");
  buf_free(&h);
  if (cg->overlap)
    buf_printf(&b, "// coconet: the second stream and events of region %s (created once per device)\n"
                   "static coconet_region_state coconet_%s_overlap;\n\n", cg->r->name, cg->r->name);
  if (cg->pipeline)
    buf_printf(&b, "// coconet: the pipeline header buffer of region %s (allocated once per device)\n"
                   "static coconet_pipe_state coconet_%s_pipe;\n\n", cg->r->name, cg->r->name);
  cg_beside_copies(cg, &b, false);
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
    for (int i = 0; i < sc->n; i++) kept |= cg_orig(sc->ops[i]) == o && !cg_is_rewritten(sc->ops[i]);
    if (!kept) replaced[n++] = o->range;
  }
  char *names[16];
  int k = unused_config(cg->fe, cg->fr, replaced, n, names, 16);
  bool said = false;
  for (int i = 0; i < k; i++) {
    if (!names_identifier(body, names[i] + (names[i][0] == '&'))) {  // "&n": a local that is not const
      if (!said) cg_line(cg, "// coconet: the generated kernels pick their own grid and arguments; this was for the launches they replace");
      said = true;
      cg_line(cg, "(void)%s;", names[i]);
    }
    free(names[i]);
  }
}

// A tensor the alias test names: a buffer a kernel reads at other elements
// than its own, or one the region writes; its text is a variable or an
// expression the launch passes (`ws[l]`, `sc ? sc : g`), evaluated there.
static bool alias_candidate(const IrTensor *t) { return t->type != IR_VOID; }

static bool read_elsewhere(const IrRegion *r, const IrTensor *t) {
  for (const IrOp *op = r->ops; op; op = op->next)
    if (op->kind == IR_OP_POINTWISE)
      for (const IrUse *u = op->reads; u; u = u->next)
        if (u->ref.t == t && u->index != IR_IDX_I) return true;
  return false;
}

// The run-time test that the buffers kernels read at other elements than
// their own are apart from those the region writes (the schedule leaves
// most of a reduced buffer unreduced while the kernels run on this rank's
// slice); into test, and the comment that says so into why. False: no such pair.
// Not for a region that sends to or receives from another region (pipeline):
// the other end runs its own protocol whatever this one picks.
static bool alias_test(const IrRegion *r, Buf *test, Buf *why) {
  for (const IrClause *c = r->clauses; c; c = c->next)
    if (c->kind == IR_CL_PIPELINE) return false;
  int elsewhere = 0, pairs = 0, apart = 0;
  for (const IrTensor *t = r->tensors; t; t = t->next) {
    elsewhere += alias_candidate(t) && read_elsewhere(r, t);
    apart += alias_candidate(t) && t->apart;
  }
  for (const IrTensor *t = r->tensors; t && elsewhere; t = t->next)
    if (alias_candidate(t) && t->written) pairs += elsewhere - read_elsewhere(r, t);
  if (!pairs && apart < 2) return false;
  buf_puts(test, "coconet_disjoint({");
  Buf read = {0}, written = {0};
  int n = 0;
  for (const IrTensor *t = r->tensors; t; t = t->next) {
    bool at_others = read_elsewhere(r, t);
    if (!alias_candidate(t) || !(t->written || at_others || t->apart)) continue;
    buf_printf(test, "%s{%s, ", n++ ? ", " : "", t->text);
    if (t->count) {
      cg_size(test, t->count);
      buf_puts(test, " * ");
    }
    buf_printf(test, "sizeof(%s), %s}", codegen_ctype(t->type), t->written ? "true" : "false");
    Buf *list = at_others ? &read : &written;
    buf_printf(list, "%s%s", list->len ? ", " : "", t->text);
  }
  buf_puts(test, "})");
  if (read.len)
    buf_printf(why, "kernels read %s at other elements than their own; the schedule takes %s to be apart from "
                    "the buffers the region writes%s%s: it runs when they are, the region as written otherwise",
               buf_str(&read), strchr(buf_str(&read), ',') ? "them" : "it", written.len ? ", " : "",
               buf_str(&written));
  else
    buf_printf(why, "the schedule runs a collective of the group after kernels the program runs after it, taking "
                    "%s to be apart: it runs when they are, the region as written otherwise",
               buf_str(&written));
  buf_free(&read);
  buf_free(&written);
  return true;
}

// The communicator and stream of the region's first collective (NULL: none).
static const IrCollective *first_collective(const IrRegion *r) {
  for (const IrOp *op = r->ops; op; op = op->next)
    if (op->kind == IR_OP_COLLECTIVE) return &op->coll;
  return NULL;
}

// A buffer the clause checks can name: a variable of a known element count and type.
static bool checkable(const IrTensor *t) { return t->count && t->type != IR_VOID && cg_simple(t->text); }

static void element_bytes(Buf *b, const IrTensor *t) {
  cg_size(b, t->count);
  buf_printf(b, " * sizeof(%s)", codegen_ctype(t->type));
}

// COCONET_CHECK=clauses at the region's top: each replicated buffer compared across ranks.
static void check_replicated(Cg *cg) {
  const IrCollective *c = first_collective(cg->r);
  for (const IrTensor *t = cg->r->tensors; t && c; t = t->next) {
    if (!t->replicated || !checkable(t)) continue;
    Buf bytes = {0};
    element_bytes(&bytes, t);
    cg_line(cg, "// coconet: COCONET_CHECK=clauses: replicated(%s) compared across ranks", t->text);
    // Only where the region runs its collective (under a guard, the communicator may exist only then).
    Buf guards = {0};
    for (const IrAssume *a = cg->r->assumes; a; a = a->next)
      if (a->guard) buf_printf(&guards, "%s && ", a->test);
    cg_line(cg, "if (%scoconet_check_clauses())", buf_str(&guards));
    buf_free(&guards);
    cg_line(cg, "%scoconet_check_replicated(%s, %s, %s, %s, \"%s\", \"%s\", __FILE__, __LINE__);", cg->unit, t->text,
            buf_str(&bytes), c->comm, c->stream, cg->r->name, t->text);
    buf_free(&bytes);
  }
}

// COCONET_CHECK=clauses after the schedule: what shard and scratch say holds no
// value is poisoned (all of a scratch buffer; a shard buffer outside this
// rank's slice and the tail, for element slices: not with row-wise kernels or
// overlap's chunks).
static void poison_after(Cg *cg) {
  const IrCollective *c = first_collective(cg->r);
  bool rows = cg->r->overlap_chunks > 1;
  for (const IrOp *op = cg->r->ops; op; op = op->next) rows |= op->kind == IR_OP_POINTWISE && op->pw.row;
  bool any = false;
  for (const IrTensor *t = cg->r->tensors; t && c; t = t->next)
    any |= checkable(t) && (t->scratch || (t->shard && !rows));
  if (!any) return;
  cg_line(cg, "// coconet: COCONET_CHECK=clauses: what shard and scratch leave without a value is poisoned");
  cg_line(cg, "if (coconet_check_clauses()) {");
  cg->depth++;
  for (const IrTensor *t = cg->r->tensors; t; t = t->next) {
    if (!checkable(t) || !(t->scratch || (t->shard && !rows))) continue;
    Buf n = {0};
    cg_size(&n, t->count);
    if (t->scratch)
      cg_line(cg, "coconet_poison(%s, sizeof(%s), 0, %s, %s, __FILE__, __LINE__);", t->text, codegen_ctype(t->type),
              buf_str(&n), c->stream);
    else
      cg_line(cg, "coconet_poison_outside_slice(%s, sizeof(%s), %s, %s, %s, __FILE__, __LINE__);", t->text,
              codegen_ctype(t->type), buf_str(&n), c->comm, c->stream);
    buf_free(&n);
  }
  cg->depth--;
  cg_line(cg, "}");
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
  if (cg->r->locals)
    cg_line(cg, "// coconet: the region's locals first (nothing in the region changes what they read)");
  for (const IrHoist *h = cg->r->locals; h; h = h->next) cg_line_as_written(cg, h->text);
  if (cg->r->hoists) cg_line(cg, "// coconet: arguments with side effects, evaluated once, in the order written");
  for (const IrHoist *h = cg->r->hoists; h; h = h->next) {
    if (strcmp(names_add(&cg->names, h->name), h->name) != 0)  // effects.c chose a name not in use
      COCONET_BUG("the name '%s' of an argument with side effects is in use", h->name);
    cg_line(cg, "[[maybe_unused]] const %s %s = %s;", h->type == IR_VOID ? "auto" : codegen_ctype(h->type), h->name,
            h->text);
  }
  Buf head = cg->out;  // the ops go to a buffer of their own, the (void) lines before them
  cg->out = (Buf){0};
  check_replicated(cg);
  int consumed, rc = 0;
  // Run-time preconditions (a pointer a kernel tests against NULL): the
  // schedule when they hold, the region as written otherwise.
  Buf test = {0};
  for (const IrAssume *a = cg->r->assumes; a; a = a->next) {
    SrcLoc at = a->loc;
    if (a->launcher) {
      // The path's conditions, long as the launcher's locals are written out in them: a line of their own.
      const char *path = names_add(&cg->names, "coconet_path");
      cg_line(cg, "// coconet: '%s' picks its kernel at run time: the schedule is for '%s', which it launches "
               "(%s:%u:%u) when %s holds; the region runs as written otherwise", a->launcher, a->kernel,
               text_base_name(at.file), at.line, at.col, path);
      // One condition a line (they are joined by the top-level &&s, or ||s where paths merged).
      const char *from = a->test;
      int depth = 0;
      for (const char *c = a->test;; c++) {
        depth += *c == '(' ? 1 : *c == ')' ? -1 : 0;
        if (*c && (depth || (strncmp(c, " && ", 4) != 0 && strncmp(c, " || ", 4) != 0))) continue;
        const char *op = !*c ? ";" : c[1] == '&' ? " &&" : " ||";
        if (from == a->test) cg_line(cg, "const bool %s = %.*s%s", path, (int)(c - from), from, op);
        else cg_line(cg, "    %.*s%s", (int)(c - from), from, op);
        if (!*c) break;
        from = c + 4;
        c += 3;
      }
      buf_printf(&test, "%s%s", test.len ? " && " : "", path);
      const IrCollective *c = first_collective(cg->r);
      if (c) {
        cg_line(cg, "// coconet: COCONET_CHECK=clauses: every rank takes the path or none does");
        cg_line(cg, "if (coconet_check_clauses())");
        cg_line(cg, "%scoconet_check_path(%s, %s, %s, \"%s\", \"%s\", __FILE__, __LINE__);", cg->unit, path, c->comm,
                c->stream, cg->r->name, a->launcher);
      }
      continue;
    } else if (a->guard)
      cg_line(cg, "// coconet: the region runs %s only when %s (%s:%u:%u): the schedule is for it running; the "
               "region runs as written otherwise", a->kernel, a->test, text_base_name(at.file), at.line, at.col);
    else if (a->divisor)
      cg_line(cg, "// coconet: kernel '%s' reads its rows %d elements at a time (%s:%u:%u): the schedule is for "
               "%s; the region runs as written otherwise", a->kernel, a->divisor, text_base_name(at.file), at.line,
               at.col, a->test);
    else if (a->other)
      cg_line(cg, "// coconet: kernel '%s' steps from slice to slice by '%s' (passed '%s') and its count is '%s' "
               "(%s:%u:%u): the schedule is for %s == %s; the region runs as written otherwise", a->kernel, a->param,
               a->var, a->other, text_base_name(at.file), at.line, at.col, a->var, a->other);
    else if (a->sometimes)
      cg_line(cg, "// coconet: kernel '%s' reaches '%s' only under a condition (%s:%u:%u), where it may be NULL: the "
               "schedule is for %s; the region runs as written otherwise", a->kernel, a->var, text_base_name(at.file),
               at.line, at.col, a->test);
    else
      cg_line(cg, "// coconet: kernel '%s' tests '%s' against NULL (%s:%u:%u): the schedule is for %s; the region "
               "runs as written otherwise", a->kernel, a->var, text_base_name(at.file), at.line, at.col, a->test);
    buf_printf(&test, "%s%s", test.len ? " && " : "", a->test);
  }
  Buf aliases = {0}, alias_names = {0};
  if (alias_test(cg->r, &aliases, &alias_names)) {
    cg_line(cg, "// coconet: %s", buf_str(&alias_names));
    buf_printf(&test, "%s%s", test.len ? " && " : "", buf_str(&aliases));
  }
  bool fallback = test.len > 0;
  buf_free(&aliases);
  buf_free(&alias_names);
  if (fallback) {
    cg_line(cg, "if (%s) {", buf_str(&test));
    cg->depth++;
  }
  for (int i = 0; i < sc->n && rc == 0; i += consumed) {
    size_t pos = cg->out.len;
    int depth = cg->depth;
    if (sc->ops[i]->span.nchunks > 1) rc = emit_overlap(cg, sc, i, &consumed);
    else rc = cg_emit_op(cg, sc, i, &consumed);
    if (rc == 0) cg_beside_before(cg, sc, i, consumed, pos, depth);
  }
  if (rc == 0) poison_after(cg);
  if (fallback) {
    cg->depth--;
    cg_line(cg, "} else {");
    cg->depth++;
    cg->written = true;
    if (cg->r->written) {
      for (int i = 0; i < cg->r->nwritten && rc == 0; i++) rc = cg_emit_verbatim(cg, cg->r->written[i]);
    } else {
      for (const IrOp *op = cg->r->ops; op && rc == 0; op = op->next) rc = cg_emit_verbatim(cg, op);
    }
    cg->written = false;
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
  *cg = (Cg){.fe = fe, .fr = fr, .r = r, .target = target, .indent = indent, .cuda_check = cuda_wrapper(fr),
             .names.spelled = fe_names_in_use(fe)};
  cg->unit = indent_unit(fe, fr, indent);
  Scope sc = scope_of(list);
  int rc = generate(cg, &sc);
  if (rc == 0) {
    out->body = buf_take(&cg->out);
    out->runtime = !cg->runtime ? NULL : cg->nfused ? "coconet_fused.h" : "coconet.h";
    out->kernels = cg->runtime || cg->nbeside_called ? kernels_text(cg) : NULL;
    out->kernels_at = cg->runtime || cg->nbeside_called ? place_decl(fe, fr->range.begin.offset) : 0;
    CXCursor fn;
    out->late = cg->runtime || cg->nbeside_called ? late_text(cg) : NULL;
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
