// host_include.c: --target=host for launches written in the user's headers.
//
// host.c lowers a file's launches and dynamic shared memory. A header of the
// user's that launches a kernel (llm.c's, a project's `launch_*` helpers)
// would not compile for the CPU as it is, and headers are never rewritten: the
// lowered main file holds the lowered header instead. Its #include becomes
//
//   #line 1 "/abs/path/header.cuh"
//   ...the header's text, lowered...
//   #line N "main.cu"
//
// and so does every #include of a header of the user's that leads to such a
// header (its own #include of it must change too). In that text `#pragma once`
// becomes a blank line and a later #include of the header becomes nothing
// (include guards stay and work as written); a quoted #include of any other
// header of the user's names it by its absolute path, since the text no longer
// sits in the header's directory. Headers that launch nothing stay #included
// as written. Compiler messages keep naming the header's own lines. The
// #include lines are read in each file's text and asked of the parse (an
// #include inside `namespace ops { ... }` is one; one a skipped #if holds is not).
#include "codegen/codegen_impl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_HEADERS = 128 };

typedef struct Include {
  CXFile from, to;
  unsigned begin, end;  // the directive's line in `from`, without its newline
  unsigned line;
  bool quoted;
} Include;

typedef struct Header {
  CXFile file;
  char *path;       // absolute
  const char *buf;  // its bytes (libclang's)
  size_t len;
  Edit *lowered;    // host.c's edits of it
  bool inlined;     // its #includes become its lowered text
  bool once;        // it says #pragma once
  bool emitted;     // ... and its text has been given once
  bool open;        // its text is being built (an #include cycle stops here)
  unsigned once_begin, once_end;
} Header;

typedef struct Headers {
  const Frontend *fe;
  Include *inc;
  int ninc, cap;
  CXFile scanned[MAX_HEADERS];  // the files whose #include lines are read
  int nscanned;
  Header h[MAX_HEADERS];
  int n;
} Headers;

static bool user_file(const Frontend *fe, CXFile f) {
  return f && !clang_Location_isInSystemHeader(clang_getLocationForOffset(fe->tu, f, 0));
}

static int header_index(Headers *hs, CXFile f) {
  for (int i = 0; i < hs->n; i++)
    if (clang_File_isEqual(hs->h[i].file, f)) return i;
  return -1;
}

static char *absolute(CXFile f) {
  CXString name = clang_getFileName(f);
  char buf[PATH_MAX];
  char *path = strdup(realpath(clang_getCString(name), buf) ? buf : clang_getCString(name));
  clang_disposeString(name);
  if (!path) COCONET_BUG("out of memory");
  return path;
}

// The line of `#pragma once` in buf, if any: [*b, *e).
static bool pragma_once(const char *buf, size_t len, unsigned *b, unsigned *e) {
  for (size_t at = 0; at < len;) {
    size_t end = at;
    while (end < len && buf[end] != '\n') end++;
    char *line = strndup(buf + at, end - at), *t = text_without(line, " \t\r");
    bool yes = strcmp(t, "#pragmaonce") == 0;
    free(t);
    free(line);
    if (yes) {
      *b = (unsigned)at;
      *e = (unsigned)end;
      return true;
    }
    at = end + 1;
  }
  return false;
}

static void add_include(const FeInclude *in, void *data) {
  Headers *hs = data;
  if (hs->ninc == hs->cap) {
    hs->cap = hs->cap ? 2 * hs->cap : 16;
    hs->inc = realloc(hs->inc, sizeof *hs->inc * (size_t)hs->cap);
    if (!hs->inc) COCONET_BUG("out of memory");
  }
  hs->inc[hs->ninc++] = (Include){in->from, in->to, in->begin, in->end, in->line, in->quoted};
}

// The #include lines of file f and of the user's headers they name, once each.
static void scan(Headers *hs, CXFile f) {
  for (int i = 0; i < hs->nscanned; i++)
    if (clang_File_isEqual(hs->scanned[i], f)) return;
  if (hs->nscanned == MAX_HEADERS) return;
  hs->scanned[hs->nscanned++] = f;
  int first = hs->ninc;
  fe_includes(hs->fe, f, add_include, hs);
  for (int i = first, n = hs->ninc; i < n; i++)
    if (user_file(hs->fe, hs->inc[i].to)) scan(hs, hs->inc[i].to);
}

static char *quoted(const char *path) {
  char *out = xcalloc(2 * strlen(path) + 3, 1), *o = out;
  *o++ = '"';
  for (const char *p = path; *p; p++) {
    if (*p == '"' || *p == '\\') *o++ = '\\';
    *o++ = *p;
  }
  *o = '"';
  return out;
}

static char *header_text(Headers *hs, int k);

// What replaces an #include of header k written at line `line` of file `from`.
static char *include_text(Headers *hs, int k, const char *from, unsigned line) {
  Header *h = &hs->h[k];
  if (h->open || (h->once && h->emitted)) return strdup("");
  h->emitted = true;
  char *text = header_text(hs, k), *to = quoted(h->path), *back = quoted(from);
  size_t n = strlen(text);
  char *out = xasprintf("#line 1 %s\n%s%s#line %u %s", to, text, n && text[n - 1] != '\n' ? "\n" : "", line + 1, back);
  free(text);
  free(to);
  free(back);
  return out;
}

// The includes written in file `from` (its path: `path`), as edits of it.
static void include_edits(Headers *hs, CXFile from, const char *path, Edit **edits) {
  for (int i = 0; i < hs->ninc; i++) {
    const Include *in = &hs->inc[i];
    if (!clang_File_isEqual(in->from, from)) continue;
    int k = header_index(hs, in->to);
    if (k >= 0 && hs->h[k].inlined) {
      char *text = include_text(hs, k, path, in->line);
      edit_add(edits, in->begin, in->end, text);
      free(text);
    } else if (in->quoted && user_file(hs->fe, in->to) && !clang_File_isEqual(from, hs->fe->file)) {
      char *abs = absolute(in->to), *q = quoted(abs), *text = xasprintf("#include %s", q);
      edit_add(edits, in->begin, in->end, text);
      free(text);
      free(q);
      free(abs);
    }
  }
}

// Header k's text, lowered, its includes edited.
static char *header_text(Headers *hs, int k) {
  Header *h = &hs->h[k];
  h->open = true;
  Edit *edits = NULL;
  for (const Edit *e = h->lowered; e; e = e->next) edit_add(&edits, e->begin, e->end, e->text);
  if (h->once) edit_add(&edits, h->once_begin, h->once_end, "");
  include_edits(hs, h->file, h->path, &edits);
  SourceFile src = {.path = h->path, .buf = (char *)h->buf, .len = h->len};
  size_t len = 0;
  char *text = edits_apply(&src, edits, false, &len);
  edits_free(edits);
  h->open = false;
  return text;
}

// The user's headers the main file includes, directly or not; those to lower.
static int collect(Headers *hs) {
  int errors = 0;
  for (int i = 0; i < hs->ninc; i++) {
    CXFile f = hs->inc[i].to;
    if (!user_file(hs->fe, f) || clang_File_isEqual(f, hs->fe->file) || header_index(hs, f) >= 0) continue;
    if (hs->n == MAX_HEADERS) break;
    Header *h = &hs->h[hs->n++];
    *h = (Header){.file = f};
    h->buf = fe_file_bytes(hs->fe, f, &h->len);
    if (!h->buf) {
      hs->n--;
      continue;
    }
    if (host_lower_file(hs->fe, f, &h->lowered)) errors++;
    h->inlined = h->lowered != NULL;
  }
  // A header that includes one to inline is inlined too.
  for (bool more = true; more;) {
    more = false;
    for (int i = 0; i < hs->ninc; i++) {
      int from = header_index(hs, hs->inc[i].from), to = header_index(hs, hs->inc[i].to);
      if (from >= 0 && to >= 0 && hs->h[to].inlined && !hs->h[from].inlined) more = hs->h[from].inlined = true;
    }
  }
  for (int i = 0; i < hs->n; i++) {
    Header *h = &hs->h[i];
    if (!h->inlined) continue;
    h->path = absolute(h->file);
    h->once = pragma_once(h->buf, h->len, &h->once_begin, &h->once_end);
  }
  return errors;
}

int host_lower(const Frontend *fe, Edit **edits) {
  int status = host_lower_file(fe, fe->file, edits);
  Headers *hs = xcalloc(1, sizeof *hs);
  hs->fe = fe;
  scan(hs, fe->file);
  if (collect(hs)) status = -1;
  if (status == 0) include_edits(hs, fe->file, fe->src.path, edits);
  for (int i = 0; i < hs->n; i++) {
    edits_free(hs->h[i].lowered);
    free(hs->h[i].path);
  }
  free(hs->inc);
  free(hs);
  return status;
}
