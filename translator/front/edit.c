// edit.c: byte-range edits of the main file and the text they make: the
// input with the edits applied and every other byte kept (with #line
// directives that keep the input's line numbers), or one span of it.
#include "front/front.h"

#include <stdlib.h>
#include <string.h>

void edit_add(Edit **list, unsigned begin, unsigned end, const char *text) {
  Edit *e = calloc(1, sizeof *e);
  if (!e || !(e->text = strdup(text))) COCONET_BUG("out of memory");
  e->begin = begin;
  e->end = end;
  while (*list) list = &(*list)->next;
  *list = e;
}

void edits_append(Edit **list, Edit *more) {
  while (*list) list = &(*list)->next;
  *list = more;
}

void edits_free(Edit *list) {
  while (list) {
    Edit *next = list->next;
    free(list->text);
    free(list);
    list = next;
  }
}

// Insertions before replacements at the same offset, otherwise in the order added.
static bool before(const Edit *a, const Edit *b) {
  if (a->begin != b->begin) return a->begin < b->begin;
  return a->begin == a->end && b->begin != b->end;
}

static int sorted(const Edit *list, const Edit ***out) {
  int n = 0;
  for (const Edit *e = list; e; e = e->next) n++;
  const Edit **v = calloc(n ? (size_t)n : 1, sizeof *v);
  if (!v) COCONET_BUG("out of memory");
  n = 0;
  for (const Edit *e = list; e; e = e->next) {  // insertion sort: stable
    int i = n++;
    while (i > 0 && before(e, v[i - 1])) {
      v[i] = v[i - 1];
      i--;
    }
    v[i] = e;
  }
  *out = v;
  return n;
}

// A growing output buffer.
typedef struct Out {
  char *buf;
  size_t len, cap;
} Out;

static void out_put(Out *o, const char *s, size_t n) {
  if (o->len + n + 1 > o->cap) {
    o->cap = (o->len + n + 1) * 2;
    o->buf = realloc(o->buf, o->cap);
    if (!o->buf) COCONET_BUG("out of memory");
  }
  memcpy(o->buf + o->len, s, n);
  o->len += n;
  o->buf[o->len] = '\0';
}

static size_t newlines(const char *s, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += s[i] == '\n';
  return k;
}

// After an edit that changed the number of lines, `#line` tells the compiler where the original text resumes:
// the rest of the edited line (if any) goes on a line of its own, numbered as
// in the input.
static void line_marker(Out *o, const SourceFile *src, unsigned line_no) {
  char line[64];
  snprintf(line, sizeof line, "#line %u \"", line_no);
  out_put(o, line, strlen(line));
  for (const char *p = src->path; *p; p++) {
    if (*p == '"' || *p == '\\') out_put(o, "\\", 1);
    out_put(o, p, 1);
  }
  out_put(o, "\"\n", 2);
}

static size_t resync_lines(Out *o, const SourceFile *src, size_t from) {
  if (from < src->len && src->buf[from] == '\n') out_put(o, "\n", 1), from++;
  else if (o->len && o->buf[o->len - 1] != '\n') out_put(o, "\n", 1);
  line_marker(o, src, source_loc(src, (unsigned)from).line);
  return from;
}

char *edits_apply(const SourceFile *src, const Edit *edits, bool line_directives, size_t *len) {
  const Edit **v;
  int n = sorted(edits, &v);
  for (int i = 0; i < n; i++)
    if (v[i]->end < v[i]->begin || v[i]->end > src->len || (i > 0 && v[i]->begin < v[i - 1]->end))
      COCONET_BUG("overlapping or out-of-range edit [%u, %u)", v[i]->begin, v[i]->end);
  Out o = {NULL, 0, 0};
  out_put(&o, "", 0);
  // The file is compiled from elsewhere (coconet-cc's temporary directory):
  // __FILE__ and the compiler's messages name the input from the first line on.
  if (line_directives) line_marker(&o, src, 1);
  size_t from = 0;
  for (int i = 0; i < n; i++) {
    out_put(&o, src->buf + from, v[i]->begin - from);
    out_put(&o, v[i]->text, strlen(v[i]->text));
    from = v[i]->end;
    if (line_directives && newlines(v[i]->text, strlen(v[i]->text)) != newlines(src->buf + v[i]->begin, v[i]->end - v[i]->begin))
      from = resync_lines(&o, src, from);
  }
  out_put(&o, src->buf + from, src->len - from);
  free(v);
  *len = o.len;
  return o.buf;
}

char *edits_apply_span(const SourceFile *src, const Edit *edits, unsigned begin, unsigned end) {
  const Edit **v;
  int n = sorted(edits, &v);
  Out o = {NULL, 0, 0};
  out_put(&o, "", 0);
  size_t from = begin;
  for (int i = 0; i < n; i++) {
    if (v[i]->begin < begin || v[i]->end > end) continue;
    out_put(&o, src->buf + from, v[i]->begin - from);
    out_put(&o, v[i]->text, strlen(v[i]->text));
    from = v[i]->end;
  }
  out_put(&o, src->buf + from, end - from);
  free(v);
  return o.buf;
}
