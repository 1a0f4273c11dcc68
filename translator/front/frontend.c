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
// precompiled once per flag set and kept in a cache directory
// (frontend_pch.c); the stand-in files then live there too.
#include "frontend_impl.h"
#include "common/text.h"

#include <clang-c/CXCompilationDatabase.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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
const FeTmpFile FE_TMP_FILES[] = {{"texture_fetch_functions.h", ""}, {"coconet_prelude.h", PRELUDE}, {"omp.h", OMP_H}};
const size_t FE_NTMP_FILES = sizeof FE_TMP_FILES / sizeof FE_TMP_FILES[0];

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
  for (size_t i = 0; i < FE_NTMP_FILES; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, FE_TMP_FILES[i].name);
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
  for (size_t i = 0; i < FE_NTMP_FILES; i++)
    if (write_file(dir, FE_TMP_FILES[i].name, FE_TMP_FILES[i].text)) {
      fprintf(stderr, "coconet: error: cannot write to '%s': %s\n", dir, strerror(errno));
      remove_tmpdir(dir);
      return NULL;
    }
  return dir;
}

void fe_args_add(Args *a, const char *s) {
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
  fe_args_add(a, buf);
}

void fe_args_free(Args *a) {
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
  fe_args_add(a, buf);
}

// One flag of a compile command (or of an --options-file it names), kept
// when clang reads it the same; a value may follow (*i moves past it), or be
// attached (`-Idir`, nvcc's `-isystem=dir`).
static void add_compdb_flag(Args *a, const char *arg, const char *next, int *i, const char *dir) {
  bool takes_value;
  if (!keep_flag(arg, &takes_value)) return;
  if (takes_value) {
    if (!next) return;
    ++*i;
    fe_args_add(a, arg);
    add_path_flag(a, "", next[0] == '=' ? next + 1 : next, arg, dir);
    return;
  }
  size_t flag = strncmp(arg, "-isystem", 8) == 0 ? 8 : strncmp(arg, "-iquote", 7) == 0 ? 7
                : strncmp(arg, "-include", 8) == 0 ? 8 : 2;
  char name[16];
  snprintf(name, sizeof name, "%.*s", (int)flag, arg);
  const char *value = arg + flag;
  if (*value == '=') value++;
  add_path_flag(a, name, value, name, dir);
}

// The flags of an --options-file (CMake's includes_CUDA.rsp): whitespace-separated,
// double quotes around a value with blanks.
static void add_options_file(Args *a, const char *file, const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, file[0] == '/' ? "%s%s" : "%s/%s", file[0] == '/' ? "" : dir, file);
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "coconet: warning: cannot read the options file '%s' of the compile command: %s\n", path,
            strerror(errno));
    return;
  }
  Args words = {0};
  char word[4096];
  size_t n = 0;
  bool quoted = false;
  for (int c = fgetc(f);; c = fgetc(f)) {
    if (c == '"') {
      quoted = !quoted;
      continue;
    }
    if (c == EOF || (!quoted && (c == ' ' || c == '\t' || c == '\n' || c == '\r'))) {
      if (n) {
        word[n] = '\0';
        fe_args_add(&words, word);
        n = 0;
      }
      if (c == EOF) break;
      continue;
    }
    if (n + 1 < sizeof word) word[n++] = (char)c;
  }
  fclose(f);
  for (int i = 0; i < words.n; i++) add_compdb_flag(a, words.v[i], i + 1 < words.n ? words.v[i + 1] : NULL, &i, dir);
  fe_args_free(&words);
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
    Args words = {0};
    for (unsigned i = 0; i < nargs; i++) {
      CXString w = clang_CompileCommand_getArg(cmd, i);
      fe_args_add(&words, clang_getCString(w));
      clang_disposeString(w);
    }
    const char *d = clang_getCString(dir);
    for (int i = 1; i < words.n; i++) {
      const char *next = i + 1 < words.n ? words.v[i + 1] : NULL;
      if ((strcmp(words.v[i], "--options-file") == 0 || strcmp(words.v[i], "-optf") == 0) && next)
        add_options_file(a, words.v[++i], d);
      else
        add_compdb_flag(a, words.v[i], next, &i, d);
    }
    fe_args_free(&words);
    clang_disposeString(dir);
  }
  clang_CompileCommands_dispose(cmds);
  clang_CompilationDatabase_dispose(db);
  return 0;
}

static void build_args(const char *tmpdir, Args *a) {
  const char *cuda = frontend_cuda_home();
  fe_args_add(a, "-x");
  fe_args_add(a, "cuda");
  fe_args_add(a, "-std=c++17");
  fe_args_add(a, "--cuda-host-only");
  args_addf(a, "--cuda-path=%s", cuda);
  fe_args_add(a, "-isystem");
  args_addf(a, "%s/include/cccl", cuda);
  fe_args_add(a, "-isystem");
  fe_args_add(a, tmpdir);
  fe_args_add(a, "-Xclang");
  fe_args_add(a, "-fcuda-allow-variadic-functions");
  fe_args_add(a, "-Wno-unknown-cuda-version");
  fe_args_add(a, "-Wno-unknown-pragmas");
  fe_args_add(a, "-include");
  args_addf(a, "%s/coconet_prelude.h", tmpdir);
}

// Print errors (and fatal errors) as clang does: the formatted line, then the
// source line with a caret.
static int report_clang_errors(Frontend *fe, bool no_flags) {
  int errors = 0;
  bool missing = false;
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
      missing |= strstr(clang_getCString(s), "file not found") != NULL;
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
  if (missing && no_flags)
    fprintf(stderr, "coconet: note: no compiler flags were given: pass your program's include paths and macros "
                    "after '--' (for MPI: -- $(mpicxx --showme:compile)), or -p BUILD_DIR to read them from its "
                    "compile_commands.json\n");
  return errors;
}

enum CXErrorCode fe_parse_main(Frontend *fe, const Args *a) {
  struct CXUnsavedFile unsaved = {fe->src.path, fe->src.buf, (unsigned long)fe->src.len};
  return clang_parseTranslationUnit2(fe->index, fe->src.path, (const char *const *)a->v, a->n, &unsaved, 1,
                                     CXTranslationUnit_DetailedPreprocessingRecord, &fe->tu);
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
  char *cache = pch_cache_dir();
  fe->tmpdir = cache ? pch_standins(cache) : NULL;
  fe->tmpdir_cached = fe->tmpdir != NULL;
  if (!fe->tmpdir) fe->tmpdir = make_tmpdir();
  if (!fe->tmpdir) {
    free(cache);
    return -1;
  }
  Args a = {0};
  if (opts->compdb_dir && add_compdb_flags(opts, &a)) {
    fe_args_free(&a);
    free(cache);
    return -1;
  }
  Args all = {0};
  build_args(fe->tmpdir, &all);
  int at = all.n - 2;  // -include PRELUDE, the last of build_args
  for (int i = 0; i < a.n; i++) fe_args_add(&all, a.v[i]);
  for (int i = 0; i < opts->nclang_args; i++) fe_args_add(&all, opts->clang_args[i]);
  fe_args_free(&a);
  fe->index = clang_createIndex(0, 0);
  bool parsed = fe->tmpdir_cached && pch_parse(fe, &all, at, cache);
  free(cache);
  fe->args = all.v;
  fe->nargs = all.n;
  enum CXErrorCode err = parsed ? CXError_Success : fe_parse_main(fe, &all);
  if (err != CXError_Success || !fe->tu) {
    fprintf(stderr, "coconet: error: libclang could not parse '%s' (error %d)\n", src.path, err);
    return -1;
  }
  fe->file = clang_getFile(fe->tu, src.path);
  if (report_clang_errors(fe, opts->nclang_args == 0 && !opts->compdb_dir)) return -1;
  fe->names = xcalloc(1, sizeof *fe->names);
  return 0;
}

void frontend_dispose(Frontend *fe) {
  if (fe->tu) clang_disposeTranslationUnit(fe->tu);
  if (fe->index) clang_disposeIndex(fe->index);
  if (fe->tmpdir_cached) free(fe->tmpdir);
  else remove_tmpdir(fe->tmpdir);
  pch_forget_deps(fe);
  for (int i = 0; i < fe->nargs; i++) free(fe->args[i]);
  free(fe->args);
  free(fe->copies);
  if (fe->names) free(fe->names->text);
  free(fe->names);
  fe->names = NULL;
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
      const SourceFile *src = c->src ? c->src : &fe->src;
      r = source_loc(src, o);
      r.file = src->path;
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

// The bytes fe_loc's offsets index at an offset of the parse's main file: a
// header's for a copy of a template defined in it, else the main file's.
static const SourceFile *mapped_src(const Frontend *fe, unsigned offset) {
  for (int i = 0; offset >= fe->src.len && i < fe->ncopies; i++) {
    const FeCopy *c = &fe->copies[i];
    if (offset >= c->header && offset <= c->at + c->len && c->src) return c->src;
  }
  return &fe->src;
}

char *fe_between(const Frontend *fe, CXSourceLocation from, CXSourceLocation to) {
  CXFile fa, fb;
  unsigned a, b;
  clang_getFileLocation(from, &fa, NULL, NULL, &a);
  clang_getFileLocation(to, &fb, NULL, NULL, &b);
  const SourceFile *src = fa && clang_File_isEqual(fa, fe->file) ? mapped_src(fe, a) : &fe->src;
  if (src != &fe->src) {  // in a copy of a header's template: its bytes there
    unsigned x = fe_loc(fe, from).offset, y = fe_loc(fe, to).offset;
    char *s = y >= x && y <= src->len ? strndup(src->buf + x, y - x) : strdup("");
    if (!s) COCONET_BUG("out of memory");
    return s;
  }
  if (!fa || clang_File_isEqual(fa, fe->file)) return fe_text(fe, (SrcRange){fe_loc(fe, from), fe_loc(fe, to)});
  size_t size = 0;
  const char *buf = clang_File_isEqual(fa, fb) ? clang_getFileContents(fe->tu, fa, &size) : NULL;
  if (!buf || b < a || b > size) return strdup("");
  char *s = malloc(b - a + 1);
  if (!s) COCONET_BUG("out of memory");
  memcpy(s, buf + a, b - a);
  s[b - a] = '\0';
  return s;
}

char *fe_cursor_text(const Frontend *fe, CXCursor c) {
  CXSourceRange r = clang_getCursorExtent(c);
  return fe_between(fe, clang_getRangeStart(r), clang_getRangeEnd(r));
}

CXSourceRange fe_file_extent(CXCursor c) {
  CXTranslationUnit tu = clang_Cursor_getTranslationUnit(c);
  CXSourceRange r = clang_getCursorExtent(c);
  CXFile fa, fb;
  unsigned a, b;
  clang_getFileLocation(clang_getRangeStart(r), &fa, NULL, NULL, &a);
  clang_getFileLocation(clang_getRangeEnd(r), &fb, NULL, NULL, &b);
  if (!fa || !fb || !clang_File_isEqual(fa, fb) || b < a) return clang_getNullRange();
  return clang_getRange(clang_getLocationForOffset(tu, fa, a), clang_getLocationForOffset(tu, fa, b));
}

bool fe_in_user_code(const Frontend *fe, CXSourceLocation loc) {
  return fe_in_main_file(fe, loc) || !clang_Location_isInSystemHeader(loc);
}

// The headers diagnostics have named (their paths live as long as the process).
typedef struct HeaderPath {
  struct HeaderPath *next;
  char *path;
} HeaderPath;
static HeaderPath *header_paths;

SrcLoc fe_any_loc(const Frontend *fe, CXSourceLocation loc) {
  SrcLoc r = fe_loc(fe, loc);
  CXFile file;
  unsigned line, col, offset;
  clang_getFileLocation(loc, &file, &line, &col, &offset);
  if (r.file || !file) return r;
  CXString name = clang_getFileName(file);
  const char *path = clang_getCString(name);
  HeaderPath *h = header_paths;
  while (h && strcmp(h->path, path) != 0) h = h->next;
  if (!h) {
    h = xcalloc(1, sizeof *h);
    h->path = strdup(path);
    h->next = header_paths;
    header_paths = h;
    size_t size = 0;
    const char *buf = clang_getFileContents(fe->tu, file, &size);
    if (buf) diag_add_file(h->path, buf, size);
  }
  clang_disposeString(name);
  return (SrcLoc){h->path, line, col, offset};
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

typedef struct Collect {
  enum CXCursorKind kinds[3];
  CXCursor *out;
  int n, max;
} Collect;

static enum CXChildVisitResult collect_kind(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Collect *x = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  bool want = k == x->kinds[0] || k == x->kinds[1] || k == x->kinds[2];
  if (want && x->n < x->max) x->out[x->n++] = c;
  return CXChildVisit_Continue;
}

int fe_kids_of_kind(CXCursor fn, enum CXCursorKind a, enum CXCursorKind b, enum CXCursorKind c, CXCursor *out,
                    int max) {
  Collect x = {{a, b, c}, out, 0, max};
  clang_visitChildren(fn, collect_kind, &x);
  return x.n;
}

typedef struct Matching {
  const Frontend *fe;
  bool (*test)(const Frontend *fe, CXCursor c);
  bool nested;
  CXCursor last;
  int n;
} Matching;

static enum CXChildVisitResult count_matching(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Matching *m = data;
  if (!m->test(m->fe, c)) return CXChildVisit_Recurse;
  m->last = c;
  m->n++;
  return m->nested ? CXChildVisit_Recurse : CXChildVisit_Continue;
}

int fe_count_below(const Frontend *fe, CXCursor root, bool (*test)(const Frontend *fe, CXCursor c), bool nested,
                   CXCursor *last) {
  Matching m = {fe, test, nested, clang_getNullCursor(), 0};
  clang_visitChildren(root, count_matching, &m);
  *last = m.last;
  return m.n;
}

int fe_written_args(CXCursor call) {
  int n = 0;
  for (int i = 0; i < clang_Cursor_getNumArguments(call); i++) {
    CXFile file = NULL;
    clang_getExpansionLocation(clang_getCursorLocation(clang_Cursor_getArgument(call, (unsigned)i)), &file, NULL,
                               NULL, NULL);
    n += file != NULL;
  }
  return n;
}

const char *fe_file_bytes(const Frontend *fe, CXFile f, size_t *len) {
  if (clang_File_isEqual(f, fe->file)) {
    *len = fe->src.len;
    return fe->src.buf;
  }
  *len = 0;
  return clang_getFileContents(fe->tu, f, len);
}

void fe_includes(const Frontend *fe, CXFile f, FeIncludeFn fn, void *data) {
  size_t len = 0;
  const char *buf = fe_file_bytes(fe, f, &len);
  for (size_t at = 0; buf && at < len;) {
    size_t end = at;
    while (end < len && buf[end] != '\n') end++;
    size_t p = at;
    while (p < end && (buf[p] == ' ' || buf[p] == '\t')) p++;
    size_t hash = p;
    if (p < end && buf[p] == '#') {
      p++;
      while (p < end && (buf[p] == ' ' || buf[p] == '\t')) p++;
    }
    bool directive = hash < end && buf[hash] == '#' && end - p >= 7 && strncmp(buf + p, "include", 7) == 0;
    // The parse's own record of the line: its InclusionDirective, and the file it found.
    CXSourceLocation loc = clang_getLocationForOffset(fe->tu, f, (unsigned)p);
    CXCursor c = directive ? clang_getCursor(fe->tu, loc) : clang_getNullCursor();
    CXFile to = clang_getCursorKind(c) == CXCursor_InclusionDirective ? clang_getIncludedFile(c) : NULL;
    if (to) {
      size_t q = p + 7, e = end;
      while (q < end && (buf[q] == ' ' || buf[q] == '\t')) q++;
      while (e > at && buf[e - 1] == '\r') e--;
      FeInclude in = {f, to, (unsigned)at, (unsigned)e, 0, q < end && buf[q] == '"'};
      clang_getFileLocation(loc, NULL, &in.line, NULL, NULL);
      fn(&in, data);
    }
    at = end + 1;
  }
}
