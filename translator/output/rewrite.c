// rewrite.c: what the rewriter writes around the edits (edit.c applies them):
// the commented pragma, the marker comments that recognise a translated file,
// a line's indentation.
#include "output/output.h"

#include <stdlib.h>
#include <string.h>

static const char TRANSLATED[] = "(translated by coconet)";
static const char BEGIN_MARKER[] = "// coconet: begin generated code for region ";

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

void rewrite_runtime_include(const Frontend *fe, Edit **edits, const char *header, unsigned before) {
  bool found;
  unsigned at = place_include(fe, before, &found);
  const char *why = strcmp(header, "coconet.h") == 0 ? "the runtime of the generated code"
                                                     : "the generated code's runtime, with symmetric memory";
  char *text = found ? xasprintf("#include <%s>  // coconet: %s\n", header, why)
                     : xasprintf("// coconet: %s\n#include <%s>\n\n", why, header);
  edit_add(edits, found ? at : before, found ? at : before, text);
  free(text);
}
