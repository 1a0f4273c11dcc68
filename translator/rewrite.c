// rewrite.c: the output file is the input with byte-range edits applied and
// every other byte kept; the commented pragma; recognising translated files.
#include "translator.h"

#include <stdlib.h>
#include <string.h>

static const char TRANSLATED[] = "(translated by coconet)";
static const char BEGIN_MARKER[] = "// coconet: begin generated code for region ";

void edit_add(Edit **list, unsigned begin, unsigned end, const char *text) {
  Edit *e = calloc(1, sizeof *e);
  if (!e || !(e->text = strdup(text))) COCONET_BUG("out of memory");
  e->begin = begin;
  e->end = end;
  while (*list) list = &(*list)->next;
  *list = e;
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

char *rewrite_apply(const SourceFile *src, const Edit *edits, bool line_directives, size_t *len) {
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

char *rewrite_apply_span(const SourceFile *src, const Edit *edits, unsigned begin, unsigned end) {
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

// The pragma on one line: each backslash-newline and the blanks after it become one space.
static char *join_lines(const char *s, size_t n) {
  char *out = malloc(n + 1);
  if (!out) COCONET_BUG("out of memory");
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    size_t nl = s[i] == '\\' && i + 1 < n && s[i + 1] == '\n' ? 1 : s[i] == '\\' && i + 2 < n && s[i + 1] == '\r' && s[i + 2] == '\n' ? 2 : 0;
    if (!nl) {
      out[k++] = s[i];
      continue;
    }
    i += nl;
    while (i + 1 < n && (s[i + 1] == ' ' || s[i + 1] == '\t')) i++;
    out[k++] = ' ';
  }
  while (k > 0 && (out[k - 1] == ' ' || out[k - 1] == '\t' || out[k - 1] == '\r')) k--;
  out[k] = '\0';
  return out;
}

// Where the block comment that s leaves open starts, or NULL when none is open at its end.
static const char *open_comment(const char *s) {
  char quote = 0;
  for (const char *p = s; *p; p++) {
    if (quote) {
      if (*p == '\\' && p[1]) p++;
      else if (*p == quote) quote = 0;
    } else if (*p == '"' || *p == '\'') {
      quote = *p;
    } else if (p[0] == '/' && p[1] == '/') {
      return NULL;
    } else if (p[0] == '/' && p[1] == '*') {
      const char *end = strstr(p + 2, "*/");
      if (!end) return p;
      p = end + 1;
    }
  }
  return NULL;
}

// A block comment that starts on the pragma's line and ends after it stays a
// block comment: the directive before it becomes a line comment of its own,
// and the comment goes on on the next line.
char *rewrite_pragma_comment(const SourceFile *src, SrcRange pragma) {
  char *text = join_lines(src->buf + pragma.begin.offset, pragma.end.offset - pragma.begin.offset);
  const char *open = open_comment(text);
  char *out;
  int rc;
  if (open) {
    int n = (int)(open - text);
    while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t')) n--;
    rc = asprintf(&out, "// %.*s %s\n%s", n, text, TRANSLATED, open);
  } else {
    rc = asprintf(&out, "// %s %s", text, TRANSLATED);
  }
  if (rc < 0) COCONET_BUG("out of memory");
  free(text);
  return out;
}

static bool starts(const char *s, size_t n, const char *prefix) {
  size_t k = strlen(prefix);
  return n >= k && memcmp(s, prefix, k) == 0;
}

static bool line_has(const char *s, size_t n, const char *needle) {
  size_t k = strlen(needle);
  for (size_t i = 0; i + k <= n; i++)
    if (memcmp(s + i, needle, k) == 0) return true;
  return false;
}

long rewrite_find_translated(const char *buf, size_t len) {
  for (size_t ls = 0; ls < len;) {
    const char *nl = memchr(buf + ls, '\n', len - ls);
    size_t le = nl ? (size_t)(nl - buf) : len;
    size_t at = ls;
    while (at < le && (buf[at] == ' ' || buf[at] == '\t')) at++;
    const char *s = buf + at;
    size_t n = le - at;
    if (starts(s, n, BEGIN_MARKER) || (starts(s, n, "// #") && line_has(s, n, "coconet") && line_has(s, n, TRANSLATED)))
      return (long)at;
    ls = le + 1;
  }
  return -1;
}

char *rewrite_line_indent(const SourceFile *src, unsigned offset) {
  unsigned ls = offset;
  while (ls > 0 && src->buf[ls - 1] != '\n') ls--;
  size_t n = strspn(src->buf + ls, " \t");
  if (ls + n > offset) n = offset - ls;
  char *out = strndup(src->buf + ls, n);
  if (!out) COCONET_BUG("out of memory");
  return out;
}
