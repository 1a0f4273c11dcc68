// test_text.c: common/text.c, above all text_wrap, which every generated line
// of code passes through: it may move a line break only between tokens.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/text.h"

static void expect_wrap(const char *in, int width, const char *want) {
  char *got = text_wrap(in, width);
  assert_string_equal(got, want);
  free(got);
}

static void short_lines_stay(void **state) {
  (void)state;
  expect_wrap("int a = f(x, y);\n  g(1, 2);\n", 40, "int a = f(x, y);\n  g(1, 2);\n");
  expect_wrap("", 10, "");
  expect_wrap("no newline at the end, kept as it is, however long it is", 10,
              "no newline at the end, kept as it is, however long it is");
}

static void calls_break_after_commas_under_their_parenthesis(void **state) {
  (void)state;
  expect_wrap("    call(alpha, beta, gamma, delta);\n", 24,
              "    call(alpha, beta,\n"
              "         gamma, delta);\n");
  // A parenthesis past half the width: the rest goes 4 past the indent, then stays there.
  expect_wrap("  a_rather_long_function_name(one, two, three, four);\n", 40,
              "  a_rather_long_function_name(one, two,\n"
              "      three, four);\n");
}

static void never_inside_literals_comments_or_directives(void **state) {
  (void)state;
  // The only ", " before column 30 is in the string: the line breaks after the string.
  expect_wrap("f(\"a, b, c, d, e, f, g, h\", x);\n", 30, "f(\"a, b, c, d, e, f, g, h\",\n  x);\n");
  expect_wrap("f(\"a, b, c, d, e, f, g, h, i\");\n", 20, "f(\"a, b, c, d, e, f, g, h, i\");\n");
  expect_wrap("g(',', ' ', x, y, z, w, v, u);\n", 16, "g(',', ' ', x,\n  y, z, w, v,\n  u);\n");
  // Nothing breaks inside a trailing comment.
  expect_wrap("x = h(a); // one, two, three, four\n", 20, "x = h(a); // one, two, three, four\n");
  expect_wrap("#define M(a, b, c, d, e) ((a) + (b))\n", 20, "#define M(a, b, c, d, e) ((a) + (b))\n");
}

static void comment_lines_break_between_words(void **state) {
  (void)state;
  expect_wrap("    // coconet: one two three four five six\n", 24,
              "    // coconet: one two\n"
              "    // three four five\n"
              "    // six\n");
}

static void launch_configurations_break_last(void **state) {
  (void)state;
  expect_wrap("k<<<grid, block, 0, stream>>>(a, b, c);\n", 34,
              "k<<<grid, block, 0, stream>>>(a,\n"
              "    b, c);\n");
  expect_wrap("kernel_name<<<grid, block, 0, stream>>>(a, b);\n", 30,
              "kernel_name<<<grid, block, 0,\n"
              "    stream>>>(a, b);\n");
}

// No ", " before the width: the line breaks at the first one past it (too long, by less).
static void lines_without_an_early_comma_break_at_the_first(void **state) {
  (void)state;
  expect_wrap("    k<T><<<(unsigned)(p.tail / hidden), block, 0, s>>>(out + p.tail_lo, in, n);\n", 30,
              "    k<T><<<(unsigned)(p.tail / hidden),\n"
              "        block, 0,\n"
              "        s>>>(out + p.tail_lo,\n"
              "             in, n);\n");
  expect_wrap("  long_function_name_here(argument_one, b);\n", 20,
              "  long_function_name_here(argument_one,\n"
              "      b);\n");
}

static void wrapping_twice_changes_nothing(void **state) {
  (void)state;
  const char *in = "    coconet_update(g[i], m[i], v[i], w[i], grad_scale, beta1, beta2, step_size, eps);\n";
  char *once = text_wrap(in, 40), *twice = text_wrap(once, 40);
  assert_string_equal(once, twice);
  // The tokens are the same: only blanks and line breaks moved.
  char *a = text_without(in, TEXT_BLANKS), *b = text_without(once, TEXT_BLANKS);
  assert_string_equal(a, b);
  free(a);
  free(b);
  free(once);
  free(twice);
}

static void identifiers_and_blanks(void **state) {
  (void)state;
  assert_true(text_ident_char('_') && text_ident_char('z') && text_ident_char('Q') && text_ident_char('7'));
  assert_false(text_ident_char('-') || text_ident_char(' ') || text_ident_char((char)0xc3));
  char *s = text_without(" a \t+\nb\r ", TEXT_BLANKS);
  assert_string_equal(s, "a+b");
  free(s);
}

static void base_names(void **state) {
  (void)state;
  assert_string_equal(text_base_name("dir/sub/f.cu"), "f.cu");
  assert_string_equal(text_base_name("f.cu"), "f.cu");
  assert_string_equal(text_base_name(NULL), "?");
}

static void unwrapped_and_one_line(void **state) {
  (void)state;
  char a[] = "((n * m))", b[] = "(mode == '(') || (mode == ')')", c[] = "(a) || (b)";
  assert_string_equal(text_unwrap(a), "n * m");
  assert_string_equal(text_unwrap(b), "(mode == '(') || (mode == ')')");
  assert_string_equal(text_unwrap(c), "(a) || (b)");
  char d[] = "do_all_reduce != 0 &&\n        world_size > 1", e[] = "a  \r\n\t b\n";
  assert_string_equal(text_one_line(d), "do_all_reduce != 0 && world_size > 1");
  assert_string_equal(text_one_line(e), "a b ");
}

static void spelled_identifiers(void **state) {
  (void)state;
  const char *src = "#define coconet_p n\nint x = coconet_rank + 1'000; // coconet_c\n"
                    "/* coconet_side */ const char *s = \"coconet_f\\\" coconet_g\"; char c = 'q';\n";
  assert_true(text_has_ident(src, "coconet_p") && text_has_ident(src, "coconet_rank") && text_has_ident(src, "c"));
  assert_false(text_has_ident(src, "coconet_c") || text_has_ident(src, "coconet_side"));
  assert_false(text_has_ident(src, "coconet_f") || text_has_ident(src, "coconet_g") || text_has_ident(src, "q"));
  assert_false(text_has_ident(src, "coconet") || text_has_ident(src, "rank") || text_has_ident(src, "000"));
  assert_false(text_has_ident(src, ""));
  // Raw strings: a quote inside one does not end it; the code after it is read.
  const char *raw = "char q = R\"(\")\"[0]; float coconet_rank = 1; auto s = R\"x(coconet_p)\" )x\";";
  assert_true(text_has_ident(raw, "coconet_rank") && text_has_ident(raw, "s"));
  assert_false(text_has_ident(raw, "coconet_p"));
}

static bool collect(const char *name, size_t len, void *data) {
  Text *t = data;
  text_addn(t, name, len);
  text_add(t, ",");
  return len == 4 && memcmp(name, "stop", 4) == 0;
}

// Every identifier of the code, in order, none of comments, literals or numbers; the walk
// ends where the callback says.
static void each_identifier(void **state) {
  (void)state;
  Text seen = {0};
  assert_false(text_each_ident("#ifdef A_1 // B\nint x = 1'000 + y2; /* C */ s(\"D\", 'e');", collect, &seen));
  assert_string_equal(seen.s, "ifdef,A_1,int,x,y2,s,");
  free(seen.s);
  seen = (Text){0};
  assert_true(text_each_ident("a stop b", collect, &seen));
  assert_string_equal(seen.s, "a,stop,");
  free(seen.s);
}

// A text built from many pieces holds them all, in order.
static void growing_text(void **state) {
  (void)state;
  Text t = {0};
  for (int i = 0; i < 1000; i++) text_add(&t, i % 2 ? "b" : "aa");
  assert_int_equal(t.n, 1500);
  assert_int_equal(strlen(t.s), 1500);
  assert_true(t.cap > t.n && strncmp(t.s, "aabaab", 6) == 0 && strcmp(t.s + 1497, "aab") == 0);
  free(t.s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(short_lines_stay),
      cmocka_unit_test(base_names),
      cmocka_unit_test(calls_break_after_commas_under_their_parenthesis),
      cmocka_unit_test(never_inside_literals_comments_or_directives),
      cmocka_unit_test(comment_lines_break_between_words),
      cmocka_unit_test(launch_configurations_break_last),
      cmocka_unit_test(lines_without_an_early_comma_break_at_the_first),
      cmocka_unit_test(wrapping_twice_changes_nothing),
      cmocka_unit_test(identifiers_and_blanks),
      cmocka_unit_test(spelled_identifiers),
      cmocka_unit_test(unwrapped_and_one_line),
      cmocka_unit_test(each_identifier),
      cmocka_unit_test(growing_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
