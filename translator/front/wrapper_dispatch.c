// wrapper_dispatch.c: a launcher that picks its kernel at run time.
//
// Inference engines choose among kernels by the problem's size:
//
//   template <> void invokeNorm(float *out, ..., int m, int n, cudaStream_t s) {
//     dim3 grid(m);
//     dim3 block(std::min(n, 1024));
//     if (n == 768 || n == 1024) {
//       normV2<float><<<grid, n / 4, 0, s>>>(out, ..., n);
//     } else {
//       block.x = std::min(n, 1024);
//       int trips = (n + block.x - 1) / block.x;
//       if (trips == 1) norm<float, 1><<<grid, block, 0, s>>>(out, ..., m, n);
//       else generalNorm<float><<<grid, block, 0, s>>>(out, ..., m, n);
//     }
//   }
//
// From its first `if` on, the body is read as paths: a branch's statements,
// then those after the `if`. A path ends in one launch (after it only checks
// of its error and `return;`) or in none (`return;`, the body's end). Each
// launch carries the conditions of its path, each condition or its negation,
// in the region's terms (`!(n == 768 || n == 1024) && ((n + ...) / ... == 1)`):
// the driver picks the one the schedule is for, which runs when they hold, and
// the region runs as written otherwise. Along a path a local declared stands
// for its initializer, and one assigned (`block.x = E;` of a dim3 of one
// value, `k = E;`) for the value assigned, from there on; the locals declared
// before the first `if` stand for their values there. Like every text that
// moves to the region, a condition has no side effects and reads only the
// functions' own names.
#include "front/wrapper_impl.h"

#include "common/text.h"

#include <stdlib.h>
#include <string.h>

typedef struct Paths {
  const Frontend *ffe;
  Wrapper *w;
  const char **why;
  char **stmt;
  Launch *head, **tail;
} Paths;

static bool kind_is(CXCursor c, enum CXCursorKind k) { return clang_getCursorKind(c) == k; }

// The statement in the way, for the note (" ('text' at file.h:12)").
static void in_the_way(Paths *p, CXCursor st, const char *why) {
  if (*p->why) return;
  *p->why = why;
  char *text = fe_cursor_text(p->ffe, st);
  SrcLoc at = fe_any_loc(p->ffe, clang_getCursorLocation(st));
  *p->stmt = xasprintf(" ('%.*s%s' at %s:%u)", 60, text, strlen(text) > 60 ? "..." : "", text_base_name(at.file),
                       at.line);
  free(text);
}

// when && c (each part in parentheses unless it is a name); c negated: !(c).
static char *conjoined(const char *when, const char *c, bool negated) {
  bool name = true;
  for (const char *q = c; *q && name; q++) name = text_ident_char(*q);
  char *part = negated ? xasprintf("!(%s)", c) : name ? strdup(c) : xasprintf("(%s)", c);
  if (!when) return part;
  char *both = xasprintf("%s && %s", when, part);
  free(part);
  return both;
}

// The statements of a branch (a block's, or the statement itself) followed by rest[0, nrest).
static CXCursor *then_rest(CXCursor branch, const CXCursor *rest, int nrest, int *n) {
  FeKids k = fe_kids(branch);
  bool block = kind_is(branch, CXCursor_CompoundStmt);
  int nb = block ? k.n : 1;
  CXCursor *v = xcalloc((size_t)(nb + nrest), sizeof *v);
  if (block) {
    // (more statements than fe_kids keeps: a null cursor last, which walk refuses with that reason)
    for (int i = 0; i < nb && i < FE_KIDS; i++) v[i] = k.v[i];
    if (nb > FE_KIDS) nb = FE_KIDS, v[nb - 1] = clang_getNullCursor();
  } else {
    v[0] = branch;
  }
  for (int i = 0; i < nrest; i++) v[nb + i] = rest[i];
  *n = nb + nrest;
  return v;
}

// Does expression e, or a function of the user's it calls (4 deep), read through a pointer
// (`p->n`, `*flag`, `(int)*pm`, `cfg[0]`) or a variable of the file (a global, a static)? The
// region tests the conditions at its top, before its statements run: what they write there
// would be missed. The reason, or NULL.
typedef struct Reads {
  const char *why;
  int depth;
} Reads;

static const char THROUGH[] = "a condition or value of its choice of kernel reads through a pointer (->, *, []), "
                              "which a statement of the region before the launch could change";

static enum CXChildVisitResult read_visit(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Reads *r = data;
  FeKids k = fe_kids(c);
  switch (clang_getCursorKind(c)) {
  case CXCursor_UnaryOperator: {
    CXTranslationUnit tu = clang_Cursor_getTranslationUnit(c);
    CXToken *t = NULL;
    unsigned n = 0;
    clang_tokenize(tu, clang_getCursorExtent(c), &t, &n);
    if (n && fe_token_is(tu, t[0], "*")) r->why = THROUGH;
    clang_disposeTokens(tu, t, n);
    break;
  }
  case CXCursor_ArraySubscriptExpr: r->why = THROUGH; break;
  case CXCursor_MemberRefExpr:
    if (k.n == 1 && clang_getCanonicalType(clang_getCursorType(k.v[0])).kind == CXType_Pointer)
      r->why = THROUGH;
    break;
  case CXCursor_DeclRefExpr: {
    CXCursor d = clang_getCursorReferenced(c);
    if (clang_getCursorKind(d) != CXCursor_VarDecl) break;
    if (clang_Cursor_hasVarDeclGlobalStorage(d) == 1) {
      if (!clang_isConstQualifiedType(clang_getCursorType(d)) &&
          !clang_Location_isInSystemHeader(clang_getCursorLocation(d)))
        r->why = "a condition or value of its choice of kernel reads a variable of the file (a global, a static), "
                 "which a statement of the region before the launch could change";
      break;
    }
    // A local: what its initializer reads (`const int t = threshold();`).
    FeKids init = fe_kids(d);
    if (init.n && clang_isExpression(clang_getCursorKind(init.last)) && r->depth < 4) {
      r->depth++;
      if (read_visit(init.last, d, r) == CXChildVisit_Recurse) clang_visitChildren(init.last, read_visit, r);
      r->depth--;
    }
    break;
  }
  case CXCursor_CallExpr: {
    CXCursor def = clang_getCursorDefinition(clang_getCursorReferenced(c));
    if (!clang_Cursor_isNull(def) && !clang_Location_isInSystemHeader(clang_getCursorLocation(def)) &&
        r->depth < 4) {
      r->depth++;
      clang_visitChildren(def, read_visit, r);
      r->depth--;
    }
    break;
  }
  default: break;
  }
  return r->why ? CXChildVisit_Break : CXChildVisit_Recurse;
}

static const char *reads_outside(CXCursor e) {
  Reads r = {NULL, 0};
  if (read_visit(e, e, &r) == CXChildVisit_Recurse) clang_visitChildren(e, read_visit, &r);
  return r.why;
}

// The text of expression e (in the function's terms) in the region's, when it can move there.
static char *moved(Paths *p, CXCursor st, CXCursor e, const char *what) {
  const Frontend *root = wrapper_root(p->ffe);
  SrcRange r = fe_range(p->ffe, clang_getCursorExtent(e));
  bool foreign = false;
  if (!r.begin.file || wrapper_effects(root, p->w, r, wrapper_calls_pure(e), &foreign)) {
    in_the_way(p, st, what[0] == 'c' ? "a condition of its choice of kernel has side effects (a call, ++, an "
                                       "assignment)"
                                     : "a path of its choice of kernel assigns a value with side effects");
    return NULL;
  }
  const char *outside = reads_outside(e);
  if (outside) {
    in_the_way(p, st, outside);
    return NULL;
  }
  char *t = wrapper_substituted(root, p->w, r, &foreign);
  if (foreign) {
    in_the_way(p, st, "a condition or value of its choice of kernel reads a name that is not the function's "
                      "parameter or local (a global, a macro that is not a constant, a name of its namespace)");
    free(t);
    return NULL;
  }
  return t;
}

// `k = E;` (k a parameter or local of the function) or `block.x = E;` (block a dim3 of one
// value): from here on k stands for E. False when st is not such an assignment.
static bool assignment(Paths *p, CXCursor st) {
  // (`block.x = std::min(n, 1024);`: the temporaries' cleanups around the assignment)
  while (kind_is(st, CXCursor_UnexposedExpr) && fe_kids(st).n == 1) st = fe_kids(st).v[0];
  FeKids k = fe_kids(st);
  if (!kind_is(st, CXCursor_BinaryOperator) || k.n != 2) return false;
  CXCursor lhs = k.v[0];
  SrcRange lr = fe_range(p->ffe, clang_getCursorExtent(lhs)), sr = fe_range(p->ffe, clang_getCursorExtent(st));
  char *all = fe_text(p->ffe, sr), *op = all + (lr.end.offset - sr.begin.offset);
  while (*op == ' ' || *op == '\t' || *op == '\n') op++;
  bool plain = op[0] == '=' && op[1] != '=';
  free(all);
  if (!plain) return false;
  bool member = kind_is(lhs, CXCursor_MemberRefExpr);
  char *field = member ? fe_spelling(lhs) : NULL;
  CXCursor var = member ? fe_kids(lhs).v[0] : lhs;
  while (kind_is(var, CXCursor_UnexposedExpr) && fe_kids(var).n == 1) var = fe_kids(var).v[0];
  CXCursor d = kind_is(var, CXCursor_DeclRefExpr) ? clang_getCursorReferenced(var) : clang_getNullCursor();
  bool own = (kind_is(d, CXCursor_VarDecl) || kind_is(d, CXCursor_ParmDecl)) &&
             clang_equalCursors(clang_getCursorSemanticParent(d), p->w->fn);
  enum CXTypeKind tk = clang_getCursorType(d).kind;
  if (own && (tk == CXType_LValueReference || tk == CXType_RValueReference)) {
    in_the_way(p, st, "a path of its choice of kernel assigns through a reference (the caller's variable)");
    return true;
  }
  bool dim3 = own && wrapper_is_dim3(clang_getCursorType(d));
  bool ok = own && (member ? dim3 && field && strcmp(field, "x") == 0 : !dim3);
  free(field);
  if (!ok) return false;
  if (dim3) {
    // Only a dim3 of one value (`dim3 block(E)`): its .x is all it says.
    bool one = false;
    for (int i = p->w->n - 1; i >= 0 && !one; i--)
      if (clang_equalLocations(p->w->v[i].at, clang_getCursorLocation(d))) {
        one = p->w->v[i].dim3;
        break;
      }
    if (!one) return false;
  }
  char *t = moved(p, st, k.v[1], "value");
  if (!t) return true;
  wrapper_add(p->w, d, (SrcRange){0}, NULL, t, dim3);
  if (!dim3) p->w->v[p->w->n - 1].cast = wrapper_conversion(d, wrapper_written_type(k.v[1]));
  return true;
}

// After the path's launch: checks of its error, `return;`, `return cudaGetLastError();`.
static bool after_launch(const Paths *p, CXCursor st) {
  if (kind_is(st, CXCursor_NullStmt)) return true;
  if (kind_is(st, CXCursor_ReturnStmt)) {
    FeKids k = fe_kids(st);
    return k.n == 0 || wrapper_error_check(p->ffe, k.v[0]);
  }
  return wrapper_error_check(p->ffe, st);
}

static void walk(Paths *p, const CXCursor *v, int n, const char *when);

// An `if` at v[0]: both branches, each followed by v[1, n).
static void choice(Paths *p, const CXCursor *v, int n, const char *when) {
  FeKids k = fe_kids(v[0]);
  if ((k.n != 2 && k.n != 3) || kind_is(k.v[0], CXCursor_DeclStmt) || kind_is(k.v[0], CXCursor_VarDecl)) {
    in_the_way(p, v[0], "its choice of kernel has an `if` with a declaration in its condition");
    return;
  }
  // A condition the compiler knows (`sizeof(T) == 2`, `std::is_same<T, float>::value` in an instance,
  // `if constexpr`): only the branch it takes is a path, and the condition is no part of it.
  CXEvalResult known = clang_Cursor_Evaluate(k.v[0]);
  int only = -1;
  if (known && clang_EvalResult_getKind(known) == CXEval_Int) only = clang_EvalResult_getAsLongLong(known) ? 0 : 1;
  if (known) clang_EvalResult_dispose(known);
  char *c = only >= 0 ? NULL : moved(p, v[0], k.v[0], "condition");
  if (only < 0 && !c) return;
  int saved = p->w->n;
  for (int side = 0; side < 2 && !*p->why; side++) {
    if (only >= 0 && side != only) continue;
    char *path = only >= 0 ? (when ? strdup(when) : NULL) : conjoined(when, c, side == 1);
    int m = 0;
    CXCursor *seq = side == 0 || k.n == 3 ? then_rest(k.v[side + 1], v + 1, n - 1, &m) : NULL;
    if (seq) walk(p, seq, m, path);
    else walk(p, v + 1, n - 1, path);
    free(seq);
    free(path);
    // Each branch starts from the locals as they were before the `if`.
    for (int i = saved; i < p->w->n; i++) {
      free(p->w->v[i].fixed);
      free(p->w->v[i].name);
      free(p->w->v[i].cast);
    }
    p->w->n = saved;
  }
  free(c);
}

static void walk(Paths *p, const CXCursor *v, int n, const char *when) {
  for (int i = 0; i < n && !*p->why; i++) {
    CXCursor st = v[i];
    if (clang_Cursor_isNull(st)) {
      *p->why = "a block of its choice of kernel has more statements than coconet reads (8)";
      return;
    }
    if (kind_is(st, CXCursor_NullStmt)) continue;
    if (kind_is(st, CXCursor_ReturnStmt)) {
      if (fe_kids(st).n) in_the_way(p, st, "a path of its choice of kernel returns a value");
      return;  // a path that launches nothing: the region runs as written there
    }
    if (kind_is(st, CXCursor_IfStmt)) {
      choice(p, v + i, n - i, when);
      return;
    }
    if (kind_is(st, CXCursor_CompoundStmt)) {
      int m = 0;
      CXCursor *seq = then_rest(st, v + i + 1, n - i - 1, &m);
      walk(p, seq, m, when);
      free(seq);
      return;
    }
    if (kind_is(st, CXCursor_DeclStmt)) {
      bool foreign = false, calls = false;
      int from = p->w->n;
      wrapper_locals(p->ffe, p->w, st, p->why, &foreign, &calls);
      if (calls && !*p->why)
        *p->why = "a path of its choice of kernel has a local whose initializer assigns a variable or calls a "
                  "function that may change something (the generated code, which does not call this one, would "
                  "not run it)";
      // Read now: an assignment later on the path must not change what they stand for.
      for (int j = from; j < p->w->n && !*p->why; j++) {
        Subst *s = &p->w->v[j];
        s->fixed = wrapper_substituted(wrapper_root(p->ffe), s->in, s->range, &foreign);
        s->in = NULL;
      }
      if (foreign && !*p->why) in_the_way(p, st, "a local of its choice of kernel reads a name that is not the "
                                                 "function's parameter or local");
      continue;
    }
    if (assignment(p, st)) continue;
    Stmt *s = classify_stmt(p->ffe, st);
    if (s->kind == STMT_LAUNCH && s->wrap == WRAP_NONE && !s->launch->wrapper) {
      Launch *l = wrapper_launch(p->w, s, p->why);
      l->when = when ? strdup(when) : NULL;  // (NULL: every condition on its way is known)
      *p->tail = l;
      p->tail = &l->other;
      // (a `return` ends the path: what follows belongs to other paths)
      for (int j = i + 1; j < n && !*p->why && !(j > i + 1 && kind_is(v[j - 1], CXCursor_ReturnStmt)); j++)
        if (clang_Cursor_isNull(v[j]) || !after_launch(p, v[j]))
          in_the_way(p, clang_Cursor_isNull(v[j]) ? st : v[j], "its body has a statement after the launch");
      stmt_free(s);
      return;
    }
    stmt_free(s);
    in_the_way(p, st, "a path of its choice of kernel has a statement that is not an initialized local, an "
                      "assignment of one, an `if`, `return;` or one launch");
  }
}

Launch *wrapper_dispatch(const Frontend *ffe, Wrapper *w, const CXCursor *v, int n, const char **why, char **stmt) {
  // The locals so far stand for their values here, whatever a path assigns later.
  for (int i = 0; i < w->n; i++) {
    Subst *s = &w->v[i];
    if (s->in != w || s->fixed) continue;
    bool foreign = false;
    s->fixed = wrapper_substituted(wrapper_root(ffe), w, s->range, &foreign);
    s->impure |= foreign;
    s->in = NULL;
  }
  Paths p = {ffe, w, why, stmt, NULL, NULL};
  p.tail = &p.head;
  walk(&p, v, n, NULL);
  if (!*why && !p.head) *why = "no path of its choice of kernel launches one";
  if (*why && p.head) {
    launch_free(p.head);
    p.head = NULL;
  }
  return p.head;
}
