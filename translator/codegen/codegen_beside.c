// codegen_beside.c: what a host function seen through runs besides its
// collective (IrBeside: FT_LOG_DEBUG lines of a project's NCCL wrapper). The
// schedule does not call the function, so its statements run, as written, in
// a copy above the region's function, in the function's namespaces (so that
// their names mean what they mean there) and a namespace of the copy's own:
//
//   // coconet: region post_attn runs what 'ftNcclAllReduceSum<float>' (nccl_utils.h:61)
//   // runs besides its ncclAllReduce, its own statements (nccl_utils.h:63, 64, 69)
//   namespace fastertransformer {
//   namespace coconet_post_attn_1 {
//   typedef float T;
//   static void ftNcclAllReduceSum()
//   {
//       FT_LOG_DEBUG("%s start", __PRETTY_FUNCTION__);
//       ...
//
// The block calls the copy once where the op's scheduled work starts (before a
// split's ReduceScatter, a fused call site, an overlap loop), on every path
// that does not run the statement as written (which calls the function): a
// one-shot fused kernel's NCCL path keeps the call as written, so its fused
// branch calls the copy.
#include "codegen_impl.h"

#include <stdlib.h>
#include <string.h>

static bool listed(const IrOp *const *v, int n, const IrOp *op) {
  for (int i = 0; i < n; i++)
    if (v[i] == op) return true;
  return false;
}

static void add(const IrOp **v, int *n, const IrOp *op) {
  if (listed(v, *n, op)) return;
  if (*n == CG_BESIDES) COCONET_BUG("more than %d host functions with statements beside their collectives", CG_BESIDES);
  v[(*n)++] = op;
}

void cg_beside_written(Cg *cg, const IrOp *op) {
  const IrOp *o = op->orig ? op->orig : op;
  if (o->beside) add(cg->beside_written, &cg->nbeside_written, o);
}

bool cg_beside_is_written(const Cg *cg, const IrOp *op) {
  return listed(cg->beside_written, cg->nbeside_written, op->orig ? op->orig : op);
}

// The call of op's copy, at the block's current depth.
static void call_lines(Cg *cg, const IrOp *o) {
  const IrBeside *b = o->beside;
  cg_line(cg, "// coconet: what '%s' runs besides its %s (%s:%s), in its copy", b->title,
          o->kind == IR_OP_COLLECTIVE ? "collective" : "launch", text_base_name(b->loc.file), b->lines);
  cg_line(cg, "::%s%s::%s();", b->ns_prefix, b->space, b->name);
}

void cg_beside_call(Cg *cg, const IrOp *op) {
  const IrOp *o = op->orig ? op->orig : op;
  if (!o->beside || listed(cg->beside_called, cg->nbeside_called, o)) return;
  call_lines(cg, o);
  add(cg->beside_called, &cg->nbeside_called, o);
}

void cg_beside_before(Cg *cg, const Scope *sc, int at, int n, size_t pos, int depth) {
  for (int i = at; i < at + n && i < sc->n; i++) {
    const IrOp *o = sc->ops[i]->orig ? sc->ops[i]->orig : sc->ops[i];
    if (!o->beside || listed(cg->beside_called, cg->nbeside_called, o) || cg_beside_is_written(cg, o)) continue;
    char *tail = strdup(cg->out.s ? cg->out.s + pos : "");
    if (!tail) COCONET_BUG("out of memory");
    cg->out.len = pos;
    if (cg->out.s) cg->out.s[pos] = '\0';
    int saved = cg->depth;
    cg->depth = depth;
    call_lines(cg, o);
    cg->depth = saved;
    pos = cg->out.len;
    buf_puts(&cg->out, tail);
    free(tail);
    add(cg->beside_called, &cg->nbeside_called, o);
  }
}

int cg_beside_copies(const Cg *cg, Buf *b, bool late) {
  int n = 0;
  for (int i = 0; i < cg->nbeside_called; i++) {
    const IrOp *o = cg->beside_called[i];
    const IrBeside *s = o->beside;
    if (s->late != late) continue;
    n++;
    if (!b) continue;
    Buf head = {0};
    buf_printf(&head, "// coconet: region %s runs what '%s' (%s:%u) runs besides its %s, its own statements (%s:%s), "
                      "in this copy%s%s%s\n",
               cg->r->name, s->title, text_base_name(s->loc.file), s->loc.line,
               o->kind == IR_OP_COLLECTIVE ? "collective" : "launch", text_base_name(s->loc.file), s->lines,
               s->where ? " (its " : "", s->where ? s->where : "", s->where ? " is the copy's)" : "");
    char *wrapped = buf_take_wrapped(&head, 0);
    buf_puts(b, wrapped);
    free(wrapped);
    buf_printf(b, "%snamespace %s {\n", s->ns_open, s->space);
    for (const char *l = s->scope; *l;) {  // (nvcc warns of a constant the text does not use)
      size_t n = strcspn(l, "\n");
      buf_printf(b, "%s%.*s\n", strncmp(l, "constexpr ", 10) == 0 ? "[[maybe_unused]] " : "", (int)n, l);
      l += n + (l[n] == '\n');
    }
    buf_printf(b, "static void %s()\n{\n", s->name);
    cg_reindented(b, s->text, cg->unit);
    buf_printf(b, "}\n}  // namespace %s\n%s\n", s->space, s->ns_close);
  }
  return n;
}
