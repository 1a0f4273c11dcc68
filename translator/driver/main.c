// main.c: the coconet command line.
//
// Exit status: 0 ok; 1 the input has errors (diagnostics on stderr, nothing
// written); 2 usage error; 3 internal error (a bug in coconet).
#include "driver/driver.h"
#include "analyze/analyze.h"
#include "codegen/codegen.h"
#include "interp/interp.h"
#include "output/output.h"
#include "transform/transform.h"
#include "common/text.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_INPUT = 1, EXIT_USAGE = 2 };

static const char USAGE[] =
    "usage: coconet [options] FILE.cu [-- CLANG_ARGS...]\n"
    "\n"
    "Translate the regions of a CUDA + NCCL file marked with '#pragma coconet region'\n"
    "(see docs/pragmas.md). A file without '#pragma coconet' is copied unchanged.\n"
    "\n"
    "Output:\n"
    "  -o FILE            write the translated source (or --dump=json) to FILE\n"
    "                     ('-' = stdout, the default)\n"
    "  -i                 rewrite FILE in place (atomic rename; untouched if unchanged)\n"
    "  --diff             print a unified diff instead of the output\n"
    "  --check            parse and analyze, report, write nothing\n"
    "  --dump=json        print the regions, clauses and classified statements as JSON\n"
    "                     (schema: docs/dump-json.md)\n"
    "  --dump=ir          print the extracted and scheduled IR of each region\n"
    "  --emit-dot=FILE    Graphviz picture of each region before and after scheduling\n"
    "  --explain          say which transformations ran and why\n"
    "  --verify[=N]       run each region as written and as scheduled, the user's own\n"
    "                     code, on the host backend for 1..N ranks (default 4) on\n"
    "                     random data, and compare every buffer and host variable;\n"
    "                     exit 1 on a mismatch (builds with coconet-cc, runs mpirun);\n"
    "                     --verify=exec[:N] is the same\n"
    "  --verify=ir[:N]    check each region's schedule on random data for 1..N ranks\n"
    "                     (default 8) with the IR interpreter; exit 1 on a mismatch\n"
    "  -MD -MF FILE       also write a make depfile (the input and its headers);\n"
    "                     needs -o FILE, the depfile's target\n"
    "  --line-directives  emit #line so compiler errors point at the original source\n"
    "\n"
    "Translation:\n"
    "  --target=cuda|host cuda (default): CUDA + NCCL output; host: for the CPU backend\n"
    "  --schedule=none    keep regions as written, unanalyzed (the A/B baseline)\n"
    "  --model=FILE       cost model parameters for schedule(auto) and --explain\n"
    "                     (key = value lines)\n"
    "  -p DIR             read include paths and macros from DIR/compile_commands.json\n"
    "  -- CLANG_ARGS      extra flags for parsing (-I, -D, ...), after all options\n"
    "\n"
    "  --version, --help\n"
    "\n"
    "Exit status: 0 ok, 1 errors in the input (nothing written), 2 usage error,\n"
    "3 internal error (a bug in coconet; please report it).\n"
    "The report options (--check, --dump, --emit-dot, --explain, --verify) write no\n"
    "translation.\n"
    "Environment: CUDA_HOME (else nvcc on PATH, else /usr/local/cuda),\n"
    "COCONET_CACHE (precompiled headers; default ~/.cache/coconet, 'off': none),\n"
    "COCONET_CACHE_KEEP (entries the cache keeps, the last used; default 32),\n"
    "TMPDIR, COCONET_COLOR=0|1; for --verify: COCONET_VERIFY_MPIRUN (default\n"
    "'mpirun --oversubscribe', with --allow-run-as-root as root), COCONET_VERIFY_CC\n"
    "(default: the coconet-cc next to coconet), COCONET_VERIFY_TIMEOUT (seconds a\n"
    "run may take, default 300), COCONET_VERIFY_KEEP=1 (keep the harness in TMPDIR),\n"
    "COCONET_VERIFY_CACHE=DIR (a test run's memo: identical harnesses run once).\n"
    "Translated programs read COCONET_CHECK=clauses (check replicated, shard and\n"
    "scratch at run time).\n";

static _Noreturn void usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "coconet: error: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\ncoconet: try 'coconet --help'\n");
  exit(EXIT_USAGE);
}

enum {
  OPT_DIFF = 256, OPT_CHECK, OPT_TARGET, OPT_DUMP, OPT_DOT, OPT_EXPLAIN, OPT_VERIFY,
  OPT_SCHEDULE, OPT_MODEL, OPT_MD, OPT_MF, OPT_LINES, OPT_VERSION, OPT_HELP,
};

static const struct option LONG_OPTIONS[] = {
    {"diff", no_argument, NULL, OPT_DIFF},
    {"check", no_argument, NULL, OPT_CHECK},
    {"target", required_argument, NULL, OPT_TARGET},
    {"dump", required_argument, NULL, OPT_DUMP},
    {"emit-dot", required_argument, NULL, OPT_DOT},
    {"explain", no_argument, NULL, OPT_EXPLAIN},
    {"verify", optional_argument, NULL, OPT_VERIFY},
    {"schedule", required_argument, NULL, OPT_SCHEDULE},
    {"model", required_argument, NULL, OPT_MODEL},
    {"MD", no_argument, NULL, OPT_MD},
    {"MF", required_argument, NULL, OPT_MF},
    {"line-directives", no_argument, NULL, OPT_LINES},
    {"version", no_argument, NULL, OPT_VERSION},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

// An option getopt did not take: ambiguous (a prefix of several), a value
// missing, or unknown (with the nearest option's name when one is close).
static _Noreturn void bad_option(const char *arg) {
  char name[64];
  const char *p = arg;
  while (*p == '-') p++;
  snprintf(name, sizeof name, "%.*s", (int)strcspn(p, "="), p);
  char prefixed[256] = "";
  int nprefixed = 0, best = 3;
  const char *near = NULL;
  for (const struct option *o = LONG_OPTIONS; o->name; o++) {
    if (strcmp(o->name, name) == 0 && o->has_arg == required_argument)
      usage_error("option '%s' needs a value: write --NAME=VALUE (see 'coconet --help')", arg);
    if (*name && strncmp(o->name, name, strlen(name)) == 0) {
      snprintf(prefixed + strlen(prefixed), sizeof prefixed - strlen(prefixed), "%s--%s", nprefixed ? ", " : "",
               o->name);
      nprefixed++;
    }
    int d = text_distance(name, o->name);
    if (d < best) best = d, near = o->name;
  }
  if (nprefixed > 1) {
    fprintf(stderr, "coconet: error: option '%s' is ambiguous: it could be %s\n", arg, prefixed);
    fprintf(stderr, "coconet: try 'coconet --help'\n");
    exit(EXIT_USAGE);
  }
  if (near) {
    fprintf(stderr, "coconet: error: unknown option '%s'; did you mean '--%s'?\n", arg, near);
    fprintf(stderr, "coconet: try 'coconet --help'\n");
    exit(EXIT_USAGE);
  }
  usage_error("unknown or incomplete option '%s'", arg);
}

static int parse_ranks(const char *s) {
  char *end;
  long n = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || n < 1 || n > 64)
    usage_error("--verify=N and --verify=ir:N need a rank count from 1 to 64, not '%s'", s);
  return (int)n;
}

static void parse_option(Options *o, int c, const char *arg) {
  switch (c) {
  case 'o': o->output = arg; break;
  case 'i': o->in_place = true; break;
  case 'p': o->compdb_dir = arg; break;
  case OPT_DIFF: o->diff = true; break;
  case OPT_CHECK: o->check = true; break;
  case OPT_TARGET:
    if (strcmp(arg, "cuda") == 0) o->target = TARGET_CUDA;
    else if (strcmp(arg, "host") == 0) o->target = TARGET_HOST;
    else usage_error("unknown target '%s' (expected 'cuda' or 'host')", arg);
    break;
  case OPT_DUMP:
    if (strcmp(arg, "json") == 0) o->dump = DUMP_JSON;
    else if (strcmp(arg, "ir") == 0) o->dump = DUMP_IR;
    else usage_error("unknown dump format '%s' (expected 'ir' or 'json')", arg);
    break;
  case OPT_DOT: o->dot_file = arg; break;
  case OPT_EXPLAIN: o->explain = true; break;
  case OPT_VERIFY:
    // --verify[=N] (and its old spelling --verify=exec[:N]) runs the user's code; --verify=ir[:N] interprets.
    if (arg && strcmp(arg, "ir") == 0) o->verify_ranks = 8;
    else if (arg && strncmp(arg, "ir:", 3) == 0) o->verify_ranks = parse_ranks(arg + 3);
    else if (arg && strcmp(arg, "exec") == 0) o->verify_exec = 4;
    else if (arg && strncmp(arg, "exec:", 5) == 0) o->verify_exec = parse_ranks(arg + 5);
    else o->verify_exec = arg ? parse_ranks(arg) : 4;
    break;
  case OPT_SCHEDULE:
    if (strcmp(arg, "none") != 0) usage_error("unknown schedule '%s' (only 'none' is accepted)", arg);
    o->schedule_none = true;
    break;
  case OPT_MODEL: o->model_file = arg; break;
  case OPT_MD: o->make_depfile = true; break;
  case OPT_MF: o->depfile = arg; break;
  case OPT_LINES: o->line_directives = true; break;
  case OPT_VERSION: printf("coconet %s (libclang: ", COCONET_VERSION); {
      CXString v = clang_getClangVersion();
      printf("%s)\n", clang_getCString(v));
      clang_disposeString(v);
    }
    exit(0);
  case OPT_HELP: fputs(USAGE, stdout); exit(0);
  default: usage_error("%s", "invalid option");
  }
}

static Options parse_args(int argc, char **argv) {
  Options o = {0};
  // Everything after `--` is for clang; getopt must not see it.
  int end = argc;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--") == 0) {
      end = i;
      break;
    }
  if (end < argc) {
    o.clang_args = (const char *const *)argv + end + 1;
    o.nclang_args = argc - end - 1;
  }
  int c;
  opterr = 0;
  while ((c = getopt_long_only(end, argv, "o:ip:", LONG_OPTIONS, NULL)) != -1) {
    if (c == '?') bad_option(argv[optind - 1]);
    parse_option(&o, c, optarg);
  }
  if (optind >= end) usage_error("%s", "no input file");
  if (optind + 1 < end && optind > 1 && strcmp(argv[optind - 1], "--verify") == 0 &&
      strspn(argv[optind], "0123456789") == strlen(argv[optind])) {
    fprintf(stderr, "coconet: error: more than one input file ('%s'): '%s' after --verify was taken as a file; "
                    "write --verify=%s\n", argv[optind + 1], argv[optind], argv[optind]);
    fprintf(stderr, "coconet: try 'coconet --help'\n");
    exit(EXIT_USAGE);
  }
  if (optind + 1 < end) usage_error("more than one input file ('%s')", argv[optind + 1]);
  o.input = argv[optind];
  if (o.in_place && o.output) usage_error("%s", "-i and -o cannot be used together");
  if (o.make_depfile && !o.depfile) usage_error("%s", "-MD needs -MF FILE");
  if (o.depfile && !o.make_depfile) usage_error("%s", "-MF FILE needs -MD");
  if (o.make_depfile && (!o.output || strcmp(o.output, "-") == 0))
    usage_error("%s", "-MD needs -o FILE: the translated file is the depfile's target");
  if (o.in_place && o.diff) usage_error("%s", "-i and --diff cannot be used together");
  if (o.output && strcmp(o.output, "-") != 0 && source_same_file(o.output, o.input))
    usage_error("-o '%s' names the input file; use -i to rewrite it in place", o.output);
  return o;
}

// The depfile, as make and ninja read it: ' ', '#', '\\' escaped with a
// backslash and '$' doubled.
static void dep_escaped(FILE *f, const char *p) {
  for (; *p; p++) {
    if (*p == ' ' || *p == '#' || *p == '\\') fputc('\\', f);
    if (*p == '$') fputc('$', f);
    fputc(*p, f);
  }
}

// Prerequisites are named by their real paths.
static void dep_word(FILE *f, const char *path) {
  char real[4096];
  dep_escaped(f, realpath(path, real) ? real : path);
}

typedef struct DepSink {
  FILE *out;
  const char *skip_dir;  // the front end's temporary files are not dependencies
  char **seen;           // headers listed so far (each once)
  size_t nseen, cap;
} DepSink;

static bool dep_seen(DepSink *sink, const char *path) {
  for (size_t i = 0; i < sink->nseen; i++)
    if (strcmp(sink->seen[i], path) == 0) return true;
  if (sink->nseen == sink->cap) {
    sink->cap = sink->cap ? 2 * sink->cap : 64;
    sink->seen = realloc(sink->seen, sink->cap * sizeof *sink->seen);
    if (!sink->seen) COCONET_BUG("out of memory");
  }
  sink->seen[sink->nseen++] = strdup(path);
  return false;
}

static void dep_inclusion(CXFile file, CXSourceLocation *stack, unsigned depth, CXClientData data) {
  (void)stack;
  DepSink *sink = data;
  if (depth == 0) return;  // the main file is written first
  CXString name = clang_getFileName(file);
  const char *path = clang_getCString(name);
  size_t skip = strlen(sink->skip_dir);
  bool temporary = skip && strncmp(path, sink->skip_dir, skip) == 0 && path[skip] == '/';
  if (!temporary && !dep_seen(sink, path)) {
    fputs(" \\\n  ", sink->out);
    dep_word(sink->out, path);
  }
  clang_disposeString(name);
}

// `OUTPUT: INPUT HEADER...` (-MD requires -o FILE: the output is the target).
static int write_depfile(const Options *o, const Frontend *fe) {
  FILE *f = fopen(o->depfile, "w");
  if (!f) {
    fprintf(stderr, "coconet: error: cannot write depfile '%s': %s\n", o->depfile, strerror(errno));
    return -1;
  }
  dep_escaped(f, o->output);  // the target as given: stable from build to build
  fputs(": ", f);
  dep_word(f, o->input);
  DepSink sink = {f, fe && fe->tmpdir ? fe->tmpdir : "", NULL, 0, 0};
  for (int i = 0; fe && i < fe->npch_deps; i++) {
    const char *path = fe->pch_deps[i];
    size_t skip = strlen(sink.skip_dir);
    if ((skip && strncmp(path, sink.skip_dir, skip) == 0 && path[skip] == '/') || dep_seen(&sink, path)) continue;
    fputs(" \\\n  ", f);
    dep_word(f, path);
  }
  if (fe) clang_getInclusions(fe->tu, dep_inclusion, &sink);
  for (size_t i = 0; i < sink.nseen; i++) free(sink.seen[i]);
  free(sink.seen);
  fputc('\n', f);
  return fclose(f) == 0 ? 0 : -1;
}

// --check: one line per region and annotation.
static void report(const Program *prog, const char *path) {
  printf("%s: %d region%s\n", path, prog->nregions, prog->nregions == 1 ? "" : "s");
  for (const Region *r = prog->regions; r; r = r->next) {
    printf("  region %s (%s:%u) in %s:", r->name, path, r->pragma_range.begin.line, r->function);
    for (const Stmt *s = r->stmts; s; s = s->next)
      printf(" %s%s%s", stmt_kind_name(s->kind), s->callee ? ":" : "", s->callee ? s->callee : "");
    for (int i = 0; i < r->ninstances; i++)
      printf("%s%s", i ? "; " : " (read in each instance: ", r->instances[i].label);
    if (r->instances_more) printf("; %d more, which run the region as written", r->instances_more);
    printf("%s\n", r->ninstances ? ")" : "");
  }
  for (const Annotation *a = prog->symmetric; a; a = a->next)
    printf("  symmetric %s (%s:%u)\n", a->target, path, a->pragma_range.begin.line);
  for (const Annotation *a = prog->pointwise; a; a = a->next)
    printf("  pointwise %s (%s:%u)\n", a->target, path, a->pragma_range.begin.line);
}

// Write the result where the options say (nothing for -i when unchanged).
static int emit(const Options *o, const SourceFile *src, const char *buf, size_t len) {
  if (o->diff) return diff_write(stdout, o->input, o->input, src->buf, src->len, buf, len) ? -1 : 0;
  if (o->in_place) {
    if (len == src->len && memcmp(buf, src->buf, len) == 0) return 0;
    return source_write(o->input, buf, len);
  }
  return source_write(o->output, buf, len);
}

// --dump=json goes to -o FILE when given, else to stdout.
static int dump_json_to(const Options *o, const Frontend *fe, const Program *prog) {
  bool to_file = o->output && strcmp(o->output, "-") != 0;
  FILE *f = to_file ? fopen(o->output, "w") : stdout;
  if (!f) {
    fprintf(stderr, "coconet: error: cannot write '%s': %s\n", o->output, strerror(errno));
    return EXIT_INPUT;
  }
  int rc = json_dump(f, fe, prog);
  if (to_file && fclose(f) != 0) rc = -1;
  return rc ? EXIT_INPUT : 0;
}

static int write_empty_dot(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f || fputs("digraph coconet {\n}\n", f) < 0 || fclose(f) != 0) {
    fprintf(stderr, "coconet: error: cannot write '%s': %s\n", path, strerror(errno));
    return EXIT_INPUT;
  }
  return 0;
}

static int pass_through(const Options *o, const SourceFile *src) {
  if (o->make_depfile && write_depfile(o, NULL)) return EXIT_INPUT;
  if (o->dump == DUMP_JSON) {
    Frontend fe = {.src = *src};
    Program none = {0};
    return dump_json_to(o, &fe, &none);
  }
  if (o->check) {
    printf("%s: 0 regions\n", o->input);
    return 0;
  }
  // No regions: the IR views are empty (the picture is an empty graph).
  if (o->dot_file) return write_empty_dot(o->dot_file);
  if (o->dump == DUMP_IR || o->explain || o->verify_ranks || o->verify_exec) return 0;
  if (!o->line_directives) return emit(o, src, src->buf, src->len) ? EXIT_INPUT : 0;
  size_t len;
  char *out = edits_apply(src, NULL, true, &len);
  int status = emit(o, src, out, len) ? EXIT_INPUT : 0;
  free(out);
  return status;
}

// The cost model: the defaults, or --model=FILE over them.
static int load_model(const Options *o, IrCostModel *model) {
  ir_cost_default(model);
  return o->model_file && ir_cost_load(model, o->model_file) ? -1 : 0;
}

// Extract every region and schedule it (--schedule=none: infer layouts only,
// for the views that show them; a translation that only writes the program as
// written neither extracts nor infers: it builds whatever the regions hold).
static int schedule_all(const Options *o, const Frontend *fe, const Program *prog, IrProgram *ir,
                        const IrCostModel *model) {
  bool views = o->check || o->dump != DUMP_NONE || o->dot_file || o->explain || o->verify_ranks || o->verify_exec;
  if (o->schedule_none && !views) return 0;
  int status = extract_program(fe, prog, ir, !o->schedule_none) ? EXIT_INPUT : 0, failed = 0;
  IrSchedOptions opt = {.model = model};
  // Every region is scheduled, so that one run reports the errors of all of them
  // (not after extraction errors: what follows from those would be noise).
  for (IrRegion *r = ir->regions; r && status == 0; r = r->next) {
    if (o->schedule_none ? ir_infer(r) : ir_schedule(r, &opt)) failed = EXIT_INPUT;
  }
  return status ? status : failed;
}

// Whether region r, with the launches its statements have now, extracts and
// schedules without an error (printed nothing: a trial; *why, malloc'd, the
// first error's message when not).
static bool schedules_alone(const Frontend *fe, const Program *prog, const Region *r, const IrCostModel *model,
                            char **why) {
  Region one = *r;
  one.next = NULL;
  Program alone = *prog;
  alone.regions = &one;
  alone.nregions = 1;
  IrProgram *ir = ir_program_new();
  IrSchedOptions opt = {.model = model};
  diag_mute(true);
  bool ok = extract_program(fe, &alone, ir, true) == 0 && ir->regions && ir_schedule(ir->regions, &opt) == 0 &&
            diag_muted_errors() == 0;
  *why = ok || !diag_muted_first() ? NULL : strdup(diag_muted_first());
  diag_mute(false);
  ir_program_free(ir);
  return ok;
}

static bool same_text(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

// Two paths of a launcher launching one kernel alike but for its block.
static bool alike_but_block(const Launch *a, const Launch *b) {
  bool same_def = a->def && b->def ? clang_equalCursors(a->def->cursor, b->def->cursor) : a->def == b->def;
  bool alike = a->when && b->when && same_def && same_text(a->kernel, b->kernel) &&
               same_text(a->template_args, b->template_args) && same_text(a->grid.text, b->grid.text) &&
               same_text(a->shmem.text, b->shmem.text) && same_text(a->stream.text, b->stream.text) &&
               a->nargs == b->nargs && a->block.text && b->block.text;
  for (int i = 0; i < a->nargs && alike; i++) alike = same_text(a->args[i].text, b->args[i].text);
  return alike;
}

// b is the negation of a, as the paths write it: `!(c)` of `(c)` or of `c`.
static bool negates(const char *a, const char *b) {
  size_t n = strlen(a);
  if (b[0] != '!') return false;
  if (strcmp(b + 1, a) == 0 && a[0] == '(' && a[n - 1] == ')') return true;
  return b[1] == '(' && strncmp(b + 2, a, n) == 0 && strcmp(b + 2 + n, ")") == 0;
}

// The chosen launch l (s's first) and another path launching its kernel alike
// but with another block (a launcher that picks only a block size:
// `if (n % 32 != 0) block.x = 1024;`): one schedule for both when the region
// schedules so, its condition either path's, its block the one the path taken
// launches with; the other path is then no longer an alternative.
static void merge_alike(const Frontend *fe, const Program *prog, const Region *r, Stmt *s, const IrCostModel *model) {
  Launch *l = s->launch;
  for (Launch **at = &l->other; *at;) {
    Launch *o = *at;
    if (!alike_but_block(l, o)) {
      at = &o->other;
      continue;
    }
    char *when = l->when, *block = l->block.text, *why = NULL;
    bool pure = l->block.pure;
    // Two paths, one the other's negation: the launch is always made (no condition).
    l->when = o == l->other && !o->other && negates(when, o->when)
                  ? NULL
                  : xasprintf("(%s) || (%s)", when, o->when);
    l->block.text = strcmp(block, o->block.text) ? xasprintf("(%s) ? (%s) : (%s)", when, block, o->block.text)
                                                 : strdup(block);
    l->block.pure = pure && o->block.pure;
    if (schedules_alone(fe, prog, r, model, &why)) {
      free(when);
      free(block);
      *at = o->other;
      o->other = NULL;
      launch_free(o);
    } else {
      free(l->when);
      free(l->block.text);
      l->when = when;
      l->block.text = block;
      l->block.pure = pure;
      at = &o->other;
    }
    free(why);
  }
}

// A launcher that picks its kernel at run time (front.h's Launch.when): the
// schedule is for the first kernel, in the order written, with which the region
// schedules (and for the paths launching it alike but for the block); it runs
// when those paths are taken, the region as written otherwise (extract.c). When
// none does, the first stays, and the region's errors are its.
static void choose_paths(const Options *o, const Frontend *fe, Program *prog, const IrCostModel *model) {
  if (o->schedule_none) return;
  for (Region *r = prog->regions; r; r = r->next) {
    for (int i = 0; i < r->ninstances; i++) choose_paths(o, &r->instances[i].fe, &r->instances[i].prog, model);
    for (Stmt *s = r->stmts; s; s = s->next) {
      if (s->kind != STMT_LAUNCH || !s->launch->other) continue;
      Launch *order[64];
      int n = 0;
      for (Launch *l = s->launch; l && n < 64; l = l->other) order[n++] = l;
      Launch *chosen = NULL;
      for (int i = 0; i < n; i++) {
        stmt_put_first(s, order[i]);
        free(order[i]->why_not);
        bool ok = schedules_alone(fe, prog, r, model, &order[i]->why_not);
        if (ok && !chosen) chosen = order[i];
        else if (ok) order[i]->why_not = strdup("the schedule is for one of its kernels, the first written that it fits");
      }
      for (int i = n - 1; i >= 0; i--) stmt_put_first(s, order[i]);
      if (chosen) {
        stmt_put_first(s, chosen);
        merge_alike(fe, prog, r, s, model);
      }
    }
  }
}

// The IR views the options ask for (--dump=ir, --explain, --emit-dot, --verify=ir)
// of the regions, then of the instances' regions.
static int show_one(const Options *o, const IrRegion *r, const IrCostModel *model, FILE *dot) {
  if (o->dump == DUMP_IR) {
    ir_dump(stdout, r, false);
    if (r->sched) ir_dump(stdout, r, true);
  }
  if (o->explain) {
    ir_explain(stdout, r, model);
    codegen_explain(stdout, r);
  }
  if (dot) ir_emit_dot(dot, r);
  return o->verify_ranks && ir_verify(r, o->verify_ranks, 3, stdout) != 0 ? EXIT_INPUT : 0;
}

static int show_ir(const Options *o, IrProgram *ir, const InstanceRuns *runs, const IrCostModel *model) {
  int status = 0;
  FILE *dot = NULL;
  if (o->dot_file && !(dot = fopen(o->dot_file, "w"))) {
    fprintf(stderr, "coconet: error: cannot write '%s'\n", o->dot_file);
    return EXIT_INPUT;
  }
  for (IrRegion *r = ir->regions; r && status == 0; r = r->next) status = show_one(o, r, model, dot);
  for (int i = 0; i < runs->n && status == 0; i++) {
    const InstanceRun *run = &runs->v[i];
    if (o->explain)
      printf("instance %s: region %s (%s:%u) is in a template, its statements depending on the template's "
             "parameters: read in its instance %s\n", run->fr->name, run->of->name, o->input,
             run->of->pragma_range.begin.line, run->label);
    status = show_one(o, run->ir->regions, model, dot);
  }
  if (dot && fclose(dot) != 0) status = EXIT_INPUT;
  return status;
}

static bool wants_ir(const Options *o) {
  return o->dump == DUMP_IR || o->explain || o->verify_ranks || o->dot_file;
}

// The code of one region (*body: a copy of its block).
static int region_code(const Options *o, const Frontend *fe, const Region *fr, const IrRegion *r, RegionCode *code,
                       char **body) {
  char *indent = rewrite_line_indent(&fe->src, fr->range.begin.offset);
  int rc = codegen_region(fe, fr, r, o->target, indent, code);
  if (rc == 0) *body = strdup(code->body);
  free(indent);
  return rc;
}

// The edits of one region: its pragma commented, its statement replaced by the
// generated block, its kernels inserted before its top-level declaration.
static void region_edits(const Frontend *fe, const Region *fr, const RegionCode *code, Edit **edits) {
  char *pragma = rewrite_pragma_comment(&fe->src, fr->pragma_range);
  edit_add(edits, fr->pragma_range.begin.offset, fr->pragma_range.end.offset, pragma);
  // A region the schedule leaves as written stays as it is (host lowering still applies to it).
  char *original = fe_text(fe, fr->range);
  if (strcmp(original, code->body) != 0) edit_add(edits, fr->range.begin.offset, fr->range.end.offset, code->body);
  free(original);
  if (code->kernels) edit_add(edits, code->kernels_at, code->kernels_at, code->kernels);
  if (code->late) edit_add(edits, code->late_at, code->late_at, code->late);
  free(pragma);
}

// The runtime header the file's generated code needs (NULL: none) and where
// the first code that needs it goes (*before).
static const char *runtime_needed(const RegionCode *codes, int n, bool symmetric, unsigned sym_first,
                                  unsigned *before) {
  const char *header = symmetric ? "coconet_fused.h" : NULL;
  *before = symmetric ? sym_first : UINT_MAX;
  for (int i = 0; i < n; i++) {
    if (!codes[i].runtime) continue;
    if (!header || strcmp(codes[i].runtime, "coconet_fused.h") == 0) header = codes[i].runtime;
    if (codes[i].kernels_at < *before) *before = codes[i].kernels_at;
  }
  return header;
}

// The whole translation in memory: extract, schedule, generate every region
// (--schedule=none: the regions as written), lower for the host backend, and
// apply the edits. Every report option runs it too, so that --check,
// --explain, --verify, --dump and --emit-dot fail exactly where the
// translation fails. *out (malloc'd) is the translated file, bodies[i] (malloc'd)
// what replaces region i of work (prog without the regions read per
// instance, whose runs go to runs).
static int pipeline(const Options *o, const Frontend *fe, const Program *prog, const Program *work, IrProgram *ir,
                    const IrCostModel *model, char **out, size_t *len, char **bodies, InstanceRuns *runs) {
  *out = NULL;
  int status = schedule_all(o, fe, work, ir, model);
  RegionCode *codes = xcalloc((size_t)prog->nregions, sizeof *codes);
  const Region **of = xcalloc((size_t)prog->nregions, sizeof *of);
  int n = 0;
  const Region *fr = work->regions;
  for (const IrRegion *r = ir->regions; r && fr && status == 0 && !o->schedule_none; r = r->next, fr = fr->next)
    if (region_code(o, fe, fr, r, &codes[n], &bodies[n]) == 0) of[n++] = fr;
    else status = EXIT_INPUT, region_code_free(&codes[n]);
  for (fr = prog->regions; fr && status == 0 && !o->schedule_none; fr = fr->next) {
    if (!fr->ninstances) continue;
    if (instances_code(o, fe, fr, model, &codes[n], runs) == 0) of[n++] = fr;
    else status = EXIT_INPUT, region_code_free(&codes[n]);
  }
  for (fr = prog->regions; fr && !o->schedule_none; fr = fr->next)
    if (fr->instance_why) {
      diag_error(&fr->pragma_range.begin, "region '%s' is in a template and its statements depend on the "
                 "template's parameters, so coconet reads it in each instance this file makes, and it cannot: %s",
                 fr->name, fr->instance_why);
      status = EXIT_INPUT;
    }
  Edit *edits = NULL, *sym = NULL;
  unsigned sym_first = 0, before;
  if (status == 0 && !o->schedule_none && symmetric_edits(fe, prog, &sym, &sym_first)) status = EXIT_INPUT;
  const char *header = runtime_needed(codes, n, prog->symmetric && !o->schedule_none, sym_first, &before);
  // The runtime's #include first: it goes before what is inserted at the same place.
  if (status == 0 && header) rewrite_runtime_include(fe, &edits, header, before);
  for (int i = 0; i < n; i++) {
    if (status == 0) region_edits(fe, of[i], &codes[i], &edits);
    region_code_free(&codes[i]);
  }
  free(codes);
  free(of);
  edits_append(&edits, sym);
  // Host lowering comes last: it leaves alone what the region edits replace.
  if (status == 0 && o->target == TARGET_HOST && host_lower(fe, &edits)) status = EXIT_INPUT;
  if (status == 0 && diag_error_count() == 0) *out = edits_apply(&fe->src, edits, o->line_directives, len);
  else status = EXIT_INPUT;
  edits_free(edits);
  return status;
}

// The regions --verify runs: work's (bodies[i] the code of its region i), then the instances'.
static VerifyItem *verify_items(const Frontend *fe, const Program *work, const IrProgram *ir, char **bodies,
                                const InstanceRuns *runs, int *n) {
  VerifyItem *v = xcalloc((size_t)work->nregions + (size_t)runs->n + 1, sizeof *v);
  *n = 0;
  const Region *fr = work->regions;
  for (const IrRegion *r = ir->regions; r && fr; r = r->next, fr = fr->next, ++*n)
    v[*n] = (VerifyItem){fe, fr, r, bodies[*n]};
  for (int i = 0; i < runs->n; i++) v[(*n)++] = (VerifyItem){runs->v[i].fe, runs->v[i].fr, runs->v[i].ir->regions,
                                                             runs->v[i].body};
  return v;
}

static int translate(const Options *o, SourceFile src) {
  Frontend fe;
  if (frontend_parse(o, src, &fe)) {
    frontend_dispose(&fe);
    return EXIT_INPUT;
  }
  Program prog;
  IrCostModel model;
  int status = directives_collect(&fe, &prog) ? EXIT_INPUT : 0;
  if (status == 0) instantiate_program(&fe, &prog);
  if (status == 0 && !o->schedule_none) instance_regions(&fe, &prog);
  if (status == 0 && load_model(o, &model)) status = EXIT_INPUT;
  if (status == 0) choose_paths(o, &fe, &prog, &model);
  IrProgram *ir = ir_program_new();
  char *out = NULL;
  size_t len = 0;
  // --verify runs the translation for the host backend whatever the target.
  Options eff = *o;
  if (o->verify_exec) eff.target = TARGET_HOST;
  Program work = instances_work(&prog);
  int ninstances = 0;
  for (const Region *r = prog.regions; r; r = r->next) ninstances += r->ninstances;
  InstanceRuns runs = {xcalloc((size_t)ninstances + 1, sizeof *runs.v), 0};
  char **bodies = xcalloc((size_t)prog.nregions + 1, sizeof *bodies);
  if (status == 0) status = pipeline(&eff, &fe, &prog, &work, ir, &model, &out, &len, bodies, &runs);
  if (status == 0 && o->make_depfile && write_depfile(o, &fe)) status = EXIT_INPUT;
  if (status == 0) {
    if (o->dump == DUMP_JSON) {
      status = dump_json_to(o, &fe, &prog);
    } else if (wants_ir(o)) {
      status = show_ir(o, ir, &runs, &model);
    } else if (o->verify_exec) {
      int n;
      VerifyItem *items = verify_items(&fe, &work, ir, bodies, &runs, &n);
      status = verify_exec(o, &fe, items, n, out) ? EXIT_INPUT : 0;
      free(items);
    } else if (o->check) {
      report(&prog, o->input);
    } else {
      status = emit(o, &fe.src, out, len) ? EXIT_INPUT : 0;
    }
  }
  for (int i = 0; i < prog.nregions; i++) free(bodies[i]);
  free(bodies);
  free(out);
  instances_runs_free(&runs);
  instances_work_free(&work);
  ir_program_free(ir);
  program_free(&prog);
  frontend_dispose(&fe);
  return status;
}

// A file coconet wrote is refused: translating it again would double its code.
static bool already_translated(const Options *o, const SourceFile *src) {
  long at = rewrite_find_translated(src->buf, src->len);
  if (at < 0) return false;
  SrcLoc loc = source_loc(src, (unsigned)at);
  diag_error(&loc, "'%s' is already translated by coconet (this is code it generated); translate the "
                   "original source instead", o->input);
  return true;
}

int main(int argc, char **argv) {
  Options o = parse_args(argc, argv);
  SourceFile src;
  if (source_read(o.input, &src)) return EXIT_INPUT;
  diag_add_file(src.path, src.buf, src.len);
  int status;
  if (already_translated(&o, &src)) status = EXIT_INPUT;
  else if (source_needs_translation(src.buf, src.len) || o.target == TARGET_HOST) status = translate(&o, src);
  else status = pass_through(&o, &src);
  if (status == 0 && diag_error_count()) status = EXIT_INPUT;
  diag_reset();
  source_free(&src);
  return status;
}
