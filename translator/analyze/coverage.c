// coverage.c: does a guarded kernel's launch run a thread for every element?
//
// A kernel whose element loop is `if (i < n)` (or `if (i >= n) return;`)
// computes only the elements that have a thread: grid.x * block.x of them. A
// schedule that runs it on a slice computes all n, so the launch must be
// proven to cover n first. The grid, block and count are read as integer
// expressions through the AST: literals and constants (constexpr, const
// locals, macros: clang_Cursor_Evaluate), locals with one initial value that
// are never assigned afterwards, dim3(...), one-statement helpers such as
// `ceil_div(a, b) { return (a + b - 1) / b; }`, and + - * / %. Accepted:
//
//   grid >= ceil(N / D) with N the count and D the block size (or a constant
//          no larger than a constant block): (N + D - 1) / D, (N + (D - 1)) / D,
//          (N - 1) / D + 1, N / D + 1, with D - 1 folded when D is constant;
//   grid = N (any block of at least one thread);
//   grid, block and count all constant, grid * block >= count.
//
// Anything else is not proven (the caller refuses, quoting the launch).
#include "analyze/analyze.h"
#include "common/text.h"

#include <stdlib.h>
#include <string.h>

typedef enum { S_CONST, S_VAR, S_ADD, S_SUB, S_MUL, S_DIV, S_MOD } SymKind;

typedef struct Sym {
  SymKind kind;
  long long value;   // S_CONST
  char *text;        // S_VAR: the expression as written, blanks removed
  CXCursor decl;     // S_VAR: the variable a plain name refers to (null: another expression)
  struct Sym *a, *b;
  struct Sym *all;   // every Sym of one proof, for freeing
} Sym;

typedef struct Bound {  // a helper's parameter bound to its argument
  CXCursor param;
  Sym *value;
} Bound;

typedef struct Cov {
  const Frontend *fe;    // the launch's
  const Frontend *kfe;   // the kernel's (a template's instance parse, else fe)
  Sym *all;
  Bound bound[64];
  int nbound;
  int depth;         // helpers and initializers followed
  int via_init;      // inside a variable's initializer: read at its declaration, not at the launch
  bool changed;      // such an initializer reads a variable that may change before the launch
} Cov;

// The front end a cursor belongs to.
static const Frontend *fe_of(const Cov *cv, CXCursor c) {
  return clang_Cursor_getTranslationUnit(c) == cv->kfe->tu ? cv->kfe : cv->fe;
}

static Sym *sym_new(Cov *cv, SymKind kind) {
  Sym *s = calloc(1, sizeof *s);
  if (!s) COCONET_BUG("out of memory");
  s->kind = kind;
  s->decl = clang_getNullCursor();
  s->all = cv->all;
  cv->all = s;
  return s;
}

static Sym *sym_const(Cov *cv, long long v) {
  Sym *s = sym_new(cv, S_CONST);
  s->value = v;
  return s;
}

static Sym *sym_bin(Cov *cv, SymKind kind, Sym *a, Sym *b) {
  if (!a || !b) return NULL;
  Sym *s = sym_new(cv, kind);
  s->a = a;
  s->b = b;
  return s;
}

static enum CXCursorKind kind_of(CXCursor c) { return clang_getCursorKind(c); }

typedef FeKids Kids;

static Kids kids_of(CXCursor c) { return fe_kids(c); }

static CXCursor last_kid(CXCursor c) {
  Kids k = kids_of(c);
  return k.n == 0 ? clang_getNullCursor() : k.last;
}

// An integer type narrower than int (char, short, bool): a value converted to
// it may lose its high bits (a grid of `unsigned char` blocks).
static bool narrow(CXType t) {
  t = clang_getCanonicalType(t);
  return t.kind >= CXType_Bool && t.kind <= CXType_Int128 && clang_Type_getSizeOf(t) < 4;
}

// c without parentheses, implicit conversions and casts that keep its value
// (a conversion to a narrow integer type does not: it stops there).
static CXCursor strip(CXCursor c) {
  for (;;) {
    enum CXCursorKind k = kind_of(c);
    Kids ks = kids_of(c);
    if (narrow(clang_getCursorType(c))) return c;
    if ((k == CXCursor_UnexposedExpr || k == CXCursor_ParenExpr) && ks.n == 1) c = ks.v[0];
    else if ((k == CXCursor_CStyleCastExpr || k == CXCursor_CXXStaticCastExpr ||
              k == CXCursor_CXXFunctionalCastExpr) && ks.n >= 1)
      c = ks.last;
    else return c;
  }
}

static bool eval_int(CXCursor c, long long *v) {
  if (!clang_isExpression(kind_of(c))) return false;
  CXEvalResult e = clang_Cursor_Evaluate(c);
  bool ok = e && clang_EvalResult_getKind(e) == CXEval_Int;
  if (ok) *v = clang_EvalResult_getAsLongLong(e);
  if (e) clang_EvalResult_dispose(e);
  return ok;
}

// The text of a cursor with blanks removed (malloc'd).
static char *squeezed(const Frontend *fe, CXCursor c) {
  char *t = fe_cursor_text(fe, c);
  text_drop(t, t, TEXT_BLANKS);
  return t;
}

// The bytes between two operands spelled in one macro's body, in whatever file
// defines it (CEIL_DIV's `(M) + (N)` in a common header), or NULL.
static char *spelled_between(const Frontend *fe, CXCursor lhs, CXCursor rhs) {
  CXSourceLocation from = clang_getRangeEnd(clang_getCursorExtent(lhs)),
                   to = clang_getRangeStart(clang_getCursorExtent(rhs));
  CXFile fa, fb, ea;
  unsigned a, b, x;
  clang_getSpellingLocation(from, &fa, NULL, NULL, &a);
  clang_getSpellingLocation(to, &fb, NULL, NULL, &b);
  clang_getFileLocation(from, &ea, NULL, NULL, &x);
  if (!fa || !fb || !ea || !clang_File_isEqual(fa, fb) || b <= a || (clang_File_isEqual(fa, ea) && a == x))
    return NULL;
  size_t len = 0;
  const char *bytes = fe_file_bytes(fe, fa, &len);
  char *t = bytes && b <= len ? strndup(bytes + a, b - a) : NULL;
  return t;
}

// The operator of a binary expression: the text between its operands (in the
// file they are written in, a kernel template's copy mapped to its header's
// bytes; or in the macro body they are spelled in).
static SymKind binary_kind(const Frontend *fe, CXCursor lhs, CXCursor rhs, bool *ok) {
  *ok = false;
  char *t = spelled_between(fe, lhs, rhs);
  if (!t)
    t = fe_between(fe, clang_getRangeEnd(clang_getCursorExtent(lhs)), clang_getRangeStart(clang_getCursorExtent(rhs)));
  char *p = t;
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == ')') p++;
  char *e = p + strlen(p);
  while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '(')) e--;
  SymKind k = S_ADD;
  if (e - p == 1) {
    *ok = true;
    switch (*p) {
    case '+': k = S_ADD; break;
    case '-': k = S_SUB; break;
    case '*': k = S_MUL; break;
    case '/': k = S_DIV; break;
    case '%': k = S_MOD; break;
    default: *ok = false;
    }
  }
  free(t);
  return k;
}

typedef struct Assigned {
  const Frontend *fe;
  CXCursor decl;
  unsigned after;  // only assignments at this offset of their file or later count (0: all)
  bool x_free;     // an assignment of decl.x does not count (a dim3's lane x)
  bool yes;
} Assigned;

// c is decl.x.
static bool lane_x_of(CXCursor c, CXCursor decl) {
  c = strip(c);
  if (kind_of(c) != CXCursor_MemberRefExpr || kids_of(c).n != 1) return false;
  CXCursor base = strip(kids_of(c).v[0]);
  char *field = fe_spelling(c);
  bool x = strcmp(field, "x") == 0;
  free(field);
  return x && kind_of(base) == CXCursor_DeclRefExpr && clang_equalCursors(clang_getCursorReferenced(base), decl);
}

static bool counts(const Assigned *a, CXCursor c) {
  unsigned at = 0;
  clang_getFileLocation(clang_getCursorLocation(c), NULL, NULL, NULL, &at);
  return at >= a->after;
}

// A call of an assignment operator (operator=, operator+=, ...; not ==, !=, <=, >=).
static bool assigning_operator(CXCursor call) {
  char *name = fe_spelling(call);
  size_t n = strlen(name);
  bool yes = n > 8 && strncmp(name, "operator", 8) == 0 && name[n - 1] == '=' &&
             strcmp(name + 8, "==") != 0 && strcmp(name + 8, "!=") != 0 && strcmp(name + 8, "<=") != 0 &&
             strcmp(name + 8, ">=") != 0;
  free(name);
  return yes;
}

// c names decl, or a member of it (decl.a.b).
static bool refers_to(CXCursor c, CXCursor decl) {
  c = strip(c);
  while (kind_of(c) == CXCursor_MemberRefExpr) {
    Kids ks = kids_of(c);
    if (ks.n != 1) return false;
    c = strip(ks.v[0]);
  }
  return kind_of(c) == CXCursor_DeclRefExpr && clang_equalCursors(clang_getCursorReferenced(c), decl);
}

// The variable or parameter a name or member chain starts from (null if none).
static CXCursor base_decl(CXCursor c) {
  c = strip(c);
  while (kind_of(c) == CXCursor_MemberRefExpr) {
    Kids ks = kids_of(c);
    if (ks.n != 1) return clang_getNullCursor();
    c = strip(ks.v[0]);
  }
  return kind_of(c) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(c) : clang_getNullCursor();
}

// Is decl assigned, incremented or has its address taken anywhere below c?
static enum CXChildVisitResult find_assignment(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Assigned *a = data;
  enum CXCursorKind k = kind_of(c);
  Kids ks = kids_of(c);
  if ((k == CXCursor_BinaryOperator || k == CXCursor_CompoundAssignOperator) && ks.n == 2 &&
      refers_to(ks.v[0], a->decl) && !(a->x_free && lane_x_of(ks.v[0], a->decl))) {
    char *op = fe_between(a->fe, clang_getRangeEnd(clang_getCursorExtent(ks.v[0])),
                          clang_getRangeStart(clang_getCursorExtent(ks.v[1])));
    if (!*op) {  // written in a macro's body: an assignment, unless the macro is pure
      free(op);
      op = strdup(fe_in_pure_macro(c) ? "" : "=");
    }
    char *eq = strchr(op, '=');
    if (eq && !(eq[1] == '=' || (eq > op && (eq[-1] == '=' || eq[-1] == '!' || eq[-1] == '<' || eq[-1] == '>'))))
      a->yes = counts(a, c);
    free(op);
  } else if (k == CXCursor_UnaryOperator && ks.n == 1 && refers_to(ks.v[0], a->decl)) {
    char *t = squeezed(a->fe, c);
    size_t n = strlen(t);
    if (t[0] == '&' || strncmp(t, "++", 2) == 0 || strncmp(t, "--", 2) == 0 ||
        (n >= 2 && (strcmp(t + n - 2, "++") == 0 || strcmp(t + n - 2, "--") == 0)))
      a->yes = counts(a, c);
    free(t);
  } else if (k == CXCursor_VarDecl && clang_getCursorType(c).kind == CXType_LValueReference &&
             !clang_isConstQualifiedType(clang_getPointeeType(clang_getCursorType(c))) && ks.n &&
             refers_to(ks.last, a->decl)) {
    // `int &count = n;`: n may be assigned through count.
    a->yes = counts(a, c);
  } else if (k == CXCursor_CallExpr && ks.n >= 1 && refers_to(ks.v[0], a->decl) && assigning_operator(c) &&
             !(a->x_free && lane_x_of(ks.v[0], a->decl))) {
    // `block = dim3(64);`, `v += w;` on a class: its operator= (or +=, ...) assigns it.
    a->yes = counts(a, c);
  } else if (k == CXCursor_CallExpr) {
    // Passed to a non-const reference parameter: it may be assigned there.
    CXType fn = clang_getCursorType(clang_getCursorReferenced(c));
    int n = clang_Cursor_getNumArguments(c);
    for (int i = 0; i < n && i < clang_getNumArgTypes(fn); i++) {
      CXType t = clang_getArgType(fn, (unsigned)i);
      if (refers_to(clang_Cursor_getArgument(c, (unsigned)i), a->decl) && t.kind == CXType_LValueReference &&
          !clang_isConstQualifiedType(clang_getPointeeType(t)))
        a->yes = counts(a, c);
    }
  }
  return a->yes ? CXChildVisit_Break : CXChildVisit_Recurse;
}

bool never_assigned(const Frontend *fe, CXCursor decl) { return !assigned_after(fe, decl, 0); }

bool integer_type(CXType t) {
  enum CXTypeKind k = clang_getCanonicalType(t).kind;
  return k >= CXType_Bool && k <= CXType_Int128;
}

bool wide_integer_type(CXType t) {
  enum CXTypeKind k = clang_getCanonicalType(t).kind;
  return (k >= CXType_UInt && k <= CXType_UInt128) || (k >= CXType_Int && k <= CXType_Int128);
}

bool assigned_after(const Frontend *fe, CXCursor decl, unsigned offset) {
  CXType t = clang_getCursorType(decl);
  if (clang_isConstQualifiedType(t)) return false;
  if (t.kind == CXType_LValueReference && clang_isConstQualifiedType(clang_getPointeeType(t))) return false;
  CXCursor fn = clang_getCursorSemanticParent(decl);
  enum CXCursorKind k = kind_of(fn);
  if (k != CXCursor_FunctionDecl && k != CXCursor_CXXMethod && k != CXCursor_FunctionTemplate) return true;
  Assigned a = {fe, decl, offset, false, false};
  clang_visitChildren(fn, find_assignment, &a);
  return a.yes;
}

// Whether a local dim3 is changed in its function only by assignments of its lane x
// (`block.x = 128;`, on some path of a launcher): its y and z stay as initialized.
static bool only_x_assigned(const Frontend *fe, CXCursor decl) {
  CXCursor fn = clang_getCursorSemanticParent(decl);
  enum CXCursorKind k = kind_of(fn);
  if (k != CXCursor_FunctionDecl && k != CXCursor_CXXMethod && k != CXCursor_FunctionTemplate) return false;
  Assigned a = {fe, decl, 0, true, false};
  clang_visitChildren(fn, find_assignment, &a);
  return !a.yes;
}

static bool is_dim3(CXType t) {
  CXString ts = clang_getTypeSpelling(t);
  bool dim3 = strstr(clang_getCString(ts), "dim3") != NULL;
  clang_disposeString(ts);
  return dim3;
}

static Sym *sym_of(Cov *cv, CXCursor c);

// A value read as it is at the launch. Read through an initializer, its
// variable must keep its value from there to the launch.
static Sym *sym_var(Cov *cv, CXCursor c) {
  if (cv->via_init) {
    CXCursor d = base_decl(c);
    if (clang_Cursor_isNull(d) || !never_assigned(fe_of(cv, d), d)) cv->changed = true;
  }
  Sym *s = sym_new(cv, S_VAR);
  s->text = squeezed(fe_of(cv, c), c);
  CXCursor n = strip(c);
  s->decl = kind_of(n) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(n) : clang_getNullCursor();
  return s;
}

// Two names of one spelling are one variable when they refer to one
// declaration (a parameter `n` and a local `n` of an inner block are not);
// across parses (a template's instance) the spelling decides.
static bool same_var(const Sym *a, const Sym *b) {
  if (strcmp(a->text, b->text) != 0) return false;
  if (clang_Cursor_isNull(a->decl) || clang_Cursor_isNull(b->decl) ||
      clang_Cursor_getTranslationUnit(a->decl) != clang_Cursor_getTranslationUnit(b->decl))
    return true;
  return clang_equalCursors(a->decl, b->decl);
}

// The only statement of a helper's body, when it is `return e;`.
static CXCursor returned_expr(CXCursor fn) {
  CXCursor body = last_kid(fn);
  if (kind_of(body) != CXCursor_CompoundStmt) return clang_getNullCursor();
  Kids ks = kids_of(body);
  if (ks.n != 1 || kind_of(ks.v[0]) != CXCursor_ReturnStmt) return clang_getNullCursor();
  Kids r = kids_of(ks.v[0]);
  return r.n == 1 ? r.v[0] : clang_getNullCursor();
}

static Sym *sym_call(Cov *cv, CXCursor c) {
  CXString ts = clang_getTypeSpelling(clang_getCursorType(c));
  bool dim3 = strstr(clang_getCString(ts), "dim3") != NULL;
  clang_disposeString(ts);
  int n = clang_Cursor_getNumArguments(c);
  if (dim3) return n >= 1 ? sym_of(cv, clang_Cursor_getArgument(c, 0)) : NULL;
  CXCursor fn = clang_getCursorDefinition(clang_getCursorReferenced(c));
  CXCursor e = clang_Cursor_isNull(fn) ? fn : returned_expr(fn);
  if (clang_Cursor_isNull(e) || n != clang_Cursor_getNumArguments(fn) || cv->nbound + n > 64) return NULL;
  Bound saved[64];
  int nsaved = cv->nbound;
  memcpy(saved, cv->bound, sizeof saved);
  for (int i = 0; i < n; i++) {
    Sym *a = sym_of(cv, clang_Cursor_getArgument(c, (unsigned)i));
    if (!a) return NULL;
    cv->bound[cv->nbound++] = (Bound){clang_Cursor_getArgument(fn, (unsigned)i), a};
  }
  Sym *s = sym_of(cv, e);
  memcpy(cv->bound, saved, sizeof saved);
  cv->nbound = nsaved;
  return s;
}

static Sym *sym_ref(Cov *cv, CXCursor c) {
  CXCursor d = clang_getCursorReferenced(c);
  for (int i = 0; i < cv->nbound; i++)
    if (clang_equalCursors(cv->bound[i].param, d)) return cv->bound[i].value;
  if (kind_of(d) == CXCursor_VarDecl) {
    CXCursor init = last_kid(d);
    // A static local or a global keeps the value of its first initialization, not this call's.
    CXCursor scope = clang_getCursorSemanticParent(d);
    enum CXCursorKind sk = kind_of(scope);
    bool once = clang_Cursor_getStorageClass(d) == CX_SC_Static ||
                (sk != CXCursor_FunctionDecl && sk != CXCursor_CXXMethod && sk != CXCursor_FunctionTemplate);
    if (!clang_Cursor_isNull(init) && clang_isExpression(kind_of(init)) && !once && !narrow(clang_getCursorType(d)) &&
        never_assigned(fe_of(cv, d), d)) {
      // A variable its initializer reads may be assigned elsewhere (`int c = cols; if (l < 2) c = 1;
      // size_t n = rows * c;`): then the variable, never assigned itself, is its own value (not a
      // reference: it follows what it refers to).
      bool changed = cv->changed;
      cv->via_init++;
      Sym *s = sym_of(cv, init);
      cv->via_init--;
      if (s && cv->changed && !changed && clang_getCursorType(d).kind != CXType_LValueReference) {
        cv->changed = false;
        s = NULL;
      }
      if (s) return s;
    }
    // A dim3 whose lane x its function assigns (`block.x = 128;`): as a block, its x as the launch
    // reads it, the same value as `block.x` in the grid's expression (y and z: one_dimensional).
    if (is_dim3(clang_getCursorType(d)) && !never_assigned(fe_of(cv, d), d) && only_x_assigned(fe_of(cv, d), d)) {
      Sym *x = sym_new(cv, S_VAR);
      char *name = squeezed(fe_of(cv, c), c);
      x->text = xasprintf("%s.x", name);
      free(name);
      if (cv->via_init) cv->changed = true;
      return x;
    }
  }
  return sym_var(cv, c);
}

// block.x of a local `dim3 block(E)` never assigned: E (and 1 for .y or .z
// not written); NULL when c is not such a member.
static Sym *dim3_member(Cov *cv, CXCursor c, CXCursor d) {
  CXCursor init = kind_of(d) == CXCursor_VarDecl ? last_kid(d) : clang_getNullCursor();
  if (clang_Cursor_isNull(init) || kind_of(init) != CXCursor_CallExpr || !never_assigned(fe_of(cv, d), d))
    return NULL;
  CXString ts = clang_getTypeSpelling(clang_getCursorType(init));
  bool dim3 = strstr(clang_getCString(ts), "dim3") != NULL;
  clang_disposeString(ts);
  char *whole = squeezed(fe_of(cv, c), c), *dot = strrchr(whole, '.');
  int lane = dot && dot[1] && !dot[2] ? (dot[1] == 'x' ? 0 : dot[1] == 'y' ? 1 : dot[1] == 'z' ? 2 : -1) : -1;
  free(whole);
  if (!dim3 || lane < 0) return NULL;
  if (lane >= clang_Cursor_getNumArguments(init)) return sym_const(cv, 1);
  CXCursor a = clang_Cursor_getArgument(init, (unsigned)lane);
  char *t = fe_cursor_text(fe_of(cv, a), a);  // (a header's bytes too)
  bool written = *t != '\0';
  free(t);
  if (!written) return sym_const(cv, 1);
  cv->via_init++;
  Sym *s = sym_of(cv, a);
  cv->via_init--;
  return s;
}

// p.n: for a parameter bound to a variable (a kernel's by-value struct), that variable's member.
static Sym *sym_member(Cov *cv, CXCursor c) {
  CXCursor d = base_decl(c);
  Sym *lane = clang_Cursor_isNull(d) ? NULL : dim3_member(cv, c, d);
  if (lane) return lane;
  for (int i = 0; i < cv->nbound && !clang_Cursor_isNull(d); i++) {
    if (!clang_equalCursors(cv->bound[i].param, d)) continue;
    const Sym *b = cv->bound[i].value;
    if (b->kind != S_VAR) return NULL;
    char *whole = squeezed(fe_of(cv, c), c), *dot = strpbrk(whole, ".-");
    Sym *s = sym_new(cv, S_VAR);
    if (!dot || asprintf(&s->text, "%s%s", b->text, dot) < 0) s->text = strdup("?");
    free(whole);
    return s;
  }
  return sym_var(cv, c);
}

// A ceiling division written with a macro (CEIL_DIV(n, B)): the body's operators
// cannot be read where libclang places them, so the definition says which they
// are (front: fe_macro_ceil_div) and c must be the whole expansion, shaped so.
static Sym *macro_ceil_div(Cov *cv, CXCursor c) {
  const Frontend *fe = fe_of(cv, c);
  CXSourceRange r = fe_file_extent(c);
  if (clang_Range_isNull(r)) return NULL;
  CXCursor m = clang_getCursor(fe->tu, clang_getRangeStart(r));
  if (kind_of(m) != CXCursor_MacroExpansion || !fe_macro_ceil_div(fe->tu, clang_getCursorReferenced(m)) ||
      !clang_equalRanges(r, fe_file_extent(m)))
    return NULL;
  Kids div = kids_of(c);
  if (kind_of(c) != CXCursor_BinaryOperator || div.n != 2) return NULL;
  CXCursor sub = strip(div.v[0]);
  Kids ks = kids_of(sub);
  long long one = 0;
  if (kind_of(sub) != CXCursor_BinaryOperator || ks.n != 2 || !eval_int(ks.v[1], &one) || one != 1) return NULL;
  CXCursor add = strip(ks.v[0]);
  Kids ka = kids_of(add);
  if (kind_of(add) != CXCursor_BinaryOperator || ka.n != 2) return NULL;
  return sym_bin(cv, S_DIV,
                 sym_bin(cv, S_SUB, sym_bin(cv, S_ADD, sym_of(cv, ka.v[0]), sym_of(cv, ka.v[1])), sym_const(cv, 1)),
                 sym_of(cv, div.v[1]));
}

static Sym *sym_of(Cov *cv, CXCursor c) {
  if (clang_Cursor_isNull(c) || cv->depth > 16) return NULL;
  cv->depth++;
  Sym *s = NULL;
  long long v;
  c = strip(c);
  if (eval_int(c, &v)) {
    s = sym_const(cv, v);
  } else {
    Kids ks = kids_of(c);
    switch (kind_of(c)) {
    case CXCursor_DeclRefExpr: s = sym_ref(cv, c); break;
    case CXCursor_CallExpr: s = sym_call(cv, c); break;
    case CXCursor_BinaryOperator: {
      bool ok = false;
      SymKind k = ks.n == 2 ? binary_kind(fe_of(cv, ks.v[0]), ks.v[0], ks.v[1], &ok) : S_ADD;
      if (ok) s = sym_bin(cv, k, sym_of(cv, ks.v[0]), sym_of(cv, ks.v[1]));
      else s = macro_ceil_div(cv, c);
      break;
    }
    case CXCursor_MemberRefExpr: s = sym_member(cv, c); break;
    default: break;
    }
  }
  cv->depth--;
  return s;
}

static bool sym_eq(const Sym *a, const Sym *b) {
  if (!a || !b || a->kind != b->kind) return false;
  switch (a->kind) {
  case S_CONST: return a->value == b->value;
  case S_VAR: return same_var(a, b);
  case S_ADD: case S_MUL:
    return (sym_eq(a->a, b->a) && sym_eq(a->b, b->b)) || (sym_eq(a->a, b->b) && sym_eq(a->b, b->a));
  default: return sym_eq(a->a, b->a) && sym_eq(a->b, b->b);
  }
}

// An additive expression as signed terms and a constant.
typedef struct Sum {
  const Sym *term[8];
  int sign[8];
  int n;
  long long constant;
  bool ok;
} Sum;

static void sum_add(Sum *s, const Sym *e, int sign) {
  if (!s->ok) return;
  if (e->kind == S_CONST) s->constant += sign * e->value;
  else if (e->kind == S_ADD) sum_add(s, e->a, sign), sum_add(s, e->b, sign);
  else if (e->kind == S_SUB) sum_add(s, e->a, sign), sum_add(s, e->b, -sign);
  else if (s->n < 8) s->term[s->n] = e, s->sign[s->n++] = sign;
  else s->ok = false;
}

// Remove one term equal to e with this sign; true if there was one.
static bool sum_take(Sum *s, const Sym *e, int sign) {
  for (int i = 0; i < s->n; i++) {
    if (s->sign[i] != sign || !sym_eq(s->term[i], e)) continue;
    s->term[i] = s->term[--s->n];
    s->sign[i] = s->sign[s->n];
    return true;
  }
  return false;
}

// Is x == count + D - 1 (with D the divisor)?
static bool is_count_plus_divisor_minus_one(const Sym *x, const Sym *count, const Sym *d) {
  Sum s = {.ok = true};
  sum_add(&s, x, 1);
  if (!s.ok || !sum_take(&s, count, 1)) {
    if (count->kind != S_ADD && count->kind != S_SUB) return false;
    // The count itself a sum: take its terms one by one.
    Sum c = {.ok = true};
    sum_add(&c, count, 1);
    if (!c.ok) return false;
    for (int i = 0; i < c.n; i++)
      if (!sum_take(&s, c.term[i], c.sign[i])) return false;
    s.constant -= c.constant;
  }
  if (d->kind == S_CONST) return s.n == 0 && s.constant == d->value - 1;
  return s.n == 1 && s.sign[0] == 1 && sym_eq(s.term[0], d) && s.constant == -1;
}

// grid == ceil(count / d) for some d: returns d, else NULL.
static const Sym *ceil_divisor(const Sym *grid, const Sym *count) {
  if (grid->kind == S_DIV && is_count_plus_divisor_minus_one(grid->a, count, grid->b)) return grid->b;
  // (count - 1) / d + 1, count / d + 1 (c >= 1 blocks more than count / d)
  Sum s = {.ok = true};
  sum_add(&s, grid, 1);
  if (!s.ok || s.n != 1 || s.sign[0] != 1 || s.constant < 1 || s.term[0]->kind != S_DIV) return NULL;
  const Sym *q = s.term[0];
  if (sym_eq(q->a, count)) return q->b;
  Sum num = {.ok = true};
  sum_add(&num, q->a, 1);
  if (!num.ok || num.constant != -1 || num.n != 1 || num.sign[0] != 1 || !sym_eq(num.term[0], count)) return NULL;
  return q->b;
}

static bool covers(const Sym *grid, const Sym *block, const Sym *count) {
  if (grid->kind == S_CONST && block->kind == S_CONST && count->kind == S_CONST)
    return grid->value * block->value >= count->value;
  if (block->kind == S_CONST && block->value < 1) return false;
  if (sym_eq(grid, count)) return true;
  const Sym *d = ceil_divisor(grid, count);
  if (!d) return false;
  if (sym_eq(d, block)) return true;
  return d->kind == S_CONST && block->kind == S_CONST && d->value >= 1 && d->value <= block->value;
}

typedef struct FindLaunch {
  unsigned begin;
  CXCursor call;
} FindLaunch;

static enum CXChildVisitResult find_launch(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  FindLaunch *f = data;
  if (kind_of(c) == CXCursor_CallExpr) {
    Kids ks = kids_of(c);
    char *name = ks.n >= 2 && kind_of(ks.v[1]) == CXCursor_CallExpr ? fe_spelling(ks.v[1]) : NULL;
    bool config = name && (strcmp(name, "__cudaPushCallConfiguration") == 0 || strcmp(name, "cudaConfigureCall") == 0);
    free(name);
    if (config) {
      f->call = c;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

static void syms_free(Cov *cv) {
  while (cv->all) {
    Sym *next = cv->all->all;
    free(cv->all->text);
    free(cv->all);
    cv->all = next;
  }
}

// The launch's call with its configuration (the launch in a wrapper seen through, too).
static CXCursor kernel_call(const Launch *l) {
  FindLaunch f = {0, clang_getNullCursor()};
  CXCursor root = l->call;
  if (find_launch(root, root, &f) == CXChildVisit_Recurse) clang_visitChildren(root, find_launch, &f);
  return f.call;
}

static CXCursor launch_call(const Stmt *s) { return kernel_call(s->launch); }

CXCursor launch_argument(const Launch *l, int i) {
  CXCursor call = kernel_call(l);
  if (clang_Cursor_isNull(call) || i < 0 || i >= clang_Cursor_getNumArguments(call)) return clang_getNullCursor();
  return clang_Cursor_getArgument(call, (unsigned)i);
}

long long launch_block_x(const Frontend *fe, const Stmt *s) {
  CXCursor call = launch_call(s);
  if (clang_Cursor_isNull(call)) return 0;
  Kids ks = kids_of(call);
  Cov cv = {.fe = fe, .kfe = fe};
  Sym *block = ks.n >= 2 ? sym_of(&cv, clang_Cursor_getArgument(ks.v[1], 1)) : NULL;
  long long v = block && block->kind == S_CONST && !cv.changed ? block->value : 0;
  syms_free(&cv);
  return v;
}

// A grid of one dimension: not a dim3 built (here or in the local it is read
// from) with a y or z other than 1 (dim3(rows, 2) runs every row twice).
static bool one_dimensional(const Frontend *fe, CXCursor c, int depth) {
  c = strip(c);
  if (depth > 8) return false;
  if (kind_of(c) == CXCursor_DeclRefExpr) {
    CXCursor d = clang_getCursorReferenced(c);
    // (a dim3 assigned other than in its lane x may have another y or z at the launch)
    if (kind_of(d) == CXCursor_VarDecl && is_dim3(clang_getCursorType(d)) && !never_assigned(fe, d) &&
        !only_x_assigned(fe, d))
      return false;
    CXCursor init = kind_of(d) == CXCursor_VarDecl ? last_kid(d) : clang_getNullCursor();
    return clang_Cursor_isNull(init) || !clang_isExpression(kind_of(init)) || one_dimensional(fe, init, depth + 1);
  }
  if (kind_of(c) != CXCursor_CallExpr) return true;
  CXString ts = clang_getTypeSpelling(clang_getCursorType(c));
  bool dim3 = strstr(clang_getCString(ts), "dim3") != NULL;
  clang_disposeString(ts);
  int n = clang_Cursor_getNumArguments(c);
  if (dim3 && n == 1) return one_dimensional(fe, clang_Cursor_getArgument(c, 0), depth + 1);  // a copy
  for (int i = 1; dim3 && i < n; i++) {
    CXCursor a = clang_Cursor_getArgument(c, (unsigned)i);
    char *t = fe_cursor_text(fe, a);  // (a header's bytes too)
    long long v = 0;
    bool written = *t != '\0';
    free(t);
    if (written && !(eval_int(strip(a), &v) && v == 1)) return false;  // (not written: the default, 1)
  }
  return true;
}

bool launch_is_1d(const Frontend *fe, const Stmt *s) {
  CXCursor call = launch_call(s);
  if (clang_Cursor_isNull(call)) return false;
  Kids ks = kids_of(call);
  return ks.n >= 2 && one_dimensional(fe, clang_Cursor_getArgument(ks.v[1], 0), 0) &&
         one_dimensional(fe, clang_Cursor_getArgument(ks.v[1], 1), 0);
}

bool launch_block_is_1d(const Frontend *fe, const Stmt *s) {
  CXCursor call = launch_call(s);
  if (clang_Cursor_isNull(call)) return false;
  Kids ks = kids_of(call);
  return ks.n >= 2 && one_dimensional(fe, clang_Cursor_getArgument(ks.v[1], 1), 0);
}

bool launch_grid_is_arg(const Frontend *fe, const Stmt *s, int arg) {
  CXCursor call = launch_call(s);
  if (clang_Cursor_isNull(call) || arg < 0 || arg >= clang_Cursor_getNumArguments(call)) return false;
  Kids ks = kids_of(call);
  if (ks.n < 2 || !one_dimensional(fe, clang_Cursor_getArgument(ks.v[1], 0), 0)) return false;
  Cov cv = {.fe = fe, .kfe = fe};
  Sym *grid = sym_of(&cv, clang_Cursor_getArgument(ks.v[1], 0));
  Sym *rows = sym_of(&cv, clang_Cursor_getArgument(call, (unsigned)arg));
  bool is = grid && rows && sym_eq(grid, rows) && !cv.changed;
  syms_free(&cv);
  return is;
}

// The first function-like macro expanded in the launch's configuration, or NULL.
static char *macro_in(const Frontend *fe, CXCursor config) {
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(fe->tu, clang_getCursorExtent(config), &toks, &n);
  char *name = NULL;
  for (unsigned i = 0; i + 1 < n && !name; i++) {
    if (clang_getTokenKind(toks[i]) != CXToken_Identifier) continue;
    CXCursor c = clang_getCursor(fe->tu, clang_getTokenLocation(fe->tu, toks[i]));
    CXString next = clang_getTokenSpelling(fe->tu, toks[i + 1]);
    if (clang_getCursorKind(c) == CXCursor_MacroExpansion && strcmp(clang_getCString(next), "(") == 0)
      name = fe_spelling(c);
    clang_disposeString(next);
  }
  clang_disposeTokens(fe->tu, toks, n);
  return name;
}

bool launch_covers(const Frontend *fe, const Stmt *s, const Frontend *kfe, CXCursor kernel, CXCursor bound,
                   const char *count, char **why) {
  *why = NULL;
  // A bug planted on purpose, for the tests of --verify: every launch "covers".
  if (getenv("COCONET_TEST_PLANT_COVERAGE_BUG")) return true;
  const Launch *l = s->launch;
  FindLaunch f = {0, launch_call(s)};
  *why = NULL;
  bool ok = false;
  int nparams = clang_Cursor_getNumArguments(kernel);
  if (!clang_Cursor_isNull(f.call) && nparams >= 0 && nparams <= clang_Cursor_getNumArguments(f.call) && nparams <= 64) {
    Kids ks = kids_of(f.call);
    CXCursor config = ks.v[1];
    Cov cv = {.fe = fe, .kfe = kfe};
    Sym *grid = sym_of(&cv, clang_Cursor_getArgument(config, 0));
    Sym *block = sym_of(&cv, clang_Cursor_getArgument(config, 1));
    // The bound in the launch's terms: each kernel parameter stands for its argument.
    bool args = true;
    for (int i = 0; i < nparams && args; i++) {
      CXCursor arg = clang_Cursor_getArgument(f.call, (unsigned)i);
      Sym *a = sym_of(&cv, arg);
      if (!a) a = sym_var(&cv, arg);  // a struct passed by value: its value at the launch
      cv.bound[cv.nbound++] = (Bound){clang_Cursor_getArgument(kernel, (unsigned)i), a};
    }
    Sym *count = args ? sym_of(&cv, bound) : NULL;
    ok = grid && block && count && !cv.changed && covers(grid, block, count);
    syms_free(&cv);
  }
  char *n = fe_cursor_text(kfe, bound);
  char *macro = ok || clang_Cursor_isNull(f.call) ? NULL : macro_in(fe, kids_of(f.call).v[1]);
  char *hint = macro ? xasprintf("; the grid is written with macro '%s', and coconet reads a grid macro's body only "
                                 "in the form ((M) + (N) - 1) / (N): write the division out, or define it so", macro)
                     : strdup("");
  if (!ok && asprintf(why,
                      "kernel '%s' computes only the elements that have a thread (its guard against '%s'), and "
                      "coconet cannot prove that '<<<%s, %s>>>' gives every one of the %s elements a thread%s; "
                      "launch (%s + B - 1) / B blocks of B threads, or write the element loop as a grid-stride loop",
                      l->kernel, n, l->grid.text, l->block.text, count, hint, count) < 0)
    COCONET_BUG("out of memory");
  free(n);
  free(macro);
  free(hint);
  return ok;
}

