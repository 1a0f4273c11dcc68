// pragma.h: the pragmas/ library: parse and check one `#pragma coconet` line.
//
// The translator finds a `#pragma coconet ...` line, hands its text to
// pragma_parse and gets back the directive with its clauses, or the first
// error with the byte offset of the offending token:
//
//   #pragma coconet region name(adam_step) split reorder shard(m, v) fuse
//   #pragma coconet region overlap(chunks=4) split reorder fuse
//   #pragma coconet region name(step) scratch(g) schedule(auto)
//   #pragma coconet symmetric
//   #pragma coconet pointwise(index=i, count=n)
//
// The library knows only the text (the language: docs/pragmas.md). It checks
// the grammar, the clause names and their arguments, duplicates, a buffer both
// in shard and scratch, `reorder` written before `split` and `schedule(auto)`
// mixed with a hand-written schedule. Whether a buffer exists or a schedule is
// legal for the code under the pragma is the translator's business.
//
// Files, one per stage: lex.c (continuations, tokens), parse.c (the grammar,
// pragma_parse), check.c (the table of clauses, each argument and clause
// checked as it is parsed), pragma.c (the accessors below).
#ifndef COCONET_PRAGMA_H
#define COCONET_PRAGMA_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
  PRAGMA_REGION,     // a block to analyze and rewrite; takes the clauses
  PRAGMA_SYMMETRIC,  // the next cudaMalloc allocates peer-accessible memory
  PRAGMA_POINTWISE,  // hint for the next __global__ function's element loop
} PragmaDirective;

// One argument of a clause: `m`, `state->v`, `chunks=4`.
typedef struct PragmaArg {
  char *key;            // "chunks" for chunks=4; NULL for a positional argument
  char *text;           // the value's tokens, spelled as the # operator would (see below)
  unsigned offset;      // offset of the value's first byte in the input
  unsigned key_offset;  // offset of the key when key != NULL
  struct PragmaArg *next;
} PragmaArg;

// One clause: `split`, `shard(m, v)`. Clauses are kept in the order written,
// which is the order the schedule is applied in.
typedef struct PragmaClause {
  char *name;         // "name", "shard", "scratch", "split", "reorder", "fuse", "overlap", "schedule"
  unsigned offset;    // offset of the name in the input
  bool has_parens;    // written with an argument list
  PragmaArg *args;    // in the order written; NULL without parentheses
  unsigned nargs;     // length of args
  struct PragmaClause *next;
} PragmaClause;

// A parsed directive. `pointwise(index=i, count=n)` is one clause named
// "pointwise" (offset = directive_offset) holding the keys; `symmetric` has none.
typedef struct Pragma {
  PragmaDirective directive;
  unsigned directive_offset;  // offset of the directive word in the input
  PragmaClause *clauses;      // in the order written
} Pragma;

// The first error: a short clang-style message and where it points.
typedef struct PragmaError {
  unsigned offset;    // offset of the offending token; at the end of the line,
                      // the byte after the last token
  char message[256];  // e.g. "unknown clause 'splitt'; did you mean 'split'?"
} PragmaError;

// text: the pragma's bytes from the word `coconet` (just after `#pragma`) to the
// end of the logical line. It may hold backslash-newline continuations (also
// with \r\n or with blanks between the backslash and the newline) and comments.
// Offsets in the result and the error are byte offsets into text; the caller
// maps them to line:col. An argument's text is its tokens with continuations and
// comments removed and one space wherever the input had white space between two
// tokens: "state->v", "bufs[i + 1]", "4".
// Returns 0 with *out set (free it with pragma_free), or -1 with *out = NULL and
// the first error in *err (err may be NULL).
int pragma_parse(const char *text, size_t len, Pragma **out, PragmaError *err);
void pragma_free(Pragma *p);

// "region", "symmetric" or "pointwise"; NULL for a value outside the enum.
const char *pragma_directive_name(PragmaDirective d);

// The clause called name, or NULL. A parsed pragma never repeats a clause.
const PragmaClause *pragma_find_clause(const Pragma *p, const char *name);

// The argument `key=...` of a clause, or NULL (c may be NULL).
const PragmaArg *pragma_find_key(const PragmaClause *c, const char *key);

// The argument's text as a positive decimal int ("4" -> 4), or -1 when it is
// not one (after a successful parse, overlap's chunks always is).
int pragma_arg_int(const PragmaArg *a);

#endif
