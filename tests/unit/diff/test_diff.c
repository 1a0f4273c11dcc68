// Unit tests of translator/output/diff.c: exact output on small cases, and random
// files with random edits, where `patch -p0` must turn the old file into the
// new one exactly and the script must be minimal (checked against an LCS
// computed by dynamic programming).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "output/output.h"

// A growable byte buffer.
typedef struct Buf {
  char *p;
  size_t len, cap;
} Buf;

static void buf_add(Buf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    b->cap = (b->len + n + 1) * 2;
    b->p = realloc(b->p, b->cap);
    assert_non_null(b->p);
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

static void buf_str(Buf *b, const char *s) { buf_add(b, s, strlen(s)); }

// The diff of a and b as a malloc'd string (named f.txt on both sides).
static char *diff_of(const char *a, size_t alen, const char *b, size_t blen, size_t *len) {
  char *text = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&text, &n);
  assert_non_null(f);
  assert_int_equal(diff_write(f, "f.txt", "f.txt", a, alen, b, blen), 0);
  assert_int_equal(fclose(f), 0);
  *len = n;
  return text;
}

static void expect_diff(const char *a, const char *b, const char *want) {
  size_t n;
  char *got = diff_of(a, strlen(a), b, strlen(b), &n);
  assert_string_equal(got, want);
  free(got);
}

static void write_file(const char *path, const char *buf, size_t len) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(buf, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  Buf b = {0};
  buf_add(&b, "", 0);
  char chunk[4096];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) buf_add(&b, chunk, got);
  assert_int_equal(ferror(f), 0);
  assert_int_equal(fclose(f), 0);
  *len = b.len;
  return b.p;
}

// Apply the diff of a -> b with `patch -p0` in a fresh directory and check
// that the result is b, byte for byte. Returns the number of lines the diff
// deletes plus the number it inserts.
static int check_patch(const char *a, size_t alen, const char *b, size_t blen) {
  size_t dlen;
  char *d = diff_of(a, alen, b, blen, &dlen);
  if (alen == blen && memcmp(a, b, alen) == 0) {
    assert_int_equal(dlen, 0);
    free(d);
    return 0;
  }
  char dir[] = "/tmp/coconet-diff-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[512], patch[512], cmd[2048];
  snprintf(path, sizeof path, "%s/f.txt", dir);
  snprintf(patch, sizeof patch, "%s/p.diff", dir);
  write_file(path, a, alen);
  write_file(patch, d, dlen);
  snprintf(cmd, sizeof cmd, "cd %s && patch -p0 -s -f --no-backup-if-mismatch --reject-file=- <p.diff", dir);
  int status = system(cmd);
  if (status != 0) fprintf(stderr, "patch failed on:\n%s", d);
  assert_int_equal(status, 0);
  size_t glen;
  char *got = read_file(path, &glen);
  assert_int_equal(glen, blen);
  assert_memory_equal(got, b, blen);
  free(got);
  assert_int_equal(unlink(path), 0);
  assert_int_equal(unlink(patch), 0);
  assert_int_equal(rmdir(dir), 0);
  int edits = 0;
  for (size_t i = 0; i < dlen; i = (size_t)(strchr(d + i, '\n') - d) + 1) {
    bool header = strncmp(d + i, "--- ", 4) == 0 || strncmp(d + i, "+++ ", 4) == 0;
    if (!header && (d[i] == '-' || d[i] == '+')) edits++;
  }
  free(d);
  return edits;
}

// Lines of a buffer, for the reference LCS.
static int split(const char *buf, size_t len, const char **starts, size_t *lens, int max) {
  int n = 0;
  size_t s = 0;
  for (size_t i = 0; i < len; i++)
    if (buf[i] == '\n' || i + 1 == len) {
      assert_true(n < max);
      starts[n] = buf + s;
      lens[n++] = i + 1 - s;
      s = i + 1;
    }
  return n;
}

// The length of a longest common subsequence of lines (dynamic programming).
static int lcs(const char *a, size_t alen, const char *b, size_t blen) {
  enum { MAX = 1024 };
  static const char *as[MAX], *bs[MAX];
  static size_t al[MAX], bl[MAX];
  static int t[MAX + 1][MAX + 1];
  int n = split(a, alen, as, al, MAX), m = split(b, blen, bs, bl, MAX);
  for (int i = n; i >= 0; i--)
    for (int j = m; j >= 0; j--) {
      if (i == n || j == m) t[i][j] = 0;
      else if (al[i] == bl[j] && memcmp(as[i], bs[j], al[i]) == 0) t[i][j] = t[i + 1][j + 1] + 1;
      else t[i][j] = t[i + 1][j] > t[i][j + 1] ? t[i + 1][j] : t[i][j + 1];
    }
  return t[0][0];
}

static int nlines(const char *buf, size_t len) {
  const char *s[1024];
  size_t l[1024];
  return split(buf, len, s, l, 1024);
}

// Random text: lines drawn from a small alphabet, so that many match.
static const char *const WORDS[] = {"a\n", "b\n", "c\n", "}\n", "\n", "  x = 1;\r\n", "int y;\n"};

static unsigned rnd(unsigned n) { return (unsigned)rand() % n; }

static void random_lines(Buf *b, int n, unsigned alphabet) {
  for (int i = 0; i < n; i++) buf_str(b, WORDS[rnd(alphabet)]);
}

// Random edits of a: each line kept, dropped, replaced, or preceded by new
// lines; sometimes lines added at the end or the last newline removed.
static void random_edit(const Buf *a, Buf *b, unsigned alphabet) {
  const char *s[1024];
  size_t l[1024];
  int n = split(a->p, a->len, s, l, 1024);
  int rate = 1 + (int)rnd(10);
  for (int i = 0; i < n; i++) {
    unsigned r = rnd(10 * (unsigned)rate);
    if (r == 0) continue;
    if (r == 1) random_lines(b, 1 + (int)rnd(3), alphabet);
    else if (r == 2) {
      random_lines(b, 1 + (int)rnd(3), alphabet);
      continue;
    }
    buf_add(b, s[i], l[i]);
  }
  if (rnd(3) == 0) random_lines(b, (int)rnd(4), alphabet);
}

static void drop_last_newline(Buf *b) {
  if (b->len && b->p[b->len - 1] == '\n') b->p[--b->len] = '\0';
}

static void test_equal(void **state) {
  (void)state;
  expect_diff("", "", "");
  expect_diff("a\nb\n", "a\nb\n", "");
  expect_diff("no newline", "no newline", "");
}

static void test_empty_files(void **state) {
  (void)state;
  expect_diff("", "x\n", "--- f.txt\n+++ f.txt\n@@ -0,0 +1 @@\n+x\n");
  expect_diff("a\nb\n", "", "--- f.txt\n+++ f.txt\n@@ -1,2 +0,0 @@\n-a\n-b\n");
  expect_diff("", "x", "--- f.txt\n+++ f.txt\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n");
  assert_int_equal(check_patch("", 0, "x\ny\n", 4), 2);
  assert_int_equal(check_patch("x\ny", 3, "", 0), 2);
}

static void test_no_trailing_newline(void **state) {
  (void)state;
  expect_diff("a\nb", "a\nc",
              "--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n"
              "+c\n\\ No newline at end of file\n");
  expect_diff("a\nb", "a\nb\n", "--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
  expect_diff("a\nb\n", "a\nb", "--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n");
  expect_diff("x\na\nb", "y\na\nb",
              "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n-x\n+y\n a\n b\n\\ No newline at end of file\n");
  assert_int_equal(check_patch("a\nb", 3, "a\nb\n", 4), 2);
  assert_int_equal(check_patch("1\n2\n3\n4\n5", 9, "1\n2\n3\n4\n5\n6", 11), 3);
}

static void test_all_changed(void **state) {
  (void)state;
  expect_diff("a\nb\n", "c\nd\n", "--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n-a\n-b\n+c\n+d\n");
  assert_int_equal(check_patch("a\nb\nc\n", 6, "x\ny\n", 4), 5);
}

static void test_start_and_end(void **state) {
  (void)state;
  const char *a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n";
  expect_diff(a, "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
              "--- f.txt\n+++ f.txt\n@@ -1,3 +1,4 @@\n+0\n 1\n 2\n 3\n");
  expect_diff(a, "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n",
              "--- f.txt\n+++ f.txt\n@@ -9,4 +9,3 @@\n 9\n 10\n 11\n-12\n");
  // Changes 7 equal lines apart get two hunks; 6 apart, one.
  expect_diff(a, "x\n2\n3\n4\n5\n6\n7\n8\ny\n10\n11\n12\n",
              "--- f.txt\n+++ f.txt\n@@ -1,4 +1,4 @@\n-1\n+x\n 2\n 3\n 4\n@@ -6,7 +6,7 @@\n 6\n 7\n 8\n-9\n+y\n"
              " 10\n 11\n 12\n");
  expect_diff(a, "x\n2\n3\n4\n5\n6\n7\ny\n9\n10\n11\n12\n",
              "--- f.txt\n+++ f.txt\n@@ -1,11 +1,11 @@\n-1\n+x\n 2\n 3\n 4\n 5\n 6\n 7\n-8\n+y\n 9\n 10\n 11\n");
}

static void test_crlf(void **state) {
  (void)state;
  const char *a = "int a;\r\nint b;\r\nint c;\r\n";
  const char *b = "int a;\r\nint B;\r\nint c;\r\n";
  expect_diff(a, b, "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n int a;\r\n-int b;\r\n+int B;\r\n int c;\r\n");
  assert_int_equal(check_patch(a, strlen(a), b, strlen(b)), 2);
  const char *mixed = "int a;\nint b;\r\nint c;\r\n";
  assert_int_equal(check_patch(a, strlen(a), mixed, strlen(mixed)), 2);
}

static void test_headers(void **state) {
  (void)state;
  char *text = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&text, &n);
  assert_non_null(f);
  assert_int_equal(diff_write(f, "dir/old.cu", "dir/new.cu", "a\n", 2, "b\n", 2), 0);
  assert_int_equal(fclose(f), 0);
  assert_string_equal(text, "--- dir/old.cu\n+++ dir/new.cu\n@@ -1 +1 @@\n-a\n+b\n");
  free(text);
}

// Random files of up to 200 lines and random edits: patch reproduces the new
// file, and the script is minimal.
static void test_random(void **state) {
  (void)state;
  for (int iter = 0; iter < 300; iter++) {
    unsigned alphabet = 2 + rnd(sizeof WORDS / sizeof *WORDS - 1);
    Buf a = {0}, b = {0};
    buf_add(&a, "", 0);
    buf_add(&b, "", 0);
    random_lines(&a, (int)rnd(iter < 100 ? 12 : 200), alphabet);
    random_edit(&a, &b, alphabet);
    if (rnd(4) == 0) drop_last_newline(&a);
    if (rnd(4) == 0) drop_last_newline(&b);
    int edits = check_patch(a.p, a.len, b.p, b.len);
    int want = nlines(a.p, a.len) + nlines(b.p, b.len) - 2 * lcs(a.p, a.len, b.p, b.len);
    assert_int_equal(edits, want);
    free(a.p);
    free(b.p);
  }
}

// Source-sized files: 10000 lines with scattered edits, and two unrelated
// 3000-line files (the worst case: every line differs).
static void test_large(void **state) {
  (void)state;
  Buf a = {0}, b = {0};
  char line[64];
  for (int i = 0; i < 10000; i++) {
    snprintf(line, sizeof line, "line %d;\n", i % 1500);
    buf_str(&a, line);
    if (i % 97 == 0) continue;
    if (i % 331 == 0) buf_str(&b, "  inserted();\n");
    buf_str(&b, line);
  }
  clock_t t0 = clock();
  size_t dlen;
  free(diff_of(a.p, a.len, b.p, b.len, &dlen));
  assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 5.0);
  check_patch(a.p, a.len, b.p, b.len);
  a.len = b.len = 0;
  for (int i = 0; i < 3000; i++) {
    snprintf(line, sizeof line, "old %d\n", i);
    buf_str(&a, line);
    snprintf(line, sizeof line, "new %d\n", i);
    buf_str(&b, line);
  }
  assert_int_equal(check_patch(a.p, a.len, b.p, b.len), 6000);
  free(a.p);
  free(b.p);
}

static void test_write_error(void **state) {
  (void)state;
  FILE *f = fopen("/dev/full", "w");
  assert_non_null(f);
  assert_int_equal(diff_write(f, "a", "b", "a\n", 2, "b\n", 2), -1);
  fclose(f);
}

int main(void) {
  srand(12345);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_equal),       cmocka_unit_test(test_empty_files), cmocka_unit_test(test_no_trailing_newline),
      cmocka_unit_test(test_all_changed), cmocka_unit_test(test_start_and_end), cmocka_unit_test(test_crlf),
      cmocka_unit_test(test_headers),     cmocka_unit_test(test_random),      cmocka_unit_test(test_large),
      cmocka_unit_test(test_write_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
