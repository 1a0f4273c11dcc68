// macro.c: what coconet reads of a macro's definition. libclang 16 places the
// code of a macro's body where the macro is used, so the operators written in
// the body have no place to read them from; the definition's tokens say them.
#include "front/front.h"

#include "common/text.h"

#include <stdlib.h>
#include <string.h>

bool fe_token_is(CXTranslationUnit tu, CXToken t, const char *text) {
  CXString sp = clang_getTokenSpelling(tu, t);
  bool is = strcmp(clang_getCString(sp), text) == 0;
  clang_disposeString(sp);
  return is;
}

char *fe_token_text(CXTranslationUnit tu, CXToken t) {
  CXString sp = clang_getTokenSpelling(tu, t);
  char *s = strdup(clang_getCString(sp));
  clang_disposeString(sp);
  if (!s) COCONET_BUG("out of memory");
  return s;
}

// An assignment, ++ or --, or the preprocessor's # and ##: not in a pure macro's body.
static bool bad_token(CXTranslationUnit tu, CXToken t) {
  static const char *const bad[] = {"#", "##", "...", "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=",
                                    ">>=", "++", "--"};
  bool is = false;
  for (size_t b = 0; b < sizeof bad / sizeof *bad && !is && clang_getTokenKind(t) == CXToken_Punctuation; b++)
    is = fe_token_is(tu, t, bad[b]);
  return is;
}

// A keyword an expression of values may hold: a builtin type's (a cast), sizeof.
static bool value_keyword(CXTranslationUnit tu, CXToken t) {
  static const char *const ok[] = {"float", "double", "int", "unsigned", "signed", "long", "short", "char", "bool",
                                   "const", "sizeof"};
  bool is = false;
  for (size_t k = 0; k < sizeof ok / sizeof *ok && !is; k++) is = fe_token_is(tu, t, ok[k]);
  return is;
}

int fe_macro_param(CXTranslationUnit tu, const FeMacro *m, CXToken t) {
  // By spelling: a parameter may be named like a keyword (`#define CAST(a, float) ((float)(a))`).
  if (clang_getTokenKind(t) != CXToken_Identifier && clang_getTokenKind(t) != CXToken_Keyword) return -1;
  char *name = fe_token_text(tu, t);
  int param = -1;
  for (unsigned p = 0; p < m->params && param < 0; p++)
    if (fe_token_is(tu, m->toks[2 + 2 * p], name)) param = (int)p;
  free(name);
  return param;
}

bool fe_function_macro(CXTranslationUnit tu, CXCursor def, FeMacro *m) {
  *m = (FeMacro){0};
  if (clang_getCursorKind(def) != CXCursor_MacroDefinition || !clang_Cursor_isMacroFunctionLike(def)) return false;
  clang_tokenize(tu, clang_getCursorExtent(def), &m->toks, &m->n);
  unsigned close = 2;  // token 0 is the name, 1 the parenthesis
  while (close < m->n && !fe_token_is(tu, m->toks[close], ")")) close++;
  m->body = close + 1;
  m->params = close > 2 ? (close - 1) / 2 : 0;  // NAME ( p , q ): tokens 2, 4, ...
  bool ok = m->body < m->n;
  for (unsigned i = 2; i < close && ok; i++) ok = !fe_token_is(tu, m->toks[i], "...");
  int depth = 0;
  for (unsigned i = m->body; i < m->n && ok; i++) {
    CXTokenKind k = clang_getTokenKind(m->toks[i]);
    bool param = fe_macro_param(tu, m, m->toks[i]) >= 0;
    ok = (k != CXToken_Keyword || param || value_keyword(tu, m->toks[i])) && (k != CXToken_Identifier || param) &&
         !bad_token(tu, m->toks[i]);
    depth += fe_token_is(tu, m->toks[i], "(") ? 1 : fe_token_is(tu, m->toks[i], ")") ? -1 : 0;
    ok = ok && !(depth == 0 && fe_token_is(tu, m->toks[i], ","));  // `a, b`: more than one expression
  }
  if (!ok) fe_macro_free(tu, m);
  return ok;
}

void fe_macro_free(CXTranslationUnit tu, FeMacro *m) {
  clang_disposeTokens(tu, m->toks, m->n);
  *m = (FeMacro){0};
}

bool fe_macro_pure(CXTranslationUnit tu, CXCursor def) {
  if (clang_getCursorKind(def) != CXCursor_MacroDefinition) return false;
  FeMacro m;
  if (clang_Cursor_isMacroFunctionLike(def)) {
    bool pure = fe_function_macro(tu, def, &m);
    if (pure) fe_macro_free(tu, &m);
    return pure;
  }
  m = (FeMacro){0};
  clang_tokenize(tu, clang_getCursorExtent(def), &m.toks, &m.n);
  bool pure = m.n > 1;
  for (unsigned i = 1; i < m.n && pure; i++)  // token 0 is the macro's name
    pure = clang_getTokenKind(m.toks[i]) != CXToken_Identifier &&
           (clang_getTokenKind(m.toks[i]) != CXToken_Keyword || value_keyword(tu, m.toks[i])) &&
           !bad_token(tu, m.toks[i]);
  fe_macro_free(tu, &m);
  return pure;
}

bool fe_in_pure_macro(CXCursor c) {
  CXTranslationUnit tu = clang_Cursor_getTranslationUnit(c);
  CXSourceRange r = fe_file_extent(c);
  if (clang_Range_isNull(r)) return false;
  CXCursor m = clang_getCursor(tu, clang_getRangeStart(r));
  if (clang_getCursorKind(m) != CXCursor_MacroExpansion || !fe_macro_pure(tu, clang_getCursorReferenced(m)))
    return false;
  CXSourceRange mr = fe_file_extent(m);
  unsigned b, e, mb, me;
  clang_getFileLocation(clang_getRangeStart(r), NULL, NULL, NULL, &b);
  clang_getFileLocation(clang_getRangeEnd(r), NULL, NULL, NULL, &e);
  clang_getFileLocation(clang_getRangeStart(mr), NULL, NULL, NULL, &mb);
  clang_getFileLocation(clang_getRangeEnd(mr), NULL, NULL, NULL, &me);
  return !clang_Range_isNull(mr) && b >= mb && e <= me;
}

bool fe_macro_ceil_div(CXTranslationUnit tu, CXCursor def) {
  FeMacro m;
  if (!fe_function_macro(tu, def, &m)) return false;
  // The body's tokens without blanks, each parenthesized use of a parameter as A or
  // B, a literal one as 1; a use without parentheses is not read.
  Text t = {0};
  text_add(&t, "");
  bool ok = m.params == 2;
  for (unsigned i = m.body; i < m.n && ok; i++) {
    int p = i + 2 < m.n && fe_token_is(tu, m.toks[i], "(") && fe_token_is(tu, m.toks[i + 2], ")")
                ? fe_macro_param(tu, &m, m.toks[i + 1])
                : -1;
    char *s = fe_token_text(tu, m.toks[i]);
    if (p >= 0) {
      text_add(&t, p ? "B" : "A");
      i += 2;
    } else if (clang_getTokenKind(m.toks[i]) == CXToken_Identifier) {
      ok = false;
    } else if (clang_getTokenKind(m.toks[i]) == CXToken_Literal && s[0] == '1' && !s[1 + strspn(s + 1, "uUlL")]) {
      text_add(&t, "1");
    } else {
      text_add(&t, s);
    }
    free(s);
  }
  ok = ok && strcmp(text_unwrap(t.s), "(A+B-1)/B") == 0;
  free(t.s);
  fe_macro_free(tu, &m);
  return ok;
}
