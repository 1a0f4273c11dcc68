// main.c: the coconet command line.
//
// Exit status: 0 ok; 1 the input has errors (diagnostics on stderr, nothing
// written); 2 usage error; 3 internal error (a bug in coconet).
#include "translator.h"
#include "ir.h"

#include <getopt.h>
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
    "  -o FILE            write the translated source to FILE ('-' = stdout, the default)\n"
    "  -i                 rewrite FILE in place (atomic rename; untouched if unchanged)\n"
    "  --diff             print a unified diff instead of the output\n"
    "  --check            parse and analyze, report, write nothing\n"
    "  --dump=json        print the regions, clauses and classified statements as JSON\n"
    "                     (schema: docs/dump-json.md)\n"
    "  --dump=ir          print the extracted and scheduled IR of each region\n"
    "  --emit-dot=FILE    Graphviz picture of each region before and after scheduling\n"
    "  --explain          say which transformations ran and why\n"
    "  --verify[=N]       check each region's schedule on random data for 1..N ranks\n"
    "                     (default 8) with the IR interpreter; exit 1 on a mismatch\n"
    "  -MD -MF FILE       also write a make depfile (the input and its headers)\n"
    "  --line-directives  emit #line so compiler errors point at the original source\n"
    "\n"
    "Translation:\n"
    "  --target=cuda|host cuda (default): CUDA + NCCL output; host: for the CPU backend\n"
    "  --schedule=none    keep regions as written (the A/B baseline)\n"
    "  --model=FILE       cost model parameters for schedule(auto) (key = value lines)\n"
    "  -p DIR             read include paths and macros from DIR/compile_commands.json\n"
    "  -- CLANG_ARGS      extra flags for parsing (-I, -D, ...), after all options\n"
    "\n"
    "  --version, --help\n"
    "\n"
    "Exit status: 0 ok, 1 errors in the input (nothing written), 2 usage error,\n"
    "3 internal error (a bug in coconet; please report it).\n"
    "Environment: CUDA_HOME (else nvcc on PATH, else /usr/local/cuda), COCONET_COLOR=0|1.\n";

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

static int parse_ranks(const char *s) {
  char *end;
  long n = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || n < 1 || n > 64)
    usage_error("--verify=N needs a rank count from 1 to 64, not '%s'", s);
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
  case OPT_VERIFY: o->verify_ranks = arg ? parse_ranks(arg) : 8; break;
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
    if (c == '?') usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
    parse_option(&o, c, optarg);
  }
  if (optind >= end) usage_error("%s", "no input file");
  if (optind + 1 < end) usage_error("more than one input file ('%s')", argv[optind + 1]);
  o.input = argv[optind];
  if (o.in_place && o.output) usage_error("%s", "-i and -o cannot be used together");
  if (o.make_depfile && !o.depfile) usage_error("%s", "-MD needs -MF FILE");
  if (o.in_place && o.diff) usage_error("%s", "-i and --diff cannot be used together");
  return o;
}

// The depfile: `TARGET: INPUT HEADER...`, as make and ninja read it.
static void dep_word(FILE *f, const char *path) {
  char real[4096];
  const char *p = realpath(path, real) ? real : path;
  for (; *p; p++) {
    if (*p == ' ' || *p == '#' || *p == '\\') fputc('\\', f);
    if (*p == '$') fputc('$', f);
    fputc(*p, f);
  }
}

typedef struct DepSink {
  FILE *out;
  const char *skip_dir;  // the front end's temporary files are not dependencies
} DepSink;

static void dep_inclusion(CXFile file, CXSourceLocation *stack, unsigned depth, CXClientData data) {
  (void)stack;
  DepSink *sink = data;
  if (depth == 0) return;  // the main file is written first
  CXString name = clang_getFileName(file);
  const char *path = clang_getCString(name);
  size_t skip = strlen(sink->skip_dir);
  if (!(skip && strncmp(path, sink->skip_dir, skip) == 0 && path[skip] == '/')) {
    fputs(" \\\n  ", sink->out);
    dep_word(sink->out, path);
  }
  clang_disposeString(name);
}

static int write_depfile(const Options *o, const Frontend *fe) {
  FILE *f = fopen(o->depfile, "w");
  if (!f) {
    fprintf(stderr, "coconet: error: cannot write depfile '%s'\n", o->depfile);
    return -1;
  }
  const char *target = o->in_place ? o->input : (o->output && strcmp(o->output, "-") ? o->output : o->input);
  fputs(target, f);
  fputs(": ", f);
  dep_word(f, o->input);
  DepSink sink = {f, fe && fe->tmpdir ? fe->tmpdir : ""};
  if (fe) clang_getInclusions(fe->tu, dep_inclusion, &sink);
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
    putchar('\n');
  }
  for (const Annotation *a = prog->symmetric; a; a = a->next)
    printf("  symmetric %s (%s:%u)\n", a->target, path, a->pragma_range.begin.line);
  for (const Annotation *a = prog->pointwise; a; a = a->next)
    printf("  pointwise %s (%s:%u)\n", a->target, path, a->pragma_range.begin.line);
}

// Write the result where the options say (nothing for -i when unchanged).
static int emit(const Options *o, const SourceFile *src, const char *buf, size_t len) {
  if (o->diff) return 0;  // unchanged text: an empty diff
  if (o->in_place) {
    if (len == src->len && memcmp(buf, src->buf, len) == 0) return 0;
    return source_write(o->input, buf, len);
  }
  return source_write(o->output, buf, len);
}

static int pass_through(const Options *o, const SourceFile *src) {
  if (o->make_depfile && write_depfile(o, NULL)) return EXIT_INPUT;
  if (o->dump == DUMP_JSON) {
    Frontend fe = {.src = *src};
    Program none = {0};
    return json_dump(stdout, &fe, &none) ? EXIT_INPUT : 0;
  }
  if (o->check) {
    printf("%s: 0 regions\n", o->input);
    return 0;
  }
  if (o->dump == DUMP_IR || o->explain || o->verify_ranks) return 0;
  return emit(o, src, src->buf, src->len) ? EXIT_INPUT : 0;
}

// The IR stages: extract, schedule, then what the options ask to see of them.
static int run_ir(const Options *o, const Frontend *fe, const Program *prog) {
  IrCostModel model;
  ir_cost_default(&model);
  if (o->model_file && ir_cost_load(&model, o->model_file)) return EXIT_INPUT;
  IrProgram *ir = ir_program_new();
  int status = extract_program(fe, prog, ir) ? EXIT_INPUT : 0;
  IrSchedOptions opt = {.model = &model};
  for (IrRegion *r = ir->regions; r && status == 0; r = r->next) {
    if (o->schedule_none ? ir_infer(r) : ir_schedule(r, &opt)) status = EXIT_INPUT;
  }
  FILE *dot = NULL;
  if (status == 0 && o->dot_file && !(dot = fopen(o->dot_file, "w"))) {
    fprintf(stderr, "coconet: error: cannot write '%s'\n", o->dot_file);
    status = EXIT_INPUT;
  }
  for (IrRegion *r = ir->regions; r && status == 0; r = r->next) {
    if (o->dump == DUMP_IR) {
      ir_dump(stdout, r, false);
      if (r->sched) ir_dump(stdout, r, true);
    }
    if (o->explain) ir_explain(stdout, r, &model);
    if (dot) ir_emit_dot(dot, r);
    if (o->verify_ranks && ir_verify(r, o->verify_ranks, 3, stdout) != 0) status = EXIT_INPUT;
  }
  if (dot && fclose(dot) != 0) status = EXIT_INPUT;
  ir_program_free(ir);
  return status;
}

static bool wants_ir(const Options *o) {
  return o->dump == DUMP_IR || o->explain || o->verify_ranks || o->dot_file;
}

static int translate(const Options *o, SourceFile src) {
  Frontend fe;
  if (frontend_parse(o, src, &fe)) {
    frontend_dispose(&fe);
    return EXIT_INPUT;
  }
  Program prog;
  int status = directives_collect(&fe, &prog) ? EXIT_INPUT : 0;
  if (status == 0 && o->make_depfile && write_depfile(o, &fe)) status = EXIT_INPUT;
  if (status == 0) {
    if (o->dump == DUMP_JSON) status = json_dump(stdout, &fe, &prog) ? EXIT_INPUT : 0;
    else if (wants_ir(o)) status = run_ir(o, &fe, &prog);
    else if (o->check) report(&prog, o->input);
    else if (o->schedule_none) status = emit(o, &src, src.buf, src.len) ? EXIT_INPUT : 0;
    else {
      fprintf(stderr, "coconet: error: scheduling regions is not available in this version; "
                      "use --schedule=none, --check or --dump=json\n");
      status = EXIT_USAGE;
    }
  }
  program_free(&prog);
  frontend_dispose(&fe);
  return status;
}

int main(int argc, char **argv) {
  Options o = parse_args(argc, argv);
  SourceFile src;
  if (source_read(o.input, &src)) return EXIT_INPUT;
  diag_add_file(src.path, src.buf, src.len);
  int status = source_needs_translation(src.buf, src.len) ? translate(&o, src) : pass_through(&o, &src);
  if (status == 0 && diag_error_count()) status = EXIT_INPUT;
  diag_reset();
  source_free(&src);
  return status;
}
