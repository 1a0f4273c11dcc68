// parse.c: the grammar of a `#pragma coconet` line, and pragma_parse.
//
//   pragma    := 'coconet' directive
//   directive := 'region' [clause [[','] clause]...]
//              | 'symmetric'
//              | 'pointwise' '(' args ')'
//   clause    := NAME ['(' args ')']
//   args      := arg [',' arg]...
//   arg       := KEY '=' tokens | tokens     (up to the ',' or ')' outside brackets)
#include "internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void fail(Parser *P, unsigned offset, const char *fmt, ...) {
  P->error.offset = offset;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(P->error.message, sizeof P->error.message, fmt, ap);
  va_end(ap);
  longjmp(P->env, 1);
}

const char *clip(char buf[CLIP_SIZE], const char *s, size_t len) {
  if (len <= CLIP_MAX) {
    memcpy(buf, s, len);
    buf[len] = '\0';
  } else {
    memcpy(buf, s, CLIP_MAX);
    strcpy(buf + CLIP_MAX, "...");
  }
  return buf;
}

const char *spell(char buf[CLIP_SIZE], const Token *t) {
  return clip(buf, t->loc, t->len);
}

static bool at_eof(const Parser *P) {
  return P->tok->kind == TK_EOF;
}

static PragmaClause *add_clause(Parser *P, const char *name, unsigned offset) {
  PragmaClause **link = &P->pragma->clauses;
  while (*link) link = &(*link)->next;
  PragmaClause *c = *link = pragma_calloc(1, sizeof *c);
  c->name = xstrndup(name, strlen(name));
  c->offset = offset;
  return c;
}

static char closer(char open) {
  return open == '(' ? ')' : open == '[' ? ']' : '}';
}

_Noreturn static void unmatched(Parser *P, const Token *t, char open) {
  fail(P, t->offset, "expected '%c' to match '%c'", closer(open), open);
}

// Returns the ',' or ')' that ends the argument starting at P->tok.
static Token *skip_arg(Parser *P, const PragmaClause *c) {
  unsigned depth = 0;
  for (Token *t = P->tok;; t++) {
    if (t->kind == TK_EOF && depth == 0) fail(P, t->offset, "expected ')' to close '%s('", c->name);
    if (t->kind == TK_EOF) unmatched(P, t, P->stack[depth - 1]);
    char ch = t->kind == TK_PUNCT && t->len == 1 ? *t->loc : '\0';
    if (ch == '(' || ch == '[' || ch == '{') {
      P->stack[depth++] = ch;
    } else if (ch == ')' || ch == ']' || ch == '}') {
      if (depth > 0 && ch != closer(P->stack[depth - 1])) unmatched(P, t, P->stack[depth - 1]);
      if (depth > 0) depth--;
      else if (ch == ')') return t;
      else fail(P, t->offset, "unexpected '%c' in '%s('", ch, c->name);
    } else if (ch == ',' && depth == 0) {
      return t;
    }
  }
}

// Adds the argument [begin, end) to c and checks it.
static void add_arg(Parser *P, const ClauseSpec *spec, PragmaClause *c, const Token *begin,
                    const Token *end) {
  PragmaArg **link = &c->args;
  while (*link) link = &(*link)->next;
  PragmaArg *a = *link = pragma_calloc(1, sizeof *a);
  c->nargs++;
  if (begin->kind == TK_IDENT && begin + 1 < end && equal(begin + 1, "=")) {
    a->key = xstrndup(begin->loc, begin->len);
    a->key_offset = begin->offset;
    begin += 2;
  }
  a->text = join_tokens(begin, end);
  a->offset = begin->offset;
  check_arg(P, spec, c, a, begin, end);
}

// args, from the '(' at P->tok through the matching ')'.
static void parse_args(Parser *P, const ClauseSpec *spec, PragmaClause *c) {
  if (spec->args == ARGS_NONE) fail(P, P->tok->offset, "'%s' takes no arguments", c->name);
  c->has_parens = true;
  P->tok++;
  for (;;) {
    Token *end = skip_arg(P, c);
    if (end == P->tok) fail(P, end->offset, "expected an argument in '%s('", c->name);
    add_arg(P, spec, c, P->tok, end);
    P->tok = end + 1;
    if (equal(end, ")")) return;
  }
}

static void parse_clause(Parser *P) {
  const Token *name = P->tok;
  if (name->kind != TK_IDENT) fail(P, name->offset, "expected a clause name");
  const ClauseSpec *spec = region_clause(P, name);
  if (pragma_find_clause(P->pragma, spec->name))
    fail(P, name->offset, "duplicate clause '%s'", spec->name);
  PragmaClause *c = add_clause(P, spec->name, name->offset);
  P->tok++;
  if (equal(P->tok, "(")) parse_args(P, spec, c);
  else if (spec->parens_required) fail(P, P->tok->offset, "expected '(' after '%s'", c->name);
  check_clause(P, spec, c);
}

static void parse_region(Parser *P) {
  while (!at_eof(P)) {
    if (P->pragma->clauses && equal(P->tok, ",")) P->tok++;
    parse_clause(P);
  }
}

static void parse_symmetric(Parser *P) {
  if (!at_eof(P)) fail(P, P->tok->offset, "'symmetric' takes no clauses");
}

static void parse_pointwise(Parser *P) {
  if (!equal(P->tok, "(")) fail(P, P->tok->offset, "expected '(' after 'pointwise'");
  PragmaClause *c = add_clause(P, "pointwise", P->pragma->directive_offset);
  parse_args(P, &pointwise_spec, c);
  char buf[CLIP_SIZE];
  if (!at_eof(P))
    fail(P, P->tok->offset, "unexpected '%s' after 'pointwise(...)'", spell(buf, P->tok));
}

_Noreturn static void unknown_directive(Parser *P, const Token *t) {
  char buf[CLIP_SIZE];
  if (lookup_clause(t)) fail(P, t->offset, "missing 'region' before clause '%s'", spell(buf, t));
  Suggestion s = {.word = t->loc, .len = t->len};
  for (int d = 0; pragma_directive_names[d]; d++) suggest(&s, pragma_directive_names[d]);
  if (s.best)
    fail(P, t->offset, "unknown directive '%s'; did you mean '%s'?", spell(buf, t), s.best);
  fail(P, t->offset, "unknown directive '%s'; expected 'region', 'symmetric' or 'pointwise'",
       spell(buf, t));
}

static void parse_directive(Parser *P) {
  const Token *t = P->tok;
  if (!equal(t, "coconet"))
    fail(P, t->offset, "expected 'coconet' after '#pragma'");
  t = ++P->tok;
  if (t->kind != TK_IDENT)
    fail(P, t->offset, "expected 'region', 'symmetric' or 'pointwise' after 'coconet'");
  int d = 0;
  while (pragma_directive_names[d] && !equal(t, pragma_directive_names[d])) d++;
  if (!pragma_directive_names[d]) unknown_directive(P, t);
  P->pragma->directive = (PragmaDirective)d;
  P->pragma->directive_offset = t->offset;
  P->tok++;
}

// Parses the tokens with P->env set; returns 0, or -1 after fail().
static int run(Parser *P) {
  P->stack = pragma_calloc(P->ntoks + 1, 1);
  P->pragma = pragma_calloc(1, sizeof(Pragma));
  if (setjmp(P->env)) return -1;
  parse_directive(P);
  switch (P->pragma->directive) {
  case PRAGMA_REGION: parse_region(P); break;
  case PRAGMA_SYMMETRIC: parse_symmetric(P); break;
  case PRAGMA_POINTWISE: parse_pointwise(P); break;
  }
  return 0;
}

int pragma_parse(const char *text, size_t len, Pragma **out, PragmaError *err) {
  *out = NULL;
  if (len >= UINT_MAX) {
    if (err) *err = (PragmaError){.message = "pragma text is too long"};
    return -1;
  }
  Parser P = {.text = text, .len = (unsigned)len};
  tokenize(&P);
  int rc = run(&P);
  // A lexing error wins unless the parser failed on an earlier token.
  if (P.lex_error.message[0] && (rc == 0 || P.error.offset >= P.lex_error.offset)) {
    P.error = P.lex_error;
    rc = -1;
  }
  if (rc == 0) *out = P.pragma;
  else pragma_free(P.pragma);
  if (rc != 0 && err) *err = P.error;
  free(P.line);
  free(P.map);
  free(P.toks);
  free(P.stack);
  return rc;
}
