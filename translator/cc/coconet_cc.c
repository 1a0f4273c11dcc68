// coconet_cc.c: coconet-cc, a drop-in for nvcc that translates first.
//
//   coconet-cc [--target=cuda|host] [--coconet-flags=...] [--keep=DIR] [nvcc flags] FILE.cu... [-o OUT]
//   coconet-cc [coconet-cc options] /path/to/nvcc [nvcc flags] FILE.cu...
//     (CMake's CMAKE_CUDA_COMPILER_LAUNCHER: nvcc comes first, before its flags)
//
// Each .cu input goes through `coconet --line-directives` (with the command
// line's -I/-D/-U/-isystem/-include flags for parsing) into a temporary
// directory; then the compiler runs on the translated files in place of the
// originals: nvcc with the user's flags (cuda), or the system C++ compiler
// with the host runtime's flags (host), nvcc-only flags mapped or dropped.
// coconet is found next to this program; runtime/include (coconet.h) and the
// host runtime in the source tree when this program runs from its build
// tree, else under PREFIX (this program in PREFIX/bin): PREFIX/include,
// PREFIX/include/coconet/host and PREFIX/lib/libcoconet_host.a.
//
// Built with (from translator/cc/cc.mk):
//   COCONET_CC_ROOT         the source tree, relative to the build's bin directory
//   COCONET_CC_HOST_CXX     the C++ compiler the host runtime was built with
//   COCONET_CC_HOST_CXXFLAGS, COCONET_CC_HOST_LDLIBS   runtime/host/host.mk's flags
//   COCONET_CC_HOST_INCLUDE, COCONET_CC_HOST_LIB       the paths inside those flags
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_NOT_RUN = 127 };

static const char USAGE[] =
    "usage: coconet-cc [--target=cuda|host] [--coconet-flags=FLAGS] [--keep=DIR] [nvcc flags] FILE... [-o OUT]\n"
    "\n"
    "A drop-in for nvcc: each .cu input is translated by coconet (its '#pragma coconet'\n"
    "regions scheduled), then compiled as nvcc would compile it.\n"
    "\n"
    "  --target=cuda        (default) compile the translated files with nvcc and the\n"
    "                       flags given; coconet.h is on the include path\n"
    "  --target=host        translate with 'coconet --target=host' and build for the CPU\n"
    "                       backend with the system C++ compiler, the host runtime and\n"
    "                       MPI; run the program with mpirun -np N\n"
    "  --coconet-flags=F    extra coconet options, separated by spaces (repeatable),\n"
    "                       e.g. --coconet-flags='--schedule=none'\n"
    "  --keep=DIR           write the translated files to DIR and keep them\n"
    "  --coconet-verbose    print each command before running it\n"
    "  --print-host-libs    print what a --target=host program links (the host runtime, MPI,\n"
    "                       BLAS) and exit: for a CMake link step coconet-cc does not run\n"
    "  --help, --version    this text; the version\n"
    "\n"
    "Everything else is nvcc's: -I/-D/-U/-isystem/-include also go to coconet for parsing;\n"
    "non-.cu inputs (.o, .c, .cpp, -l) are passed through. For --target=host: -Xcompiler X\n"
    "passes X, -Xlinker X becomes -Wl,X, -ccbin names the compiler, -dc means -c, the\n"
    "NCCL/cuBLAS/CUDA runtime libraries are served by the host runtime, and GPU-only flags\n"
    "(-arch, -gencode, -rdc, -lineinfo, -G, --expt-*, -Xptxas, ...) are ignored with one\n"
    "warning.\n"
    "\n"
    "An argument naming nvcc (.../nvcc) before any nvcc flag is the nvcc to run: CMake's\n"
    "CMAKE_CUDA_COMPILER_LAUNCHER=coconet-cc calls it that way.\n"
    "\n"
    "Environment: NVCC (else CUDA_HOME/bin/nvcc, else nvcc on PATH); CXX for --target=host;\n"
    "TMPDIR for the temporary directory.\n"
    "Exit status: coconet's or the compiler's when one fails (1: errors in the input),\n"
    "2 usage error, 127 a program could not be run.\n";

static _Noreturn void out_of_memory(void) {
  fputs("coconet-cc: error: out of memory\n", stderr);
  exit(EXIT_NOT_RUN);
}

static char *xstrdup(const char *s) {
  char *d = strdup(s);
  if (!d) out_of_memory();
  return d;
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s;
  int n = vasprintf(&s, fmt, ap);
  va_end(ap);
  if (n < 0) out_of_memory();
  return s;
}

static _Noreturn void usage_error(const char *fmt, const char *arg) {
  fputs("coconet-cc: error: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\ncoconet-cc: try 'coconet-cc --help'\n", stderr);
  exit(EXIT_USAGE);
}

//
// Argument vectors
//

typedef struct Argv {
  char **v;  // NULL-terminated; the strings are owned
  int n, cap;
} Argv;

static void av_add(Argv *a, const char *s) {
  if (a->n + 2 > a->cap) {
    a->cap = a->cap ? 2 * a->cap : 32;
    a->v = realloc(a->v, (size_t)a->cap * sizeof *a->v);
    if (!a->v) out_of_memory();
  }
  a->v[a->n++] = xstrdup(s);
  a->v[a->n] = NULL;
}

static void av_take(Argv *a, char *s) {
  av_add(a, s);
  free(s);
}

// Words separated by spaces and tabs.
static void av_split(Argv *a, const char *s, char sep) {
  while (*s) {
    while (*s == sep || (sep == ' ' && *s == '\t')) s++;
    size_t n = 0;
    while (s[n] && s[n] != sep && !(sep == ' ' && s[n] == '\t')) n++;
    if (n) av_take(a, xasprintf("%.*s", (int)n, s));
    s += n;
  }
}

static void av_free(Argv *a) {
  for (int i = 0; i < a->n; i++) free(a->v[i]);
  free(a->v);
  a->v = NULL;
  a->n = a->cap = 0;
}

//
// The command line
//

// One argument of the nvcc command line: an option with its value, or an input.
typedef enum { ARG_OPTION, ARG_CUDA_INPUT, ARG_INPUT } ArgKind;

typedef struct Arg {
  ArgKind kind;
  const char *words[2];  // as written (one word, or an option and its value)
  int nwords;
  char *name;            // the option (long names of LONG_NAMES made short) or the input path
  const char *value;     // the option's value, or NULL
  char *translated;      // for .cu inputs: the translated file
  bool from_file;        // read from an --options-file (nvcc reads the file itself)
} Arg;

typedef struct Command {
  bool host;            // --target=host
  bool verbose;         // --coconet-verbose
  bool print_libs;      // --print-host-libs
  const char *keep;     // --keep=DIR
  const char *nvcc;     // a first argument naming nvcc (a CMake compiler launcher's call)
  Argv coconet_flags;   // --coconet-flags
  Argv file_words;      // the words of --options-file files (Arg.words point here)
  Arg *args;
  int nargs, cap;
} Command;

// nvcc options whose value may be the next word.
static const char *const VALUE_OPTIONS[] = {
    "-o", "--output-file", "-I", "--include-path", "-D", "--define-macro", "-U", "--undefine-macro", "-L",
    "--library-path", "-l", "--library", "-isystem", "--system-include", "-include", "--pre-include", "-Xcompiler",
    "--compiler-options", "-Xlinker", "--linker-options", "-Xptxas", "--ptxas-options", "-Xnvlink",
    "--nvlink-options", "-Xfatbin", "--fatbin-options", "-Xarchive", "--archive-options", "-arch",
    "--gpu-architecture", "-code", "--gpu-code", "-gencode", "--generate-code", "-ccbin", "--compiler-bindir", "-x",
    "--x", "-MF", "--dependency-output", "-MT", "--dependency-target-name", "-odir", "--output-directory",
    "-maxrregcount", "--maxrregcount", "-rdc", "--relocatable-device-code", "-Werror", "--Werror", "-diag-suppress",
    "--diag-suppress", "-default-stream", "--default-stream", "-cudart", "--cudart", "-t", "--threads", "-std",
    "--std", "-optf", "--options-file", NULL,
};

// Options that could be read as a joined -l, -I, -D, ... value.
static const char *const PLAIN_OPTIONS[] = {"-lineinfo", "-link", "-lib", "-lto", "-lmem", NULL};

// nvcc's long spellings of the options this program looks at.
static const char *const LONG_NAMES[][2] = {
    {"--output-file", "-o"},      {"--include-path", "-I"},      {"--define-macro", "-D"},
    {"--undefine-macro", "-U"},   {"--library-path", "-L"},      {"--library", "-l"},
    {"--system-include", "-isystem"}, {"--pre-include", "-include"}, {"--compiler-options", "-Xcompiler"},
    {"--linker-options", "-Xlinker"}, {"--compiler-bindir", "-ccbin"}, {"--dependency-output", "-MF"},
    {"--std", "-std"},            {"--Werror", "-Werror"},       {"--compile", "-c"},
    {"--device-c", "-dc"},        {"--preprocess", "-E"},        {"--generate-dependencies", "-M"},
    {"--options-file", "-optf"},
};

static char *short_name(const char *name, size_t len) {
  for (size_t i = 0; i < sizeof LONG_NAMES / sizeof *LONG_NAMES; i++)
    if (strlen(LONG_NAMES[i][0]) == len && strncmp(name, LONG_NAMES[i][0], len) == 0) return xstrdup(LONG_NAMES[i][1]);
  return xasprintf("%.*s", (int)len, name);
}

static const char *const JOINED_PREFIXES[] = {"-isystem", "-include", "-I", "-D", "-U", "-L", "-l", NULL};

static bool in_list(const char *s, const char *const *list) {
  for (; *list; list++)
    if (strcmp(s, *list) == 0) return true;
  return false;
}

static bool has_suffix(const char *s, const char *x) {
  size_t n = strlen(s), m = strlen(x);
  return n >= m && strcmp(s + n - m, x) == 0;
}

// Split argv[*i] (and maybe the next word) into an Arg.
static Arg parse_arg(int argc, char **argv, int *i) {
  const char *w = argv[*i];
  Arg a = {.words = {w}, .nwords = 1};
  if (w[0] != '-' || w[1] == '\0') {
    a.kind = has_suffix(w, ".cu") ? ARG_CUDA_INPUT : ARG_INPUT;
    a.name = xstrdup(w);
    return a;
  }
  a.kind = ARG_OPTION;
  if (!in_list(w, PLAIN_OPTIONS))
    for (const char *const *p = JOINED_PREFIXES; *p; p++) {
      size_t n = strlen(*p);
      if (strncmp(w, *p, n) == 0 && w[n] && w[n] != '=' && !in_list(w, VALUE_OPTIONS)) {
        a.name = xstrdup(*p);
        a.value = w + n;
        return a;
      }
    }
  const char *eq = strchr(w, '=');
  if (eq) {
    a.name = short_name(w, (size_t)(eq - w));
    a.value = eq + 1;
    return a;
  }
  a.name = short_name(w, strlen(w));
  if (in_list(w, VALUE_OPTIONS)) {
    if (*i + 1 >= argc) usage_error("option '%s' needs a value", w);
    a.value = argv[++*i];
    a.words[1] = a.value;
    a.nwords = 2;
  }
  return a;
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static bool named(const Arg *a, const char *name) { return a->kind == ARG_OPTION && strcmp(a->name, name) == 0; }

static void add_arg(Command *c, Arg a) {
  if (c->nargs == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 32;
    c->args = realloc(c->args, (size_t)c->cap * sizeof *c->args);
    if (!c->args) out_of_memory();
  }
  c->args[c->nargs++] = a;
}

// nvcc's --options-file FILE: more options, separated by white space, with
// double quotes around words that hold spaces. They are read here for
// coconet (CMake passes include directories this way) and for the host
// compiler; nvcc gets the --options-file itself.
static void read_options_file(Command *c, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "coconet-cc: error: cannot read options file '%s': %s\n", path, strerror(errno));
    exit(EXIT_USAGE);
  }
  int first = c->file_words.n;
  char *word = NULL;
  size_t len = 0;
  FILE *w = NULL;
  bool quoted = false;
  for (int ch; (ch = fgetc(f)) != EOF;) {
    if (!quoted && (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')) {
      if (w) {
        fclose(w);
        av_add(&c->file_words, word);
        free(word);
        w = NULL;
      }
      continue;
    }
    if (!w && !(w = open_memstream(&word, &len))) out_of_memory();
    if (ch == '"') quoted = !quoted;
    else fputc(ch, w);
  }
  if (w) {
    fclose(w);
    av_add(&c->file_words, word);
    free(word);
  }
  bool bad = ferror(f);
  fclose(f);
  if (bad) {
    fprintf(stderr, "coconet-cc: error: cannot read options file '%s'\n", path);
    exit(EXIT_USAGE);
  }
  int n = c->file_words.n - first;
  char **words = c->file_words.v + first;
  for (int i = 0; i < n; i++) {
    Arg a = parse_arg(n, words, &i);
    a.from_file = true;
    add_arg(c, a);
  }
}

// Report options make coconet write no translation: nothing to compile.
static void refuse_report_flags(const Argv *flags) {
  static const char *const report[] = {"--check", "--dump", "--emit-dot", "--explain", "--verify", "--diff", "-i", "-o"};
  for (int i = 0; i < flags->n; i++)
    for (size_t k = 0; k < sizeof report / sizeof *report; k++) {
      size_t n = strlen(report[k]);
      if (strncmp(flags->v[i], report[k], n) == 0 && (flags->v[i][n] == '\0' || flags->v[i][n] == '='))
        usage_error("--coconet-flags=%s: this option writes no translation to compile; run coconet itself for it",
                    flags->v[i]);
    }
}

static Command parse_command(int argc, char **argv) {
  Command c = {0};
  for (int i = 1; i < argc; i++) {
    const char *w = argv[i];
    if (strncmp(w, "--target=", 9) == 0) {
      if (strcmp(w + 9, "host") == 0) c.host = true;
      else if (strcmp(w + 9, "cuda") == 0) c.host = false;
      else usage_error("unknown target '%s' (expected 'cuda' or 'host')", w + 9);
    } else if (strncmp(w, "--coconet-flags=", 16) == 0) {
      av_split(&c.coconet_flags, w + 16, ' ');
      refuse_report_flags(&c.coconet_flags);
    } else if (strncmp(w, "--keep=", 7) == 0) {
      if (!w[7]) usage_error("%s", "--keep=DIR needs a directory");
      c.keep = w + 7;
    } else if (strcmp(w, "--coconet-verbose") == 0) {
      c.verbose = true;
    } else if (strcmp(w, "--print-host-libs") == 0) {
      c.print_libs = true;
    } else if (strcmp(w, "--help") == 0) {
      fputs(USAGE, stdout);
      exit(0);
    } else if (strcmp(w, "--version") == 0) {
      printf("coconet-cc %s (runs coconet, then nvcc or, for --target=host, the C++ compiler)\n", COCONET_CC_VERSION);
      exit(0);
    } else if (c.nargs == 0 && !c.nvcc && strcmp(base_name(w), "nvcc") == 0) {
      c.nvcc = w;
    } else {
      Arg a = parse_arg(argc, argv, &i);
      add_arg(&c, a);
      if (named(&a, "-optf") && a.value) read_options_file(&c, a.value);
    }
  }
  bool any = false;
  for (int i = 0; i < c.nargs; i++) {
    any |= c.args[i].kind != ARG_OPTION;
    // -o into a directory that does not exist: said here, not by the linker at the end.
    const char *out = named(&c.args[i], "-o") ? c.args[i].value : NULL;
    const char *slash = out ? strrchr(out, '/') : NULL;
    if (slash && slash != out) {
      char *dir = xasprintf("%.*s", (int)(slash - out), out);
      bool exists = access(dir, W_OK) == 0;
      free(dir);
      if (!exists) usage_error("-o '%s': its directory does not exist or is not writable", out);
    }
  }
  if (!any && !c.print_libs) usage_error("%s", "no input files");
  return c;
}

static void command_free(Command *c) {
  for (int i = 0; i < c->nargs; i++) {
    free(c->args[i].name);
    free(c->args[i].translated);
  }
  free(c->args);
  av_free(&c->coconet_flags);
  av_free(&c->file_words);
}

//
// Running programs
//

static void print_command(char *const *argv) {
  fputs("coconet-cc:", stderr);
  for (; *argv; argv++) {
    bool plain = **argv && strspn(*argv, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                         "-_=+/.,:@%") == strlen(*argv);
    if (plain) fprintf(stderr, " %s", *argv);
    else {
      fputs(" '", stderr);
      for (const char *p = *argv; *p; p++) {
        if (*p == '\'') fputs("'\\''", stderr);
        else fputc(*p, stderr);
      }
      fputc('\'', stderr);
    }
  }
  fputc('\n', stderr);
}

// Run argv (argv[0] looked up on PATH) and wait; returns its exit status
// (128 + N for a signal), or EXIT_NOT_RUN when it could not be started.
static int run(const Command *c, char *const *argv) {
  if (c->verbose) print_command(argv);
  pid_t pid;
  int err = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
  if (err) {
    fprintf(stderr, "coconet-cc: error: cannot run '%s': %s\n", argv[0], strerror(err));
    return EXIT_NOT_RUN;
  }
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      fprintf(stderr, "coconet-cc: error: waiting for '%s': %s\n", argv[0], strerror(errno));
      return EXIT_NOT_RUN;
    }
  }
  if (WIFSIGNALED(status)) {
    fprintf(stderr, "coconet-cc: error: '%s' was killed by signal %d\n", argv[0], WTERMSIG(status));
    return 128 + WTERMSIG(status);
  }
  return WEXITSTATUS(status);
}

//
// Where things are
//

typedef struct Paths {
  char *coconet;       // the translator, next to this program
  char *include;       // runtime/include (coconet.h)
  char *host_include;  // the host runtime's headers
  char *host_lib;      // libcoconet_host.a
} Paths;

static bool is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int find_paths(Paths *p) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n < 0) {
    fprintf(stderr, "coconet-cc: error: cannot find this program's directory (/proc/self/exe): %s\n",
            strerror(errno));
    return -1;
  }
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  *slash = '\0';  // the bin directory
  p->coconet = xasprintf("%s/coconet", exe);
  char *root = xasprintf("%s/%s", exe, COCONET_CC_ROOT);
  char *marker = xasprintf("%s/translator/translator.h", root);
  if (is_file(marker)) {  // the build tree
    p->include = xasprintf("%s/runtime/include", root);
    p->host_include = xasprintf("%s/runtime/host/include", root);
    p->host_lib = xasprintf("%s/../lib/libcoconet_host.a", exe);
  } else {  // installed: PREFIX/bin/coconet-cc
    p->include = xasprintf("%s/../include", exe);
    p->host_include = xasprintf("%s/../include/coconet/host", exe);
    p->host_lib = xasprintf("%s/../lib/libcoconet_host.a", exe);
  }
  free(marker);
  free(root);
  return 0;
}

static void paths_free(Paths *p) {
  free(p->coconet);
  free(p->include);
  free(p->host_include);
  free(p->host_lib);
}

//
// Translation
//

// The directory of a path ("." for none), for the original's quoted includes.
static char *dir_name(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return xstrdup(".");
  if (slash == path) return xstrdup("/");
  return xasprintf("%.*s", (int)(slash - path), path);
}

// The flags coconet needs to parse as the compiler will: -I, -D, -U, -isystem, -include.
static void parse_flags(const Command *c, Argv *out) {
  for (int i = 0; i < c->nargs; i++) {
    const Arg *a = &c->args[i];
    if (a->value && (named(a, "-I") || named(a, "-D") || named(a, "-U") || named(a, "-isystem") ||
                     named(a, "-include"))) {
      av_add(out, a->name);
      av_add(out, a->value);
    }
  }
}

static bool same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// Translate every .cu input into dir. Returns 0 or the failing exit status.
static int translate_all(Command *c, const Paths *p, const char *dir) {
  Argv clang = {0};
  parse_flags(c, &clang);
  int status = 0;
  for (int i = 0; i < c->nargs && status == 0; i++) {
    Arg *a = &c->args[i];
    if (a->kind != ARG_CUDA_INPUT) continue;
    bool clash = false;  // two inputs with one name: number the later ones
    for (int j = 0; j < i; j++)
      clash |= c->args[j].kind == ARG_CUDA_INPUT && strcmp(base_name(c->args[j].name), base_name(a->name)) == 0;
    a->translated = clash ? xasprintf("%s/%d-%s", dir, i, base_name(a->name))
                          : xasprintf("%s/%s", dir, base_name(a->name));
    if (same_file(a->name, a->translated)) {
      fprintf(stderr, "coconet-cc: error: --keep=%s would overwrite the input '%s'\n", c->keep, a->name);
      free(a->translated);
      a->translated = NULL;
      status = EXIT_USAGE;
      break;
    }
    Argv cmd = {0};
    av_add(&cmd, p->coconet);
    for (int j = 0; j < c->coconet_flags.n; j++) av_add(&cmd, c->coconet_flags.v[j]);
    av_add(&cmd, "--line-directives");
    if (c->host) av_add(&cmd, "--target=host");
    av_add(&cmd, a->name);
    av_add(&cmd, "-o");
    av_add(&cmd, a->translated);
    av_add(&cmd, "--");
    for (int j = 0; j < clang.n; j++) av_add(&cmd, clang.v[j]);
    status = run(c, cmd.v);
    av_free(&cmd);
    if (status) {
      free(a->translated);
      a->translated = NULL;
    }
  }
  av_free(&clang);
  return status;
}

// -I for the directory of each translated input: its quoted includes are
// looked up beside the original.
static bool av_has(const Argv *a, const char *s) {
  for (int i = 0; i < a->n; i++)
    if (strcmp(a->v[i], s) == 0) return true;
  return false;
}

static void original_dirs(const Command *c, Argv *out, const char *flag) {
  Argv seen = {0};
  for (int i = 0; i < c->nargs; i++) {
    if (c->args[i].kind != ARG_CUDA_INPUT) continue;
    char *dir = dir_name(c->args[i].name);
    if (!av_has(&seen, dir)) {
      av_add(&seen, dir);
      av_add(out, flag);
      av_add(out, dir);
    }
    free(dir);
  }
  av_free(&seen);
}

//
// Compiling: nvcc
//

// $NVCC names the real nvcc, unless it is this program (`make NVCC=coconet-cc`
// exports NVCC to the commands make runs).
static const char *nvcc_from_env(void) {
  const char *nvcc = getenv("NVCC");
  if (!nvcc || !*nvcc) return NULL;
  char self[PATH_MAX], named[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n < 0) return nvcc;
  self[n] = '\0';
  const char *path = nvcc;
  char found[PATH_MAX];
  if (!strchr(nvcc, '/')) {  // look it up on PATH
    const char *dirs = getenv("PATH");
    path = NULL;
    for (const char *d = dirs; d && *d && !path;) {
      const char *colon = strchr(d, ':');
      size_t len = colon ? (size_t)(colon - d) : strlen(d);
      snprintf(found, sizeof found, "%.*s/%s", (int)len, d, nvcc);
      if (access(found, X_OK) == 0) path = found;
      d = colon ? colon + 1 : d + len;
    }
  }
  return path && realpath(path, named) && strcmp(named, self) == 0 ? NULL : nvcc;
}

static void nvcc_command(const Command *c, const Paths *p, Argv *cmd) {
  const char *nvcc = nvcc_from_env();
  const char *cuda = getenv("CUDA_HOME");
  if (c->nvcc) av_add(cmd, c->nvcc);
  else if (nvcc && *nvcc) av_add(cmd, nvcc);
  else if (cuda && *cuda) av_take(cmd, xasprintf("%s/bin/nvcc", cuda));
  else av_add(cmd, "nvcc");
  av_add(cmd, "-I");
  av_add(cmd, p->include);
  original_dirs(c, cmd, "-I");
  for (int i = 0; i < c->nargs; i++) {
    const Arg *a = &c->args[i];
    if (a->kind == ARG_CUDA_INPUT) av_add(cmd, a->translated);
    else if (!a->from_file)
      for (int j = 0; j < a->nwords; j++) av_add(cmd, a->words[j]);
  }
}

//
// Compiling: the host backend
//

// nvcc options with no meaning on the CPU: dropped, with one warning.
static const char *const GPU_ONLY[] = {
    "-arch", "--gpu-architecture", "-code", "--gpu-code", "-gencode", "--generate-code", "-rdc",
    "--relocatable-device-code", "-lineinfo", "--generate-line-info", "-G", "--device-debug", "-Xptxas",
    "--ptxas-options", "-Xnvlink", "--nvlink-options", "-Xfatbin", "--fatbin-options", "-maxrregcount",
    "--maxrregcount", "--expt-relaxed-constexpr", "-expt-relaxed-constexpr", "--expt-extended-lambda",
    "-expt-extended-lambda", "--extended-lambda", "-extended-lambda", "-use_fast_math", "--use_fast_math",
    "-cudart", "--cudart", "-default-stream", "--default-stream", "-t", "--threads", "-diag-suppress",
    "--diag-suppress", "-Wno-deprecated-gpu-targets", "-x", "--x", "-dlink", "--device-link", "-res-usage",
    "--resource-usage", "-src-in-ptx", "--source-in-ptx", "-ftz", "-prec-div", "-prec-sqrt", "-fmad",
    "-forward-unknown-to-host-compiler", "--forward-unknown-to-host-compiler", "-forward-unknown-to-host-linker",
    "--forward-unknown-to-host-linker", NULL,
};

// Options the C++ compiler takes with their value in the next word.
static const char *const SEPARATE_FOR_CXX[] = {"-o", "-isystem", "-include", "-MF", "-MT", "-MQ", NULL};

// Libraries the host runtime stands in for.
static const char *const SERVED_LIBS[] = {"nccl", "cublas", "cublasLt", "cudart", "cudart_static", "cuda",
                                          "curand", NULL};

// Build-time flags (runtime/host/host.mk), with the runtime's paths put
// where this installation has them.
static void host_flags(Argv *out, const char *flags, const Paths *p) {
  Argv words = {0};
  av_split(&words, flags, ' ');
  for (int i = 0; i < words.n; i++) {
    const char *w = words.v[i];
    if (strcmp(w, "-I" COCONET_CC_HOST_INCLUDE) == 0) av_take(out, xasprintf("-I%s", p->host_include));
    else if (strcmp(w, COCONET_CC_HOST_LIB) == 0) av_add(out, p->host_lib);
    else av_add(out, w);
  }
  av_free(&words);
}

static void host_command(const Command *c, const Paths *p, Argv *cmd) {
  Argv flags = {0}, sources = {0}, others = {0}, libs = {0}, ignored = {0};
  const char *cxx = getenv("CXX");
  const char *compiler = cxx && *cxx ? cxx : COCONET_CC_HOST_CXX;
  bool link = true;
  for (int i = 0; i < c->nargs; i++) {
    const Arg *a = &c->args[i];
    if (a->kind == ARG_CUDA_INPUT) av_add(&sources, a->translated);
    else if (a->kind == ARG_INPUT) av_add(&others, a->name);
    else if (in_list(a->name, GPU_ONLY)) {
      for (int j = 0; j < a->nwords; j++) av_add(&ignored, a->words[j]);
    } else if (named(a, "-optf")) {
      continue;  // its options are among the args
    } else if (named(a, "-Xcompiler")) av_split(&flags, a->value, ',');
    else if (named(a, "-Xlinker")) av_take(&libs, xasprintf("-Wl,%s", a->value));
    else if (named(a, "-ccbin")) compiler = a->value;
    else if (named(a, "-l")) {
      if (!in_list(a->value, SERVED_LIBS)) av_take(&libs, xasprintf("-l%s", a->value));
    } else if (named(a, "-L")) av_take(&libs, xasprintf("-L%s", a->value));
    else if (named(a, "-Werror")) av_add(&flags, "-Werror");
    else if (named(a, "-c") || named(a, "-dc")) {
      av_add(&flags, "-c");
      link = false;
    } else if (a->value && (named(a, "-I") || named(a, "-D") || named(a, "-U")))
      av_take(&flags, xasprintf("%s%s", a->name, a->value));
    else if (a->value && named(a, "-std")) av_take(&flags, xasprintf("-std=%s", a->value));
    else if (a->value && in_list(a->name, SEPARATE_FOR_CXX)) {
      av_add(&flags, a->name);
      av_add(&flags, a->value);
    } else {
      if (named(a, "-E") || named(a, "-M") || named(a, "-MM") || named(a, "-S")) link = false;
      if (!a->value) av_add(&flags, a->name);
      else
        for (int j = 0; j < a->nwords; j++) av_add(&flags, a->words[j]);
    }
  }
  if (ignored.n) {
    fputs("coconet-cc: warning: ignoring flags that mean nothing for --target=host:", stderr);
    for (int i = 0; i < ignored.n; i++) fprintf(stderr, " %s", ignored.v[i]);
    fputc('\n', stderr);
  }
  av_split(cmd, compiler, ' ');
  host_flags(cmd, COCONET_CC_HOST_CXXFLAGS, p);
  av_add(cmd, "-I");
  av_add(cmd, p->include);
  original_dirs(c, cmd, "-iquote");
  for (int i = 0; i < flags.n; i++) av_add(cmd, flags.v[i]);
  for (int i = 0; i < sources.n; i++) av_add(cmd, sources.v[i]);
  av_add(cmd, "-x");
  av_add(cmd, "none");
  for (int i = 0; i < others.n; i++) av_add(cmd, others.v[i]);
  for (int i = 0; i < libs.n; i++) av_add(cmd, libs.v[i]);
  if (link) host_flags(cmd, COCONET_CC_HOST_LDLIBS, p);
  av_free(&flags);
  av_free(&sources);
  av_free(&others);
  av_free(&libs);
  av_free(&ignored);
}

//
// Depfiles
//

// A depfile written by the compiler names the translated files: put the
// originals back, so that make rebuilds when they change.
static int fix_depfile(const Command *c, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;  // the compiler wrote none (-M options absent or different)
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  if (!mem) out_of_memory();
  char chunk[4096];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) fwrite(chunk, 1, got, mem);
  bool bad = ferror(f);
  fclose(f);
  if (fclose(mem) != 0) out_of_memory();
  if (bad) {
    fprintf(stderr, "coconet-cc: error: cannot read depfile '%s'\n", path);
    free(text);
    return EXIT_INPUT;
  }
  FILE *out = fopen(path, "wb");
  if (!out) {
    fprintf(stderr, "coconet-cc: error: cannot rewrite depfile '%s': %s\n", path, strerror(errno));
    free(text);
    return EXIT_INPUT;
  }
  for (const char *s = text; *s;) {
    const Arg *hit = NULL;
    for (int i = 0; i < c->nargs && !hit; i++) {
      const Arg *a = &c->args[i];
      if (a->translated && strncmp(s, a->translated, strlen(a->translated)) == 0) hit = a;
    }
    if (hit) {
      fputs(hit->name, out);
      s += strlen(hit->translated);
    } else fputc(*s++, out);
  }
  free(text);
  if (fclose(out) != 0) {
    fprintf(stderr, "coconet-cc: error: cannot write depfile '%s'\n", path);
    return EXIT_INPUT;
  }
  return 0;
}

static const char *depfile_of(const Command *c) {
  for (int i = 0; i < c->nargs; i++)
    if (named(&c->args[i], "-MF")) return c->args[i].value;
  return NULL;
}

//
// The directory for translated files
//

static char *make_work_dir(const Command *c) {
  if (c->keep) {
    if (mkdir(c->keep, 0777) != 0 && errno != EEXIST) {
      fprintf(stderr, "coconet-cc: error: cannot create '%s': %s\n", c->keep, strerror(errno));
      return NULL;
    }
    return xstrdup(c->keep);
  }
  const char *tmp = getenv("TMPDIR");
  char *dir = xasprintf("%s/coconet-cc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    fprintf(stderr, "coconet-cc: error: cannot create a temporary directory in '%s': %s\n",
            tmp && *tmp ? tmp : "/tmp", strerror(errno));
    free(dir);
    return NULL;
  }
  return dir;
}

static void remove_work_dir(const Command *c, const char *dir) {
  for (int i = 0; i < c->nargs; i++)
    if (c->args[i].translated && unlink(c->args[i].translated) != 0 && errno != ENOENT)
      fprintf(stderr, "coconet-cc: warning: cannot remove '%s': %s\n", c->args[i].translated, strerror(errno));
  if (rmdir(dir) != 0)
    fprintf(stderr, "coconet-cc: warning: cannot remove '%s': %s\n", dir, strerror(errno));
}

int main(int argc, char **argv) {
  Command c = parse_command(argc, argv);
  Paths p = {0};
  if (find_paths(&p)) {
    command_free(&c);
    return EXIT_NOT_RUN;
  }
  if (c.print_libs) {  // the link flags, without the compiler's `-x none`
    Argv libs = {0};
    host_flags(&libs, COCONET_CC_HOST_LDLIBS, &p);
    const char *sep = "";
    for (int i = 0; i < libs.n; i++)
      if (strcmp(libs.v[i], "-x") != 0 && (i == 0 || strcmp(libs.v[i - 1], "-x") != 0)) {
        printf("%s%s", sep, libs.v[i]);
        sep = " ";
      }
    puts("");
    av_free(&libs);
    paths_free(&p);
    command_free(&c);
    return 0;
  }
  char *dir = make_work_dir(&c);
  int status = dir ? translate_all(&c, &p, dir) : EXIT_NOT_RUN;
  if (status == 0) {
    Argv cmd = {0};
    if (c.host) host_command(&c, &p, &cmd);
    else nvcc_command(&c, &p, &cmd);
    status = run(&c, cmd.v);
    av_free(&cmd);
    const char *dep = depfile_of(&c);
    if (status == 0 && dep) status = fix_depfile(&c, dep);
  }
  if (dir && !c.keep) remove_work_dir(&c, dir);
  free(dir);
  paths_free(&p);
  command_free(&c);
  return status;
}
