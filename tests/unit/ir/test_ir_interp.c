// test_ir_interp.c: the interpreter against hand-computed results for 1..4
// ranks, and ir_verify catching schedules that are wrong on purpose.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir_test_util.h"

static IrProgram *prog;

static int setup(void **state) {
  (void)state;
  prog = ir_program_new();
  setenv("COCONET_COLOR", "0", 1);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  ir_program_free(prog);
  return 0;
}

static IrRegion *region(const char *name) { return ir_region_new(prog, name, L("i.cu", 1, 1), R("i.cu", 2, 1)); }

static IrOp *allreduce(IrRegion *r, IrTensor *in, IrTensor *out, IrSize *n, IrRedOp red) {
  return ir_op_collective(r, R("i.cu", 3, 5), &(IrCollective){.kind = IR_ALLREDUCE, .red = red, .in = in, .out = out,
                                                             .count = n, .dtype = in->type});
}

static IrRun *run(IrRegion *r, bool sched, int nranks, const IrBinding *bind, int nbind) {
  assert_int_equal(ir_infer(r), 0);
  IrInterpConfig cfg = {.nranks = nranks, .seed = 42 + (uint64_t)nranks, .bind = bind, .nbind = nbind};
  IrRun *x = ir_interp_run(r, sched, &cfg);
  assert_non_null(x);
  return x;
}

// out[i] = 2 * AllReduce(g)[i] + b[i % k], sums in rank order in float; b replicated(b).
static void test_allreduce_kernel(void **state) {
  (void)state;
  IrRegion *r = region("ark");
  ir_clause_add_arg(r, ir_clause_add(r, IR_CL_REPLICATED, L("i.cu", 1, 30)), "b", L("i.cu", 1, 41));
  IrSize *n = ir_size_var(r, "n"), *k = ir_size_var(r, "k");
  IrTensor *g = ir_tensor_get_or_add(r, "g", IR_F32, n, L("i.cu", 3, 20));
  IrTensor *b = ir_tensor_get_or_add(r, "b", IR_F32, k, L("i.cu", 4, 20));
  IrTensor *o = ir_tensor_get_or_add(r, "o", IR_F32, n, L("i.cu", 4, 25));
  allreduce(r, g, g, n, IR_RED_SUM);
  IrOp *op = ir_op_pointwise(r, R("i.cu", 4, 5), &(IrPointwise){.kernel = "k", .count = n});
  IrExpr *two_g = ir_expr_binary(r, IR_MUL, ir_expr_float(r, 2, IR_F32), ir_expr_read(r, g, IR_IDX_I, NULL));
  ir_pw_store(r, op, o, ir_expr_binary(r, IR_ADD, two_g, ir_expr_read(r, b, IR_IDX_MOD, k)), L("i.cu", 4, 5));
  IrBinding bind[] = {{"n", 7}, {"k", 3}};
  for (int nr = 1; nr <= 4; nr++) {
    IrRun *x = run(r, false, nr, bind, 2);
    for (long i = 0; i < 7; i++) {
      float sum = (float)ir_run_init(x, g, 0, i);
      for (int q = 1; q < nr; q++) sum = sum + (float)ir_run_init(x, g, q, i);
      float want = 2.0f * sum;
      want = want + (float)ir_run_init(x, b, 0, i % 3);
      for (int q = 0; q < nr; q++) {
        assert_true(ir_run_get(x, g, q, i) == sum);
        assert_true(ir_run_get(x, o, q, i) == want);
        assert_true(ir_run_init(x, b, q, i % 3) == ir_run_init(x, b, 0, i % 3));  // b is replicated
      }
    }
    ir_run_free(x);
  }
}

// max over i32 and avg over f16 (rounded after every step).
static void test_reductions(void **state) {
  (void)state;
  IrRegion *r = region("red");
  IrSize *n = ir_size_var(r, "n");
  IrTensor *a = ir_tensor_get_or_add(r, "a", IR_I32, n, L("i.cu", 3, 20));
  IrTensor *h = ir_tensor_get_or_add(r, "h", IR_F16, n, L("i.cu", 3, 30));
  allreduce(r, a, a, n, IR_RED_MAX);
  allreduce(r, h, h, n, IR_RED_AVG);
  IrBinding bind[] = {{"n", 5}};
  for (int nr = 1; nr <= 4; nr++) {
    IrRun *x = run(r, false, nr, bind, 1);
    for (long i = 0; i < 5; i++) {
      double mx = ir_run_init(x, a, 0, i), s = ir_run_init(x, h, 0, i);
      for (int q = 1; q < nr; q++) {
        mx = fmax(mx, ir_run_init(x, a, q, i));
        s = ir_round(IR_F16, (float)s + (float)ir_run_init(x, h, q, i));
      }
      s = ir_round(IR_F16, (float)s / (float)nr);
      for (int q = 0; q < nr; q++) {
        assert_true(ir_run_get(x, a, q, i) == mx);
        assert_true(ir_run_get(x, h, q, i) == s);
      }
    }
    ir_run_free(x);
  }
}

// The user's ReduceScatter (compact slices) then AllGather, and a Broadcast.
static void test_user_collectives(void **state) {
  (void)state;
  IrRegion *r = region("rsag");
  IrSize *c = ir_size_var(r, "c");
  IrTensor *g = ir_tensor_get_or_add(r, "g", IR_F64, ir_size_var(r, "total"), L("i.cu", 3, 20));
  IrTensor *s = ir_tensor_get_or_add(r, "s", IR_F64, c, L("i.cu", 3, 23));
  IrTensor *a = ir_tensor_get_or_add(r, "a", IR_F64, ir_size_var(r, "total"), L("i.cu", 4, 23));
  IrTensor *z = ir_tensor_get_or_add(r, "z", IR_F64, c, L("i.cu", 5, 23));
  ir_op_collective(r, R("i.cu", 3, 5), &(IrCollective){.kind = IR_REDUCESCATTER, .red = IR_RED_SUM, .in = g, .out = s, .count = c, .dtype = IR_F64});
  ir_op_collective(r, R("i.cu", 4, 5), &(IrCollective){.kind = IR_ALLGATHER, .in = s, .out = a, .count = c, .dtype = IR_F64});
  ir_op_collective(r, R("i.cu", 5, 5), &(IrCollective){.kind = IR_BROADCAST, .in = s, .out = z, .count = c, .dtype = IR_F64, .root = "root"});
  for (int nr = 1; nr <= 4; nr++) {
    IrBinding bind[] = {{"c", 3}, {"total", 3 * nr}, {"root", nr - 1}};
    IrRun *x = run(r, false, nr, bind, 3);
    for (int q = 0; q < nr; q++) {
      for (long j = 0; j < 3; j++) {
        double sum = ir_run_init(x, g, 0, q * 3 + j);
        for (int p = 1; p < nr; p++) sum += ir_run_init(x, g, p, q * 3 + j);
        assert_true(ir_run_get(x, s, q, j) == sum);
        for (int p = 0; p < nr; p++) assert_true(ir_run_get(x, a, p, q * 3 + j) == sum);
        assert_true(ir_run_get(x, z, q, j) == ir_run_get(x, s, nr - 1, j));
      }
    }
    ir_run_free(x);
  }
}

// __half arithmetic rounds after every operation; Philox draws by element index.
static void test_half_and_philox(void **state) {
  (void)state;
  IrRegion *r = region("hp");
  IrSize *n = ir_size_var(r, "n");
  IrTensor *a = ir_tensor_get_or_add(r, "a", IR_F16, n, L("i.cu", 3, 20));
  IrTensor *b = ir_tensor_get_or_add(r, "b", IR_F16, n, L("i.cu", 3, 23));
  IrTensor *o = ir_tensor_get_or_add(r, "o", IR_F16, n, L("i.cu", 3, 26));
  IrTensor *u = ir_tensor_get_or_add(r, "u", IR_F32, n, L("i.cu", 3, 29));
  IrOp *op = ir_op_pointwise(r, R("i.cu", 3, 5), &(IrPointwise){.kernel = "k", .count = n});
  IrExpr *c = ir_expr_cast(r, IR_F16, ir_expr_param(r, ir_pw_param(r, op, "c", IR_F32, "c")));
  IrExpr *ab = ir_expr_binary(r, IR_MUL, ir_expr_read(r, a, IR_IDX_I, NULL), ir_expr_read(r, b, IR_IDX_I, NULL));
  ir_pw_store(r, op, o, ir_expr_binary(r, IR_ADD, ab, c), L("i.cu", 3, 5));
  IrExpr *seed = ir_expr_param(r, ir_pw_param(r, op, "seed", IR_I64, "seed"));
  ir_pw_store(r, op, u, ir_expr_philox(r, seed, ir_expr_int(r, 6, IR_I64), 1), L("i.cu", 3, 5));
  IrBinding bind[] = {{"n", 9}, {"c", 0.3}, {"seed", 1234}};
  IrRun *x = run(r, false, 2, bind, 3);
  for (int q = 0; q < 2; q++) {
    for (long i = 0; i < 9; i++) {
      double p = ir_round(IR_F16, (float)ir_run_init(x, a, q, i) * (float)ir_run_init(x, b, q, i));
      double want = ir_round(IR_F16, (float)p + (float)ir_round(IR_F16, (float)0.3));
      assert_true(ir_run_get(x, o, q, i) == want);
      assert_true(ir_run_get(x, u, q, i) == ir_curand_uniform(1234, (uint64_t)i, 6, 1));
    }
  }
  ir_run_free(x);
}

// C = A * B^T (column-major, 3 x 2 x 4) accumulated in float.
static void test_gemm(void **state) {
  (void)state;
  IrRegion *r = region("gemm");
  IrSize *m = ir_size_const(r, 3), *n = ir_size_const(r, 2), *k = ir_size_const(r, 4);
  IrTensor *a = ir_tensor_get_or_add(r, "a", IR_F32, NULL, L("i.cu", 3, 20));
  IrTensor *b = ir_tensor_get_or_add(r, "b", IR_F32, NULL, L("i.cu", 3, 23));
  IrTensor *c = ir_tensor_get_or_add(r, "c", IR_F32, NULL, L("i.cu", 3, 26));
  ir_op_gemm(r, R("i.cu", 3, 5), &(IrGemm){.fn = "cublasSgemm", .transb = true, .m = m, .n = n, .k = k, .lda = m,
                                           .ldb = n, .ldc = m, .alpha = "&alpha", .beta_known = true, .a = a, .b = b, .c = c});
  IrBinding bind[] = {{"alpha", 0.5}};
  IrRun *x = run(r, false, 1, bind, 1);
  for (long row = 0; row < 3; row++) {
    for (long col = 0; col < 2; col++) {
      float acc = 0;
      for (long p = 0; p < 4; p++) acc = acc + (float)ir_run_init(x, a, 0, row + p * 3) * (float)ir_run_init(x, b, 0, col + p * 2);
      assert_true(ir_run_get(x, c, 0, row + col * 3) == (float)(0.5 * acc));
    }
  }
  ir_run_free(x);
}

// Split + reorder on 4 ranks, n = 10: slices [2r, 2r+2), tail [8, 10) on every rank.
static void test_slices_and_tail(void **state) {
  (void)state;
  IrRegion *r = build_adam(prog, "split reorder shard(m, v) scratch(g) replicated(w)");
  assert_int_equal(ir_schedule(r, NULL), 0);
  IrBinding bind[] = {{"n", 10}};
  IrInterpConfig cfg = {.nranks = 4, .seed = 9, .bind = bind, .nbind = 1};
  IrRun *x = ir_interp_run(r, true, &cfg);
  assert_non_null(x);
  const IrRunTensor *m = &x->tensors[ir_tensor_find(r, "m")->id - 1];
  for (int q = 0; q < 4; q++)
    for (long j = 0; j < 10; j++) assert_int_equal(m->written[q][j], (j >= 2 * q && j < 2 * q + 2) || j >= 8);
  IrRun *y = ir_interp_run(r, false, &cfg);
  const IrTensor *bad;
  assert_true(ir_run_compare(r, y, x, &bad) == 0);
  assert_null(bad);
  ir_run_free(x);
  ir_run_free(y);
}

static IrOp **find_link(IrRegion *r, bool (*pred)(const IrOp *)) {
  for (IrOp **pp = &r->sched; *pp; pp = &(*pp)->next)
    if (pred(*pp)) return pp;
  return NULL;
}

static bool is_gather_w(const IrOp *op) {
  return op->kind == IR_OP_COLLECTIVE && op->coll.kind == IR_ALLGATHER && strcmp(op->coll.out->name, "w") == 0;
}

static bool is_tail_kernel(const IrOp *op) { return op->kind == IR_OP_POINTWISE && op->span.part == IR_PART_TAIL; }

static char *verify_string(IrRegion *r, int *rc) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  *rc = ir_verify(r, 4, 2, f);
  fclose(f);
  return buf;
}

// Wrong schedules on purpose: the interpreter must notice.
static void test_verify_catches_bugs(void **state) {
  (void)state;
  IrRegion *r = build_adam(prog, "split reorder shard(m, v) scratch(g) replicated(w)");
  assert_int_equal(ir_schedule(r, NULL), 0);
  int rc;
  char *text = verify_string(r, &rc);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(text, "verify=ir adam_step: output 'w' (f32): max relative error 0 over 1..4 ranks x 2 inputs\n"));
  assert_non_null(strstr(text, "verify=ir adam_step: scratch 'g' (f32): max relative error 0 over 1..4 ranks x 2 inputs (not compared)\n"));
  assert_non_null(strstr(text, "verify=ir adam_step: ok\n"));
  free(text);
  IrOp **ag = find_link(r, is_gather_w);
  IrOp *saved = *ag;
  *ag = saved->next;  // drop AllGather(w)
  text = verify_string(r, &rc);
  assert_int_equal(rc, 1);
  assert_non_null(strstr(text, "verify=ir adam_step: MISMATCH in 'w' with 2 rank(s), trial 0 (seed 0x"));
  free(text);
  *ag = saved;
  IrOp **tail = find_link(r, is_tail_kernel);
  *tail = (*tail)->next;  // drop the kernel on the tail
  text = verify_string(r, &rc);
  assert_int_equal(rc, 1);
  assert_non_null(strstr(text, "MISMATCH in 'w'"));
  free(text);
}

static void run_call(void *arg) {
  IrRegion *r = arg;
  IrInterpConfig cfg = {.nranks = 2, .seed = 1, .bind = (IrBinding[]){{"n", 4}, {"k", 9}}, .nbind = 2};
  assert_null(ir_interp_run(r, false, &cfg));
}

static void test_interp_errors(void **state) {
  (void)state;
  IrRegion *r = region("oob");
  IrSize *n = ir_size_var(r, "n");
  IrTensor *x = ir_tensor_get_or_add(r, "x", IR_F32, n, L("i.cu", 3, 20));
  IrTensor *o = ir_tensor_get_or_add(r, "o", IR_F32, n, L("i.cu", 3, 23));
  IrOp *op = ir_op_pointwise(r, R("i.cu", 3, 5), &(IrPointwise){.kernel = "k", .count = n});
  ir_pw_store(r, op, o, ir_expr_read(r, x, IR_IDX_CONST, ir_size_var(r, "k")), L("i.cu", 3, 5));
  assert_int_equal(ir_infer(r), 0);
  char *err = capture_stderr(run_call, r);
  assert_string_equal(err, "i.cu:3:5: error: verify=ir: kernel 'k' reads x[9] out of bounds (4 elements)\n");
  free(err);
}

// Stores into byte buffers convert as the GPU does: a float or double goes
// through 32 bits (clamped) and keeps its low byte, a __half clamps into the
// 8-bit range (__half2uchar_rz), an integer wraps, anything stored into bool
// is whether it is not 0; a byte read is computed as int.
static void test_byte_conversions(void **state) {
  (void)state;
  static const struct {
    IrType to;
    IrType from;
    double value, want;
  } cases[] = {
      {IR_U8, IR_F32, 300.7, 44}, {IR_I8, IR_F32, -3.5, -3},  {IR_I8, IR_F32, -200, 56},  {IR_BOOL, IR_F32, 0.25, 1},
      {IR_BOOL, IR_F32, 0.0, 0},  {IR_U8, IR_I32, 256, 0},    {IR_I8, IR_I32, 200, -56},  {IR_BOOL, IR_I32, 2, 1},
      {IR_U8, IR_F16, 300, 255},  {IR_I8, IR_F16, -200, -128}, {IR_U8, IR_F32, -3.0, 0},
  };
  const int ncases = (int)(sizeof cases / sizeof cases[0]);
  IrRegion *r = region("bytes");
  IrSize *n = ir_size_var(r, "n");
  IrOp *op = ir_op_pointwise(r, R("i.cu", 3, 5), &(IrPointwise){.kernel = "k", .count = n});
  IrTensor *t[16], *back = ir_tensor_get_or_add(r, "back", IR_I32, n, L("i.cu", 3, 9));
  for (int c = 0; c < ncases; c++) {
    char name[8];
    snprintf(name, sizeof name, "t%d", c);
    t[c] = ir_tensor_get_or_add(r, ir_strdup(r, name), cases[c].to, n, L("i.cu", 3, 9));
    IrExpr *v = cases[c].from == IR_I32 ? ir_expr_int(r, (int64_t)cases[c].value, IR_I32)
                                        : ir_expr_cast(r, cases[c].from, ir_expr_float(r, cases[c].value, IR_F64));
    ir_pw_store(r, op, t[c], ir_expr_cast(r, cases[c].to, v), L("i.cu", 3, 5));
  }
  // back = t0 + t2: the u8 44 and the i8 56 add as int
  ir_pw_store(r, op, back, ir_expr_binary(r, IR_ADD, ir_expr_read(r, t[0], IR_IDX_I, NULL),
                                          ir_expr_read(r, t[2], IR_IDX_I, NULL)), L("i.cu", 3, 5));
  IrBinding bind[] = {{"n", 3}};
  IrRun *x = run(r, false, 1, bind, 1);
  for (int c = 0; c < ncases; c++) assert_true(ir_run_get(x, t[c], 0, 2) == cases[c].want);
  assert_true(ir_run_get(x, back, 0, 1) == 100);
  ir_run_free(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_allreduce_kernel),
      cmocka_unit_test(test_reductions),
      cmocka_unit_test(test_user_collectives),
      cmocka_unit_test(test_half_and_philox),
      cmocka_unit_test(test_gemm),
      cmocka_unit_test(test_slices_and_tail),
      cmocka_unit_test(test_verify_catches_bugs),
      cmocka_unit_test(test_interp_errors),
      cmocka_unit_test(test_byte_conversions),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
