// assume.c: the run-time preconditions of a region's schedule (ir->assumes):
// the path a launcher that picks its kernel at run time takes to the kernel
// the schedule is for, and that no statement of the region before the launch
// may change what a precondition reads (it is tested at the region's top).
#include "analyze/analyze.h"
#include "common/text.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

// A statement before the launch that calls what may change a variable the
// launch passes (a lambda capturing it by reference, a function given its
// address, an assignment through a reference): a precondition reads the launch's
// arguments, or those of the call of the launcher it is seen through. The change, or NULL.
static const char *changed_by_call(const Frontend *fe, const Region *r, const IrAssume *pre, const Stmt *launch,
                                   char *buf, size_t size, const Stmt **by) {
  char names[16][256];
  int nnames = ir_assume_names(pre, names, 16);
  CXCursor call = launch->launch->wrapper ? wrapper_call_in(fe, launch->cursor) : clang_getNullCursor();
  int nargs = clang_Cursor_isNull(call) ? launch->nargs : clang_Cursor_getNumArguments(call);
  const char *what = NULL;
  for (const Stmt *s = r->stmts; s && s != launch && !what; s = s->next) {
    if ((s->kind != STMT_OPAQUE && s->kind != STMT_CUDA) || extract_is_check(fe, r, s)) continue;
    Piece p = {fe_text(fe, s->range), s->range, false};
    CallChanges *ccs[2] = {call_changes(fe, &p), call_changes_stmt(fe, s->cursor)};
    for (int i = 0; i < 2 * nargs && !what; i++) {
      const CallChanges *cc = ccs[i % 2];
      SrcRange ar = clang_Cursor_isNull(call) ? launch->args[i / 2].range
                    : fe_range(fe, clang_getCursorExtent(clang_Cursor_getArgument(call, (unsigned)(i / 2))));
      if (!ar.begin.file || ar.end.offset <= ar.begin.offset) continue;
      Piece a = {fe_text(fe, ar), ar, false};
      bool reads = false;  // (only what the precondition reads)
      for (int k = 0; k < nnames && !reads; k++) reads = text_find_word(a.text, names[k]) != NULL;
      SrcLoc at;
      if (reads) what = call_changes_read(cc, &a, buf, size, &at);
      free(a.text);
    }
    if (what) *by = s;
    call_changes_free(ccs[0]);
    call_changes_free(ccs[1]);
    free(p.text);
  }
  return what;
}

// A collective's guard (`if (world_size > 1) ncclAllReduce(...)`) is tested at
// the region's top, so nothing before the last collective it guards may change
// what it reads. Coconet does not follow a statement it does not see into
// (through a reference, a pointer, a call, a lambda: any alias of what the
// condition reads), so only these may come first: a launch, a collective or a
// GEMM (they write device memory: not when the condition reads memory itself,
// `hflag[0]`, `cfg->n`, `*p`), a CUDA call that writes no host memory, and a
// declaration without effects of a name the condition does not read.
static const char *const GUARD_SAFE_CUDA[] = {"cudaGetLastError", "cudaPeekAtLastError", "cudaStreamSynchronize",
                                             "cudaDeviceSynchronize", "cudaEventRecord", "cudaMemsetAsync",
                                             "cudaMemset", NULL};

static bool kid_is_reference(CXCursor c) {
  enum CXCursorKind k = clang_getCursorKind(c);
  return k == CXCursor_TypeRef || k == CXCursor_TemplateRef || k == CXCursor_NamespaceRef;
}

// Why a statement before a guarded collective is not a declaration without effects of
// names the condition does not read (NULL: it is): plain variables only (not a structured
// binding or a type, whose names the test would not see), no macro (it may stand for an
// assignment), each initialized after `=` without effects, or not at all and of a type
// that is not a class (whose constructor runs: `Shrink s(world_size);`, `Shrink s{w};`).
static const char *guard_declaration(const Frontend *fe, const Stmt *s, char names[][256], int nnames) {
  const char *effects = "coconet does not follow what it may change (through a reference, a pointer or a call)";
  if (clang_getCursorKind(s->cursor) != CXCursor_DeclStmt) return effects;
  char *macro = fe_macro_in(fe, s->range);
  bool expands = macro != NULL;
  free(macro);
  if (expands) return effects;
  char *text = fe_text(fe, s->range);
  const char *init = strchr(text, '=');
  const char *why = init && source_has_effects(init + 1) ? effects : NULL;
  free(text);
  FeKids vars = fe_kids(s->cursor);
  for (int v = 0; v < vars.n && v < FE_KIDS && !why; v++) {
    if (clang_getCursorKind(vars.v[v]) != CXCursor_VarDecl) {
      why = "it declares what coconet does not read as a variable (a structured binding, a type or its constants)";
      break;
    }
    FeKids parts = fe_kids(vars.v[v]);
    bool initialized = false;
    for (int k = 0; k < parts.n; k++) initialized |= !kid_is_reference(parts.v[k]);
    if (initialized && !init) why = effects;
    if (!initialized && clang_getCanonicalType(clang_getCursorType(vars.v[v])).kind == CXType_Record) why = effects;
    char *declared = fe_spelling(vars.v[v]);
    for (int k = 0; k < nnames && !why; k++)
      if (strcmp(declared, names[k]) == 0)
        why = "it declares a name the condition reads, which the test at the top of the region does not see";
    free(declared);
  }
  return why;
}

static int check_guard(const Frontend *fe, const Region *r, const IrAssume *a, char names[][256], int nnames) {
  const Stmt *end = NULL;
  for (const Stmt *s = r->stmts; s; s = s->next)
    if (s->guard && strcmp(s->guard, a->test) == 0) end = s;
  bool memory = strchr(a->test, '[') || strstr(a->test, "->") || strchr(a->test, '*');
  for (const Stmt *s = r->stmts; s && s != end; s = s->next) {
    if (s->guard || extract_is_check(fe, r, s)) continue;  // (an error check changes nothing: Stmt.error_check)
    const char *why = NULL;
    if (s->beside) {
      why = "it runs statements of the function it calls besides its collective, and coconet does not follow what "
            "they may change (through a reference, a pointer or a call)";
    } else if (s->kind == STMT_LAUNCH || s->kind == STMT_NCCL || s->kind == STMT_GEMM) {
      if (memory) why = "it may write the memory the condition reads";
    } else if (s->kind == STMT_CUDA) {
      bool safe = false;
      for (int i = 0; GUARD_SAFE_CUDA[i] && !safe; i++) safe = s->callee && strcmp(s->callee, GUARD_SAFE_CUDA[i]) == 0;
      if (!safe || memory) why = "it may write host memory the condition reads";
    } else {
      why = guard_declaration(fe, s, names, nnames);
    }
    if (!why) continue;
    diag_error(&s->range.begin, "region '%s' runs %s only when %s, so the schedule, which is for it running, runs "
                                "when that holds at the top of the region; this statement comes before it, and %s: "
                                "move the statement out of the region, or after the guarded %s",
               r->name, a->kernel, a->test, why, a->kernel);
    diag_note(&a->loc, "the %s is here", a->kernel);
    return -1;
  }
  return 0;
}

// A run-time precondition (`master != nullptr`) is tested at the top of the
// region: no statement of the region before the launch may change the
// variable. Statements coconet does not see into may (a call taking its
// address, an assignment), and so may a copy into its address.
int extract_check_assumptions(const Frontend *fe, const Region *r, const IrRegion *ir) {
  char names[16][256];
  for (const IrAssume *a = ir->assumes; a; a = a->next) {
    int n = ir_assume_names(a, names, 16);
    if (n < 0) {
      diag_error(&a->loc, "region '%s': the schedule runs when %s at the top of the region, which reads more "
                          "variables than coconet follows (16) for what the region's statements change first",
                 r->name, a->test);
      return -1;
    }
    if (a->guard) {
      if (check_guard(fe, r, a, names, n)) return -1;
      continue;
    }
    // A launcher's path: what comes after its call does not change what it chose.
    const Stmt *end = NULL;
    for (const Stmt *s = r->stmts; s && a->launcher && !end; s = s->next)
      if (s->kind == STMT_LAUNCH && s->launch->when && strcmp(s->launch->when, a->test) == 0) end = s;
    for (int k = 0; k < n; k++) {
      const char *var = names[k];
      for (const Stmt *s = r->stmts; s && s != end; s = s->next) {
        if ((s->kind != STMT_OPAQUE && s->kind != STMT_CUDA) || extract_is_check(fe, r, s)) continue;
        char *text = fe_text(fe, s->range);
        const char *at = text_find_word(text, var);
        bool address = false;
        for (const char *p = at; p && !address; p = text_find_word(p + 1, var)) {
          const char *q = p;
          while (q > text && q[-1] == ' ') q--;
          address = q > text && q[-1] == '&';
        }
        // A declaration that only reads it (`const int k = n * 2;`; its calls: changed_by_call).
        bool reads = clang_getCursorKind(s->cursor) == CXCursor_DeclStmt && !address && !source_assigns(text);
        free(text);
        if (!at || reads || (s->kind == STMT_CUDA && !address)) continue;
        if (a->launcher)
          diag_error(&s->range.begin, "region '%s': '%s' launches kernel '%s' when %s, so the schedule, which is "
                                      "for that kernel, runs when it holds at the top of the region; this statement "
                                      "also uses '%s' and could change it first: move the statement out",
                     r->name, a->launcher, a->kernel, a->test, var);
        else if (a->divisor)
          diag_error(&s->range.begin, "region '%s': kernel '%s' reads its rows %d elements at a time, so the schedule "
                                      "runs when %s at the top of the region; this statement also uses '%s' and could "
                                      "change it first: move the statement out", r->name, a->kernel, a->divisor,
                     a->test, var);
        else if (a->other)
          diag_error(&s->range.begin, "region '%s': kernel '%s' steps from slice to slice by '%s' and its count is "
                                      "'%s', so the schedule runs when they are equal at the top of the region; this "
                                      "statement also uses '%s' and could change it first: move the statement out",
                     r->name, a->kernel, a->var, a->other, var);
        else
          diag_error(&s->range.begin, "region '%s': kernel '%s' %s '%s' %s, so the schedule runs when %s at the top "
                                      "of the region; this statement also uses '%s' and could change it first: test "
                                      "it before the region, or move the statement out", r->name, a->kernel,
                     a->sometimes ? "reaches" : "tests", var, a->sometimes ? "only under a condition" : "against NULL",
                     a->test, var);
        diag_note(&a->loc, a->launcher  ? "the launch is here"
                           : a->other   ? "kernel '%s' uses the stride here"
                           : a->divisor ? "kernel '%s' reads its rows here"
                                        : "kernel '%s' tests it here", a->kernel);
        return -1;
      }
    }
    // The launch whose precondition it is: its path's, or the first of its kernel.
    const Stmt *launch = r->stmts;
    while (launch && !(launch->kind == STMT_LAUNCH &&
                       (a->launcher ? launch->launch->when && strcmp(launch->launch->when, a->test) == 0
                                    : strcmp(launch->launch->kernel, a->kernel) == 0)))
      launch = launch->next;
    char buf[256];
    const Stmt *by = NULL;
    const char *what = launch ? changed_by_call(fe, r, a, launch, buf, sizeof buf, &by) : NULL;
    if (what && a->launcher) {
      diag_error(&by->range.begin, "region '%s': '%s' launches kernel '%s' when %s, so the schedule, which is for "
                                   "that kernel, runs when it holds at the top of the region; this statement may "
                                   "change '%s' first (through a call, a reference or a pointer): move the statement "
                                   "out", r->name, a->launcher,
                 a->kernel, a->test, what);
      diag_note(&a->loc, "the launch is here");
      return -1;
    }
    if (what) {
      diag_error(&by->range.begin, "region '%s': the schedule runs when %s at the top of the region (kernel '%s' "
                                   "%s); this statement may change '%s' first (through a call, a reference or a "
                                   "pointer): move the statement out",
                 r->name, a->test, a->kernel,
                 a->other     ? "steps from slice to slice by it"
                 : a->divisor ? "reads its rows a few elements at a time"
                              : "tests it against NULL",
                 what);
      diag_note(&a->loc, a->other     ? "kernel '%s' uses the stride here"
                         : a->divisor ? "kernel '%s' reads its rows here"
                                      : "kernel '%s' tests it here", a->kernel);
      return -1;
    }
  }
  return 0;
}

// A launcher that picks its kernel at run time: the schedule is for the kernel
// it launches on the path the driver chose (s->launch), when that path's
// conditions hold; --explain names the others, which run as written.
void extract_launch_paths(const Frontend *fe, IrRegion *ir, const Stmt *s) {
  const Launch *l = s->launch;
  if (!l->when) return;
  ir_region_assume_path(ir, l->when, l->kernel, l->wrapper, fe_any_loc(fe, clang_getCursorLocation(l->call)));
  for (const Launch *o = l->other; o; o = o->other) {
    SrcLoc at = fe_any_loc(fe, clang_getCursorLocation(o->call));
    char *note = xasprintf("'%s' launches kernel '%s' when %s (%s:%u:%u): the region runs as written then%s%s",
                           o->wrapper, o->kernel, o->when, at.file ? at.file : "?", at.line, at.col,
                           o->why_not ? ": " : "", o->why_not ? o->why_not : "");
    ir_region_note(ir, note);
    free(note);
  }
}

