// text.c: small helpers on C text and memory (text.h).
#include "common/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"

bool text_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

const char *text_base_name(const char *path) {
  const char *slash = path ? strrchr(path, '/') : NULL;
  return slash ? slash + 1 : path ? path : "?";
}

bool text_is_identifier(const char *s) {
  if (!*s || (*s >= '0' && *s <= '9')) return false;
  for (; *s; s++)
    if (!text_ident_char(*s)) return false;
  return true;
}

bool text_each_ident(const char *text, bool (*each)(const char *name, size_t len, void *data), void *data) {
  for (const char *p = text; *p;) {
    if (p[0] == '/' && p[1] == '/') {
      p += strcspn(p, "\n");
    } else if (p[0] == '/' && p[1] == '*') {
      const char *end = strstr(p + 2, "*/");
      p = end ? end + 2 : p + strlen(p);
    } else if (*p == '"' && p > text && p[-1] == 'R' && strchr(p, '(')) {  // R"delim( ... )delim"
      const char *open = strchr(p, '(');
      char end[24];
      int n_delim = (int)(open - p - 1);
      if (n_delim > 16) {
        p++;
        continue;
      }
      snprintf(end, sizeof end, ")%.*s\"", n_delim, p + 1);
      const char *close = strstr(open, end);
      p = close ? close + strlen(end) : p + strlen(p);
    } else if (*p == '"' || (*p == '\'' && !(p > text && text_ident_char(p[-1])))) {  // not 1'000
      char quote = *p++;
      while (*p && *p != quote && *p != '\n') p += p[0] == '\\' && p[1] ? 2 : 1;
      if (*p == quote) p++;
    } else if (text_ident_char(*p)) {
      const char *b = p;
      while (text_ident_char(*p)) p++;
      if (!(*b >= '0' && *b <= '9') && each(b, (size_t)(p - b), data)) return true;  // not a number
    } else {
      p++;
    }
  }
  return false;
}

typedef struct Wanted {
  const char *name;
  size_t len;
} Wanted;

static bool is_wanted(const char *name, size_t len, void *data) {
  const Wanted *w = data;
  return len == w->len && memcmp(name, w->name, len) == 0;
}

bool text_has_ident(const char *text, const char *name) {
  Wanted w = {name, strlen(name)};
  return text_each_ident(text, is_wanted, &w);
}

void text_drop(char *out, const char *in, const char *drop) {
  for (; *in; in++)
    if (!strchr(drop, *in)) *out++ = *in;
  *out = '\0';
}

char *text_without(const char *in, const char *drop) {
  char *out = malloc(strlen(in) + 1);
  if (!out) COCONET_BUG("out of memory");
  text_drop(out, in, drop);
  return out;
}

void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) COCONET_BUG("out of memory");
  return p;
}

// Where line [s, s + n) may break to fit width: the offset just after the last
// ", " (outside literals and comments; in a launch's <<<...>>> only when
// nowhere else) before column width, else just after the first one past it
// (the line stays too long, by less), and the column its continuation is
// indented to (under the innermost open parenthesis, else `hang`); 0 when
// there is none.
static size_t break_point(const char *s, size_t n, int width, size_t indent, size_t hang, size_t *cont) {
  size_t best = 0, in_launch = 0, launch_cont = hang, past = 0, past_cont = hang, open[64];
  int depth = 0;
  char quote = 0;
  bool launch = false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (quote) {
      if (c == '\\') i++;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    else if (c == '/' && i + 1 < n && (s[i + 1] == '/' || s[i + 1] == '*')) break;
    else if (strncmp(s + i, "<<<", 3) == 0 || strncmp(s + i, ">>>", 3) == 0) launch = c == '<', i += 2;
    else if (c == '(' && depth < 64) open[depth++] = i;
    else if (c == ')' && depth > 0) depth--;
    else if (c == ',' && i + 1 < n && s[i + 1] == ' ' && i > indent) {
      size_t under = depth > 0 && open[depth - 1] + 1 <= (size_t)width / 2 ? open[depth - 1] + 1 : hang;
      if (i + 1 >= (size_t)width) {
        if (!past) past = i + 2, past_cont = launch ? hang : under;
      } else if (launch) {
        in_launch = i + 2, launch_cont = hang;
      } else {
        best = i + 2, *cont = under;
      }
    }
  }
  if (best) return best;
  *cont = in_launch ? launch_cont : past_cont;
  return in_launch ? in_launch : past;
}

static void wrap_comment(FILE *out, const char *s, size_t n, size_t indent, int width) {
  const char *p = s + indent + 2, *end = s + n;
  while (p < end && *p == ' ') p++;
  while (p < end) {
    const char *stop = p, *q = p;
    while (q < end) {  // words up to width
      const char *w = q;
      while (w < end && *w != ' ') w++;
      if (stop > p && (size_t)(indent + 3 + (size_t)(w - p)) > (size_t)width) break;
      stop = w;
      q = w;
      while (q < end && *q == ' ') q++;
    }
    fprintf(out, "%.*s// %.*s\n", (int)indent, s, (int)(stop - p), p);
    p = stop;
    while (p < end && *p == ' ') p++;
  }
}

// hang: where a continuation goes that no open parenthesis places (0: 4 past
// the line's indent).
static void wrap_line(FILE *out, const char *s, size_t n, int width, size_t hang) {
  size_t indent = strspn(s, " \t");
  if (indent > n) indent = n;
  if (n <= (size_t)width || s[indent] == '#') {
    fprintf(out, "%.*s\n", (int)n, s);
    return;
  }
  if (n - indent >= 2 && s[indent] == '/' && s[indent + 1] == '/') {
    wrap_comment(out, s, n, indent, width);
    return;
  }
  size_t cont = 0, at = break_point(s, n, width, indent, hang ? hang : indent + 4, &cont);
  if (!at) {
    fprintf(out, "%.*s\n", (int)n, s);
    return;
  }
  fprintf(out, "%.*s\n", (int)(at - 2 + 1), s);  // through the comma
  // The rest, indented to cont, wrapped again.
  char *rest = NULL;
  size_t len = 0;
  FILE *r = open_memstream(&rest, &len);
  if (!r) COCONET_BUG("out of memory");
  fprintf(r, "%*s%.*s", (int)cont, "", (int)(n - at), s + at);
  fclose(r);
  size_t prev = n;
  if (len < prev) wrap_line(out, rest, len, width, cont);
  else fprintf(out, "%s\n", rest);
  free(rest);
}

char *text_wrap(const char *text, int width) {
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  if (!out) COCONET_BUG("out of memory");
  const char *p = text;
  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    if (nl) wrap_line(out, p, n, width, 0);
    else fprintf(out, "%.*s", (int)n, p);  // a last line without a newline is kept as it is
    p += n + (nl ? 1 : 0);
  }
  fclose(out);
  return buf;
}

// Edit distance of two short words (at most 31 characters are compared).
int text_distance(const char *a, const char *b) {
  int n = (int)strlen(a), m = (int)strlen(b), d[32][32];
  if (n > 31) n = 31;
  if (m > 31) m = 31;
  for (int i = 0; i <= n; i++) d[i][0] = i;
  for (int j = 0; j <= m; j++) d[0][j] = j;
  for (int i = 1; i <= n; i++)
    for (int j = 1; j <= m; j++) {
      int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      d[i][j] = best;
    }
  return d[n][m];
}

void text_addn(Text *t, const char *s, size_t k) {
  if (t->n + k + 1 > t->cap) {  // doubling: a text built from many pieces is copied a few times
    size_t cap = t->cap ? t->cap : 64;
    while (cap < t->n + k + 1) cap *= 2;
    char *p = realloc(t->s, cap);
    if (!p) COCONET_BUG("out of memory");
    t->s = p;
    t->cap = cap;
  }
  memcpy(t->s + t->n, s, k);
  t->s[t->n + k] = '\0';
  t->n += k;
}

void text_add(Text *t, const char *s) { text_addn(t, s, strlen(s)); }

char *text_trim(char *s) {
  size_t lead = strspn(s, TEXT_BLANKS), n = strlen(s + lead);
  memmove(s, s + lead, n + 1);
  while (n > 0 && strchr(TEXT_BLANKS, s[n - 1])) s[--n] = '\0';
  return s;
}

char *text_unwrap(char *s) {
  size_t n = strlen(s);
  // (Not where a literal may hold a parenthesis, `mode == '('`: the text stays as it is.)
  while (n >= 2 && s[0] == '(' && s[n - 1] == ')' && !strpbrk(s, "'\"")) {
    int depth = 0;
    size_t close = 0;
    for (size_t i = 0; i < n && !close; i++) {
      depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
      if (depth == 0) close = i;
    }
    if (close != n - 1) break;
    memmove(s, s + 1, n - 2);
    s[n -= 2] = '\0';
  }
  return s;
}

char *text_one_line(char *s) {
  char *w = s;
  for (const char *r = s; *r;) {
    if (*r != '\n' && *r != '\r') {
      *w++ = *r++;
      continue;
    }
    while (w > s && (w[-1] == ' ' || w[-1] == '\t')) w--;
    while (*r == '\n' || *r == '\r' || *r == ' ' || *r == '\t') r++;
    *w++ = ' ';
  }
  *w = '\0';
  return s;
}

const char *text_find_word(const char *text, const char *name) {
  size_t n = strlen(name);
  for (const char *at = strstr(text, name); at; at = strstr(at + 1, name)) {
    bool start = at == text || !text_ident_char(at[-1]);
    bool end = !text_ident_char(at[n]);
    if (start && end) return at;
  }
  return NULL;
}
