// frontend_pch.c: the front end's cache of precompiled preludes (frontend.h).
//
// Cache directory: $COCONET_CACHE, else $XDG_CACHE_HOME/coconet, else
// $HOME/.cache/coconet (COCONET_CACHE=off: no cache, a parse from scratch
// every time). In it: standins-HASH/ (the TMP files, named by a hash of their
// texts), and for each flag set KEY.pch (the prelude's translation unit as
// libclang saves it, used with -include-pch), KEY.pch.deps (the headers it
// holds, for -MD) and KEY.pch.idents (the identifiers their code names, see
// pch_idents). KEY hashes libclang's version and every flag (with the
// working folder where an include folder's path is relative, and the
// environment's include paths), but the user's -D and -U when no header of the
// entry names their macros (see prelude_pch). Files are written under a
// temporary name and renamed, so parallel builds share it. A precompiled header clang refuses (a header
// changed since) is removed and the file parsed without it: the cache changes
// how fast, never what, is parsed.
#include "frontend_impl.h"

#include "common/text.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t fnv1a(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return (h ^ 0xff) * 1099511628211ull;  // a separator: ("ab", "c") and ("a", "bc") differ
}

static int mkdir_p(const char *path) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

char *pch_cache_dir(void) {
  const char *env = getenv("COCONET_CACHE"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  char path[4096];
  if (env && strcmp(env, "off") == 0) return NULL;
  if (env && *env) snprintf(path, sizeof path, "%s", env);
  else if (xdg && *xdg) snprintf(path, sizeof path, "%s/coconet", xdg);
  else if (home && *home) snprintf(path, sizeof path, "%s/.cache/coconet", home);
  else return NULL;
  return mkdir_p(path) == 0 && access(path, W_OK) == 0 ? strdup(path) : NULL;
}

// Write path atomically (a temporary name renamed over it).
static int write_atomic(const char *path, const char *text) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) return -1;
  bool ok = fputs(text, f) >= 0;
  if (fclose(f) != 0 || !ok || rename(tmp, path) != 0) {
    unlink(tmp);
    return -1;
  }
  return 0;
}

// CACHE/standins-HASH with the TMP files (written when missing), or NULL.
char *pch_standins(const char *cache) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < FE_NTMP_FILES; i++)
    h = fnv1a(fnv1a(h, FE_TMP_FILES[i].name), FE_TMP_FILES[i].text);
  char dir[4096], path[4200];
  snprintf(dir, sizeof dir, "%s/standins-%016llx", cache, (unsigned long long)h);
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) return NULL;
  for (size_t i = 0; i < FE_NTMP_FILES; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, FE_TMP_FILES[i].name);
    if (access(path, R_OK) != 0 && write_atomic(path, FE_TMP_FILES[i].text) != 0) return NULL;
  }
  return strdup(dir);
}


static int count_errors(CXTranslationUnit tu) {
  int errors = 0;
  unsigned n = clang_getNumDiagnostics(tu);
  for (unsigned i = 0; i < n; i++) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    errors += clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error;
    clang_disposeDiagnostic(d);
  }
  return errors;
}

// A header as pch.deps records it: "MTIME_NS SIZE PATH".
static void deps_line(CXFile file, CXSourceLocation *stack, unsigned depth, CXClientData data) {
  (void)stack;
  if (depth == 0) return;  // the include lines (in the cache)
  CXString name = clang_getFileName(file);
  const char *path = clang_getCString(name);
  struct stat st;
  if (stat(path, &st) == 0)
    fprintf(data, "%lld %lld %s\n", (long long)st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec,
            (long long)st.st_size, path);
  else
    fprintf(data, "-1 -1 %s\n", path);
  clang_disposeString(name);
}

// Whether every header of pch.deps is as it was when the pch was built (to the
// nanosecond: clang's own check is to the second).
static bool pch_fresh(const char *pch) {
  char path[4200], line[4200];
  snprintf(path, sizeof path, "%s.deps", pch);
  FILE *f = fopen(path, "r");
  if (!f) return false;
  bool fresh = true;
  while (fresh && fgets(line, sizeof line, f)) {
    long long mtime, size;
    int at = 0;
    line[strcspn(line, "\n")] = '\0';
    struct stat st;
    fresh = sscanf(line, "%lld %lld %n", &mtime, &size, &at) == 2 && at > 0 && stat(line + at, &st) == 0 &&
            (long long)st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec == mtime && st.st_size == size;
  }
  fclose(f);
  return fresh;
}

// Save the prelude's translation unit as pch, its headers in pch.deps first.
static bool save_pch(CXTranslationUnit tu, const char *pch) {
  char *text = NULL, deps[4200], tmp[4300];
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) COCONET_BUG("out of memory");
  clang_getInclusions(tu, deps_line, f);
  fclose(f);
  snprintf(deps, sizeof deps, "%s.deps", pch);
  snprintf(tmp, sizeof tmp, "%s.tmp%ld", pch, (long)getpid());
  bool ok = write_atomic(deps, text) == 0 && clang_saveTranslationUnit(tu, tmp, clang_defaultSaveOptions(tu)) ==
                                                CXSaveError_None && rename(tmp, pch) == 0;
  if (!ok) unlink(tmp);
  free(text);
  return ok;
}

// The #include lines the file starts with (blank lines and comments between
// them skipped), one per line, a quoted name that names a file next to the
// file made absolute (so that it means the same from the cache directory).
static char *include_prefix(const SourceFile *src) {
  char *out = NULL, dir[4096];
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  if (!f) COCONET_BUG("out of memory");
  snprintf(dir, sizeof dir, "%s", src->path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  else snprintf(dir, sizeof dir, ".");
  const char *p = src->buf, *end = src->buf + src->len;
  for (;;) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    if (p + 1 < end && p[0] == '/' && p[1] == '/') {
      while (p < end && *p != '\n') p++;
      continue;
    }
    if (p + 1 < end && p[0] == '/' && p[1] == '*') {
      const char *close = strstr(p + 2, "*/");
      if (!close) break;
      p = close + 2;
      continue;
    }
    if (p >= end || *p != '#') break;
    const char *q = p + 1;
    while (q < end && (*q == ' ' || *q == '\t')) q++;
    if (strncmp(q, "include", 7) != 0) break;
    q += 7;
    while (q < end && (*q == ' ' || *q == '\t')) q++;
    if (q >= end || (*q != '<' && *q != '"')) break;
    char close = *q == '<' ? '>' : '"';
    const char *name = q + 1, *name_end = name;
    while (name_end < end && *name_end != close && *name_end != '\n') name_end++;
    if (name_end >= end || *name_end != close) break;
    const char *rest = name_end + 1;
    while (rest < end && (*rest == ' ' || *rest == '\t' || *rest == '\r')) rest++;
    if (rest < end && *rest != '\n' && !(rest + 1 < end && rest[0] == '/' && rest[1] == '/')) break;
    char local[8192];
    snprintf(local, sizeof local, "%s/%.*s", dir, (int)(name_end - name), name);
    char real[4096];
    if (close == '"' && access(local, R_OK) == 0 && realpath(local, real))
      fprintf(f, "#include \"%s\"\n", real);
    else
      fprintf(f, "#include %c%.*s%c\n", close == '>' ? '<' : '"', (int)(name_end - name), name, close);
    p = rest;
  }
  fclose(f);
  return out;
}

// At most this many precompiled headers stay in the cache (each 5 to 50 MB),
// COCONET_CACHE_KEEP when set (1 to 4096): when there are more, the least
// recently used go (a use sets the entry's modification time).
enum { PCH_KEEP = 32, PCH_KEEP_MAX = 4096 };

static int pch_keep(void) {
  const char *env = getenv("COCONET_CACHE_KEEP");
  char *end;
  if (!env) return PCH_KEEP;
  long n = strtol(env, &end, 10);
  if (*env && !*end && n >= 1 && n <= PCH_KEEP_MAX) return (int)n;
  fprintf(stderr, "coconet: warning: COCONET_CACHE_KEEP='%s' is not a number from 1 to %d; the cache keeps %d "
          "entries\n", env, PCH_KEEP_MAX, PCH_KEEP);
  return PCH_KEEP;
}

static void evict_pchs(const char *cache) {
  DIR *d = opendir(cache);
  if (!d) return;
  int keep = pch_keep(), cap = keep + 64;
  struct Entry { char name[64]; struct timespec t; } *v = malloc((size_t)cap * sizeof *v);
  if (!v) COCONET_BUG("out of memory");
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) && n < cap;) {
    size_t len = strlen(e->d_name);
    char path[4400];
    struct stat st;
    snprintf(path, sizeof path, "%.4000s/%.255s", cache, e->d_name);
    if (len != 20 || strcmp(e->d_name + 16, ".pch") != 0 || stat(path, &st) != 0) continue;
    snprintf(v[n].name, sizeof v[n].name, "%.16s", e->d_name);
    v[n++].t = st.st_mtim;
  }
  closedir(d);
  while (n > keep) {
    int old = 0;
    for (int i = 1; i < n; i++)
      if (v[i].t.tv_sec < v[old].t.tv_sec || (v[i].t.tv_sec == v[old].t.tv_sec && v[i].t.tv_nsec < v[old].t.tv_nsec))
        old = i;
    static const char *const ext[] = {".pch", ".pch.deps", ".pch.idents", ".h"};
    for (size_t k = 0; k < sizeof ext / sizeof *ext; k++) {
      char path[4400];
      snprintf(path, sizeof path, "%.4000s/%.16s%s", cache, v[old].name, ext[k]);
      unlink(path);
    }
    v[old] = v[--n];
  }
  free(v);
}

// Whether flag i names a folder of headers by a relative path (`-Iinc`, `-isystem ../x`).
static bool relative_folder(const Args *all, int i) {
  static const char *const flags[] = {"-I", "-isystem", "-iquote", "-idirafter", "-isysroot", "--sysroot=", "-F",
                                      "--cuda-path="};
  for (size_t k = 0; k < sizeof flags / sizeof *flags; k++) {
    size_t n = strlen(flags[k]);
    if (strncmp(all->v[i], flags[k], n) != 0) continue;
    const char *path = all->v[i][n] ? all->v[i] + n : i + 1 < all->n ? all->v[i + 1] : "/";
    return path[0] != '/';
  }
  return false;
}

// The precompiled prelude and include lines of the file for these flags
// (CACHE/KEY.pch, the lines in CACHE/KEY.h), built now when missing; NULL when
// there is none. The flags' -include of the prelude is at `at`.
static char *pch_for_flags(CXIndex index, const char *cache, const Args *all, int at, const SourceFile *src) {
  CXString version = clang_getClangVersion();
  uint64_t h = fnv1a(14695981039346656037ull, clang_getCString(version));
  clang_disposeString(version);
  bool relative = false;
  for (int i = 0; i < all->n; i++) {
    // Another -include would come before the prelude in the precompiled form, after it in the file's parse.
    if (i != at && strncmp(all->v[i], "-include", 8) == 0) return NULL;
    h = fnv1a(h, all->v[i]);
    relative |= relative_folder(all, i);
  }
  // What else finds the headers: the folder relative paths start from, the include paths of the environment.
  char cwd[4096];
  if (relative) h = fnv1a(h, getcwd(cwd, sizeof cwd) ? cwd : "?");
  static const char *const env[] = {"CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH"};
  for (size_t k = 0; k < sizeof env / sizeof *env; k++) h = fnv1a(h, getenv(env[k]) ? getenv(env[k]) : "");
  char *lines = include_prefix(src);
  h = fnv1a(h, lines);
  char pch[4096], header[4096];
  snprintf(pch, sizeof pch, "%s/%016llx.pch", cache, (unsigned long long)h);
  snprintf(header, sizeof header, "%s/%016llx.h", cache, (unsigned long long)h);
  if (access(pch, R_OK) == 0 && pch_fresh(pch)) {
    free(lines);
    utimensat(AT_FDCWD, pch, NULL, 0);  // used now: the eviction keeps it
    return strdup(pch);
  }
  bool ok = write_atomic(header, lines) == 0;
  free(lines);
  CXTranslationUnit tu = NULL;
  if (ok) {
    enum CXErrorCode err = clang_parseTranslationUnit2(
        index, header, (const char *const *)all->v, all->n, NULL, 0,
        CXTranslationUnit_ForSerialization | CXTranslationUnit_DetailedPreprocessingRecord, &tu);
    ok = err == CXError_Success && tu && count_errors(tu) == 0 && save_pch(tu, pch);
  }
  if (tu) clang_disposeTranslationUnit(tu);
  if (ok) evict_pchs(cache);
  else unlink(header);
  return ok ? strdup(pch) : NULL;
}

// The flags but the user's macros (-D and -U after the prelude's -include, at
// `at`) into general; their names into names.
static void split_macros(const Args *all, int at, Args *general, Args *names) {
  for (int i = 0; i < all->n; i++) {
    const char *f = all->v[i];
    bool macro = i > at + 1 && (strncmp(f, "-D", 2) == 0 || strncmp(f, "-U", 2) == 0);
    if (!macro) {
      fe_args_add(general, f);
      continue;
    }
    const char *name = f[2] ? f + 2 : i + 1 < all->n ? all->v[++i] : "";
    char *own = strndup(name, strcspn(name, "=("));  // F of -DF(x)=...
    if (!own) COCONET_BUG("out of memory");
    fe_args_add(names, own);
    free(own);
  }
}

// A file's whole text (malloc'd, NUL-terminated; *len its bytes), or NULL.
static char *read_text(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *text = NULL;
  long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (size >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)size + 1))) {
    *len = fread(text, 1, (size_t)size, f);
    text[*len] = '\0';
  }
  fclose(f);
  return text;
}

// A set of identifiers, each once (open addressing on their hash).
typedef struct Idents {
  char **v;
  size_t cap, n;
} Idents;

static bool idents_add(const char *name, size_t len, void *data) {
  Idents *set = data;
  if (2 * (set->n + 1) > set->cap) {
    Idents grown = {xcalloc(set->cap ? 2 * set->cap : 4096, sizeof *grown.v), set->cap ? 2 * set->cap : 4096, 0};
    for (size_t i = 0; i < set->cap; i++)
      if (set->v[i]) {
        idents_add(set->v[i], strlen(set->v[i]), &grown);
        free(set->v[i]);
      }
    free(set->v);
    *set = grown;
  }
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
  size_t at = (size_t)(h & (set->cap - 1));
  while (set->v[at] && !(strlen(set->v[at]) == len && memcmp(set->v[at], name, len) == 0))
    at = (at + 1) & (set->cap - 1);
  if (!set->v[at]) {
    set->v[at] = strndup(name, len);
    if (!set->v[at]) COCONET_BUG("out of memory");
    set->n++;
  }
  return false;
}

// KEY.pch.idents, written from the headers KEY.pch.deps lists (deps, its text): a first line
// "coconet-idents2 HASH" (2, the list's form; HASH, of deps: an entry built again, or from changed
// headers, makes it stale), then "*" when a header cannot be read or holds a NUL (every name counts
// as named), else the identifiers their code names, each once, one per line. Outside comments and
// literals (a macro named only there cannot change what the header is: cuda.h's comments say LAZY,
// crt/math_functions.hpp's ONLY), backslash-newlines (blanks between them too) joined first as the
// preprocessor joins them (`#ifdef US\` newline `ED`). One scan of the headers serves every later
// run: under ASan a scan takes most of a second. Returns the file's text.
static char *pch_idents(const char *pch, const char *deps, uint64_t hash) {
  char path[4200], first[64];
  snprintf(path, sizeof path, "%s.idents", pch);
  snprintf(first, sizeof first, "coconet-idents2 %016llx\n", (unsigned long long)hash);
  size_t len = 0;
  char *text = read_text(path, &len);
  if (text && strncmp(text, first, strlen(first)) == 0 && text[len - 1] == '\n') return text;
  free(text);
  Idents set = {0};
  bool all = false;
  char *list = strdup(deps);
  if (!list) COCONET_BUG("out of memory");
  char *rest = NULL;
  for (char *line = strtok_r(list, "\n", &rest); line && !all; line = strtok_r(NULL, "\n", &rest)) {
    int at = 0;
    long long mtime, size;
    char *header = sscanf(line, "%lld %lld %n", &mtime, &size, &at) == 2 && at ? read_text(line + at, &len) : NULL;
    all = !header || strlen(header) != len;
    char *w = header;
    for (const char *r = header; r && *r;) {
      size_t k = 1, splice = 0;  // a backslash, blanks, a newline: clang joins the lines too
      while (r[0] == '\\' && (r[k] == ' ' || r[k] == '\t')) k++;
      if (r[0] == '\\') splice = r[k] == '\n' ? k + 1 : r[k] == '\r' && r[k + 1] == '\n' ? k + 2 : 0;
      if (splice) r += splice;
      else *w++ = *r++;
    }
    if (w) *w = '\0';
    if (!all) text_each_ident(header, idents_add, &set);
    free(header);
  }
  free(list);
  Text out = {0};
  text_add(&out, first);
  if (all) text_add(&out, "*\n");
  for (size_t i = 0; i < set.cap; i++) {
    if (set.v[i] && !all) {
      text_add(&out, set.v[i]);
      text_add(&out, "\n");
    }
    free(set.v[i]);
  }
  free(set.v);
  write_atomic(path, out.s);  // a cache that cannot be written is read from out this time
  return out.s;
}

// Whether a header of pch.deps names one of names (or cannot be read); a name with a byte
// outside [A-Za-z0-9_] (`$`, one outside ASCII) counts as named.
static bool pch_names(const char *pch, const Args *names) {
  char path[4200];
  snprintf(path, sizeof path, "%s.deps", pch);
  size_t len = 0;
  char *deps = read_text(path, &len);
  if (!deps) return true;
  char *idents = pch_idents(pch, deps, fnv1a(14695981039346656037ull, deps));
  free(deps);
  bool named = false;
  for (int k = 0; k < names->n && !named; k++) {
    for (const char *c = names->v[k]; *c; c++) named |= !text_ident_char(*c);  // `$`, a byte outside ASCII
    size_t n = strlen(names->v[k]);
    for (const char *nl = strchr(idents, '\n'); nl && nl[1] && !named; nl = strchr(nl + 1, '\n'))
      named = (nl[1] == '*' && nl[2] == '\n') || (strncmp(nl + 1, names->v[k], n) == 0 && nl[1 + n] == '\n');
  }
  free(idents);
  return named;
}

// The precompiled prelude for the file's flags. The user's macros that no
// header of the prelude names cannot change it, so one prelude, built without
// them, serves every set of them (clang defines the command line's macros over a
// precompiled header that does not): a file built with -DCASE_A, -DCASE_B, ...
// parses the CUDA headers once. A macro a header names (or pastes from parts,
// which this cannot see: none of the CUDA or C++ headers does) keeps a prelude
// of its own, keyed by every flag.
static char *prelude_pch(CXIndex index, const char *cache, const Args *all, int at, const SourceFile *src) {
  Args general = {0}, names = {0};
  split_macros(all, at, &general, &names);
  char *pch = names.n > 0 ? pch_for_flags(index, cache, &general, at, src) : NULL;
  if (pch && pch_names(pch, &names)) {
    free(pch);
    pch = NULL;
  }
  fe_args_free(&general);
  fe_args_free(&names);
  return pch ? pch : pch_for_flags(index, cache, all, at, src);
}

// The headers a precompiled prelude holds (pch.deps) into fe; false when unreadable.
static bool read_pch_deps(const char *pch, Frontend *fe) {
  char path[4200], line[4200];
  snprintf(path, sizeof path, "%s.deps", pch);
  FILE *f = fopen(path, "r");
  if (!f) return false;
  int cap = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    const char *name = strchr(line, ' ');
    name = name ? strchr(name + 1, ' ') : NULL;
    if (!name) continue;
    if (fe->npch_deps == cap) {
      cap = cap ? 2 * cap : 64;
      fe->pch_deps = realloc(fe->pch_deps, (size_t)cap * sizeof *fe->pch_deps);
      if (!fe->pch_deps) COCONET_BUG("out of memory");
    }
    fe->pch_deps[fe->npch_deps++] = strdup(name + 1);
  }
  fclose(f);
  return true;
}

void pch_forget_deps(Frontend *fe) {
  for (int i = 0; i < fe->npch_deps; i++) free(fe->pch_deps[i]);
  free(fe->pch_deps);
  fe->pch_deps = NULL;
  fe->npch_deps = 0;
}

// Parse with the precompiled prelude instead of -include PRELUDE (at `at`);
// true when that parse has no error (a refused or stale one is removed).
bool pch_parse(Frontend *fe, Args *all, int at, const char *cache) {
  char *pch = prelude_pch(fe->index, cache, all, at, &fe->src);
  if (!pch) return false;
  bool ok = false;
  if (read_pch_deps(pch, fe)) {
    char *include = all->v[at], *prelude = all->v[at + 1];
    all->v[at] = strdup("-include-pch");
    all->v[at + 1] = strdup(pch);
    ok = fe_parse_main(fe, all) == CXError_Success && fe->tu && count_errors(fe->tu) == 0;
    if (ok) {
      free(include);
      free(prelude);
    } else {
      free(all->v[at]);
      free(all->v[at + 1]);
      all->v[at] = include;
      all->v[at + 1] = prelude;
    }
  }
  if (!ok) {
    if (fe->tu) clang_disposeTranslationUnit(fe->tu);
    fe->tu = NULL;
    pch_forget_deps(fe);
    char deps[4200];
    snprintf(deps, sizeof deps, "%s.deps", pch);
    unlink(pch);
    unlink(deps);
    snprintf(deps, sizeof deps, "%s.idents", pch);
    unlink(deps);
  }
  free(pch);
  return ok;
}
