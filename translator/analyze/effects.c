// effects.c: arguments with side effects of the statements a schedule
// rewrites (extract.c calls it once a region is extracted): each is evaluated
// once, at the top of the generated block, in the order written; a kernel's
// scalar argument written before one that changes what it reads is evaluated
// there first; what would change the program is refused.
#include "analyze/analyze.h"
#include "common/text.h"

#include <stdlib.h>
#include <string.h>

// The pieces of source a statement's op evaluates, in order.
static int stmt_pieces(const Stmt *s, const Piece **out, int max) {
  int n = 0;
  if (s->kind == STMT_LAUNCH) {
    const Launch *l = s->launch;
    const Piece *conf[] = {&l->grid, &l->block, &l->shmem, &l->stream};
    for (int i = 0; i < 4 && n < max; i++)
      if (conf[i]->text) out[n++] = conf[i];
    for (int i = 0; i < l->nargs && n < max; i++) out[n++] = &l->args[i];
    return n;
  }
  for (int i = 0; i < s->nargs && n < max; i++) out[n++] = &s->args[i];
  return n;
}

bool extract_stmt_has_effects(const Stmt *s) {
  const Piece *pieces[64];
  int n = stmt_pieces(s, pieces, 64);
  for (int i = 0; i < n; i++)
    if (!pieces[i]->pure && source_has_effects(pieces[i]->text)) return true;
  return false;
}

// Whether a call or a reference below c names function `name` (through a macro too).
typedef struct NameFind {
  const char *name;
  bool found;
} NameFind;

static enum CXChildVisitResult find_name(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  NameFind *f = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k == CXCursor_CallExpr || k == CXCursor_DeclRefExpr || k == CXCursor_MemberRefExpr) {
    CXString s = clang_getCursorSpelling(clang_getCursorReferenced(c));
    f->found = strcmp(clang_getCString(s), f->name) == 0;
    clang_disposeString(s);
  }
  return f->found ? CXChildVisit_Break : CXChildVisit_Recurse;
}

const Stmt *extract_check_reached(const Frontend *fe, const Region *r, const Stmt *check, char *name, size_t size) {
  for (const Stmt *s = r->stmts; s && check->check_through; s = s->next) {
    if (s == check || s->error_check) continue;
    char *text = fe_text(fe, s->range);
    const Piece *pieces[64];
    int n = stmt_pieces(s, pieces, 64);
    bool found = false;
    for (const char *p = check->check_through; *p && !found;) {
      p += strspn(p, " ");
      size_t len = strcspn(p, " ");
      snprintf(name, size, "%.*s", (int)len, p);
      NameFind nf = {name, text_find_word(text, name) != NULL};
      if (!nf.found) clang_visitChildren(s->cursor, find_name, &nf);
      found = nf.found;
      for (int i = 0; i < n && !found; i++) found = pieces[i]->text && text_find_word(pieces[i]->text, name);
      p += len;
    }
    free(text);
    if (found) return s;
  }
  return NULL;
}

bool extract_is_check(const Frontend *fe, const Region *r, const Stmt *s) {
  char name[256];
  return s->error_check && !extract_check_reached(fe, r, s, name, sizeof name);
}

// Is s a declaration of the region's locals (extract.c), which has no op?
static bool declares_local(const IrRegion *ir, const Stmt *s) {
  for (const IrHoist *h = ir->locals; h; h = h->next)
    if (h->range.begin.offset == s->range.begin.offset) return true;
  return false;
}

static bool same_text(const char *a, const char *b) {
  char *x = text_without(a, TEXT_BLANKS), *y = text_without(b, TEXT_BLANKS);
  bool same = strcmp(x, y) == 0;
  free(x);
  free(y);
  return same;
}

// Replace every IR text equal to from (blanks aside) by to.
static void rename_in(IrRegion *ir, const char **text, const char *from, const char *to) {
  if (*text && same_text(*text, from)) *text = ir_strdup(ir, to);
}

static void rename_text(IrRegion *ir, const char *from, const char *to) {
  for (IrVar *v = ir->vars; v; v = v->next) rename_in(ir, &v->text, from, to);
  for (IrTensor *t = ir->tensors; t; t = t->next) rename_in(ir, &t->text, from, to);
  for (IrOp *op = ir->ops; op; op = op->next) {
    switch (op->kind) {
    case IR_OP_COLLECTIVE: {
      IrCollective *c = &op->coll;
      const char **f[] = {&c->count_text, &c->dtype_text, &c->comm, &c->stream, &c->root, &c->peer};
      for (size_t i = 0; i < sizeof f / sizeof *f; i++) rename_in(ir, f[i], from, to);
      break;
    }
    case IR_OP_POINTWISE: {
      IrPointwise *pw = &op->pw;
      const char **f[] = {&pw->grid, &pw->block, &pw->shmem, &pw->stream};
      for (size_t i = 0; i < sizeof f / sizeof *f; i++) rename_in(ir, f[i], from, to);
      for (IrParam *p = pw->params; p; p = p->next) rename_in(ir, &p->arg_text, from, to);
      break;
    }
    case IR_OP_GEMM:
      for (int i = 0; i < op->gemm.nargs; i++) rename_in(ir, &op->gemm.args[i], from, to);
      rename_in(ir, &op->gemm.alpha, from, to);
      rename_in(ir, &op->gemm.beta, from, to);
      break;
    case IR_OP_COPY:
      rename_in(ir, &op->copy.bytes_text, from, to);
      rename_in(ir, &op->copy.kind_text, from, to);
      rename_in(ir, &op->copy.stream, from, to);
      break;
    case IR_OP_MEMSET:
      rename_in(ir, &op->memset.bytes_text, from, to);
      rename_in(ir, &op->memset.stream, from, to);
      break;
    case IR_OP_EVENT:
      rename_in(ir, &op->event.event, from, to);
      rename_in(ir, &op->event.stream, from, to);
      break;
    case IR_OP_OPAQUE: break;
    }
  }
}

// A text the generated code would still evaluate (part of a larger size or
// buffer expression that was not hoisted whole), or NULL.
// (A text that is a pure piece's, a wrapper's launch text whose calls were proven pure, is not one.)
static bool pure_piece(const Region *r, const char *text) {
  for (const Stmt *s = r->stmts; s; s = s->next) {
    const Piece *pieces[64];
    int n = stmt_pieces(s, pieces, 64);
    for (int i = 0; i < n; i++)
      if (pieces[i]->pure && same_text(pieces[i]->text, text)) return true;
  }
  return false;
}

static const char *left_with_effects(const Region *r, const IrRegion *ir) {
  for (const IrVar *v = ir->vars; v; v = v->next)
    if (source_has_effects(v->text) && !pure_piece(r, v->text)) return v->text;
  for (const IrTensor *t = ir->tensors; t; t = t->next)
    if (source_has_effects(t->text) && !pure_piece(r, t->text)) return t->text;
  return NULL;
}

// Whether text names identifier `name` as a whole token (not as a member after . or ->).
static bool names_token(const char *text, const char *name, size_t n) {
  for (const char *at = strstr(text, name); at; at = strstr(at + 1, name)) {
    bool start = at == text || !text_ident_char(at[-1]);
    bool member = at > text && (at[-1] == '.' || (at > text + 1 && at[-1] == '>' && at[-2] == '-'));
    if (start && !member && !text_ident_char(at[n])) return true;
  }
  return false;
}

static const char *skip_blanks(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  return p;
}

// Past a postfix chain after a name: `[...]`, `.m`, `->m`; *call says whether it ends in a call of a member.
static const char *chain_end(const char *p, bool *call) {
  *call = false;
  for (;;) {
    const char *q = skip_blanks(p);
    if (*q == '[') {
      int depth = 0;
      for (; *q; q++) {
        if (*q == '[') depth++;
        if (*q == ']' && --depth == 0) break;
      }
      if (!*q) return q;
      p = q + 1;
    } else if (*q == '.' || (q[0] == '-' && q[1] == '>')) {
      q = skip_blanks(q + (*q == '.' ? 1 : 2));
      while (text_ident_char(*q)) q++;
      if (*skip_blanks(q) == '(') *call = true;
      p = q;
    } else {
      return p;
    }
  }
}

// Whether the name at [p, e) of an argument is what it may change: the target
// of an assignment, ++ or --, an address taken, an object whose member is
// called, or, unless the calls' parameters were read (args_read: call_changes.c
// says which take a reference), an argument of its own.
static bool changed_at(const char *text, const char *p, const char *e, bool args_read) {
  bool member_call;
  const char *end = chain_end(e, &member_call);
  const char *q = skip_blanks(end);
  if (member_call) return true;
  if ((q[0] == '+' && q[1] == '+') || (q[0] == '-' && q[1] == '-')) return true;
  if (q[0] == '=' && q[1] != '=') return true;
  if (strchr("+-*/%&|^", q[0]) && q[0] && q[1] == '=') return true;
  if ((q[0] == '<' || q[0] == '>') && q[1] == q[0] && q[2] == '=') return true;
  const char *b = p;
  while (b > text && strchr(" \t\n\r", b[-1])) b--;
  if (b - text >= 2 && ((b[-1] == '+' && b[-2] == '+') || (b[-1] == '-' && b[-2] == '-'))) return true;
  if (b > text && b[-1] == '&' && (b - 1 == text || strchr("(,=&|!<>?:+-*/ ", b[-2]))) return true;
  return !args_read && b > text && (b[-1] == '(' || b[-1] == ',') && (*q == ',' || *q == ')');
}

// The first variable an argument with side effects may change that text also
// reads, or NULL (written into buf).
static const char *changed_in(const char *effect, const char *text, char *buf, size_t size, bool args_read) {
  static const char *const keywords[] = {"float", "double", "int", "unsigned", "long", "short", "char", "bool",
                                         "const", "static_cast", "reinterpret_cast", "size_t", "sizeof",
                                         "true", "false", "nullptr", "void"};
  for (const char *p = effect; *p; p++) {
    if (!text_ident_char(*p) || (p > effect && text_ident_char(p[-1])) || (*p >= '0' && *p <= '9')) continue;
    const char *e = p;
    while (text_ident_char(*e)) e++;
    size_t n = (size_t)(e - p);
    bool member = p > effect && (p[-1] == '.' || (p > effect + 1 && p[-1] == '>' && p[-2] == '-'));
    bool keyword = false;
    for (size_t k = 0; k < sizeof keywords / sizeof *keywords && !keyword; k++)
      keyword = strlen(keywords[k]) == n && strncmp(keywords[k], p, n) == 0;
    if (!member && !keyword && n < size && changed_at(effect, p, e, args_read)) {
      snprintf(buf, size, "%.*s", (int)n, p);
      if (names_token(text, buf, n)) return buf;
    }
    p = e - 1;
  }
  return NULL;
}

typedef struct Arg {   // a piece of a statement the schedule may rewrite, in the order written
  const Piece *p;
  IrOp *op;
  int stmt;            // which statement (pieces of one call are evaluated in an unspecified order)
  bool effects, hoist;
  bool launch_arg;     // an argument of a kernel launch (not its grid, block, memory or stream)
  bool inside;         // written in its statement (not in a host function the statement calls)
  bool object;         // an object of a class of the user's, converted for its kernel's parameter
  CallChanges *calls;  // with effects: what the calls in it may change (call_changes.c)
  SrcLoc at;           // where it is written, or its statement when that is in such a function
} Arg;

enum { ARGS_MAX = 512 };

// An argument written before one with side effects that may change what it
// reads: the schedule evaluates the latter at the top of the block, so the
// former is evaluated there too, first, when it is a kernel's scalar argument
// (its op then reads the local); anything else is refused.
// A pointwise kernel's launch argument the kernel never reads as a scalar
// (no parameter of its op is bound to it), that is neither a buffer nor a size:
// captured like a read one (the launch kept as written reads the capture; a
// generated kernel does not take it).
static bool unread_scalar(const IrRegion *ir, const Arg *a) {
  if (a->op->kind != IR_OP_POINTWISE || !a->launch_arg || a->op->pw.row || ir_tensor_find(ir, a->p->text))
    return false;
  for (const IrVar *v = ir->vars; v; v = v->next)
    if (v->is_size && same_text(v->text, a->p->text)) return false;
  return true;
}

// The arguments that read what args[j] changes, in its text or in the functions it calls.
static int capture_reads_of(const Region *r, const IrRegion *ir, Arg *args, int n, int j, const CallChanges *calls) {
  for (int i = 0; i < n; i++) {
    char var[128];
    if (i == j || (i > j && args[i].stmt != args[j].stmt)) continue;
    SrcLoc changed_at = args[j].p->range.begin;
    const char *v = changed_in(args[j].p->text, args[i].p->text, var, sizeof var, call_changes_args_read(calls));
    bool by_call = !v && (v = call_changes_read(calls, args[i].p, var, sizeof var, &changed_at));
    if (!v) continue;
    bool param = false, other_call = args[i].stmt != args[j].stmt;
    if (args[i].op->kind == IR_OP_POINTWISE)
      for (const IrParam *pp = args[i].op->pw.params; pp && !param; pp = pp->next)
        param = same_text(pp->arg_text, args[i].p->text);
    // A text of a host function the statement calls cannot be captured: the call kept as written reads it.
    if ((args[i].effects || (other_call && (param || unread_scalar(ir, &args[i])))) && args[i].inside) {
      args[i].hoist = true;
      continue;
    }
    const char *when = args[i].stmt == args[j].stmt
                           ? "in the same call, reads it in an order C++ leaves unspecified"
                       : !args[i].inside
                           ? "passed before it to a host function coconet sees through, reads it; the schedule "
                             "evaluates the change at the top of the generated block"
                           : "written before it, reads it; the schedule evaluates the change at the top of "
                             "the generated block";
    diag_error(&args[i].at, "region '%s': '%s' %s '%s', and this argument, %s: compute '%s' into a local "
                            "before the region", r->name, args[j].p->text,
               by_call ? "calls a function that may change" : "changes", v, when, args[j].p->text);
    const char *why = NULL, *unseen = by_call ? call_changes_unseen(calls, changed_at, &why) : NULL;
    if (by_call && why)
      diag_note(&changed_at, "%s%s%scalled here: %s", unseen ? "'" : "a function is ", unseen ? unseen : "",
                unseen ? "' is " : "", why);
    else if (by_call)
      diag_note(&changed_at, "'%s' may be changed here", v);
    else
      diag_note(&changed_at, "'%s' is changed here", v);
    return -1;
  }
  return 0;
}

static int capture_reads(const Region *r, const IrRegion *ir, Arg *args, int n) {
  for (int j = 0; j < n; j++)
    if (args[j].effects && capture_reads_of(r, ir, args, n, j, args[j].calls)) return -1;
  return 0;
}

// A piece's side effects: in its text, or a call the text does not show as one
// (`(*fp)(x)`, `g_sched + 1`, a class's conversion; *object: the text is such
// an object alone). With effects, *calls is what its calls may change.
static bool piece_effects(const Frontend *fe, const Piece *p, bool *object, CallChanges **calls) {
  *object = false;
  *calls = NULL;
  if (p->pure) return false;
  CallChanges *cc = call_changes(fe, p);
  bool yes = source_has_effects(p->text) || call_changes_hidden(cc);
  *object = call_changes_class_value(cc);
  if (yes) *calls = cc;
  else call_changes_free(cc);
  return yes;
}

// A kernel's scalar argument evaluated at the top into `local`: its op reads the local.
static void rename_param(IrRegion *ir, IrOp *op, const char *text, const char *local) {
  if (op->kind != IR_OP_POINTWISE) return;
  for (IrParam *p = op->pw.params; p; p = p->next)
    if (same_text(p->arg_text, text)) {
      p->arg_text = ir_strdup(ir, local);
      p->var = ir_var_get(ir, local, p->type);
    }
}

// Every argument with side effects of a statement the schedule may rewrite is
// evaluated once, at the top of the generated block, in the order written;
// so is every kernel's scalar argument written before one of them that reads
// a variable it may change (captured first). Refused where that would change
// the program: the same text twice (two evaluations coconet cannot tell
// apart), after a statement coconet does not see into (which may change what
// it reads), in a collective under a guard (evaluated only when it holds), or
// a change to what another kind of argument written before it reads (a count,
// a buffer, a launch's grid) or the same call reads.
int extract_hoist_effects(const Frontend *fe, const Region *r, IrRegion *ir) {
  // A bug planted on purpose, for the tests of --verify: arguments are copied, not hoisted.
  if (getenv("COCONET_TEST_PLANT_EFFECTS_BUG")) return 0;
  IrOp *op = ir->ops;
  const Stmt *opaque = NULL;
  Arg *args = xcalloc(ARGS_MAX, sizeof *args);
  int nargs = 0, nstmt = 0, rc = 0;
  // (a declaration of the region's locals has no op)
  for (const Stmt *s = r->stmts; s && op && rc == 0; op = declares_local(ir, s) ? op : op->next, s = s->next, nstmt++) {
    if (declares_local(ir, s)) continue;
    if (op->kind == IR_OP_OPAQUE) {
      if (!opaque && !extract_is_check(fe, r, s)) opaque = s;  // (an error check changes nothing: Stmt.error_check)
      continue;
    }
    const Piece *pieces[64];
    int n = stmt_pieces(s, pieces, 64);
    for (int i = 0; i < n && rc == 0; i++) {
      const Piece *p = pieces[i];
      bool object;
      CallChanges *calls;
      bool effects = piece_effects(fe, p, &object, &calls);
      if (effects) {
        for (int k = 0; k < nargs && rc == 0; k++) {
          if (!args[k].effects || !same_text(args[k].p->text, p->text)) continue;
          diag_error(&p->range.begin, "'%s' has side effects and is written twice in region '%s'; the schedule "
                                      "evaluates each argument once and cannot tell the two apart: compute it "
                                      "into a local before the region", p->text, r->name);
          diag_note(&args[k].p->range.begin, "it is also written here");
          rc = -1;
        }
        if (rc == 0 && s->guard) {
          diag_error(&p->range.begin, "'%s' has side effects; the schedule evaluates it once at the top of region "
                                      "'%s', before it tests whether %s holds, and the region runs %s only then: "
                                      "compute it into a local before the region", p->text, r->name, s->guard,
                     s->callee);
          rc = -1;
        }
        if (rc == 0 && opaque) {
          diag_error(&p->range.begin, "'%s' has side effects; the schedule evaluates it once at the top of region "
                                      "'%s', before a statement coconet does not see into: compute it into a "
                                      "local before the region", p->text, r->name);
          if (opaque->beside)
            diag_note(&opaque->range.begin, "this statement comes first: '%s' runs statements besides its %s (%s:%u)",
                      opaque->beside->title, opaque->callee, text_base_name(opaque->beside->at[0].file),
                      opaque->beside->at[0].line);
          else
            diag_note(&opaque->range.begin, "this statement comes first");
          rc = -1;
        }
      }
      if (nargs == ARGS_MAX) {
        diag_error(&p->range.begin, "region '%s' has more than %d arguments: split the region", r->name, ARGS_MAX);
        rc = -1;
      }
      bool launch_arg = s->kind == STMT_LAUNCH && p >= s->launch->args && p < s->launch->args + s->launch->nargs;
      // (A piece of a wrapper's body, in this file or a header, is not inside the statement.)
      bool inside = p->range.begin.file && s->range.begin.file && !strcmp(p->range.begin.file, s->range.begin.file) &&
                    p->range.begin.offset >= s->range.begin.offset && p->range.end.offset <= s->range.end.offset;
      if (rc == 0)
        args[nargs++] = (Arg){p, op, nstmt, effects, effects, launch_arg, inside, object, calls,
                              inside ? p->range.begin : s->range.begin};
      else
        call_changes_free(calls);
    }
    if (s->beside && !opaque) opaque = s;  // (it runs statements of a host function coconet copies)
  }
  if (rc == 0) rc = capture_reads(r, ir, args, nargs);
  IrHoist **tail = &ir->hoists;
  int count = 0;
  for (int i = 0; i < nargs && rc == 0; i++) {
    if (!args[i].hoist) continue;
    IrHoist *h = ir_alloc(ir, sizeof *h);
    do h->name = ir_printf(ir, "coconet_arg%d", ++count);
    while (text_has_ident(fe_names_in_use(fe), h->name));
    h->text = ir_strdup(ir, args[i].p->text);
    h->range = args[i].p->range;
    h->type = IR_VOID;
    if (args[i].object && args[i].op->kind == IR_OP_POINTWISE)  // converted once, as the launch does
      for (const IrParam *pp = args[i].op->pw.params; pp; pp = pp->next)
        if (same_text(pp->arg_text, h->text)) h->type = pp->type;
    *tail = h;
    tail = &h->next;
    if (args[i].effects)
      rename_text(ir, h->text, h->name);
    else
      rename_param(ir, args[i].op, h->text, h->name);
  }
  for (int i = 0; i < nargs; i++) call_changes_free(args[i].calls);
  free(args);
  if (rc) return rc;
  const char *left = left_with_effects(r, ir);
  if (left) {
    diag_error(&r->pragma_range.begin, "'%s' in region '%s' has side effects inside a larger argument; the "
                                       "schedule would evaluate it more than once: compute it into a local before "
                                       "the region", left, r->name);
    return -1;
  }
  return 0;
}
