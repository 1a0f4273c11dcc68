// lex.c: remove line continuations, then split the line into tokens.
#include "internal.h"

#include <string.h>

// If a continuation (backslash, blanks, newline or \r\n) starts at s[i],
// returns the offset just after it, else 0. Blanks before the newline are
// accepted as gcc and clang accept them.
static unsigned continuation(const char *s, unsigned len, unsigned i) {
  if (s[i] != '\\') return 0;
  unsigned j = i + 1;
  while (j < len && (s[j] == ' ' || s[j] == '\t')) j++;
  if (j < len && s[j] == '\n') return j + 1;
  if (j + 1 < len && s[j] == '\r' && s[j + 1] == '\n') return j + 2;
  return 0;
}

// Translation phase 2: P->line is P->text without continuations, and P->map
// remembers where each byte came from.
static void splice(Parser *P) {
  P->line = pragma_calloc(P->len + 1, 1);
  P->map = pragma_calloc(P->len + 1, sizeof(unsigned));
  unsigned n = 0;
  for (unsigned i = 0; i < P->len;) {
    unsigned next = continuation(P->text, P->len, i);
    if (next) {
      i = next;
      continue;
    }
    P->map[n] = i;
    P->line[n++] = P->text[i++];
  }
  P->map[n] = P->len;
  P->line_len = n;
}

static unsigned offset_of(const Parser *P, const char *p) {
  return P->map[p - P->line];
}

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Bytes of UTF-8 sequences are identifier characters, as gcc and clang accept
// UTF-8 identifiers.
static bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (unsigned char)c >= 0x80;
}

static bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

static bool is_ident_char(char c) {
  return is_ident_start(c) || is_digit(c);
}

// Skips white space and comments from p; returns where the next token starts.
static const char *skip_space(Parser *P, const char *p, const char *end) {
  for (;;) {
    if (p < end && is_space(*p)) {
      p++;
    } else if (end - p >= 2 && p[0] == '/' && p[1] == '/') {
      while (p < end && *p != '\n') p++;
    } else if (end - p >= 2 && p[0] == '/' && p[1] == '*') {
      const char *q = p + 2;
      while (end - q >= 2 && !(q[0] == '*' && q[1] == '/')) q++;
      if (end - q < 2) fail(P, offset_of(P, p), "unterminated /* comment");
      p = q + 2;
    } else {
      return p;
    }
  }
}

// A preprocessing number: a digit or '.' digit, then letters, digits, '_',
// '.' and the signs of exponents (1e+5, 0x1p-3).
static unsigned number_len(const char *p, const char *end) {
  const char *q = p + 1;
  while (q < end) {
    if (is_ident_char(*q) || *q == '.') q++;
    else if ((*q == '+' || *q == '-') && strchr("eEpP", q[-1])) q++;
    else break;
  }
  return (unsigned)(q - p);
}

// A string or character literal; fails when the line ends inside it.
static unsigned quoted_len(Parser *P, const char *p, const char *end) {
  const char *q = p + 1;
  while (q < end && *q != *p && *q != '\n') q += (*q == '\\' && q + 1 < end) ? 2 : 1;
  if (q < end && *q == *p) return (unsigned)(q + 1 - p);
  if (*p == '"') fail(P, offset_of(P, p), "missing terminating '\"' character");
  fail(P, offset_of(P, p), "missing terminating ' character");
}

static unsigned punct_len(const char *p, const char *end) {
  static const char *const multi[] = {
      "<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=",
      "&&", "||", "*=", "/=", "%=", "+=", "-=", "&=", "^=", "|=", NULL,
  };
  for (int i = 0; multi[i]; i++) {
    size_t n = strlen(multi[i]);
    if ((size_t)(end - p) >= n && memcmp(p, multi[i], n) == 0) return (unsigned)n;
  }
  return *p && strchr("()[]{}.,;:?~!%^&*-+=|<>/", *p) ? 1 : 0;
}

_Noreturn static void unexpected_char(Parser *P, const char *p) {
  unsigned char c = (unsigned char)*p;
  if (c > ' ' && c < 127) fail(P, offset_of(P, p), "unexpected character '%c'", c);
  fail(P, offset_of(P, p), "unexpected character '\\x%02x'", c);
}

// Reads the token at p into t (kind and len).
static void read_token(Parser *P, const char *p, const char *end, Token *t) {
  const char *q = p;
  if (is_ident_start(*p)) {
    while (q < end && is_ident_char(*q)) q++;
    t->kind = TK_IDENT;
    t->len = (unsigned)(q - p);
  } else if (is_digit(*p) || (*p == '.' && end - p >= 2 && is_digit(p[1]))) {
    t->kind = TK_NUM;
    t->len = number_len(p, end);
  } else if (*p == '"' || *p == '\'') {
    t->kind = *p == '"' ? TK_STR : TK_CHAR;
    t->len = quoted_len(P, p, end);
  } else {
    t->kind = TK_PUNCT;
    t->len = punct_len(p, end);
    if (t->len == 0) unexpected_char(P, p);
  }
}

// Fills P->toks; on an error, fail() leaves the tokens read so far in place.
static void read_tokens(Parser *P) {
  const char *end = P->line + P->line_len;
  for (const char *p = P->line;;) {
    const char *start = skip_space(P, p, end);
    if (start == end) return;
    Token *t = &P->toks[P->ntoks];
    *t = (Token){.loc = start, .offset = offset_of(P, start), .space_before = start != p};
    read_token(P, start, end, t);
    p = start + t->len;
    P->ntoks++;
  }
}

// Tokenizes the line. A lexing error does not stop the parse at once: the
// tokens end where it happened, and pragma_parse reports it unless the parser
// fails on an earlier token.
void tokenize(Parser *P) {
  splice(P);
  P->toks = pragma_calloc(P->line_len + 1, sizeof(Token));
  if (setjmp(P->env) == 0) read_tokens(P);
  else P->lex_error = P->error;
  Token *eof = &P->toks[P->ntoks];
  *eof = (Token){.kind = TK_EOF, .loc = P->line + P->line_len};
  if (P->lex_error.message[0]) eof->offset = P->lex_error.offset;
  else if (P->ntoks > 0) eof->offset = P->map[eof[-1].loc + eof[-1].len - 1 - P->line] + 1;
  P->tok = P->toks;
}

bool equal(const Token *t, const char *s) {
  return t->len == strlen(s) && memcmp(t->loc, s, t->len) == 0;
}

char *join_tokens(const Token *begin, const Token *end) {
  size_t n = 1;
  for (const Token *t = begin; t < end; t++) n += t->len + 1;
  char *buf = pragma_calloc(n, 1), *q = buf;
  for (const Token *t = begin; t < end; t++) {
    if (t != begin && t->space_before) *q++ = ' ';
    memcpy(q, t->loc, t->len);
    q += t->len;
  }
  return buf;
}
