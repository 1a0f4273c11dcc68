// test_pragmas.c: unit tests of the pragmas/ library (cmocka).
//
// The first group parses valid pragmas and checks the whole structure (names,
// arguments, keys, offsets, order). The second runs one test per malformed
// pragma in `errors`, each with its exact message and a caret line under the
// byte the error points at.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "pragma.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static Pragma *parse_len(const char *text, size_t len) {
  Pragma *p = NULL;
  PragmaError err = {0};
  if (pragma_parse(text, len, &p, &err) != 0)
    fail_msg("'%s' failed at %u: %s", text, err.offset, err.message);
  assert_non_null(p);
  return p;
}

static Pragma *parse(const char *text) {
  return parse_len(text, strlen(text));
}

static void check_clause(const PragmaClause *c, const char *name, unsigned offset, bool parens,
                         unsigned nargs) {
  assert_non_null(c);
  assert_string_equal(c->name, name);
  assert_int_equal(c->offset, offset);
  assert_int_equal(c->has_parens, parens);
  assert_int_equal(c->nargs, nargs);
  unsigned n = 0;
  for (const PragmaArg *a = c->args; a; a = a->next) n++;
  assert_int_equal(n, nargs);
}

static void check_arg(const PragmaArg *a, const char *text, unsigned offset) {
  assert_non_null(a);
  assert_null(a->key);
  assert_string_equal(a->text, text);
  assert_int_equal(a->offset, offset);
}

static void check_key(const PragmaArg *a, const char *key, unsigned key_offset, const char *text,
                      unsigned offset) {
  assert_non_null(a);
  assert_non_null(a->key);
  assert_string_equal(a->key, key);
  assert_int_equal(a->key_offset, key_offset);
  assert_string_equal(a->text, text);
  assert_int_equal(a->offset, offset);
}

// ---- valid pragmas ----------------------------------------------------------

static void test_design_example(void **state) {
  (void)state;
  //                 0         1         2         3         4         5         6
  //                 0123456789012345678901234567890123456789012345678901234567890
  Pragma *p = parse("coconet region name(adam_step) split reorder shard(m, v) fuse");
  assert_int_equal(p->directive, PRAGMA_REGION);
  assert_int_equal(p->directive_offset, 8);
  const PragmaClause *c = p->clauses;
  check_clause(c, "name", 15, true, 1);
  check_arg(c->args, "adam_step", 20);
  check_clause(c = c->next, "split", 31, false, 0);
  assert_null(c->args);
  check_clause(c = c->next, "reorder", 37, false, 0);
  check_clause(c = c->next, "shard", 45, true, 2);
  check_arg(c->args, "m", 51);
  check_arg(c->args->next, "v", 54);
  check_clause(c = c->next, "fuse", 57, false, 0);
  assert_null(c->next);
  pragma_free(p);
}

// The Megatron schedule: the order written is kept.
static void test_schedule_order(void **state) {
  (void)state;
  //                 0         1         2         3         4         5
  //                 012345678901234567890123456789012345678901234567890
  Pragma *p = parse("coconet region overlap(chunks=4) split reorder fuse");
  const PragmaClause *c = p->clauses;
  check_clause(c, "overlap", 15, true, 1);
  check_key(c->args, "chunks", 23, "4", 30);
  check_clause(c = c->next, "split", 33, false, 0);
  check_clause(c = c->next, "reorder", 39, false, 0);
  check_clause(c = c->next, "fuse", 47, false, 0);
  assert_null(c->next);
  pragma_free(p);
}

static void test_region_without_clauses(void **state) {
  (void)state;
  Pragma *p = parse("coconet region");
  assert_int_equal(p->directive, PRAGMA_REGION);
  assert_null(p->clauses);
  pragma_free(p);
}

static void test_every_region_clause(void **state) {
  (void)state;
  //                 0         1         2         3         4         5         6         7
  //                 0123456789012345678901234567890123456789012345678901234567890123456789012345
  Pragma *p = parse("coconet region name(r1) shard(m) scratch(g, h) split(g) reorder fuse overlap");
  const PragmaClause *c = p->clauses;
  check_clause(c, "name", 15, true, 1);
  check_arg(c->args, "r1", 20);
  check_clause(c = c->next, "shard", 24, true, 1);
  check_arg(c->args, "m", 30);
  check_clause(c = c->next, "scratch", 33, true, 2);
  check_arg(c->args, "g", 41);
  check_arg(c->args->next, "h", 44);
  check_clause(c = c->next, "split", 47, true, 1);
  check_arg(c->args, "g", 53);
  check_clause(c = c->next, "reorder", 56, false, 0);
  check_clause(c = c->next, "fuse", 64, false, 0);
  check_clause(c = c->next, "overlap", 69, false, 0);
  assert_null(c->next);
  pragma_free(p);
}

// pipeline(tag=T[, group=C]): a name both ends give, the receiving group's communicator.
static void test_pipeline(void **state) {
  (void)state;
  //                 0         1         2         3         4         5
  //                 0123456789012345678901234567890123456789012345678901234
  Pragma *p = parse("coconet region split reorder pipeline(tag=act, group=tp[1])");
  const PragmaClause *c = pragma_find_clause(p, "pipeline");
  check_clause(c, "pipeline", 29, true, 2);
  check_key(c->args, "tag", 38, "act", 42);
  check_key(c->args->next, "group", 47, "tp[1]", 53);
  assert_string_equal(pragma_find_key(c, "group")->text, "tp[1]");
  pragma_free(p);
  p = parse("coconet region pipeline(group=pp, tag=fwd)");
  assert_string_equal(pragma_find_key(pragma_find_clause(p, "pipeline"), "tag")->text, "fwd");
  pragma_free(p);
}

// replicated(b, ...) states that inputs hold the same values on every rank.
static void test_replicated(void **state) {
  (void)state;
  //                 0         1         2         3         4
  //                 01234567890123456789012345678901234567890123456
  Pragma *p = parse("coconet region replicated(res, bias) split reorder");
  const PragmaClause *c = p->clauses;
  check_clause(c, "replicated", 15, true, 2);
  check_arg(c->args, "res", 26);
  check_arg(c->args->next, "bias", 31);
  pragma_free(p);
}

static void test_schedule_auto(void **state) {
  (void)state;
  Pragma *p = parse("coconet region name(x) schedule(auto) shard(m)");
  const PragmaClause *c = pragma_find_clause(p, "schedule");
  check_clause(c, "schedule", 23, true, 1);
  check_arg(c->args, "auto", 32);
  pragma_free(p);
}

static void test_symmetric(void **state) {
  (void)state;
  Pragma *p = parse("coconet symmetric");
  assert_int_equal(p->directive, PRAGMA_SYMMETRIC);
  assert_int_equal(p->directive_offset, 8);
  assert_null(p->clauses);
  pragma_free(p);
}

static void test_pointwise(void **state) {
  (void)state;
  //                 0         1         2         3
  //                 012345678901234567890123456789012345678
  Pragma *p = parse("coconet pointwise(index=i, count=n * 4)");
  assert_int_equal(p->directive, PRAGMA_POINTWISE);
  const PragmaClause *c = p->clauses;
  check_clause(c, "pointwise", 8, true, 2);
  check_key(c->args, "index", 18, "i", 24);
  check_key(c->args->next, "count", 27, "n * 4", 33);
  assert_null(c->next);
  pragma_free(p);
}

static void test_pointwise_one_key(void **state) {
  (void)state;
  Pragma *p = parse("coconet pointwise(count=n)");
  check_clause(p->clauses, "pointwise", 8, true, 1);
  check_key(p->clauses->args, "count", 18, "n", 24);
  pragma_free(p);
  p = parse("coconet pointwise (index = idx)");
  check_clause(p->clauses, "pointwise", 8, true, 1);
  check_key(p->clauses->args, "index", 19, "idx", 27);
  pragma_free(p);
}

// Clauses may be separated by blanks, commas or both.
static void test_separators(void **state) {
  (void)state;
  static const char *const texts[] = {
      "coconet region split reorder fuse",     "coconet region split,reorder,fuse",
      "coconet region split , reorder ,fuse",  "coconet region\tsplit\t,\treorder fuse",
      "  coconet   region split reorder fuse  ", "coconet region split reorder fuse\n",
      "coconet region split reorder fuse\r\n", "coconet region split/**/reorder fuse // fast",
  };
  for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
    Pragma *p = parse(texts[i]);
    const PragmaClause *c = p->clauses;
    assert_string_equal(c->name, "split");
    assert_string_equal(c->next->name, "reorder");
    assert_string_equal(c->next->next->name, "fuse");
    assert_null(c->next->next->next);
    pragma_free(p);
  }
}

// Argument text: trimmed, one space where the input had white space or a comment.
static void test_argument_text(void **state) {
  (void)state;
  Pragma *p = parse("coconet region shard(  m ,v\t)  scratch(bufs[i   +  1], /*g*/ s.g )");
  const PragmaClause *c = p->clauses;
  check_arg(c->args, "m", 23);
  check_arg(c->args->next, "v", 26);
  c = c->next;
  check_arg(c->args, "bufs[i + 1]", 39);
  check_arg(c->args->next, "s.g", 61);
  pragma_free(p);
}

static void test_buffer_forms(void **state) {
  (void)state;
  Pragma *p = parse("coconet region shard(m, s.m, p->v, bufs[0], (*pp)[1], a.b[2]->c, L[f(x, y)])");
  static const char *const want[] = {"m", "s.m", "p->v", "bufs[0]", "(*pp)[1]", "a.b[2]->c",
                                     "L[f(x, y)]"};
  const PragmaArg *a = p->clauses->args;
  for (size_t i = 0; i < ARRAY_SIZE(want); i++, a = a->next) assert_string_equal(a->text, want[i]);
  assert_null(a);
  pragma_free(p);
}

// Commas and parentheses inside brackets and literals do not end an argument.
static void test_nested_arguments(void **state) {
  (void)state;
  Pragma *p = parse("coconet pointwise(count=min(n, m) + t[{1, 2}[0]] + sizeof \",)\" + ')')");
  const PragmaArg *a = p->clauses->args;
  check_key(a, "count", 18, "min(n, m) + t[{1, 2}[0]] + sizeof \",)\" + ')'", 24);
  assert_null(a->next);
  pragma_free(p);
}

// Numbers with exponent signs and literals with escapes are single tokens.
static void test_numbers_and_escapes(void **state) {
  (void)state;
  const char *count = "1e+5 + .5f - 0x1p-3 + sizeof \"a\\\"b)\" + '\\''";
  char text[128];
  snprintf(text, sizeof text, "coconet pointwise(count=%s)", count);
  Pragma *p = parse(text);
  check_key(p->clauses->args, "count", 18, count, 24);
  pragma_free(p);
}

// Offsets count every input byte, those of continuations too ("\\\n" is two).
static void test_continuation_lf(void **state) {
  (void)state;
  Pragma *p = parse("coconet region \\\n  shard(m,\\\n v) fuse");
  const PragmaClause *c = p->clauses;
  check_clause(c, "shard", 19, true, 2);
  check_arg(c->args, "m", 25);
  check_arg(c->args->next, "v", 30);
  check_clause(c->next, "fuse", 33, false, 0);
  pragma_free(p);
}

static void test_continuation_crlf(void **state) {
  (void)state;
  Pragma *p = parse("coconet region \\\r\n  shard(m,\\\r\n v) fuse");
  const PragmaClause *c = p->clauses;
  check_clause(c, "shard", 20, true, 2);
  check_arg(c->args, "m", 26);
  check_arg(c->args->next, "v", 32);
  check_clause(c->next, "fuse", 35, false, 0);
  pragma_free(p);
}

// A continuation may split a token, and blanks may stand between the
// backslash and the newline (gcc and clang accept both).
static void test_continuation_inside_token(void **state) {
  (void)state;
  Pragma *p = parse("coconet region spl\\\nit(state-\\\n>v) over\\ \t\nlap");
  const PragmaClause *c = p->clauses;
  check_clause(c, "split", 15, true, 1);
  check_arg(c->args, "state->v", 23);
  check_clause(c->next, "overlap", 35, false, 0);
  pragma_free(p);
}

// Only len bytes are read: the text need not be NUL-terminated.
static void test_length_bounds_text(void **state) {
  (void)state;
  const char text[] = "coconet region split reorder fuse";
  Pragma *p = parse_len(text, strlen("coconet region split"));
  check_clause(p->clauses, "split", 15, false, 0);
  assert_null(p->clauses->next);
  pragma_free(p);
}

static void test_utf8_identifier(void **state) {
  (void)state;
  Pragma *p = parse("coconet region name(caf\xc3\xa9)");
  check_arg(p->clauses->args, "caf\xc3\xa9", 20);
  pragma_free(p);
}

static void test_accessors(void **state) {
  (void)state;
  Pragma *p = parse("coconet region split overlap(chunks=16)");
  const PragmaClause *overlap = pragma_find_clause(p, "overlap");
  assert_ptr_equal(overlap, p->clauses->next);
  assert_null(pragma_find_clause(p, "fuse"));
  assert_null(pragma_find_key(pragma_find_clause(p, "split"), "chunks"));
  assert_null(pragma_find_key(NULL, "chunks"));
  const PragmaArg *chunks = pragma_find_key(overlap, "chunks");
  assert_ptr_equal(chunks, overlap->args);
  assert_int_equal(pragma_arg_int(chunks), 16);
  pragma_free(p);
  assert_string_equal(pragma_directive_name(PRAGMA_REGION), "region");
  assert_string_equal(pragma_directive_name(PRAGMA_SYMMETRIC), "symmetric");
  assert_string_equal(pragma_directive_name(PRAGMA_POINTWISE), "pointwise");
  assert_null(pragma_directive_name((PragmaDirective)3));
  pragma_free(NULL);
}

static void test_arg_int(void **state) {
  (void)state;
  static const struct {
    const char *text;
    int value;
  } cases[] = {{"1", 1}, {"2147483647", 2147483647}, {"2147483648", -1}, {"0", -1},
               {"08", -1}, {"4u", -1}, {"", -1}, {"-3", -1}};
  for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
    PragmaArg a = {.text = (char *)cases[i].text};
    assert_int_equal(pragma_arg_int(&a), cases[i].value);
  }
}

// On an error *out is NULL, and err may be NULL.
static void test_error_outputs(void **state) {
  (void)state;
  Pragma *p = (Pragma *)&p;
  assert_int_equal(pragma_parse("coconet regoin", 14, &p, NULL), -1);
  assert_null(p);
  PragmaError err;
  const char text[] = "coconet region \0split";
  assert_int_equal(pragma_parse(text, sizeof text - 1, &p, &err), -1);
  assert_int_equal(err.offset, 15);
  assert_string_equal(err.message, "unexpected character '\\x00'");
}

static void check_error_at(const char *text, unsigned offset, const char *message) {
  Pragma *p = NULL;
  PragmaError err = {0};
  if (pragma_parse(text, strlen(text), &p, &err) == 0) fail_msg("'%s' parsed", text);
  assert_null(p);
  assert_string_equal(err.message, message);
  assert_int_equal(err.offset, offset);
}

// Error offsets count the bytes of continuations.
static void test_error_after_continuation(void **state) {
  (void)state;
  check_error_at("coconet region \\\n  splitt", 19,
                 "unknown clause 'splitt'; did you mean 'split'?");
  check_error_at("coconet region \\\r\n  splitt", 20,
                 "unknown clause 'splitt'; did you mean 'split'?");
  check_error_at("coconet region split(g\\\n", 22, "expected ')' to close 'split('");
}

// ---- malformed pragmas ------------------------------------------------------

typedef struct ErrorCase {
  const char *text;
  const char *caret;  // '^' under the byte the error points at
  const char *message;
} ErrorCase;

static const ErrorCase errors[] = {
    // the words before the clauses
    {"",
     "^", "expected 'coconet' after '#pragma'"},
    {"omp parallel for",
     "^", "expected 'coconet' after '#pragma'"},
    {"coconet",
     "       ^", "expected 'region', 'symmetric' or 'pointwise' after 'coconet'"},
    {"coconet (region)",
     "        ^", "expected 'region', 'symmetric' or 'pointwise' after 'coconet'"},
    {"coconet regoin split",
     "        ^", "unknown directive 'regoin'; did you mean 'region'?"},
    {"coconet symetric",
     "        ^", "unknown directive 'symetric'; did you mean 'symmetric'?"},
    {"coconet Pointwise(index=i)",
     "        ^", "unknown directive 'Pointwise'; did you mean 'pointwise'?"},
    {"coconet block",
     "        ^", "unknown directive 'block'; expected 'region', 'symmetric' or 'pointwise'"},
    {"coconet split reorder",
     "        ^", "missing 'region' before clause 'split'"},

    // characters and literals
    {"coconet region split # fuse",
     "                     ^", "unexpected character '#'"},
    {"coconet region name(@x)",
     "                    ^", "unexpected character '@'"},
    {"coconet region split \\ fuse",
     "                     ^", "unexpected character '\\'"},
    {"coconet region split\x01",
     "                    ^", "unexpected character '\\x01'"},
    {"coconet region name(\"x)",
     "                    ^", "missing terminating '\"' character"},
    {"coconet region name(\"x\n\")",
     "                    ^", "missing terminating '\"' character"},
    {"coconet region name('x)",
     "                    ^", "missing terminating ' character"},
    {"coconet region split /* fuse",
     "                     ^", "unterminated /* comment"},
    {"coconet regoin #",
     "        ^", "unknown directive 'regoin'; did you mean 'region'?"},

    // clause names and separators
    {"coconet region splitt",
     "               ^", "unknown clause 'splitt'; did you mean 'split'?"},
    {"coconet region split reoder",
     "                     ^", "unknown clause 'reoder'; did you mean 'reorder'?"},
    {"coconet region shard(m) scracth(g)",
     "                        ^", "unknown clause 'scracth'; did you mean 'scratch'?"},
    {"coconet region foo",
     "               ^", "unknown clause 'foo' for 'region'"},
    {"coconet region split averyveryverylongclausenamethatgoesonandon",
     "                     ^",
     "unknown clause 'averyveryverylongclausenamethatgoesonand...' for 'region'"},
    {"coconet region symmetric",
     "               ^", "'symmetric' is a directive, not a clause of 'region'"},
    {"coconet region name(a) fuse name(b)",
     "                            ^", "duplicate clause 'name'"},
    {"coconet region split split(g)",
     "                     ^", "duplicate clause 'split'"},
    {"coconet region , split",
     "               ^", "expected a clause name"},
    {"coconet region split,,fuse",
     "                     ^", "expected a clause name"},
    {"coconet region split,",
     "                     ^", "expected a clause name"},
    {"coconet region split;",
     "                    ^", "expected a clause name"},
    {"coconet region 4",
     "               ^", "expected a clause name"},
    {"coconet region shard(x)(y)",
     "                       ^", "expected a clause name"},

    // argument lists
    {"coconet region shard",
     "                    ^", "expected '(' after 'shard'"},
    {"coconet region name fuse",
     "                    ^", "expected '(' after 'name'"},
    {"coconet region shard(a, b",
     "                         ^", "expected ')' to close 'shard('"},
    {"coconet region shard(a, b  // )",
     "                         ^", "expected ')' to close 'shard('"},
    {"coconet region shard(a[0)",
     "                        ^", "expected ']' to match '['"},
    {"coconet region shard(a[0",
     "                        ^", "expected ']' to match '['"},
    {"coconet region shard(f(x]))",
     "                        ^", "expected ')' to match '('"},
    {"coconet region shard(a])",
     "                      ^", "unexpected ']' in 'shard('"},
    {"coconet region shard()",
     "                     ^", "expected an argument in 'shard('"},
    {"coconet region shard(a,)",
     "                       ^", "expected an argument in 'shard('"},
    {"coconet region split(,g)",
     "                     ^", "expected an argument in 'split('"},
    {"coconet region split reorder()",
     "                            ^", "'reorder' takes no arguments"},
    {"coconet region fuse(x)",
     "                   ^", "'fuse' takes no arguments"},

    // name and schedule
    {"coconet region name(a, b)",
     "                       ^", "'name' takes one identifier"},
    {"coconet region name(id=a)",
     "                    ^", "'name' takes one identifier"},
    {"coconet region name(1x)",
     "                    ^", "'name(1x)': expected an identifier"},
    {"coconet region name(adam step)",
     "                    ^", "'name(adam step)': expected an identifier"},
    {"coconet region name(\"adam\")",
     "                    ^", "'name(\"adam\")': expected an identifier"},
    {"coconet region schedule",
     "                       ^", "expected '(' after 'schedule'"},
    {"coconet region schedule(fast)",
     "                        ^", "'schedule' accepts only 'auto'"},
    {"coconet region schedule(auto, fast)",
     "                              ^", "'schedule' accepts only 'auto'"},
    {"coconet region schedule(mode=auto)",
     "                        ^", "'schedule' accepts only 'auto'"},

    // overlap
    {"coconet region overlap(chunk=4)",
     "                       ^", "unknown key 'chunk' in 'overlap('; did you mean 'chunks'?"},
    {"coconet region overlap(size=4)",
     "                       ^", "unknown key 'size' in 'overlap('; expected 'chunks'"},
    {"coconet region overlap(4)",
     "                       ^", "expected 'chunks=' in 'overlap('"},
    {"coconet region overlap(chunks==4)",
     "                       ^", "expected 'chunks=' in 'overlap('"},
    {"coconet region overlap(chunks=)",
     "                              ^", "expected a value after 'chunks='"},
    {"coconet region overlap(chunks=0)",
     "                              ^", "'overlap(chunks=...)' must be a positive integer"},
    {"coconet region overlap(chunks=-2)",
     "                              ^", "'overlap(chunks=...)' must be a positive integer"},
    {"coconet region overlap(chunks=K)",
     "                              ^", "'overlap(chunks=...)' must be a positive integer"},
    {"coconet region overlap(chunks=4.0)",
     "                              ^", "'overlap(chunks=...)' must be a positive integer"},
    {"coconet region overlap(chunks=99999999999)",
     "                              ^", "'overlap(chunks=...)' is too large"},
    {"coconet region overlap(chunks=2, chunks=4)",
     "                                 ^", "duplicate key 'chunks' in 'overlap('"},

    // pipeline
    {"coconet region pipeline",
     "                       ^", "expected '(' after 'pipeline'"},
    {"coconet region pipeline(group=tp)",
     "               ^", "'pipeline' needs 'tag=NAME'"},
    {"coconet region pipeline(tag=a, chunks=2)",
     "                               ^", "unknown key 'chunks' in 'pipeline('; expected 'tag' or 'group'"},
    {"coconet region pipeline(tag=a + 1)",
     "                            ^", "'pipeline(tag=a + 1)': expected an identifier"},
    {"coconet region pipeline(tag=a) schedule(auto)",
     "                               ^", "'schedule(auto)' cannot be combined with 'pipeline'"},

    // buffers
    {"coconet region shard(m v)",
     "                       ^", "expected ',' before 'v'"},
    {"coconet region shard(1)",
     "                     ^", "'shard(1)': expected a buffer expression"},
    {"coconet region scratch(g + 1)",
     "                         ^", "'scratch(g + 1)': expected a buffer expression"},
    {"coconet region shard(s.)",
     "                      ^", "'shard(s.)': expected a buffer expression"},
    {"coconet region split(&g)",
     "                     ^", "'split(&g)': expected a buffer expression"},
    {"coconet region split(())",
     "                     ^", "'split(())': expected a buffer expression"},
    {"coconet region shard(bufs[])",
     "                         ^", "'shard(bufs[])': expected a buffer expression"},
    {"coconet region shard(m=v)",
     "                     ^", "'shard(' takes buffers, not key 'm='"},
    {"coconet region shard(m, v, m)",
     "                           ^", "buffer 'm' appears twice in 'shard('"},
    {"coconet region split(s->g, s -> g)",
     "                           ^", "buffer 's -> g' appears twice in 'split('"},
    {"coconet region shard(s.m) scratch(g, s.m)",
     "                                     ^", "buffer 's.m' is in both 'shard' and 'scratch'"},
    {"coconet region replicated()",
     "                          ^", "expected an argument in 'replicated('"},
    {"coconet region replicated",
     "                         ^", "expected '(' after 'replicated'"},
    {"coconet region scratch(g) shard(g)",
     "                                ^", "buffer 'g' is in both 'scratch' and 'shard'"},

    // the schedule as a whole
    {"coconet region reorder split",
     "               ^", "'reorder' needs 'split' before it"},
    {"coconet region fuse, reorder",
     "                     ^", "'reorder' needs 'split' before it"},
    {"coconet region split schedule(auto)",
     "                     ^", "'schedule(auto)' cannot be combined with 'split'"},
    {"coconet region schedule(auto) name(x) overlap(chunks=2)",
     "                                      ^", "'schedule(auto)' cannot be combined with 'overlap'"},

    // symmetric and pointwise
    {"coconet symmetric split",
     "                  ^", "'symmetric' takes no clauses"},
    {"coconet symmetric(p)",
     "                 ^", "'symmetric' takes no clauses"},
    {"coconet pointwise",
     "                 ^", "expected '(' after 'pointwise'"},
    {"coconet pointwise index(i)",
     "                  ^", "expected '(' after 'pointwise'"},
    {"coconet pointwise()",
     "                  ^", "expected an argument in 'pointwise('"},
    {"coconet pointwise(i, n)",
     "                  ^", "expected 'index=' or 'count=' in 'pointwise('"},
    {"coconet pointwise(indx=i)",
     "                  ^", "unknown key 'indx' in 'pointwise('; did you mean 'index'?"},
    {"coconet pointwise(n=10)",
     "                  ^", "unknown key 'n' in 'pointwise('; expected 'index' or 'count'"},
    {"coconet pointwise(index=i+1)",
     "                        ^", "'pointwise(index=i+1)': expected an identifier"},
    {"coconet pointwise(index=i, index=j)",
     "                           ^", "duplicate key 'index' in 'pointwise('"},
    {"coconet pointwise(count=)",
     "                        ^", "expected a value after 'count='"},
    {"coconet pointwise(index=i) fuse",
     "                           ^", "unexpected 'fuse' after 'pointwise(...)'"},
    {"coconet pointwise(index=i",
     "                         ^", "expected ')' to close 'pointwise('"},
};

static void test_error(void **state) {
  const ErrorCase *e = *state;
  check_error_at(e->text, (unsigned)(strchr(e->caret, '^') - e->caret), e->message);
}

int main(void) {
  static const struct CMUnitTest valid[] = {
      cmocka_unit_test(test_design_example),
      cmocka_unit_test(test_schedule_order),
      cmocka_unit_test(test_region_without_clauses),
      cmocka_unit_test(test_every_region_clause),
      cmocka_unit_test(test_pipeline),
      cmocka_unit_test(test_replicated),
      cmocka_unit_test(test_schedule_auto),
      cmocka_unit_test(test_symmetric),
      cmocka_unit_test(test_pointwise),
      cmocka_unit_test(test_pointwise_one_key),
      cmocka_unit_test(test_separators),
      cmocka_unit_test(test_argument_text),
      cmocka_unit_test(test_buffer_forms),
      cmocka_unit_test(test_nested_arguments),
      cmocka_unit_test(test_numbers_and_escapes),
      cmocka_unit_test(test_continuation_lf),
      cmocka_unit_test(test_continuation_crlf),
      cmocka_unit_test(test_continuation_inside_token),
      cmocka_unit_test(test_length_bounds_text),
      cmocka_unit_test(test_utf8_identifier),
      cmocka_unit_test(test_accessors),
      cmocka_unit_test(test_arg_int),
      cmocka_unit_test(test_error_outputs),
      cmocka_unit_test(test_error_after_continuation),
  };
  static struct CMUnitTest malformed[ARRAY_SIZE(errors)];
  for (size_t i = 0; i < ARRAY_SIZE(errors); i++)
    malformed[i] = (struct CMUnitTest){.name = errors[i].text,
                                       .test_func = test_error,
                                       .initial_state = (void *)&errors[i]};
  int failed = cmocka_run_group_tests_name("pragmas: valid", valid, NULL, NULL);
  failed += cmocka_run_group_tests_name("pragmas: malformed", malformed, NULL, NULL);
  return failed != 0;
}
