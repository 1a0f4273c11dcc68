// internal.h: what the stages of the pragmas/ library share. The translator
// includes only pragma.h.
#ifndef COCONET_PRAGMAS_INTERNAL_H
#define COCONET_PRAGMAS_INTERNAL_H

#include "pragma.h"

#include <setjmp.h>

typedef enum {
  TK_IDENT,  // identifier or keyword
  TK_NUM,    // preprocessing number: 4, 0x10, 1.5f, 1x
  TK_STR,    // string literal
  TK_CHAR,   // character literal
  TK_PUNCT,  // punctuator, longest match: ( ) , = -> [ ...
  TK_EOF,    // end of the line
} TokenKind;

typedef struct Token {
  TokenKind kind;
  const char *loc;    // spelling, inside Parser.line (not NUL-terminated)
  unsigned len;       // spelling length; 0 for TK_EOF
  unsigned offset;    // offset of the first byte in the caller's text; for
                      // TK_EOF the byte after the last token
  bool space_before;  // white space or a comment comes between it and the previous token
} Token;

// The state of one pragma_parse call. Everything allocated hangs off it, so
// fail() can jump out from any depth and pragma_parse frees it all.
typedef struct Parser {
  const char *text;   // the caller's bytes
  unsigned len;       // their number
  char *line;         // text with the continuations removed (NUL-terminated)
  unsigned *map;      // map[i]: offset in text of line[i]; map[line_len] = len
  unsigned line_len;  // length of line
  Token *toks;        // the tokens of line, ending with TK_EOF
  unsigned ntoks;     // their number, TK_EOF aside
  Token *tok;         // the next token to parse
  char *stack;        // the open brackets while an argument is scanned
  Pragma *pragma;     // the result being built
  PragmaError error;      // what fail() wrote
  PragmaError lex_error;  // a lexing error, kept until the parser reaches its offset
  jmp_buf env;            // where fail() jumps
} Parser;

// lex.c
void tokenize(Parser *P);  // fills line, map, toks and maybe lex_error
bool equal(const Token *t, const char *s);
char *join_tokens(const Token *begin, const Token *end);  // see PragmaArg.text

// parse.c
// Writes P->error (offset, printf-style message) and longjmps to P->env.
_Noreturn void fail(Parser *P, unsigned offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
// User text for a message: s, cut to CLIP_MAX bytes plus "..." when longer.
#define CLIP_MAX 40
#define CLIP_SIZE (CLIP_MAX + 4)
const char *clip(char buf[CLIP_SIZE], const char *s, size_t len);
const char *spell(char buf[CLIP_SIZE], const Token *t);  // clip of a token

// check.c: the clauses, their arguments and the checks run while parsing.
typedef enum {
  ARGS_NONE,     // no parentheses allowed: reorder, fuse
  ARGS_BUFFERS,  // buffer expressions: shard(m, s.v), split(g)
  ARGS_NAME,     // exactly one identifier: name(adam_step)
  ARGS_AUTO,     // exactly `auto`: schedule(auto)
  ARGS_KEYS,     // key=value arguments only: overlap(chunks=4)
} ArgKind;

typedef enum {
  VAL_EXPR,      // any expression
  VAL_IDENT,     // one identifier
  VAL_POSITIVE,  // a positive decimal int
} ValueKind;

typedef struct KeySpec {
  const char *name;  // NULL ends a list
  ValueKind value;
} KeySpec;

typedef struct ClauseSpec {
  const char *name;       // NULL ends the table
  ArgKind args;
  bool parens_required;   // a bare name is an error
  bool manual;            // part of a hand-written schedule: excludes schedule(auto)
  const char *after;      // a clause that must come before this one, or NULL
  const char *exclusive;  // a clause that must not name the same buffer, or NULL
  const KeySpec *keys;    // ARGS_KEYS: the keys accepted
  const char *required_key;  // ARGS_KEYS: a key the clause must have, or NULL
} ClauseSpec;

extern const ClauseSpec pointwise_spec;  // the argument list of `pointwise(...)`
const ClauseSpec *lookup_clause(const Token *name);  // a region clause or NULL
const ClauseSpec *region_clause(Parser *P, const Token *name);  // fails when unknown
// Checks one argument of c (the last one added) whose value is [begin, end).
void check_arg(Parser *P, const ClauseSpec *spec, const PragmaClause *c, const PragmaArg *a,
               const Token *begin, const Token *end);
// Checks the clause c, just parsed, against the clauses before it.
void check_clause(Parser *P, const ClauseSpec *spec, const PragmaClause *c);

// pragma.c
extern const char *const pragma_directive_names[];  // NULL-terminated, in enum order
void *pragma_calloc(size_t n, size_t size);  // aborts when out of memory
char *xstrndup(const char *s, size_t n);

// The closest candidate to a misspelt word, clang-style: within
// (length + 2) / 3 edits (an adjacent swap counts as one).
typedef struct Suggestion {
  const char *word;  // what the user wrote (not NUL-terminated)
  size_t len;
  const char *best;  // the closest candidate so far, or NULL
  size_t distance;   // its distance
} Suggestion;
void suggest(Suggestion *s, const char *candidate);

#endif
