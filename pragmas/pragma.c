// pragma.c: accessors of a parsed Pragma, allocation, and spelling suggestions.
#include "internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const pragma_directive_names[] = {"region", "symmetric", "pointwise", NULL};

void *pragma_calloc(size_t n, size_t size) {
  void *p = calloc(n, size);
  if (!p) {
    fputs("coconet: out of memory\n", stderr);
    abort();
  }
  return p;
}

char *xstrndup(const char *s, size_t n) {
  char *p = pragma_calloc(n + 1, 1);
  memcpy(p, s, n);
  return p;
}

static void free_args(PragmaArg *a) {
  while (a) {
    PragmaArg *next = a->next;
    free(a->key);
    free(a->text);
    free(a);
    a = next;
  }
}

void pragma_free(Pragma *p) {
  if (!p) return;
  for (PragmaClause *c = p->clauses, *next; c; c = next) {
    next = c->next;
    free_args(c->args);
    free(c->name);
    free(c);
  }
  free(p);
}

const char *pragma_directive_name(PragmaDirective d) {
  return (unsigned)d <= PRAGMA_POINTWISE ? pragma_directive_names[d] : NULL;
}

const PragmaClause *pragma_find_clause(const Pragma *p, const char *name) {
  for (const PragmaClause *c = p->clauses; c; c = c->next)
    if (strcmp(c->name, name) == 0) return c;
  return NULL;
}

const PragmaArg *pragma_find_key(const PragmaClause *c, const char *key) {
  for (const PragmaArg *a = c ? c->args : NULL; a; a = a->next)
    if (a->key && strcmp(a->key, key) == 0) return a;
  return NULL;
}

int pragma_arg_int(const PragmaArg *a) {
  const char *s = a->text;
  if (*s < '1' || *s > '9') return -1;
  long long v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return -1;
    v = v * 10 + (*s - '0');
    if (v > INT_MAX) return -1;
  }
  return (int)v;
}

static size_t min3(size_t a, size_t b, size_t c) {
  size_t m = a < b ? a : b;
  return m < c ? m : c;
}

// Edit distance (optimal string alignment) between word and a candidate of
// at most 15 bytes; words longer than that are never suggested for.
static size_t distance(const char *w, size_t n, const char *cand) {
  size_t m = strlen(cand), row[3][16];
  for (size_t j = 0; j <= m; j++) row[0][j] = j;
  for (size_t i = 1; i <= n; i++) {
    size_t *cur = row[i % 3], *prev = row[(i - 1) % 3], *prev2 = row[(i + 1) % 3];
    cur[0] = i;
    for (size_t j = 1; j <= m; j++) {
      size_t cost = w[i - 1] != cand[j - 1];
      cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && w[i - 1] == cand[j - 2] && w[i - 2] == cand[j - 1] &&
          prev2[j - 2] + 1 < cur[j])
        cur[j] = prev2[j - 2] + 1;
    }
  }
  return row[n % 3][m];
}

void suggest(Suggestion *s, const char *candidate) {
  if (s->len > 15) return;
  size_t d = distance(s->word, s->len, candidate);
  if (d <= (s->len + 2) / 3 && (!s->best || d < s->distance)) {
    s->best = candidate;
    s->distance = d;
  }
}
