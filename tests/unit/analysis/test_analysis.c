// test_analysis.c: kernel analysis (translator/analyze/analyze.c) on real CUDA parsed by
// libclang: which kernels are proven pointwise, what IR they become, and the
// exact reason for the ones that are not. All cases (cases.h) go into one
// file, parsed once; each case is a region holding one launch.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyze/analyze.h"
#include "front/front.h"

typedef struct Case {
  const char *name;
  bool accepted;
  const char *kernel;
  const char *launch;
  const char *expect;
} Case;

static const Case CASES[] = {
#define CASE(name, ok, kernel, launch, expect) {#name, ok, kernel, launch, expect},
#include "cases.h"
#undef CASE
};
#define NCASES (sizeof CASES / sizeof *CASES)

static char path[] = "/tmp/coconet_analysis_XXXXXX.cu";
static Frontend fe;
static Program prog;

static char *build_source(void) {
  char *buf;
  size_t len;
  FILE *f = open_memstream(&buf, &len);
  fputs("#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <curand_kernel.h>\n#include <cstdio>\n", f);
  fputs("struct Shape { int n; float scale; };\n", f);
  for (size_t i = 0; i < NCASES; i++) {
    fprintf(f, "\n// case %s\n%s", CASES[i].name, CASES[i].kernel);
    fprintf(f,
            "void host_%s(float *a, float *b, float *c, __half *h, __half *h2, int *ia, int n, size_t sz,\n"
            "             float s, int hidden, unsigned long long seed, unsigned long long offset,\n"
            "             cudaStream_t st, Shape shape) {\n"
            "#pragma coconet region name(%s)\n"
            "  {\n    %s\n  }\n}\n",
            CASES[i].name, CASES[i].name, CASES[i].launch);
  }
  fclose(f);
  return buf;
}

static int setup(void **state) {
  (void)state;
  int fd = mkstemps(path, 3);
  if (fd < 0) return -1;
  char *text = build_source();
  bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
  close(fd);
  free(text);
  SourceFile src;
  if (!ok || source_read(path, &src)) return -1;
  diag_add_file(src.path, src.buf, src.len);
  Options opts = {.input = path};
  if (frontend_parse(&opts, src, &fe) || directives_collect(&fe, &prog)) return -1;
  instantiate_program(&fe, &prog);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  program_free(&prog);
  SourceFile src = fe.src;
  frontend_dispose(&fe);
  source_free(&src);
  diag_reset();
  unlink(path);
  return 0;
}

static const Region *region_named(const char *name) {
  for (const Region *r = prog.regions; r; r = r->next)
    if (strcmp(r->name, name) == 0) return r;
  return NULL;
}

static void run_case(void **state) {
  const Case *c = *state;
  const Region *r = region_named(c->name);
  assert_non_null(r);
  assert_non_null(r->stmts);
  assert_int_equal(r->stmts->kind, STMT_LAUNCH);
  IrProgram *ir = ir_program_new();
  IrRegion *reg = ir_region_new(ir, r->name, r->pragma_range.begin, r->range);
  char *why = NULL;
  SrcLoc loc;
  IrOp *op = analyze_launch(&fe, reg, r->stmts, &prog, &why, &loc);
  if (c->accepted) {
    if (!op) fail_msg("case %s: rejected: %s", c->name, why);
    char *dump;
    size_t len;
    FILE *f = open_memstream(&dump, &len);
    ir_dump(f, reg, false);
    fclose(f);
    if (!strstr(dump, c->expect)) fail_msg("case %s: '%s' not in\n%s", c->name, c->expect, dump);
    free(dump);
  } else {
    if (op) fail_msg("case %s: accepted, expected '%s'", c->name, c->expect);
    if (!strstr(why, c->expect)) fail_msg("case %s: reason '%s' lacks '%s'", c->name, why, c->expect);
    assert_non_null(loc.file);
    assert_true(loc.line > 0);
  }
  free(why);
  ir_program_free(ir);
}

int main(void) {
  struct CMUnitTest tests[NCASES];
  for (size_t i = 0; i < NCASES; i++)
    tests[i] = (struct CMUnitTest){CASES[i].name, run_case, NULL, NULL, (void *)&CASES[i]};
  return cmocka_run_group_tests_name("kernel analysis", tests, setup, teardown);
}
