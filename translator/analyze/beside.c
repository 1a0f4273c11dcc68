// beside.c: what a host function seen through runs besides its collective
// (front.h's Beside, a log line of a project's NCCL wrapper) becomes the op's
// IrBeside, which the schedule runs in a copy of its own above the region's
// function (beside it, inside its namespaces, for a function defined there).
// There the statements must mean what they mean in the function: the function
// defined before that place, the macros they expand not #undef'd
// or #defined again (analyze_macros.c), and no declaration of the user's between
// the function and the copy with a name its body uses (analyze_names.c). A
// name whose value is where it is written (__PRETTY_FUNCTION__, __LINE__) then
// names the copy: a warning says so.
#include "analyze_impl.h"
#include "common/text.h"

#include <stdlib.h>
#include <string.h>

static void fail(const Region *r, const Stmt *s, const Beside *b, const char *why, const char *name, SrcLoc *at) {
  diag_error(&s->range.begin, "region '%s': '%s' (%s:%u) runs statements besides its %s (%s:%u), which the "
                              "schedule runs in a copy above the region's function; %s%s%s",
             r->name, b->title, text_base_name(b->loc.file), b->loc.line, s->callee, text_base_name(b->at[0].file),
             b->at[0].line, why, name ? name : "", name ? "'" : "");
  if (at) diag_note(at, "declared here");
}

const IrBeside *extract_beside(const Frontend *fe, const Region *r, IrRegion *ir, const Stmt *s) {
  const Beside *b = s->beside;
  if (!b) return NULL;
  unsigned place = place_decl(fe, r->range.begin.offset);
  const char *open = b->ns_open, *close = b->ns_close;
  bool late = false;
  if (b->in_main && b->offset >= place) {
    // Defined in the namespace block of the region's function, before it: the copy goes beside the function.
    CXCursor fn;
    unsigned beside = place_fn(fe, r->range.begin.offset, &fn);
    char *fo = NULL, *fc = NULL, *fp = NULL;
    size_t no = 0, nc = 0, wc = strlen(close);
    late = !clang_Cursor_isNull(fn) && b->offset < beside && place_namespaces(fn, &fo, &fc, &fp) &&
           strncmp(open, fo, no = strlen(fo)) == 0 && wc >= (nc = strlen(fc)) && strcmp(close + wc - nc, fc) == 0;
    free(fo);
    free(fc);
    free(fp);
    if (!late) {
      fail(r, s, b, "the function is defined after that place: define it before the top-level declaration that "
                    "holds the region, or in the namespace of the region's function, before that function", NULL,
           NULL);
      return NULL;
    }
    place = beside;
    open += no;
    close = ir_printf(ir, "%.*s", (int)(wc - nc), close);
  }
  char *gone = macro_gone_in(fe, b->stmts, b->n, place, false);
  if (gone) {
    fail(r, s, b, "the copy could mean something else: they use macro '", gone, NULL);
    free(gone);
    return NULL;
  }
  SrcLoc at;
  char *clash = copy_name_clash(fe, b->fn, place, &at);
  if (clash) {
    fail(r, s, b, "the copy could name another declaration than the function does: a declaration of yours after "
                  "it names '", clash, &at);
    free(clash);
    return NULL;
  }
  // The copy runs before the collective reads its arguments, which the call as written evaluates first: the
  // statements must not assign what they read (`g_n += 50;` after the collective, `g_n` its count). (What
  // they may change through a pointer or a call coconet does not see into is not followed.)
  CXCursor call = wrapper_call_in(fe, s->cursor);
  for (int i = 0; i < b->n && !clang_Cursor_isNull(call); i++) {
    CallChanges *cc = call_changes_stmt(fe, b->stmts[i]);
    const char *read = NULL;
    char buf[256];
    SrcLoc changed = {0};
    Piece arg = {0};
    for (int a = 0; a < clang_Cursor_getNumArguments(call) && !read; a++) {
      arg.range = fe_range(fe, clang_getCursorExtent(clang_Cursor_getArgument(call, (unsigned)a)));
      if (!arg.range.begin.file) continue;
      arg.text = fe_text(fe, arg.range);
      read = call_changes_read_named(cc, &arg, buf, sizeof buf, &changed);
      if (!read) free(arg.text);
    }
    call_changes_free(cc);
    if (read) {
      diag_error(&arg.range.begin, "region '%s': '%s' runs statements besides its %s, which the schedule runs "
                                   "before the collective reads its arguments; the one at %s:%u may change '%s', "
                                   "which this argument reads: compute it into a local before the region",
                 r->name, b->title, s->callee, text_base_name(b->at[i].file), b->at[i].line, read);
      if (changed.file) diag_note(&changed, "the change may be here");
      free(arg.text);
      return NULL;
    }
  }
  int k = 1;  // (the copies of a region are told apart by their order)
  for (const IrOp *op = ir->ops; op; op = op->next) k += op->beside != NULL;
  IrBeside *ib = ir_alloc(ir, sizeof *ib);
  Text lines = {0};
  text_add(&lines, "");
  for (int i = 0; i < b->n; i++) {
    char *n = xasprintf("%s%u", i ? ", " : "", b->at[i].line);
    text_add(&lines, n);
    free(n);
  }
  *ib = (IrBeside){.name = ir_strdup(ir, b->name), .title = ir_strdup(ir, b->title), .text = ir_strdup(ir, b->text),
                   .ns_open = ir_strdup(ir, open), .ns_close = ir_strdup(ir, close), .late = late,
                   .ns_prefix = ir_strdup(ir, b->ns_prefix), .scope = ir_strdup(ir, b->scope), .loc = b->loc,
                   .lines = ir_strdup(ir, lines.s), .space = ir_printf(ir, "coconet_%s_%d", r->name, k)};
  free(lines.s);
  ir_region_note(ir, ir_printf(ir, "what '%s' runs besides its %s (%s:%s) runs as written in a copy, %s%s::%s, called "
                                   "once before the collective's scheduled work", b->title, s->callee,
                                   text_base_name(b->loc.file), ib->lines, b->ns_prefix, ib->space, b->name));
  char *where = macro_gone_in(fe, b->stmts, b->n, place, true);
  if (where && macro_name_is_where(where)) {
    ib->where = ir_strdup(ir, where);
    diag_warning(&s->range.begin, "region '%s': '%s' runs statements besides its %s that read %s (%s:%s); the "
                                  "schedule runs them in a copy, %s%s::%s, and %s there is the copy's",
                 r->name, b->title, s->callee, where, text_base_name(b->loc.file), ib->lines, b->ns_prefix, ib->space,
                 b->name, where);
  }
  free(where);
  return ib;
}
