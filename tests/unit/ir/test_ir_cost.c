// test_ir_cost.c: the alpha-beta formulas, region predictions and model files.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir_test_util.h"

static void assert_close(double got, double want) {
  if (fabs(got - want) > 1e-12 * fabs(want) + 1e-18) fail_msg("got %.12g, want %.12g", got, want);
}

static void test_formulas(void **state) {
  (void)state;
  IrCostModel m;
  ir_cost_default(&m);
  assert_int_equal(m.nranks, 8);
  double b = 64.0 * 1024 * 1024;
  assert_close(ir_cost_allreduce(&m, b), 2.0 * 7 / 8 * b / 450e9 + 14 * 1e-6);
  assert_close(ir_cost_reducescatter(&m, b), 7.0 / 8 * b / 450e9 + 7 * 1e-6);
  m.nranks = 1;
  assert_close(ir_cost_allreduce(&m, b), 0);
}

static const char model_text[] = "# a 4-GPU test node\n"
                                 "nranks = 4\n"
                                 "link_bw_gbps = 450   # per direction\n"
                                 "\n"
                                 "size.n = 1048576\n"
                                 "alpha_us=1\n";

static void test_parse(void **state) {
  (void)state;
  IrCostModel m;
  ir_cost_default(&m);
  assert_int_equal(ir_cost_parse(&m, "m.txt", model_text), 0);
  assert_int_equal(m.nranks, 4);
  assert_close(m.link_bw, 450e9);
  assert_close(m.alpha, 1e-6);
  assert_int_equal(m.nsizes, 1);
  assert_string_equal(m.sizes[0].name, "n");
  assert_close(m.sizes[0].value, 1048576);
}

typedef struct {
  const char *text;
  int rc;
} ParseCall;

static void parse_call(void *arg) {
  ParseCall *c = arg;
  IrCostModel m;
  ir_cost_default(&m);
  c->rc = ir_cost_parse(&m, "bad.txt", c->text);
}

static void load_call(void *arg) {
  ParseCall *c = arg;
  IrCostModel m;
  ir_cost_default(&m);
  c->rc = ir_cost_load(&m, c->text);
}

static void test_parse_errors(void **state) {
  (void)state;
  setenv("COCONET_COLOR", "0", 1);
  ParseCall c = {"bogus = 1\nnranks = 2.5\nlink_bw_gbps\nhbm_bw_gbps = fast\nlaunch_us = -1\nok_line_is_fine", 0};
  char *err = capture_stderr(parse_call, &c);
  assert_int_equal(c.rc, -1);
  assert_string_equal(err, "bad.txt:1:1: error: model: unknown key 'bogus'\n"
                           "bad.txt:2:1: error: model: 'nranks' needs a positive integer\n"
                           "bad.txt:3:1: error: model: expected 'key = value', got 'link_bw_gbps'\n"
                           "bad.txt:4:1: error: model: 'hbm_bw_gbps' needs a positive number, got 'fast'\n"
                           "bad.txt:5:1: error: model: 'launch_us' needs a positive number, got '-1'\n"
                           "bad.txt:6:1: error: model: expected 'key = value', got 'ok_line_is_fine'\n");
  free(err);
  ParseCall l = {"/nonexistent/model.txt", 0};
  err = capture_stderr(load_call, &l);
  assert_int_equal(l.rc, -1);
  assert_string_equal(err, "coconet: error: model: cannot read '/nonexistent/model.txt': No such file or directory\n");
  free(err);
}

// Adam on 4 ranks, n = 2^20 f32: every term by hand.
static void test_adam_prediction(void **state) {
  (void)state;
  IrCostModel m;
  ir_cost_default(&m);
  assert_int_equal(ir_cost_parse(&m, "m.txt", model_text), 0);
  IrProgram *p = ir_program_new();
  IrRegion *r = build_adam(p, "split reorder shard(m, v) scratch(g) replicated(w)");
  assert_int_equal(ir_schedule(r, &(IrSchedOptions){.model = &m}), 0);
  double n = 1048576, bytes = 4 * n, per_elem = 16 + 12;  // reads m, g, v, w; writes m, v, w
  double ar = 2.0 * 3 / 4 * bytes / 450e9 + 6e-6, rs = 3.0 / 4 * bytes / 450e9 + 3e-6;
  double kernel = n * per_elem / 4e12 + 3e-6, slice = n / 4 * per_elem / 4e12 + 3e-6;
  assert_close(ir_cost_list(r->ops, &m), ar + kernel);
  assert_close(ir_cost_list(r->sched, &m), rs + slice + rs);  // RS, slice kernel, AllGather(w); empty tail
  IrRegion *f = build_adam(p, "split reorder shard(m, v) scratch(g) replicated(w) fuse");
  assert_int_equal(ir_schedule(f, &(IrSchedOptions){.model = &m}), 0);
  // One fused kernel: its communication (RS + AllGather) and its slice work overlap, one launch.
  double work = n / 4 * per_elem / 4e12, comm = 2 * rs;
  assert_close(ir_cost_list(f->sched, &m), fmax(comm, work) + 3e-6);
  assert_true(ir_cost_list(f->sched, &m) < ir_cost_list(r->sched, &m));
  // fuse alone: the one-shot kernel reads the other 3 copies (up to 1 MiB), then runs the kernel.
  IrRegion *o = build_adam(p, "fuse");
  assert_int_equal(ir_schedule(o, &(IrSchedOptions){.model = &m}), 0);
  assert_close(ir_cost_list(o->sched, &m), ar + kernel);  // 4 MiB: above the one-shot limit, priced as written
  m.nsizes = 1;
  snprintf(m.sizes[0].name, sizeof m.sizes[0].name, "n");
  m.sizes[0].value = 65536;
  double small = 65536 * 4.0, oneshot = 3 * small / 450e9 + 1e-6, small_kernel = 65536 * per_elem / 4e12;
  assert_close(ir_cost_list(o->sched, &m), fmax(oneshot, small_kernel) + 3e-6);
  ir_program_free(p);
}

// Two-stage pipeline: A_0 + sum max(A_c, B_c-1) + B_last.
static void test_overlap_prediction(void **state) {
  (void)state;
  IrCostModel m;
  ir_cost_default(&m);
  IrProgram *p = ir_program_new();
  IrRegion *r = build_megatron(p, "overlap(chunks=4) replicated(residual, bias)");
  assert_int_equal(ir_schedule(r, &(IrSchedOptions){.model = &m}), 0);
  double mm = 4096, n = 4096, k = 4096, chunk_n = n / 4;
  double gemm = fmax(2 * mm * chunk_n * k / 350e12, (mm * k + k * chunk_n + mm * chunk_n) * 4 / 4e12) + 3e-6;
  double elems = mm * chunk_n, ar = 2.0 * 7 / 8 * elems * 4 / 450e9 + 14e-6;
  double kernel = elems * (4 + 4 + 4) / 4e12 + 3e-6;  // reads y, residual; writes out (bias is a broadcast)
  double b = ar + kernel;
  assert_close(ir_cost_list(r->sched, &m), gemm + 3 * fmax(gemm, b) + b);
  assert_true(ir_cost_list(r->sched, &m) < ir_cost_list(r->ops, &m));
  ir_program_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_formulas),
      cmocka_unit_test(test_parse),
      cmocka_unit_test(test_parse_errors),
      cmocka_unit_test(test_adam_prediction),
      cmocka_unit_test(test_overlap_prediction),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
