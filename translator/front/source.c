// source.c: files in and out, and the lexical scan that decides whether a
// file needs libclang at all.
#include "front/front.h"
#include "common/text.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int source_read(const char *path, SourceFile *out) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "coconet: error: cannot read '%s': %s\n", path, strerror(errno));
    return -1;
  }
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += got;
    if (len + 1 == cap) buf = realloc(buf, cap *= 2);
  }
  bool failed = !buf || ferror(f);
  fclose(f);
  if (failed) {
    fprintf(stderr, "coconet: error: cannot read '%s'\n", path);
    free(buf);
    return -1;
  }
  buf[len] = '\0';
  out->path = strdup(path);
  out->buf = buf;
  out->len = len;
  return 0;
}

void source_free(SourceFile *f) {
  free(f->path);
  free(f->buf);
  f->path = f->buf = NULL;
}

// Skip a raw string literal R"delim( ... )delim" starting at the quote.
static size_t skip_raw_string(const char *s, size_t len, size_t i) {
  size_t open = i + 1, paren = open;
  while (paren < len && s[paren] != '(' && paren - open <= 16) paren++;
  if (paren >= len || s[paren] != '(') return i + 1;  // not a raw string after all
  size_t dlen = paren - open;
  for (size_t j = paren + 1; j + dlen < len; j++)
    if (s[j] == ')' && memcmp(s + j + 1, s + open, dlen) == 0 && s[j + 1 + dlen] == '"')
      return j + dlen + 2;
  return len;
}

static size_t skip_quoted(const char *s, size_t len, size_t i) {
  char q = s[i];
  for (i++; i < len && s[i] != q && s[i] != '\n'; i++)
    if (s[i] == '\\') i++;
  return i + 1;
}

// Skip horizontal space and backslash-newlines.
static size_t skip_hspace(const char *s, size_t len, size_t i) {
  for (;;) {
    if (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\f' || s[i] == '\v')) i++;
    else if (i + 1 < len && s[i] == '\\' && s[i + 1] == '\n') i += 2;
    else if (i + 2 < len && s[i] == '\\' && s[i + 1] == '\r' && s[i + 2] == '\n') i += 3;
    else if (i + 1 < len && s[i] == '/' && s[i + 1] == '*') {
      const char *end = strstr(s + i + 2, "*/");
      i = end ? (size_t)(end - s) + 2 : len;
    } else return i;
  }
}

static bool word_at(const char *s, size_t len, size_t i, const char *w) {
  size_t n = strlen(w);
  return i + n <= len && memcmp(s + i, w, n) == 0 &&
         (i + n == len || !(isalnum((unsigned char)s[i + n]) || s[i + n] == '_'));
}

// At a '#' that starts a line: is it `# pragma coconet`, or a pragma whose
// namespace is one or two letters from it (`# pragma cocnet`, which the parse
// then warns about)?
static bool coconet_directive_at(const char *s, size_t len, size_t i) {
  i = skip_hspace(s, len, i + 1);
  if (!word_at(s, len, i, "pragma")) return false;
  i = skip_hspace(s, len, i + 6);
  if (word_at(s, len, i, "coconet")) return true;
  size_t n = 0;
  while (i + n < len && n < 16 && text_ident_char(s[i + n])) n++;
  char word[17];
  snprintf(word, sizeof word, "%.*s", (int)n, s + i);
  return n >= 5 && text_distance(word, "coconet") <= 2;
}

bool source_needs_translation(const char *s, size_t len) {
  bool line_start = true;  // only whitespace seen since the last newline
  for (size_t i = 0; i < len;) {
    char c = s[i];
    if (c == '\n') { line_start = true; i++; continue; }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') { i++; continue; }
    if (c == '/' && i + 1 < len && s[i + 1] == '/') {
      while (i < len && s[i] != '\n') i += (s[i] == '\\' && i + 1 < len) ? 2 : 1;
      continue;
    }
    if (c == '/' && i + 1 < len && s[i + 1] == '*') {
      const char *end = strstr(s + i + 2, "*/");
      i = end ? (size_t)(end - s) + 2 : len;
      continue;
    }
    if (c == '\\' && i + 1 < len && (s[i + 1] == '\n' || s[i + 1] == '\r')) { i += 2; continue; }
    bool was_line_start = line_start;
    line_start = false;
    if (c == '#' && was_line_start && coconet_directive_at(s, len, i)) return true;
    if (c == '\'' && i > 0 && isalnum((unsigned char)s[i - 1])) { i++; continue; }  // 1'000
    if (c == '"' || c == '\'') {
      bool raw = c == '"' && i > 0 && s[i - 1] == 'R' && (i < 2 || !text_ident_char(s[i - 2]) ||
                                                         s[i - 2] == 'u' || s[i - 2] == 'U' ||
                                                         s[i - 2] == 'L' || s[i - 2] == '8');
      i = raw ? skip_raw_string(s, len, i) : skip_quoted(s, len, i);
      continue;
    }
    if (text_ident_char(c)) {
      size_t start = i;
      while (i < len && text_ident_char(s[i])) i++;
      if (i - start == 7 && memcmp(s + start, "_Pragma", 7) == 0 &&
          (start == 0 || !text_ident_char(s[start - 1])))
        return true;
      continue;
    }
    i++;
  }
  return false;
}

SrcLoc source_loc(const SourceFile *f, unsigned offset) {
  SrcLoc loc = {f->path, 1, 1, offset};
  for (unsigned i = 0; i < offset && i < f->len; i++) {
    if (f->buf[i] == '\n') {
      loc.line++;
      loc.col = 1;
    } else {
      loc.col++;
    }
  }
  return loc;
}

static bool write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buf += n;
    len -= (size_t)n;
  }
  return true;
}

// A regular file is replaced atomically: a temporary file in its directory,
// given the old file's mode, renamed over it.
static bool replace_file(const char *path, const char *buf, size_t len) {
  size_t plen = strlen(path);
  char *tmp = malloc(plen + 16);
  if (!tmp) COCONET_BUG("out of memory");
  snprintf(tmp, plen + 16, "%s.XXXXXX", path);
  int fd = mkstemp(tmp);
  bool ok = fd >= 0 && write_all(fd, buf, len);
  if (fd >= 0) ok = (close(fd) == 0) && ok;
  struct stat st;
  mode_t mask = umask(0);
  umask(mask);
  if (ok) ok = chmod(tmp, stat(path, &st) == 0 ? (st.st_mode & 07777) : (0666 & ~mask)) == 0;
  if (ok) ok = rename(tmp, path) == 0;
  int err = errno;
  if (!ok && fd >= 0) unlink(tmp);
  free(tmp);
  errno = err;
  return ok;
}

int source_write(const char *path, const char *buf, size_t len) {
  if (!path || strcmp(path, "-") == 0) {
    if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0) {
      fprintf(stderr, "coconet: error: cannot write to standard output\n");
      return -1;
    }
    return 0;
  }
  // A symbolic link is followed: the file it names is written, the link stays.
  char *real = NULL;
  struct stat st;
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
    real = realpath(path, NULL);
    if (!real) {
      fprintf(stderr, "coconet: error: cannot write '%s': it is a symbolic link to a file that does not exist (%s)\n",
              path, strerror(errno));
      return -1;
    }
  }
  const char *target = real ? real : path;
  bool ok;
  if (stat(target, &st) == 0 && S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    ok = false;
  } else if (stat(target, &st) == 0 && !S_ISREG(st.st_mode)) {
    // A device, a FIFO, a socket: written into, never replaced.
    int fd = open(target, O_WRONLY | O_TRUNC);
    ok = fd >= 0 && write_all(fd, buf, len);
    if (fd >= 0) ok = (close(fd) == 0) && ok;
  } else {
    ok = replace_file(target, buf, len);
  }
  if (!ok) fprintf(stderr, "coconet: error: cannot write '%s': %s\n", path, strerror(errno));
  free(real);
  return ok ? 0 : -1;
}

bool source_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// Names followed by '(' that call nothing: operators, casts, type names.
static bool not_a_call(const char *name, size_t n) {
  static const char *const words[] = {
      "sizeof", "alignof", "decltype", "static_cast", "const_cast", "reinterpret_cast", "dynamic_cast",
      "dim3", "float", "double", "int", "unsigned", "long", "short", "char", "bool", "size_t", "int64_t",
      "uint64_t", "int32_t", "uint32_t", "__half", "__nv_bfloat16", "cudaStream_t", "ncclComm_t",
  };
  for (size_t i = 0; i < sizeof words / sizeof *words; i++)
    if (strlen(words[i]) == n && strncmp(words[i], name, n) == 0) return true;
  return false;
}

// Whether evaluating an expression may have side effects; calls: a call counts.
static bool effects(const char *t, bool calls) {
  char quote = 0;
  for (const char *p = t; *p; p++) {
    if (quote) {
      if (*p == '\\' && p[1]) p++;
      else if (*p == quote) quote = 0;
      continue;
    }
    if (*p == '"' || *p == '\'') {
      quote = *p;
      continue;
    }
    if ((p[0] == '+' && p[1] == '+') || (p[0] == '-' && p[1] == '-')) return true;
    if (*p == '=' && p[1] != '=' && (p == t || !strchr("=!<>", p[-1]))) return true;
    if (*p == '=' && p > t + 1 && (p[-1] == '<' || p[-1] == '>') && p[-2] == p[-1]) return true;  // <<= >>=
    if (text_ident_char(*p) && (p == t || !text_ident_char(p[-1]))) {
      const char *e = p;
      while (text_ident_char(*e)) e++;
      size_t n = (size_t)(e - p);
      if ((n == 3 && strncmp(p, "new", 3) == 0) || (n == 6 && strncmp(p, "delete", 6) == 0)) return true;
      const char *q = e;
      while (*q == ' ' || *q == '\t' || *q == '\n') q++;
      if (calls && *q == '(' && !(*p >= '0' && *p <= '9') && !not_a_call(p, n)) return true;
      p = e - 1;
    } else if ((*p == ')' || *p == ']') && p[1]) {
      const char *q = p + 1;
      while (*q == ' ' || *q == '\t' || *q == '\n') q++;
      if (calls && *q == '(' && *p == ']') return true;  // a call through an array of functions
    } else if (calls && *p == '>' && p[1] == '(') {
      // f<T>(x) calls f; static_cast<T>(x) is a cast.
      const char *lt = p;
      int depth = 0;
      while (lt > t && !(*lt == '<' && depth == 1)) {
        if (*lt == '>') depth++;
        if (*lt == '<') depth--;
        lt--;
      }
      const char *b = lt;
      while (b > t && text_ident_char(b[-1])) b--;
      if (!not_a_call(b, (size_t)(lt - b))) return true;
    }
  }
  return false;
}

// Conservative: a call of a pure function counts too (evaluating it once is always right).
bool source_has_effects(const char *t) { return effects(t, true); }

bool source_assigns(const char *t) { return effects(t, false); }
