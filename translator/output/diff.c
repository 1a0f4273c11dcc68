// diff.c: --diff, a unified diff of the input and the output.
//
// Lines are compared whole, their '\n' included, so a last line without one
// differs from the same text with one (printed with "\ No newline at end of
// file", as diff -u does). Each distinct line gets a number (a hash table);
// the edit script is Myers' O(ND) algorithm with the linear-space middle
// snake (E. Myers, "An O(ND) Difference Algorithm and Its Variations", 1986),
// in the form GNU diff uses: split at the middle snake, recurse on both sides.
// The script is minimal. Hunks have 3 lines of context, and two changes at
// most 6 equal lines apart share a hunk.
#include "output/output.h"
#include "common/text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { CONTEXT = 3 };

typedef struct Line {
  const char *text;
  size_t len;  // with the '\n', when there is one
} Line;

// One side of the diff: its lines, their numbers, and which lines the edit
// script deletes (old side) or inserts (new side).
typedef struct Side {
  Line *lines;
  int *ids;
  bool *changed;
  int n;
} Side;

static void split_lines(const char *buf, size_t len, Side *s) {
  int n = 0;
  for (size_t i = 0; i < len; i++)
    if (buf[i] == '\n' || i + 1 == len) n++;
  s->lines = xcalloc((size_t)n, sizeof *s->lines);
  s->ids = xcalloc((size_t)n, sizeof *s->ids);
  s->changed = xcalloc((size_t)n, sizeof *s->changed);
  s->n = n;
  size_t start = 0;
  int k = 0;
  for (size_t i = 0; i < len; i++)
    if (buf[i] == '\n' || i + 1 == len) {
      s->lines[k++] = (Line){buf + start, i + 1 - start};
      start = i + 1;
    }
}

static void side_free(Side *s) {
  free(s->lines);
  free(s->ids);
  free(s->changed);
}

static uint64_t hash_line(Line l) {
  uint64_t h = 1469598103934665603u;  // FNV-1a
  for (size_t i = 0; i < l.len; i++) h = (h ^ (unsigned char)l.text[i]) * 1099511628211u;
  return h;
}

// Number the lines of both sides: equal lines, equal numbers.
static void number_lines(Side *a, Side *b) {
  size_t cap = 16;
  while (cap < 2 * (size_t)(a->n + b->n)) cap *= 2;
  Line *slot_line = xcalloc(cap, sizeof *slot_line);
  int *slot_id = xcalloc(cap, sizeof *slot_id);  // 0 = empty
  int next = 1;
  Side *sides[] = {a, b};
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < sides[s]->n; i++) {
      Line l = sides[s]->lines[i];
      size_t h = (size_t)hash_line(l) & (cap - 1);
      while (slot_id[h] && !(slot_line[h].len == l.len && memcmp(slot_line[h].text, l.text, l.len) == 0))
        h = (h + 1) & (cap - 1);
      if (!slot_id[h]) {
        slot_id[h] = next++;
        slot_line[h] = l;
      }
      sides[s]->ids[i] = slot_id[h];
    }
  free(slot_line);
  free(slot_id);
}

// The comparison in progress: both sides and the furthest-reaching paths of
// the forward and backward searches, indexed by diagonal k = x - y.
typedef struct Diff {
  const int *a, *b;
  bool *adel, *bins;
  int *fd, *bd;
} Diff;

// The middle snake of a[x0, x1) against b[y0, y1): a point on a minimal edit
// path with about half of the edits before it. Both ranges are non-empty and
// their first and last lines differ.
static void middle_snake(const Diff *d, int x0, int x1, int y0, int y1, int *xmid, int *ymid) {
  int *fd = d->fd, *bd = d->bd;
  int dmin = x0 - y1, dmax = x1 - y0;
  int fmid = x0 - y0, bmid = x1 - y1;
  int fmin = fmid, fmax = fmid, bmin = bmid, bmax = bmid;
  bool odd = (fmid - bmid) & 1;
  fd[fmid] = x0;
  bd[bmid] = x1;
  for (;;) {
    if (fmin > dmin) fd[--fmin - 1] = -1;
    else fmin++;
    if (fmax < dmax) fd[++fmax + 1] = -1;
    else fmax--;
    for (int k = fmax; k >= fmin; k -= 2) {
      int lo = fd[k - 1], hi = fd[k + 1];
      int x = lo >= hi ? lo + 1 : hi;
      int y = x - k;
      while (x < x1 && y < y1 && d->a[x] == d->b[y]) x++, y++;
      fd[k] = x;
      if (odd && bmin <= k && k <= bmax && bd[k] <= x) {
        *xmid = x;
        *ymid = y;
        return;
      }
    }
    if (bmin > dmin) bd[--bmin - 1] = INT32_MAX;
    else bmin++;
    if (bmax < dmax) bd[++bmax + 1] = INT32_MAX;
    else bmax--;
    for (int k = bmax; k >= bmin; k -= 2) {
      int lo = bd[k - 1], hi = bd[k + 1];
      int x = lo < hi ? lo : hi - 1;
      int y = x - k;
      while (x > x0 && y > y0 && d->a[x - 1] == d->b[y - 1]) x--, y--;
      bd[k] = x;
      if (!odd && fmin <= k && k <= fmax && x <= fd[k]) {
        *xmid = x;
        *ymid = y;
        return;
      }
    }
  }
}

// Mark the lines a minimal edit script of a[x0, x1) -> b[y0, y1) deletes and inserts.
static void compare(const Diff *d, int x0, int x1, int y0, int y1) {
  while (x0 < x1 && y0 < y1 && d->a[x0] == d->b[y0]) x0++, y0++;
  while (x1 > x0 && y1 > y0 && d->a[x1 - 1] == d->b[y1 - 1]) x1--, y1--;
  if (x0 == x1) {
    for (int y = y0; y < y1; y++) d->bins[y] = true;
  } else if (y0 == y1) {
    for (int x = x0; x < x1; x++) d->adel[x] = true;
  } else {
    int xmid, ymid;
    middle_snake(d, x0, x1, y0, y1, &xmid, &ymid);
    compare(d, x0, xmid, y0, ymid);
    compare(d, xmid, x1, ymid, y1);
  }
}

static void print_line(FILE *out, char mark, Line l) {
  fputc(mark, out);
  fwrite(l.text, 1, l.len, out);
  if (l.len == 0 || l.text[l.len - 1] != '\n') fputs("\n\\ No newline at end of file\n", out);
}

// A hunk's range: "start,count", where start is 1-based, or for an empty
// range the line before it; ",1" is left out.
static void print_range(FILE *out, int start, int count) {
  if (count == 1) fprintf(out, "%d", start + 1);
  else fprintf(out, "%d,%d", count ? start + 1 : start, count);
}

// The end (in a and in b) of the run of changes that starts at (i, j).
static void change_end(const Side *a, const Side *b, int i, int j, int *ie, int *je) {
  while (i < a->n && a->changed[i]) i++;
  while (j < b->n && b->changed[j]) j++;
  *ie = i;
  *je = j;
}

// The number of equal lines from (i, j) up to the next change (or the end).
static int equal_run(const Side *a, const Side *b, int i, int j) {
  int n = 0;
  while (i + n < a->n && j + n < b->n && !a->changed[i + n] && !b->changed[j + n]) n++;
  return n;
}

// Print the hunk whose first change starts at (i, j); returns past its last change.
static void print_hunk(FILE *out, const Side *a, const Side *b, int *pi, int *pj) {
  int i = *pi, j = *pj;
  int before = i < CONTEXT ? i : CONTEXT;
  // Find where the hunk's changes end: the next change joins it when at most
  // 2 * CONTEXT equal lines lie between.
  int ei = i, ej = j;
  for (;;) {
    change_end(a, b, ei, ej, &ei, &ej);
    int eq = equal_run(a, b, ei, ej);
    if (ei + eq >= a->n && ej + eq >= b->n) break;
    if (eq > 2 * CONTEXT) break;
    ei += eq;
    ej += eq;
  }
  int after = a->n - ei < CONTEXT ? a->n - ei : CONTEXT;
  int astart = i - before, bstart = j - before;
  fputs("@@ -", out);
  print_range(out, astart, ei + after - astart);
  fputs(" +", out);
  print_range(out, bstart, ej + after - bstart);
  fputs(" @@\n", out);
  int x = astart, y = bstart;
  while (x < ei + after || y < ej + after) {
    if (x < a->n && y < b->n && !a->changed[x] && !b->changed[y]) {
      print_line(out, ' ', a->lines[x++]);
      y++;
      continue;
    }
    while (x < a->n && a->changed[x]) print_line(out, '-', a->lines[x++]);
    while (y < b->n && b->changed[y]) print_line(out, '+', b->lines[y++]);
  }
  *pi = ei + after;
  *pj = ej + after;
}

int diff_write(FILE *out, const char *old_path, const char *new_path, const char *a, size_t alen, const char *b,
               size_t blen) {
  if (alen == blen && memcmp(a, b, alen) == 0) return 0;
  Side sa, sb;
  split_lines(a, alen, &sa);
  split_lines(b, blen, &sb);
  number_lines(&sa, &sb);
  size_t diags = (size_t)sa.n + (size_t)sb.n + 3;
  int *fd = xcalloc(2 * diags, sizeof *fd);
  Diff d = {sa.ids, sb.ids, sa.changed, sb.changed, fd + sb.n + 1, fd + diags + sb.n + 1};
  compare(&d, 0, sa.n, 0, sb.n);
  free(fd);
  fprintf(out, "--- %s\n+++ %s\n", old_path, new_path);
  int i = 0, j = 0;
  for (;;) {
    int eq = equal_run(&sa, &sb, i, j);
    i += eq;
    j += eq;
    if (i >= sa.n && j >= sb.n) break;
    print_hunk(out, &sa, &sb, &i, &j);
  }
  side_free(&sa);
  side_free(&sb);
  if (fflush(out) != 0 || ferror(out)) {
    fprintf(stderr, "coconet: error: cannot write the diff\n");
    return -1;
  }
  return 0;
}
