// diag.c: clang-style diagnostics with the source line and a caret.
#include "common/diag.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct DiagFile {
  const char *path;
  const char *buf;
  size_t len;
  struct DiagFile *next;
} DiagFile;

static DiagFile *files;
static unsigned errors;

void diag_add_file(const char *path, const char *buf, size_t len) {
  DiagFile *f = calloc(1, sizeof *f);
  if (!f) COCONET_BUG("out of memory");
  f->path = path;
  f->buf = buf;
  f->len = len;
  f->next = files;
  files = f;
}

static const DiagFile *find_file(const char *path) {
  for (const DiagFile *f = files; f; f = f->next)
    if (strcmp(f->path, path) == 0) return f;
  return NULL;
}

static bool use_color(void) {
  const char *env = getenv("COCONET_COLOR");
  if (env) return strcmp(env, "1") == 0;
  return isatty(STDERR_FILENO);
}

// Print the line holding loc and a caret under its column (tabs kept so the
// caret lines up as clang's does).
void diag_print_source(const SrcLoc *loc) {
  const DiagFile *f = find_file(loc->file);
  if (!f || loc->line == 0) return;
  const char *p = f->buf, *end = f->buf + f->len;
  for (unsigned line = 1; line < loc->line && p < end; p++)
    if (*p == '\n') line++;
  const char *eol = memchr(p, '\n', (size_t)(end - p));
  if (!eol) eol = end;
  fprintf(stderr, "%.*s\n", (int)(eol - p), p);
  for (unsigned c = 1; c < loc->col && p + c - 1 < eol; c++)
    fputc(p[c - 1] == '\t' ? '\t' : ' ', stderr);
  fputs(use_color() ? "\033[1;32m^\033[0m\n" : "^\n", stderr);
}

static bool muted;
static unsigned muted_errors;
static char *muted_first;

void diag_mute(bool on) {
  muted = on;
  if (!on) return;
  muted_errors = 0;
  free(muted_first);
  muted_first = NULL;
}

unsigned diag_muted_errors(void) { return muted_errors; }
const char *diag_muted_first(void) { return muted_first; }

void diag_vreport(const char *kind, const SrcLoc *loc, const char *fmt, va_list ap) {
  if (muted) {
    if (strcmp(kind, "error") != 0) return;
    if (!muted_errors++ && vasprintf(&muted_first, fmt, ap) < 0) COCONET_BUG("out of memory");
    return;
  }
  bool color = use_color();
  bool has_loc = loc && loc->file;
  if (color) fputs("\033[1m", stderr);
  if (has_loc) fprintf(stderr, "%s:%u:%u: ", loc->file, loc->line, loc->col);
  else fputs("coconet: ", stderr);
  if (color) {
    const char *c = strcmp(kind, "error") == 0 ? "31" : strcmp(kind, "warning") == 0 ? "35" : "30";
    fprintf(stderr, "\033[1;%sm%s:\033[0m\033[1m ", c, kind);
  } else {
    fprintf(stderr, "%s: ", kind);
  }
  vfprintf(stderr, fmt, ap);
  if (color) fputs("\033[0m", stderr);
  fputc('\n', stderr);
  if (has_loc) diag_print_source(loc);
  if (strcmp(kind, "error") == 0) errors++;
}

#define REPORT(kind)                   \
  do {                                 \
    va_list ap;                        \
    va_start(ap, fmt);                 \
    diag_vreport(kind, loc, fmt, ap);  \
    va_end(ap);                        \
  } while (0)

void diag_error(const SrcLoc *loc, const char *fmt, ...) { REPORT("error"); }
void diag_warning(const SrcLoc *loc, const char *fmt, ...) { REPORT("warning"); }
void diag_note(const SrcLoc *loc, const char *fmt, ...) { REPORT("note"); }

void diag_internal(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "coconet: internal error at %s:%d: ", file, line);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs("\ncoconet: this is a bug in coconet; please report it with the input file and command line\n",
        stderr);
  exit(3);
}

unsigned diag_error_count(void) { return errors; }

void diag_reset(void) {
  while (files) {
    DiagFile *next = files->next;
    free(files);
    files = next;
  }
  errors = 0;
  diag_mute(false);
  muted_errors = 0;
  free(muted_first);
  muted_first = NULL;
}

char *xasprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s;
  int n = vasprintf(&s, fmt, ap);
  va_end(ap);
  if (n < 0) COCONET_BUG("out of memory");
  return s;
}
