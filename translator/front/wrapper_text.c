// wrapper_text.c: the texts of a function seen through in its caller's terms
// (wrapper_impl.h): each parameter, local and template parameter replaced by
// what it stands for, down the chain of calls to the region's own text.
#include "front/wrapper_impl.h"

#include "common/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// A number: digits, letters and dots ("256", "0.5f", "1e-8f" is not one: no sign).
static bool is_number(const char *t) {
  if (!(*t >= '0' && *t <= '9')) return false;
  for (; *t; t++)
    if (!(text_ident_char(*t) || *t == '.')) return false;
  return true;
}

// A name, or a name and its members (`layer.tp`, `cfg->tp.comm`: a postfix expression,
// which binds before any operator around it, as a name does).
static bool is_member_chain(const char *t) {
  if (!*t || (*t >= '0' && *t <= '9')) return false;
  for (;;) {
    const char *b = t;
    while (text_ident_char(*t)) t++;
    if (t == b || (*b >= '0' && *b <= '9')) return false;
    if (!*t) return true;
    if (*t == '.') t++;
    else if (t[0] == '-' && t[1] == '>') t += 2;
    else return false;
  }
}

// t in parentheses unless it is a name, a member chain or a number without a macro in it
// (`#define CTX *ctx`: CTX.tp is *ctx.tp) (takes t).
static char *grouped(char *t, bool macro) {
  if (!macro && (is_member_chain(t) || is_number(t))) return t;
  char *g;
  if (asprintf(&g, "(%s)", t) < 0) COCONET_BUG("out of memory");
  free(t);
  return g;
}

// (the last one: a local a launcher's path assigns stands for the value assigned)
static const Subst *subst_of(const Wrapper *w, CXCursor decl) {
  CXSourceLocation at = clang_getCursorLocation(decl);
  for (int i = w->n - 1; i >= 0; i--)
    if (clang_equalLocations(w->v[i].at, at)) return &w->v[i];
  return NULL;
}

static bool integer(CXType t) {
  t = clang_getCanonicalType(t);
  return t.kind >= CXType_Char_U && t.kind <= CXType_Int128 && t.kind != CXType_Bool;
}

SrcRange wrapper_region_range(const Frontend *root, const Wrapper *w, CXCursor e) {
  SrcRange none = {0};
  for (int depth = 0; w && depth <= WRAPPER_DEPTH; depth++) {
    while (clang_getCursorKind(e) == CXCursor_UnexposedExpr || clang_getCursorKind(e) == CXCursor_ParenExpr) {
      FeKids k = fe_kids(e);
      if (k.n != 1) return none;
      e = k.v[0];
    }
    CXCursor d = clang_getCursorReferenced(e);
    if (clang_getCursorKind(e) != CXCursor_DeclRefExpr || clang_getCursorKind(d) != CXCursor_ParmDecl) return none;
    const Subst *s = subst_of(w, d);
    if (!s || s->fixed || s->dim3 || !s->range.begin.file) return none;
    // The argument, as its function (or the region) writes it.
    const Frontend *fe = s->in ? s->in->fe : root;
    CXSourceLocation at = clang_getLocationForOffset(root->tu, clang_getFile(root->tu, s->range.begin.file),
                                                     s->range.begin.offset);
    e = clang_getCursor(root->tu, at);
    if (fe_range(fe, clang_getCursorExtent(e)).end.offset != s->range.end.offset) return none;
    // (a parameter whose type may change the value, `uint16_t n` given a size_t: another count; an integer of
    // 32 bits or more given an integer keeps a count's value, `size_t n` given an int)
    CXType pt = clang_getCursorType(d);
    if (s->cast && !(integer(pt) && clang_Type_getSizeOf(pt) >= 4 && integer(clang_getCursorType(e)))) return none;
    if (!s->in) return s->range;
    w = s->in;
  }
  return none;
}

// A template parameter by its name: in an instance's body libclang gives a
// use of one as what it stands for (an integer literal, the type), not a reference.
static const Subst *template_param_named(const Wrapper *w, const char *name) {
  for (int i = 0; i < w->n; i++)
    if (w->v[i].name && strcmp(w->v[i].name, name) == 0) return &w->v[i];
  return NULL;
}

// A declaration a name reaches through a namespace or class of the function's
// (an enumerator, a constant, a helper): the same name may mean another thing
// or nothing in the caller. Names at file scope (and unscoped enumerators
// there) mean the same.
static bool scoped(CXCursor d) {
  for (CXCursor p = clang_getCursorSemanticParent(d); !clang_Cursor_isNull(p); p = clang_getCursorSemanticParent(p)) {
    enum CXCursorKind k = clang_getCursorKind(p);
    if (k == CXCursor_TranslationUnit) return false;
    if (k == CXCursor_EnumDecl && !clang_EnumDecl_isScoped(p)) continue;
    if (k == CXCursor_LinkageSpec || k == CXCursor_UnexposedDecl) continue;  // extern "C" { ... }
    return true;
  }
  return false;
}

static bool user_scope_name(CXCursor d) {
  enum CXCursorKind k = clang_getCursorKind(d);
  bool named = k == CXCursor_Namespace || k == CXCursor_NamespaceAlias || k == CXCursor_StructDecl ||
               k == CXCursor_ClassDecl || k == CXCursor_UnionDecl || k == CXCursor_EnumDecl ||
               k == CXCursor_TypedefDecl || k == CXCursor_TypeAliasDecl || k == CXCursor_ClassTemplate ||
               k == CXCursor_TypeAliasTemplateDecl || k == CXCursor_EnumConstantDecl;
  return named && !clang_Location_isInSystemHeader(clang_getCursorLocation(d));
}

typedef struct NameAt {
  unsigned offset;
  CXFile file;
  CXCursor found;
} NameAt;

static enum CXChildVisitResult find_name_at(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  NameAt *n = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k == CXCursor_DeclRefExpr || k == CXCursor_TypeRef || k == CXCursor_MemberRefExpr) {
    CXFile f;
    unsigned off;
    clang_getSpellingLocation(clang_getCursorLocation(c), &f, NULL, NULL, &off);
    if (f && clang_File_isEqual(f, n->file) && off == n->offset) {
      n->found = c;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

// The name written at tl inside fn, as its AST has it (null when none).
static CXCursor name_at(CXCursor fn, CXSourceLocation tl) {
  NameAt n = {0, NULL, clang_getNullCursor()};
  clang_getSpellingLocation(tl, &n.file, NULL, NULL, &n.offset);
  if (n.file && !clang_Cursor_isNull(fn)) clang_visitChildren(fn, find_name_at, &n);
  return n.found;
}

// An object-like macro whose body names nothing (numbers and operators only).
static bool constant_macro(const Frontend *fe, CXCursor expansion) {
  CXCursor def = clang_getCursorReferenced(expansion);
  return !clang_Cursor_isMacroFunctionLike(def) && fe_macro_pure(fe->tu, def);
}

// A constant macro's value as the text to move to the caller, where the macro
// may be undefined (a header's `#undef` at its end): a body of one token as it
// is, a signed literal (`-2.0f`) or a parenthesized body in parentheses; NULL
// for any other body (`1.0f + 1.0f` means something else once parenthesized,
// and something else again in the caller's text unparenthesized).
static char *macro_body(const Frontend *fe, CXCursor expansion) {
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(fe->tu, clang_getCursorExtent(clang_getCursorReferenced(expansion)), &toks, &n);
  char *spelled[3] = {NULL, NULL, NULL};
  for (unsigned i = 1; i < n && i < 4; i++) {  // token 0 is the macro's name
    CXString sp = clang_getTokenSpelling(fe->tu, toks[i]);
    spelled[i - 1] = strdup(clang_getCString(sp));
    clang_disposeString(sp);
  }
  char *out = NULL;
  if (n == 2) {
    out = strdup(spelled[0]);
  } else if (n == 3 && (!strcmp(spelled[0], "-") || !strcmp(spelled[0], "+")) &&
             clang_getTokenKind(toks[2]) == CXToken_Literal) {
    out = xasprintf("(%s%s)", spelled[0], spelled[1]);
  } else if (n > 3 && !strcmp(spelled[0], "(")) {
    // ( ... ) as a whole: the extent's text, when its first parenthesis closes at its end.
    CXString last = clang_getTokenSpelling(fe->tu, toks[n - 1]);
    int depth = 0;
    unsigned close = 0;
    for (unsigned i = 1; i < n && !close; i++) {
      CXString sp = clang_getTokenSpelling(fe->tu, toks[i]);
      depth += !strcmp(clang_getCString(sp), "(") ? 1 : !strcmp(clang_getCString(sp), ")") ? -1 : 0;
      if (depth == 0) close = i;
      clang_disposeString(sp);
    }
    if (close == n - 1 && !strcmp(clang_getCString(last), ")")) {
      Text t = {0};
      text_add(&t, "");
      for (unsigned i = 1; i < n; i++) {
        CXString sp = clang_getTokenSpelling(fe->tu, toks[i]);
        text_add(&t, i > 1 ? " " : "");
        text_add(&t, clang_getCString(sp));
        clang_disposeString(sp);
      }
      out = t.s;
    }
    clang_disposeString(last);
  }
  for (int i = 0; i < 3; i++) free(spelled[i]);
  clang_disposeTokens(fe->tu, toks, n);
  return out;
}

// Could characters a and b, side by side, be read as one token where the
// preprocessor keeps two (`-` `-` as `--`, `/` `*` as a comment, `a` `1` as `a1`)?
static bool would_merge(char a, char b) {
  const char *ops = "+-*/%&|^<>=!:.#";
  bool wa = text_ident_char(a) || a == '.', wb = text_ident_char(b) || b == '.';
  return (wa && wb) || (strchr(ops, a) && strchr(ops, b) && a && b);
}

// Add s to t as the preprocessor's next token(s): a blank between them where they would merge.
static void text_join(Text *t, const char *s) {
  if (t->s && t->n > 0 && *s && would_merge(t->s[t->n - 1], *s)) text_add(t, " ");
  text_add(t, s);
}

// The expansion of the function-like macro invoked at toks[i] whose body is an
// expression of its parameters (front: fe_function_macro), each parameter
// replaced by its argument in the caller's terms, as the preprocessor does it;
// *last gets the index of the invocation's closing parenthesis. NULL (nothing
// read) when the macro is another kind or its call is not whole in toks[0..n).
static char *function_macro(const Frontend *root, const Wrapper *w, const CXToken *toks, unsigned n, unsigned i,
                            bool *foreign, unsigned *last) {
  const Frontend *fe = w->fe;
  FeMacro m;
  CXCursor d = clang_getCursorReferenced(clang_getCursor(fe->tu, clang_getTokenLocation(fe->tu, toks[i])));
  if (!fe_function_macro(fe->tu, d, &m)) return NULL;
  bool ok = i + 1 < n && fe_token_is(fe->tu, toks[i + 1], "(");
  // The arguments: the ranges between the call's parenthesis and commas at depth 1.
  enum { MAX_ARGS = 8 };
  SrcRange args[MAX_ARGS];
  int nargs = 0, depth = 0;
  unsigned j = i + 1;
  for (; ok && j < n; j++) {
    // As the preprocessor splits them: at commas outside parentheses (brackets do not count).
    bool open = fe_token_is(fe->tu, toks[j], "("), shut = fe_token_is(fe->tu, toks[j], ")");
    if ((shut && depth == 1) || (depth == 1 && fe_token_is(fe->tu, toks[j], ","))) {
      if (nargs == MAX_ARGS) ok = false;
      else args[nargs++].end = fe_loc(fe, clang_getTokenLocation(fe->tu, toks[j]));
    }
    if (shut && depth == 1) break;
    if ((depth == 0 && open) || (depth == 1 && fe_token_is(fe->tu, toks[j], ",")))
      args[nargs].begin = fe_loc(fe, clang_getRangeEnd(clang_getTokenExtent(fe->tu, toks[j])));
    depth += open ? 1 : shut ? -1 : 0;
  }
  ok = ok && j < n && (unsigned)nargs == m.params;
  Text out = {0};
  for (unsigned k = m.body; k < m.n && ok; k++) {
    int param = fe_macro_param(fe->tu, &m, m.toks[k]);
    unsigned at, prev;
    clang_getSpellingLocation(clang_getTokenLocation(fe->tu, m.toks[k]), NULL, NULL, NULL, &at);
    clang_getSpellingLocation(clang_getRangeEnd(clang_getTokenExtent(fe->tu, m.toks[k - 1])), NULL, NULL, NULL, &prev);
    if (!out.s) text_add(&out, "");
    else if (at > prev) text_add(&out, " ");  // spaced as the definition is
    char *t = param >= 0 ? wrapper_substituted(root, w, args[param], foreign) : fe_token_text(fe->tu, m.toks[k]);
    text_join(&out, text_trim(t));
    free(t);
  }
  if (ok) *last = j;
  fe_macro_free(fe->tu, &m);
  return out.s;
}

// The text of a range of w's body with every parameter, local and template
// parameter replaced by what it stands for, down to the region's terms
// (w NULL: the range is the region's own text). *foreign: a name that is not
// the functions' own (a global, a macro) was read.
char *wrapper_substituted(const Frontend *root, const Wrapper *w, SrcRange r, bool *foreign) {
  if (!w) return fe_text(root, r);
  const Frontend *fe = w->fe;  // w's file (a header's view, or root)
  CXSourceRange cr = clang_getRange(clang_getLocationForOffset(fe->tu, fe->file, r.begin.offset),
                                    clang_getLocationForOffset(fe->tu, fe->file, r.end.offset));
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(fe->tu, cr, &toks, &n);
  // An expression whose first or last token is a macro's argument (`SUM2(lr, 1.0f)` with
  // `#define SUM2(a, b) a + b`): its extent is `lr, 1.0f`, not the expression; it cannot move.
  int depth = 0;
  for (unsigned i = 0; i < n && depth >= 0; i++) {
    CXString sp = clang_getTokenSpelling(fe->tu, toks[i]);
    const char *t = clang_getCString(sp);
    depth += (!strcmp(t, "(") || !strcmp(t, "[") || !strcmp(t, "{")) - (!strcmp(t, ")") || !strcmp(t, "]") || !strcmp(t, "}"));
    if (depth == 0 && !strcmp(t, ",")) depth = -1;
    clang_disposeString(sp);
  }
  if (depth != 0) *foreign = true;
  Text out = {0};
  text_add(&out, "");
  unsigned at = r.begin.offset;
  bool joined = false;  // the last text added was a macro's expansion
  for (unsigned i = 0; i <= n; i++) {
    unsigned b = i < n ? fe_loc(fe, clang_getTokenLocation(fe->tu, toks[i])).offset : r.end.offset;
    unsigned e = i < n ? fe_loc(fe, clang_getRangeEnd(clang_getTokenExtent(fe->tu, toks[i]))).offset : r.end.offset;
    if (b >= r.end.offset && i < n) break;
    if (joined && b == at && i < n) {
      char *next = strndup(fe->src.buf + b, e - b);
      if (!next) COCONET_BUG("out of memory");
      if (out.n > 0 && *next && would_merge(out.s[out.n - 1], *next)) text_add(&out, " ");
      free(next);
    }
    joined = false;
    if (b > at) text_addn(&out, fe->src.buf + at, b - at);
    if (i == n) break;
    const Subst *s = NULL;
    char *constant = NULL;  // a constant macro's body, or a pure function-like macro's expansion
    unsigned last = i;      // the expansion's last token
    // After `.`, `->` or `::`: a member or a qualified name, not one of the function's.
    bool qualified = i > 0 && (fe_token_is(fe->tu, toks[i - 1], ".") || fe_token_is(fe->tu, toks[i - 1], "->") ||
                               fe_token_is(fe->tu, toks[i - 1], "::"));
    if (clang_getTokenKind(toks[i]) == CXToken_Identifier && !qualified) {
      CXSourceLocation tl = clang_getTokenLocation(fe->tu, toks[i]);
      CXCursor c = clang_getCursor(fe->tu, tl);
      if (clang_getCursorKind(c) == CXCursor_MacroExpansion && !clang_equalLocations(clang_getCursorLocation(c), tl)) {
        // Inside a macro's arguments (NCCLCHECK(ncclAllReduce(buf, ...))): the name as the body's AST has it.
        c = name_at(w->fn, tl);
      } else if (clang_getCursorKind(c) == CXCursor_MacroExpansion && !constant_macro(fe, c)) {
        // A macro may stand for anything, a parameter included: not the caller's to read,
        // unless it is a constant (`#define BLK 128`), whose value moves, or an expression
        // of its parameters (CEIL_DIV(n, block)), which moves expanded.
        constant = function_macro(root, w, toks, n, i, foreign, &last);
        if (!constant) *foreign = true;
      } else if (clang_getCursorKind(c) == CXCursor_MacroExpansion) {
        constant = macro_body(fe, c);
        if (!constant) *foreign = true;
      }
      CXCursor d = clang_getCursorReferenced(c);
      if (!clang_Cursor_isNull(d)) s = subst_of(w, d);
      if (!s) {
        CXString sp = clang_getTokenSpelling(fe->tu, toks[i]);
        s = template_param_named(w, clang_getCString(sp));
        clang_disposeString(sp);
      }
      enum CXCursorKind dk = clang_getCursorKind(d);
      if (!s && (dk == CXCursor_VarDecl || dk == CXCursor_ParmDecl)) *foreign = true;
      if (!s && (dk == CXCursor_EnumConstantDecl || dk == CXCursor_FunctionDecl || dk == CXCursor_FunctionTemplate) &&
          scoped(d))
        *foreign = true;
      // A namespace, type or enumerator of the user's (`HP::lr`, `hp::kDiv`, `sizeof(Big)`, `kHalf`): the
      // caller's scope may have its own of that name. The libraries' (std::, ncclSum) mean the same there.
      if (!s && user_scope_name(d)) *foreign = true;
    }
    // NAME.y of a dim3 of one value: 1u; NAME.x: the value, unsigned.
    char *member = s && s->dim3 && i + 2 < n && clang_getTokenKind(toks[i + 1]) == CXToken_Punctuation
                       ? fe_text(fe, (SrcRange){.begin = fe_loc(fe, clang_getTokenLocation(fe->tu, toks[i + 1])),
                                                .end = fe_loc(fe, clang_getRangeEnd(clang_getTokenExtent(
                                                                      fe->tu, toks[i + 2])))})
                       : NULL;
    bool x = member && strcmp(member, ".x") == 0, yz = member && (!strcmp(member, ".y") || !strcmp(member, ".z"));
    free(member);
    if (constant) {
      text_join(&out, constant);
      free(constant);
      joined = true;  // what follows the expansion must not merge with it either
      i = last;
      e = fe_loc(fe, clang_getRangeEnd(clang_getTokenExtent(fe->tu, toks[i]))).offset;
    } else if (yz) {
      text_add(&out, "1u");
    } else if (s) {
      *foreign |= s->impure;
      char *macro = s->fixed ? NULL : fe_macro_in(s->in ? s->in->fe : root, s->range);
      char *t = grouped(s->fixed ? strdup(s->fixed) : wrapper_substituted(root, s->in, s->range, foreign), macro != NULL);
      free(macro);
      // A dim3's lane is unsigned (std::min(n, block.x) must stay a min of unsigned values).
      const char *cast = x ? "unsigned" : s->cast;
      if (cast) {
        char *c = xasprintf("((%s)%s)", cast, t);
        free(t);
        t = c;
      }
      text_add(&out, t);
      free(t);
    } else {
      text_addn(&out, fe->src.buf + b, e - b);
    }
    if (x || yz) {
      i += 2;
      e = fe_loc(fe, clang_getRangeEnd(clang_getTokenExtent(fe->tu, toks[i]))).offset;
    }
    at = e;
  }
  clang_disposeTokens(fe->tu, toks, n);
  return out.s;
}

char *wrapper_type_spelling(CXType t) {
  CXString s = clang_getTypeSpelling(clang_getCanonicalType(t));
  char *r = strdup(clang_getCString(s));
  clang_disposeString(s);
  if (!r) COCONET_BUG("out of memory");
  return r;
}

bool wrapper_is_dim3(CXType t) {
  char *s = wrapper_type_spelling(t);
  bool is = strcmp(s, "dim3") == 0 || strcmp(s, "const dim3") == 0;
  free(s);
  return is;
}

// The type a value of type `from` is converted to when it initializes decl,
// when the two differ and the conversion changes what the text computes
// (1 for a float parameter: `1 / world` must divide in float); NULL for pointers,
// references, dim3 and the same type.
char *wrapper_conversion(CXCursor decl, CXType from) {
  CXType to = clang_getCanonicalType(clang_getCursorType(decl));
  // A const reference given a value of another type refers to a converted temporary.
  if (to.kind == CXType_LValueReference && clang_isConstQualifiedType(clang_getPointeeType(to)))
    to = clang_getCanonicalType(clang_getPointeeType(to));
  if (to.kind == CXType_Pointer || to.kind == CXType_LValueReference || to.kind == CXType_RValueReference ||
      wrapper_is_dim3(to) || from.kind == CXType_Invalid)
    return NULL;
  char *a = wrapper_type_spelling(to), *b = wrapper_type_spelling(from);
  // const int and int hold the same value.
  const char *a0 = strncmp(a, "const ", 6) == 0 ? a + 6 : a, *b0 = strncmp(b, "const ", 6) == 0 ? b + 6 : b;
  bool same = strcmp(a0, b0) == 0;
  char *cast = same ? NULL : strdup(a0);
  free(a);
  free(b);
  return cast;
}

// The type of an expression before the implicit conversions around it
// (libclang shows them as an expression whose one written child spans the
// same text: an implicit cast, dim3's converting constructor).
CXType wrapper_written_type(CXCursor e) {
  for (;;) {
    FeKids k = fe_kids(e);
    CXSourceRange r = clang_getCursorExtent(e);
    CXCursor only = clang_getNullCursor();
    int written = 0;
    for (int i = 0; i < k.n && i < FE_KIDS; i++) {
      CXSourceRange kr = clang_getCursorExtent(k.v[i]);
      if (clang_Range_isNull(kr) || clang_equalLocations(clang_getRangeStart(kr), clang_getRangeEnd(kr))) continue;
      written++;
      only = k.v[i];
    }
    if (written != 1 || k.n > FE_KIDS || !clang_isExpression(clang_getCursorKind(only)) ||
        !clang_equalRanges(r, clang_getCursorExtent(only)))
      return clang_getCursorType(e);
    e = only;
  }
}

void wrapper_add(Wrapper *w, CXCursor decl, SrcRange range, const Wrapper *in, char *fixed, bool dim3) {
  Subst *grown = realloc(w->v, sizeof *w->v * (size_t)(w->n + 1));
  if (!grown) COCONET_BUG("out of memory");
  w->v = grown;
  w->v[w->n++] = (Subst){clang_getCursorLocation(decl), range, in, fixed, NULL, NULL, dim3, false};
}

void wrapper_free(Wrapper *w) {
  for (int i = 0; i < w->n; i++) {
    free(w->v[i].fixed);
    free(w->v[i].name);
    free(w->v[i].cast);
  }
  free(w->v);
}

