// frontend.c: parse CUDA 13 with libclang 16.
//
// The flag set (found to work with CUDA 13 headers and clang 16):
//   -x cuda -std=c++17 --cuda-host-only --cuda-path=$CUDA_HOME
//   -isystem $CUDA_HOME/include/cccl -isystem TMP (an empty texture_fetch_functions.h,
//   an omp.h that declares OpenMP's runtime routines)
//   -Xclang -fcuda-allow-variadic-functions -Wno-unknown-cuda-version
//   -include TMP/coconet_prelude.h
//   -Wno-unknown-pragmas
// then the flags from -p DIR (compile_commands.json, only -I/-D/-U/-isystem/
// -iquote/-include, relative paths made absolute with the entry's directory:
// nvcc's own flags mean nothing to clang), then the user's flags after `--`
// (last, so they win).
//
// Parsing the CUDA headers is most of a translation's time, so the prelude
// (with clang's CUDA runtime wrapper, which includes them, before it) is
// precompiled once per flag set and kept in a cache directory (see
// "The precompiled prelude" below); the stand-in files then live there too.
#include "translator.h"

#include <clang-c/CXCompilationDatabase.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

// The prelude, included before anything else. clang 16's CUDA wrapper headers
// declare the cache-hinted loads and stores (__ldcs, __stcs, ...) for only a
// few types in the host pass, where kernels are parsed; these templates
// stand in for the rest (exact declarations still win overload resolution).
// Host min/max as nvcc's headers declare them follow, and <math.h>.
static const char PRELUDE[] =
    "// coconet: parsing prelude (host-side view of device code)\n"
    "#undef __CUDACC__\n"
    "#define __CUDACC__ 1\n"
    "#define COCONET_DEV_ __attribute__((device))\n"
    "template <typename T> COCONET_DEV_ T __ldca(const T *);\n"
    "template <typename T> COCONET_DEV_ T __ldcg(const T *);\n"
    "template <typename T> COCONET_DEV_ T __ldcs(const T *);\n"
    "template <typename T> COCONET_DEV_ T __ldlu(const T *);\n"
    "template <typename T> COCONET_DEV_ T __ldcv(const T *);\n"
    "template <typename T> COCONET_DEV_ void __stwb(T *, T);\n"
    "template <typename T> COCONET_DEV_ void __stcg(T *, T);\n"
    "template <typename T> COCONET_DEV_ void __stcs(T *, T);\n"
    "template <typename T> COCONET_DEV_ void __stwt(T *, T);\n"
    "#undef COCONET_DEV_\n"
    // nvcc's headers give host code min and max on the integer and floating
    // types (crt/math_functions.hpp); clang's give them to device code only.
    "#define COCONET_MINMAX_(T, U, R) \\\n"
    "  static inline __attribute__((host)) R min(T a, U b) { return a < b ? a : b; } \\\n"
    "  static inline __attribute__((host)) R max(T a, U b) { return a > b ? a : b; }\n"
    "COCONET_MINMAX_(int, int, int)\n"
    "COCONET_MINMAX_(unsigned int, unsigned int, unsigned int)\n"
    "COCONET_MINMAX_(int, unsigned int, unsigned int)\n"
    "COCONET_MINMAX_(unsigned int, int, unsigned int)\n"
    "COCONET_MINMAX_(long, long, long)\n"
    "COCONET_MINMAX_(unsigned long, unsigned long, unsigned long)\n"
    "COCONET_MINMAX_(long, unsigned long, unsigned long)\n"
    "COCONET_MINMAX_(unsigned long, long, unsigned long)\n"
    "COCONET_MINMAX_(long long, long long, long long)\n"
    "COCONET_MINMAX_(unsigned long long, unsigned long long, unsigned long long)\n"
    "COCONET_MINMAX_(long long, unsigned long long, unsigned long long)\n"
    "COCONET_MINMAX_(unsigned long long, long long, unsigned long long)\n"
    "COCONET_MINMAX_(float, float, float)\n"
    "COCONET_MINMAX_(double, double, double)\n"
    "COCONET_MINMAX_(float, double, double)\n"
    "COCONET_MINMAX_(double, float, double)\n"
    "#undef COCONET_MINMAX_\n"
    // nvcc's cuda_runtime.h includes <math.h> for host code, which puts
    // isfinite, isnan, isinf and the rest into the global namespace; clang's
    // wrapper includes <cmath> only, where a host call of ::isfinite finds
    // the device overloads alone.
    "#include <math.h>\n";

const char *frontend_cuda_home(void) {
  static char found[4096];
  const char *env = getenv("CUDA_HOME");
  if (env && *env) return env;
  if (found[0]) return found;
  const char *path = getenv("PATH");
  for (const char *p = path; p && *p;) {
    const char *colon = strchr(p, ':');
    size_t n = colon ? (size_t)(colon - p) : strlen(p);
    char cand[4096];
    snprintf(cand, sizeof cand, "%.*s/nvcc", (int)n, p);
    char real[4096];
    if (n && access(cand, X_OK) == 0 && realpath(cand, real)) {
      char *slash = strrchr(real, '/');
      if (slash) *slash = '\0';           // .../bin
      slash = strrchr(real, '/');
      if (slash) *slash = '\0';           // the toolkit
      snprintf(found, sizeof found, "%s", real);
      return found;
    }
    p = colon ? colon + 1 : p + n;
  }
  snprintf(found, sizeof found, "/usr/local/cuda");
  return found;
}

// nvcc's host compiler finds GCC's omp.h, which clang cannot parse (GCC-only
// attributes), and clang has none of its own unless libomp is installed; host
// code that calls OpenMP's runtime routines parses against these declarations
// (the output is compiled with the real header).
static const char OMP_H[] =
    "// coconet: OpenMP's runtime routines, for parsing only\n"
    "#ifndef COCONET_OMP_H\n"
    "#define COCONET_OMP_H\n"
    "#ifdef __cplusplus\n"
    "extern \"C\" {\n"
    "#endif\n"
    "typedef struct { void *p; } omp_lock_t;\n"
    "typedef struct { void *p; } omp_nest_lock_t;\n"
    "typedef enum { omp_sched_static = 1, omp_sched_dynamic = 2, omp_sched_guided = 3, omp_sched_auto = 4 } "
    "omp_sched_t;\n"
    "void omp_set_num_threads(int);\n"
    "int omp_get_num_threads(void);\n"
    "int omp_get_max_threads(void);\n"
    "int omp_get_thread_num(void);\n"
    "int omp_get_num_procs(void);\n"
    "int omp_in_parallel(void);\n"
    "void omp_set_dynamic(int);\n"
    "int omp_get_dynamic(void);\n"
    "void omp_set_nested(int);\n"
    "int omp_get_nested(void);\n"
    "void omp_set_schedule(omp_sched_t, int);\n"
    "void omp_get_schedule(omp_sched_t *, int *);\n"
    "int omp_get_thread_limit(void);\n"
    "void omp_set_max_active_levels(int);\n"
    "int omp_get_max_active_levels(void);\n"
    "int omp_get_level(void);\n"
    "int omp_get_ancestor_thread_num(int);\n"
    "int omp_get_team_size(int);\n"
    "int omp_get_active_level(void);\n"
    "int omp_in_final(void);\n"
    "int omp_get_num_devices(void);\n"
    "int omp_get_default_device(void);\n"
    "void omp_set_default_device(int);\n"
    "int omp_is_initial_device(void);\n"
    "void omp_init_lock(omp_lock_t *);\n"
    "void omp_destroy_lock(omp_lock_t *);\n"
    "void omp_set_lock(omp_lock_t *);\n"
    "void omp_unset_lock(omp_lock_t *);\n"
    "int omp_test_lock(omp_lock_t *);\n"
    "void omp_init_nest_lock(omp_nest_lock_t *);\n"
    "void omp_destroy_nest_lock(omp_nest_lock_t *);\n"
    "void omp_set_nest_lock(omp_nest_lock_t *);\n"
    "void omp_unset_nest_lock(omp_nest_lock_t *);\n"
    "int omp_test_nest_lock(omp_nest_lock_t *);\n"
    "double omp_get_wtime(void);\n"
    "double omp_get_wtick(void);\n"
    "#ifdef __cplusplus\n"
    "}\n"
    "#endif\n"
    "#endif\n";

// The files the parse finds in TMP.
static const struct {
  const char *name, *text;
} TMP_FILES[] = {{"texture_fetch_functions.h", ""}, {"coconet_prelude.h", PRELUDE}, {"omp.h", OMP_H}};

static int write_file(const char *dir, const char *name, const char *text) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  bool ok = fputs(text, f) >= 0;
  return (fclose(f) == 0 && ok) ? 0 : -1;
}

static void remove_tmpdir(char *dir) {
  if (!dir) return;
  char path[4096];
  for (size_t i = 0; i < sizeof TMP_FILES / sizeof TMP_FILES[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, TMP_FILES[i].name);
    unlink(path);
  }
  rmdir(dir);
  free(dir);
}

static char *make_tmpdir(void) {
  const char *base = getenv("TMPDIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/coconet.XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(path)) {
    fprintf(stderr, "coconet: error: cannot create a temporary directory '%s': %s\n", path, strerror(errno));
    return NULL;
  }
  char *dir = strdup(path);
  for (size_t i = 0; i < sizeof TMP_FILES / sizeof TMP_FILES[0]; i++)
    if (write_file(dir, TMP_FILES[i].name, TMP_FILES[i].text)) {
      fprintf(stderr, "coconet: error: cannot write to '%s': %s\n", dir, strerror(errno));
      remove_tmpdir(dir);
      return NULL;
    }
  return dir;
}

//
// The precompiled prelude
//
// Cache directory: $COCONET_CACHE, else $XDG_CACHE_HOME/coconet, else
// $HOME/.cache/coconet (COCONET_CACHE=off: no cache, a parse from scratch
// every time). In it: standins-HASH/ (the TMP files, named by a hash of their
// texts), and for each flag set KEY.pch (the prelude's translation unit as
// libclang saves it, used with -include-pch) and KEY.deps (the headers it
// holds, for -MD). KEY hashes libclang's version and every flag, but the
// user's -D and -U when no header of the entry names their macros (see
// prelude_pch). Files are
// written under a temporary name and renamed, so parallel builds share it. A
// precompiled header clang refuses (a header changed since) is removed and the
// file parsed without it: the cache changes how fast, never what, is parsed.
//

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

static char *cache_dir(void) {
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
static char *cached_standins(const char *cache) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < sizeof TMP_FILES / sizeof TMP_FILES[0]; i++)
    h = fnv1a(fnv1a(h, TMP_FILES[i].name), TMP_FILES[i].text);
  char dir[4096], path[4200];
  snprintf(dir, sizeof dir, "%s/standins-%016llx", cache, (unsigned long long)h);
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) return NULL;
  for (size_t i = 0; i < sizeof TMP_FILES / sizeof TMP_FILES[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, TMP_FILES[i].name);
    if (access(path, R_OK) != 0 && write_atomic(path, TMP_FILES[i].text) != 0) return NULL;
  }
  return strdup(dir);
}


typedef struct Args {
  char **v;
  int n, cap;
} Args;

static void args_add(Args *a, const char *s) {
  if (a->n == a->cap) {
    a->cap = a->cap ? a->cap * 2 : 32;
    a->v = realloc(a->v, sizeof *a->v * (size_t)a->cap);
    if (!a->v) COCONET_BUG("out of memory");
  }
  a->v[a->n++] = strdup(s);
}

static void args_addf(Args *a, const char *fmt, const char *x) {
  char buf[4096];
  snprintf(buf, sizeof buf, fmt, x);
  args_add(a, buf);
}

static void args_free(Args *a) {
  for (int i = 0; i < a->n; i++) free(a->v[i]);
  free(a->v);
}

// Flags of compile_commands.json that mean the same to clang; the rest
// (nvcc's -arch, -Xcompiler, optimisation, output) are dropped.
static bool keep_flag(const char *f, bool *takes_value) {
  static const char *const with_value[] = {"-I", "-D", "-U", "-isystem", "-iquote", "-include"};
  for (size_t i = 0; i < sizeof with_value / sizeof *with_value; i++) {
    size_t n = strlen(with_value[i]);
    if (strncmp(f, with_value[i], n) == 0) {
      *takes_value = f[n] == '\0';
      return true;
    }
  }
  return false;
}

// Add prefix+value, making a relative path absolute against the entry's
// directory for the flags that take paths (-I, -isystem, -iquote, -include).
static void add_path_flag(Args *a, const char *prefix, const char *value, const char *flag,
                          const char *dir) {
  bool path = strcmp(flag, "-D") != 0 && strcmp(flag, "-U") != 0;
  char buf[8192];
  if (path && value[0] && value[0] != '/')
    snprintf(buf, sizeof buf, "%s%s/%s", prefix, dir, value);
  else
    snprintf(buf, sizeof buf, "%s%s", prefix, value);
  args_add(a, buf);
}

static int add_compdb_flags(const Options *opts, Args *a) {
  char path[4096];
  snprintf(path, sizeof path, "%s/compile_commands.json", opts->compdb_dir);
  if (access(path, R_OK) != 0) {
    fprintf(stderr, "coconet: error: cannot read '%s': %s\n", path, strerror(errno));
    return -1;
  }
  CXCompilationDatabase_Error err;
  CXCompilationDatabase db = clang_CompilationDatabase_fromDirectory(opts->compdb_dir, &err);
  if (err != CXCompilationDatabase_NoError) {
    fprintf(stderr, "coconet: error: cannot load '%s/compile_commands.json'\n", opts->compdb_dir);
    return -1;
  }
  char real[4096];
  const char *file = realpath(opts->input, real) ? real : opts->input;
  CXCompileCommands cmds = clang_CompilationDatabase_getCompileCommands(db, file);
  unsigned n = clang_CompileCommands_getSize(cmds);
  if (n == 0) {
    fprintf(stderr, "coconet: warning: '%s' has no entry in '%s/compile_commands.json'\n",
            opts->input, opts->compdb_dir);
  } else {
    // For a file without an entry libclang lends the flags of the most similar
    // one (as clang tools do).
    CXCompileCommand cmd = clang_CompileCommands_getCommand(cmds, 0);
    CXString dir = clang_CompileCommand_getDirectory(cmd);
    unsigned nargs = clang_CompileCommand_getNumArgs(cmd);
    for (unsigned i = 1; i < nargs; i++) {
      CXString s = clang_CompileCommand_getArg(cmd, i);
      const char *arg = clang_getCString(s);
      bool takes_value;
      if (keep_flag(arg, &takes_value)) {
        if (takes_value && i + 1 < nargs) {
          CXString v = clang_CompileCommand_getArg(cmd, ++i);
          args_add(a, arg);
          add_path_flag(a, "", clang_getCString(v), arg, clang_getCString(dir));
          clang_disposeString(v);
        } else {
          size_t flag = strncmp(arg, "-isystem", 8) == 0 ? 8 : strncmp(arg, "-iquote", 7) == 0 ? 7
                        : strncmp(arg, "-include", 8) == 0 ? 8 : 2;
          char name[16];
          snprintf(name, sizeof name, "%.*s", (int)flag, arg);
          add_path_flag(a, name, arg + flag, name, clang_getCString(dir));
        }
      }
      clang_disposeString(s);
    }
    clang_disposeString(dir);
  }
  clang_CompileCommands_dispose(cmds);
  clang_CompilationDatabase_dispose(db);
  return 0;
}

static void build_args(const char *tmpdir, Args *a) {
  const char *cuda = frontend_cuda_home();
  args_add(a, "-x");
  args_add(a, "cuda");
  args_add(a, "-std=c++17");
  args_add(a, "--cuda-host-only");
  args_addf(a, "--cuda-path=%s", cuda);
  args_add(a, "-isystem");
  args_addf(a, "%s/include/cccl", cuda);
  args_add(a, "-isystem");
  args_add(a, tmpdir);
  args_add(a, "-Xclang");
  args_add(a, "-fcuda-allow-variadic-functions");
  args_add(a, "-Wno-unknown-cuda-version");
  args_add(a, "-Wno-unknown-pragmas");
  args_add(a, "-include");
  args_addf(a, "%s/coconet_prelude.h", tmpdir);
}

// Print errors (and fatal errors) as clang does: the formatted line, then the
// source line with a caret.
static int report_clang_errors(Frontend *fe) {
  int errors = 0;
  unsigned n = clang_getNumDiagnostics(fe->tu);
  for (unsigned i = 0; i < n; i++) {
    CXDiagnostic d = clang_getDiagnostic(fe->tu, i);
    enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
    if (sev >= CXDiagnostic_Error) {
      errors++;
      CXString s = clang_formatDiagnostic(d, CXDiagnostic_DisplaySourceLocation |
                                                 CXDiagnostic_DisplayColumn |
                                                 CXDiagnostic_DisplayOption);
      fprintf(stderr, "%s\n", clang_getCString(s));
      clang_disposeString(s);
      CXFile file;
      unsigned line, col;
      clang_getFileLocation(clang_getDiagnosticLocation(d), &file, &line, &col, NULL);
      if (file && clang_File_isEqual(file, fe->file)) {
        SrcLoc loc = {fe->src.path, line, col, 0};
        diag_print_source(&loc);
      }
    }
    clang_disposeDiagnostic(d);
  }
  return errors;
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

// At most this many precompiled headers stay in the cache (each 5 to 50 MB):
// when there are more, the least recently built go.
enum { PCH_KEEP = 32 };

static void evict_pchs(const char *cache) {
  DIR *d = opendir(cache);
  if (!d) return;
  struct { char name[64]; time_t t; } v[PCH_KEEP + 64];
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) && n < (int)(sizeof v / sizeof *v);) {
    size_t len = strlen(e->d_name);
    char path[4400];
    struct stat st;
    snprintf(path, sizeof path, "%.4000s/%.255s", cache, e->d_name);
    if (len != 20 || strcmp(e->d_name + 16, ".pch") != 0 || stat(path, &st) != 0) continue;
    snprintf(v[n].name, sizeof v[n].name, "%.16s", e->d_name);
    v[n++].t = st.st_mtime;
  }
  closedir(d);
  while (n > PCH_KEEP) {
    int old = 0;
    for (int i = 1; i < n; i++)
      if (v[i].t < v[old].t) old = i;
    static const char *const ext[] = {".pch", ".pch.deps", ".h"};
    for (size_t k = 0; k < 3; k++) {
      char path[4400];
      snprintf(path, sizeof path, "%.4000s/%.16s%s", cache, v[old].name, ext[k]);
      unlink(path);
    }
    v[old] = v[--n];
  }
}

// The precompiled prelude and include lines of the file for these flags
// (CACHE/KEY.pch, the lines in CACHE/KEY.h), built now when missing; NULL when
// there is none. The flags' -include of the prelude is at `at`.
static char *pch_for_flags(CXIndex index, const char *cache, const Args *all, int at, const SourceFile *src) {
  CXString version = clang_getClangVersion();
  uint64_t h = fnv1a(14695981039346656037ull, clang_getCString(version));
  clang_disposeString(version);
  for (int i = 0; i < all->n; i++) {
    // Another -include would come before the prelude in the precompiled form, after it in the file's parse.
    if (i != at && strncmp(all->v[i], "-include", 8) == 0) return NULL;
    h = fnv1a(h, all->v[i]);
  }
  char *lines = include_prefix(src);
  h = fnv1a(h, lines);
  char pch[4096], header[4096];
  snprintf(pch, sizeof pch, "%s/%016llx.pch", cache, (unsigned long long)h);
  snprintf(header, sizeof header, "%s/%016llx.h", cache, (unsigned long long)h);
  if (access(pch, R_OK) == 0 && pch_fresh(pch)) {
    free(lines);
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
      args_add(general, f);
      continue;
    }
    const char *name = f[2] ? f + 2 : i + 1 < all->n ? all->v[++i] : "";
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)strcspn(name, "="), name);
    args_add(names, buf);
  }
}

// Whether text names an identifier of names (a whole identifier, not a part).
static bool text_names(const char *text, size_t len, const Args *names) {
  for (int k = 0; k < names->n; k++) {
    size_t n = strlen(names->v[k]);
    for (const char *p = text; n > 0 && (p = memmem(p, len - (size_t)(p - text), names->v[k], n)); p++) {
      bool before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
      bool after = p + n < text + len && (isalnum((unsigned char)p[n]) || p[n] == '_');
      if (!before && !after) return true;
    }
  }
  return false;
}

// Whether a header of pch.deps names one of names (or cannot be read).
static bool pch_names(const char *pch, const Args *names) {
  char path[4200], line[4200];
  snprintf(path, sizeof path, "%s.deps", pch);
  FILE *f = fopen(path, "r");
  if (!f) return true;
  bool named = false;
  while (!named && fgets(line, sizeof line, f)) {
    int at = 0;
    long long mtime, size;
    line[strcspn(line, "\n")] = '\0';
    if (sscanf(line, "%lld %lld %n", &mtime, &size, &at) != 2 || at == 0) {
      named = true;
      break;
    }
    FILE *h = fopen(line + at, "rb");
    char *text = h && size >= 0 ? malloc((size_t)size + 1) : NULL;
    named = !text || fread(text, 1, (size_t)size, h) != (size_t)size || text_names(text, (size_t)size, names);
    free(text);
    if (h) fclose(h);
  }
  fclose(f);
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
  args_free(&general);
  args_free(&names);
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

static void forget_pch_deps(Frontend *fe) {
  for (int i = 0; i < fe->npch_deps; i++) free(fe->pch_deps[i]);
  free(fe->pch_deps);
  fe->pch_deps = NULL;
  fe->npch_deps = 0;
}

static enum CXErrorCode parse_main(Frontend *fe, const Args *a) {
  struct CXUnsavedFile unsaved = {fe->src.path, fe->src.buf, (unsigned long)fe->src.len};
  return clang_parseTranslationUnit2(fe->index, fe->src.path, (const char *const *)a->v, a->n, &unsaved, 1,
                                     CXTranslationUnit_DetailedPreprocessingRecord, &fe->tu);
}

// Parse with the precompiled prelude instead of -include PRELUDE (at `at`);
// true when that parse has no error (a refused or stale one is removed).
static bool parse_with_pch(Frontend *fe, Args *all, int at, const char *cache) {
  char *pch = prelude_pch(fe->index, cache, all, at, &fe->src);
  if (!pch) return false;
  bool ok = false;
  if (read_pch_deps(pch, fe)) {
    char *include = all->v[at], *prelude = all->v[at + 1];
    all->v[at] = strdup("-include-pch");
    all->v[at + 1] = strdup(pch);
    ok = parse_main(fe, all) == CXError_Success && fe->tu && count_errors(fe->tu) == 0;
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
    forget_pch_deps(fe);
    char deps[4200];
    snprintf(deps, sizeof deps, "%s.deps", pch);
    unlink(pch);
    unlink(deps);
  }
  free(pch);
  return ok;
}

int frontend_parse(const Options *opts, SourceFile src, Frontend *fe) {
  memset(fe, 0, sizeof *fe);
  fe->src = src;
  char probe[4096];
  snprintf(probe, sizeof probe, "%s/include/cuda_runtime.h", frontend_cuda_home());
  if (access(probe, R_OK) != 0) {
    fprintf(stderr, "coconet: error: no CUDA toolkit at '%s' (no include/cuda_runtime.h); set CUDA_HOME, "
                    "put nvcc on PATH, or install CUDA in /usr/local/cuda\n", frontend_cuda_home());
    return -1;
  }
  char *cache = cache_dir();
  fe->tmpdir = cache ? cached_standins(cache) : NULL;
  fe->tmpdir_cached = fe->tmpdir != NULL;
  if (!fe->tmpdir) fe->tmpdir = make_tmpdir();
  if (!fe->tmpdir) {
    free(cache);
    return -1;
  }
  Args a = {0};
  if (opts->compdb_dir && add_compdb_flags(opts, &a)) {
    args_free(&a);
    free(cache);
    return -1;
  }
  Args all = {0};
  build_args(fe->tmpdir, &all);
  int at = all.n - 2;  // -include PRELUDE, the last of build_args
  for (int i = 0; i < a.n; i++) args_add(&all, a.v[i]);
  for (int i = 0; i < opts->nclang_args; i++) args_add(&all, opts->clang_args[i]);
  args_free(&a);
  fe->index = clang_createIndex(0, 0);
  bool parsed = fe->tmpdir_cached && parse_with_pch(fe, &all, at, cache);
  free(cache);
  fe->args = all.v;
  fe->nargs = all.n;
  enum CXErrorCode err = parsed ? CXError_Success : parse_main(fe, &all);
  if (err != CXError_Success || !fe->tu) {
    fprintf(stderr, "coconet: error: libclang could not parse '%s' (error %d)\n", src.path, err);
    return -1;
  }
  fe->file = clang_getFile(fe->tu, src.path);
  return report_clang_errors(fe) ? -1 : 0;
}

int frontend_parse_appended(const Frontend *base, const char *extra, FeCopy *copies, int ncopies, Frontend *out,
                            char **error) {
  memset(out, 0, sizeof *out);
  out->src = base->src;
  out->copies = copies;
  out->ncopies = ncopies;
  *error = NULL;
  size_t n = strlen(extra);
  char *text = malloc(base->src.len + n + 1);
  if (!text) COCONET_BUG("out of memory");
  memcpy(text, base->src.buf, base->src.len);
  memcpy(text + base->src.len, extra, n + 1);
  out->index = clang_createIndex(0, 0);
  struct CXUnsavedFile unsaved = {base->src.path, text, (unsigned long)(base->src.len + n)};
  enum CXErrorCode err = clang_parseTranslationUnit2(out->index, base->src.path, (const char *const *)base->args,
                                                     base->nargs, &unsaved, 1, CXTranslationUnit_None, &out->tu);
  free(text);
  if (err != CXError_Success || !out->tu) {
    if (asprintf(error, "libclang could not parse it (error %d)", err) < 0) COCONET_BUG("out of memory");
    return -1;
  }
  out->file = clang_getFile(out->tu, base->src.path);
  unsigned nd = clang_getNumDiagnostics(out->tu);
  for (unsigned i = 0; i < nd && !*error; i++) {
    CXDiagnostic d = clang_getDiagnostic(out->tu, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
      CXString s = clang_getDiagnosticSpelling(d);
      *error = strdup(clang_getCString(s));
      clang_disposeString(s);
    }
    clang_disposeDiagnostic(d);
  }
  return *error ? -1 : 0;
}

void frontend_dispose(Frontend *fe) {
  if (fe->tu) clang_disposeTranslationUnit(fe->tu);
  if (fe->index) clang_disposeIndex(fe->index);
  if (fe->tmpdir_cached) free(fe->tmpdir);
  else remove_tmpdir(fe->tmpdir);
  forget_pch_deps(fe);
  for (int i = 0; i < fe->nargs; i++) free(fe->args[i]);
  free(fe->args);
  free(fe->copies);
  fe->tu = NULL;
  fe->index = NULL;
  fe->tmpdir = NULL;
  fe->tmpdir_cached = false;
  fe->args = NULL;
  fe->copies = NULL;
  fe->nargs = fe->ncopies = 0;
}

bool fe_in_main_file(const Frontend *fe, CXSourceLocation loc) {
  CXFile file;
  clang_getFileLocation(loc, &file, NULL, NULL, NULL);
  return file && clang_File_isEqual(file, fe->file);
}

SrcLoc fe_loc(const Frontend *fe, CXSourceLocation loc) {
  CXFile file;
  unsigned line, col, offset;
  clang_getFileLocation(loc, &file, &line, &col, &offset);
  SrcLoc r = {NULL, line, col, offset};
  if (!file || !clang_File_isEqual(file, fe->file)) return r;
  r.file = fe->src.path;
  if (offset < fe->src.len) return r;
  // In an instance parse: a copy's bytes are the template's own.
  for (int i = 0; i < fe->ncopies; i++) {
    const FeCopy *c = &fe->copies[i];
    if (offset >= c->header && offset <= c->at + c->len) {
      unsigned o = offset >= c->at ? c->from + (offset - c->at) : c->from;
      r = source_loc(&fe->src, o);
      r.file = fe->src.path;
      return r;
    }
  }
  return source_loc(&fe->src, (unsigned)fe->src.len);
}

SrcRange fe_range(const Frontend *fe, CXSourceRange r) {
  SrcRange out = {fe_loc(fe, clang_getRangeStart(r)), fe_loc(fe, clang_getRangeEnd(r))};
  return out;
}

char *fe_text(const Frontend *fe, SrcRange r) {
  unsigned b = r.begin.offset, e = r.end.offset;
  if (e < b || e > fe->src.len) e = b;
  char *s = malloc(e - b + 1);
  if (!s) COCONET_BUG("out of memory");
  memcpy(s, fe->src.buf + b, e - b);
  s[e - b] = '\0';
  return s;
}

char *fe_macro_in(const Frontend *fe, SrcRange at) {
  if (!at.begin.file || at.end.offset <= at.begin.offset || at.end.offset > fe->src.len) return NULL;
  CXSourceRange r = clang_getRange(clang_getLocationForOffset(fe->tu, fe->file, at.begin.offset),
                                   clang_getLocationForOffset(fe->tu, fe->file, at.end.offset));
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(fe->tu, r, &toks, &n);
  char *name = NULL;
  for (unsigned i = 0; i < n && !name; i++) {
    if (clang_getTokenKind(toks[i]) != CXToken_Identifier) continue;
    CXCursor c = clang_getCursor(fe->tu, clang_getTokenLocation(fe->tu, toks[i]));
    if (clang_getCursorKind(c) == CXCursor_MacroExpansion) name = fe_spelling(c);
  }
  clang_disposeTokens(fe->tu, toks, n);
  return name;
}

bool fe_is_function(enum CXCursorKind k) {
  return k == CXCursor_FunctionDecl || k == CXCursor_CXXMethod || k == CXCursor_Constructor ||
         k == CXCursor_Destructor || k == CXCursor_ConversionFunction || k == CXCursor_FunctionTemplate;
}

char *fe_spelling(CXCursor c) {
  CXString s = clang_getCursorSpelling(c);
  char *out = strdup(clang_getCString(s));
  clang_disposeString(s);
  return out;
}

static enum CXChildVisitResult add_kid(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  FeKids *k = data;
  if (k->n < FE_KIDS) k->v[k->n] = c;
  k->last = c;
  k->n++;
  return CXChildVisit_Continue;
}

FeKids fe_kids(CXCursor c) {
  FeKids k = {.n = 0};
  k.last = clang_getNullCursor();
  clang_visitChildren(c, add_kid, &k);
  return k;
}
