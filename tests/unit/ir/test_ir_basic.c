// test_ir_basic.c: sizes, types, CUDA rounding, Philox, layout inference,
// the --dump=ir printer and the Graphviz output.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir_test_util.h"

static void test_sizes(void **state) {
  (void)state;
  IrProgram *p = ir_program_new();
  IrRegion *r = ir_region_new(p, "r", L("s.cu", 1, 1), R("s.cu", 2, 1));
  IrSize *th = ir_size_parse(r, "tokens * hidden");
  IrSize *ht = ir_size_mul(r, ir_size_var(r, "hidden"), ir_size_var(r, " tokens"));
  assert_true(ir_size_equal(th, ht));
  assert_false(ir_size_equal(th, ir_size_var(r, "tokens")));
  IrSize *bytes = ir_size_parse(r, "n * sizeof(float)");
  assert_true(ir_size_equal(bytes, ir_size_mul(r, ir_size_const(r, 4), ir_size_var(r, "n"))));
  assert_true(ir_size_equal(ir_size_parse(r, "(size_t)n"), ir_size_var(r, "n")));
  // Casts to integer types as clang spells them, parenthesized products.
  assert_true(ir_size_equal(ir_size_parse(r, "(unsigned long)n"), ir_size_var(r, "n")));
  assert_true(ir_size_equal(ir_size_parse(r, "(long long)(n)"), ir_size_var(r, "n")));
  assert_true(ir_size_equal(ir_size_parse(r, "layers * (2 * n)"), ir_size_parse(r, "layers * 2 * n")));
  assert_true(ir_size_equal(ir_size_parse(r, "(layers * n) * 4"), ir_size_parse(r, "4 * n * layers")));
  assert_false(ir_size_equal(ir_size_parse(r, "layers * (n + 1)"), ir_size_parse(r, "layers * n")));
  IrSize *opaque = ir_size_parse(r, "n + 1");
  assert_int_equal(opaque->kind, IR_SIZE_VAR);
  assert_string_equal(opaque->var->text, "n+1");
  assert_true(ir_size_equal(ir_size_parse(r, "2 * 3"), ir_size_const(r, 6)));
  double vals[16] = {0};
  vals[ir_size_var(r, "tokens")->var->id] = 3;
  vals[ir_size_var(r, "hidden")->var->id] = 5;
  assert_int_equal(ir_size_eval(th, vals), 15);
  // A factor that is a sum keeps its parentheses when printed: (rows-1) * H, not rows-1 * H.
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ir_print_size(f, ir_size_mul(r, ir_size_var(r, "rows-1"), ir_size_var(r, "H")));
  fclose(f);
  assert_string_equal(buf, "(rows-1) * H");
  free(buf);
  ir_program_free(p);
}

static void test_types(void **state) {
  (void)state;
  assert_int_equal(ir_type_from_name("ncclBfloat16"), IR_BF16);
  assert_int_equal(ir_type_from_name("__half"), IR_F16);
  assert_int_equal(ir_type_from_name("ncclInt32"), IR_I32);
  assert_int_equal(ir_type_from_name("struct foo"), IR_VOID);
  assert_int_equal(ir_type_promote(IR_F16, IR_F16), IR_F16);
  assert_int_equal(ir_type_promote(IR_F16, IR_BF16), IR_F32);
  assert_int_equal(ir_type_promote(IR_F16, IR_F32), IR_F32);
  assert_int_equal(ir_type_promote(IR_I32, IR_U32), IR_U32);
  // Byte types: a buffer's element type only; their values promote to int.
  assert_int_equal(ir_type_from_name("uint8_t"), IR_U8);
  assert_int_equal(ir_type_from_name("ncclInt8"), IR_I8);
  assert_int_equal(ir_type_from_name("bool"), IR_BOOL);
  assert_int_equal(ir_type_size(IR_BOOL), 1);
  assert_int_equal(ir_type_promote(IR_U8, IR_U8), IR_I32);
  assert_int_equal(ir_type_promote(IR_BOOL, IR_U32), IR_U32);
  assert_int_equal(ir_type_promote(IR_I8, IR_F16), IR_F16);
  assert_string_equal(ir_nccl_type_name(IR_BOOL), "ncclUint8");
  IrMathFn fn;
  IrType t;
  assert_true(ir_math_lookup("rsqrtf", &fn, &t));
  assert_int_equal(fn, IR_FN_RSQRT);
  assert_int_equal(t, IR_F32);
  assert_true(ir_math_lookup("sqrt", &fn, &t));
  assert_int_equal(t, IR_F64);
  assert_true(ir_math_lookup("__expf", &fn, &t));
  assert_int_equal(fn, IR_FN_EXP);
  assert_false(ir_math_lookup("printf", &fn, &t));
}

// Round to nearest even, subnormals and overflow as __float2half_rn / __float2bfloat16_rn.
static void test_rounding(void **state) {
  (void)state;
  assert_true(ir_round(IR_F16, 1 + 0x1p-11) == 1.0);            // tie -> even
  assert_true(ir_round(IR_F16, 1 + 3 * 0x1p-11) == 1 + 0x1p-9);  // tie -> even (up)
  assert_true(ir_round(IR_F16, 1 + 0x1p-11 + 0x1p-20) == 1 + 0x1p-10);
  assert_true(ir_round(IR_F16, 65504) == 65504);
  assert_true(ir_round(IR_F16, 65519) == 65504);
  assert_true(ir_round(IR_F16, 65520) == INFINITY);
  assert_true(ir_round(IR_F16, -65520) == -INFINITY);
  assert_true(ir_round(IR_F16, 0x1p-24) == 0x1p-24);  // smallest subnormal
  assert_true(ir_round(IR_F16, 0x1p-25) == 0);        // tie -> even (0)
  assert_true(ir_round(IR_F16, 3 * 0x1p-26) == 0x1p-24);
  assert_true(ir_round(IR_F16, 0.1) == 0.0999755859375);
  assert_true(ir_round(IR_BF16, 1 + 0x1p-8) == 1.0);
  assert_true(ir_round(IR_BF16, 1 + 3 * 0x1p-8) == 1 + 0x1p-6);
  assert_true(ir_round(IR_BF16, 3.14159265) == 3.140625);
  assert_true(ir_round(IR_BF16, 0x1.ffp127) == INFINITY);
  assert_true(ir_round(IR_F32, 0.1) == (double)0.1f);
  assert_true(isnan(ir_round(IR_F16, NAN)));
  assert_true(signbit(ir_round(IR_F16, -0.0)));
}

// Random123's known-answer vectors for philox4x32_10 (kat_vectors).
static void test_philox_kat(void **state) {
  (void)state;
  static const uint32_t kat[3][10] = {
      {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e,
       0xa20bc7c6, 0x6d5451fd},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb,
       0x5001e420, 0x24126ea1},
  };
  for (int i = 0; i < 3; i++) {
    uint32_t out[4];
    ir_philox4x32_10(kat[i], kat[i] + 4, out);
    for (int j = 0; j < 4; j++) assert_int_equal(out[j], kat[i][6 + j]);
  }
}

static float uniform_of(uint32_t x) { return (float)x * 0x1p-32f + 0x1p-33f; }

// curand_init(seed, sub, offset) + draws: counter (sub << 64) + offset/4, word offset%4.
static void test_curand_uniform(void **state) {
  (void)state;
  uint64_t seed = 0x123456789abcdef0ull;
  uint32_t key[2] = {0x9abcdef0u, 0x12345678u}, out[4];
  uint32_t ctr0[4] = {0, 0, 5, 0};
  ir_philox4x32_10(ctr0, key, out);
  assert_true(ir_curand_uniform(seed, 5, 0, 0) == uniform_of(out[0]));
  assert_true(ir_curand_uniform(seed, 5, 0, 3) == uniform_of(out[3]));
  assert_true(ir_curand_uniform(seed, 5, 2, 1) == uniform_of(out[3]));
  uint32_t ctr2[4] = {2, 0, 5, 0};
  ir_philox4x32_10(ctr2, key, out);
  assert_true(ir_curand_uniform(seed, 5, 6, 3) == uniform_of(out[1]));  // word 2 + 3 = 5: block 2, word 1
  uint32_t ctr_big[4] = {0, 0, 0, 1};
  ir_philox4x32_10(ctr_big, key, out);
  assert_true(ir_curand_uniform(seed, 1ull << 32, 0, 0) == uniform_of(out[0]));
  float u = ir_curand_uniform(7, 1000, 0, 0);
  assert_true(u > 0 && u <= 1);
}

static void test_layouts_adam(void **state) {
  (void)state;
  IrProgram *p = ir_program_new();
  IrRegion *r = build_adam(p, "");
  assert_int_equal(ir_infer(r), 0);
  IrTensor *g = ir_tensor_find(r, "g"), *w = ir_tensor_find(r, "w"), *m = ir_tensor_find(r, "m");
  assert_int_equal(g->layout_in, IR_LAYOUT_LOCAL);
  assert_int_equal(g->layout_out, IR_LAYOUT_REPLICATED);
  // Nothing is assumed of state updated in place: undeclared, it is local.
  assert_int_equal(w->layout_in, IR_LAYOUT_LOCAL);
  assert_int_equal(m->layout_out, IR_LAYOUT_LOCAL);
  assert_int_equal(r->ops->writes->ref.version, 1);
  // Declared: replicated weights, sharded moments (replicated state kept in slices).
  IrRegion *d = build_adam(p, "shard(m, v) replicated(w)");
  assert_int_equal(ir_infer(d), 0);
  assert_int_equal(ir_tensor_find(d, "w")->layout_in, IR_LAYOUT_REPLICATED);
  assert_int_equal(ir_tensor_find(d, "m")->layout_in, IR_LAYOUT_REPLICATED);
  assert_int_equal(ir_tensor_find(d, "w")->layout_out, IR_LAYOUT_REPLICATED);
  ir_program_free(p);
}

static void test_layouts_megatron(void **state) {
  (void)state;
  IrProgram *p = ir_program_new();
  IrRegion *r = build_megatron(p, "");
  assert_int_equal(ir_infer(r), 0);
  // A broadcast read proves nothing about the buffer: bias is local until declared.
  assert_int_equal(ir_tensor_find(r, "bias")->layout_in, IR_LAYOUT_LOCAL);
  assert_int_equal(ir_tensor_find(r, "residual")->layout_in, IR_LAYOUT_LOCAL);
  assert_int_equal(ir_tensor_find(r, "y")->layout_out, IR_LAYOUT_REPLICATED);
  assert_int_equal(ir_tensor_find(r, "out")->layout_out, IR_LAYOUT_LOCAL);
  IrRegion *b = build_megatron(p, "replicated(residual)");
  assert_int_equal(ir_infer(b), 0);
  assert_int_equal(ir_tensor_find(b, "out")->layout_out, IR_LAYOUT_LOCAL);
  IrRegion *d = build_megatron(p, "replicated(residual, bias)");
  assert_int_equal(ir_infer(d), 0);
  assert_int_equal(ir_tensor_find(d, "out")->layout_out, IR_LAYOUT_REPLICATED);
  ir_program_free(p);
}

// w[i] = w[i] + x[i] with x local: w is not replicated state.
static void test_layouts_state_demoted(void **state) {
  (void)state;
  IrProgram *p = ir_program_new();
  IrRegion *r = ir_region_new(p, "s", L("s.cu", 1, 1), R("s.cu", 2, 1));
  IrSize *n = ir_size_var(r, "n");
  IrTensor *w = ir_tensor_get_or_add(r, "w", IR_F32, n, L("s.cu", 3, 1));
  IrTensor *x = ir_tensor_get_or_add(r, "x", IR_F32, n, L("s.cu", 3, 5));
  IrOp *op = ir_op_pointwise(r, R("s.cu", 3, 1), &(IrPointwise){.kernel = "k", .count = n});
  ir_pw_store(r, op, w, ir_expr_binary(r, IR_ADD, ir_expr_read(r, w, IR_IDX_I, NULL), ir_expr_read(r, x, IR_IDX_I, NULL)),
              L("s.cu", 3, 1));
  assert_int_equal(ir_infer(r), 0);
  assert_int_equal(w->layout_in, IR_LAYOUT_LOCAL);
  assert_int_equal(w->layout_out, IR_LAYOUT_LOCAL);
  ir_program_free(p);
}

static void infer_call(void *arg) { *(int *)((void **)arg)[1] = ir_infer(((void **)arg)[0]); }

// A user ReduceScatter's output (sliced) combined with local data is a contradiction.
static void test_layout_contradiction(void **state) {
  (void)state;
  setenv("COCONET_COLOR", "0", 1);
  IrProgram *p = ir_program_new();
  IrRegion *r = ir_region_new(p, "c", L("c.cu", 1, 1), R("c.cu", 2, 1));
  IrSize *n = ir_size_var(r, "n");
  IrTensor *g = ir_tensor_get_or_add(r, "g", IR_F32, NULL, L("c.cu", 3, 20));
  IrTensor *s = ir_tensor_get_or_add(r, "s", IR_F32, n, L("c.cu", 3, 23));
  ir_op_collective(r, R("c.cu", 3, 5),
                   &(IrCollective){.kind = IR_REDUCESCATTER, .red = IR_RED_SUM, .in = g, .out = s, .count = n, .dtype = IR_F32});
  IrTensor *x = ir_tensor_get_or_add(r, "x", IR_F32, n, L("c.cu", 4, 30));
  IrTensor *o = ir_tensor_get_or_add(r, "o", IR_F32, n, L("c.cu", 4, 27));
  IrOp *op = ir_op_pointwise(r, R("c.cu", 4, 5), &(IrPointwise){.kernel = "k", .count = n});
  ir_pw_store(r, op, o, ir_expr_binary(r, IR_ADD, ir_expr_read(r, s, IR_IDX_I, NULL), ir_expr_read(r, x, IR_IDX_I, NULL)),
              L("c.cu", 4, 5));
  int rc = 0;
  void *args[2] = {r, &rc};
  char *err = capture_stderr(infer_call, args);
  assert_int_equal(rc, -1);
  assert_string_equal(err,
                      "c.cu:4:5: error: layout: 'k' combines sliced 's' with local 'x'; a rank's slice cannot be "
                      "combined with data that differs per rank\n"
                      "c.cu:3:5: note: 's' is sliced by this ReduceScatter\n"
                      "c.cu:4:30: note: 'x' is local (differs per rank) from here\n");
  free(err);
  ir_program_free(p);
}

static const char adam_dump[] =
    "region adam_step (adam.cu:57:1)\n"
    "  clauses: split reorder shard(m, v) scratch(g) replicated(w) fuse\n"
    "  var n : size\n"
    "  var lr : f32\n"
    "  var beta1 : f32\n"
    "  var beta2 : f32\n"
    "  var eps : f32\n"
    "  var t : i32\n"
    "  tensor g : f32[n] local -> replicated (scratch)\n"
    "  tensor w : f32[n] replicated -> replicated\n"
    "  tensor m : f32[n] replicated -> replicated (shard)\n"
    "  tensor v : f32[n] replicated -> replicated (shard)\n"
    "  g1 = AllReduce(sum, g)[n]  # adam.cu:59:5\n"
    "  (m1, v1, w1) = adam_update(m, g1, v, w; lr, beta1, beta2, eps, t)[i < n]  # adam.cu:60:5\n"
    "      m[i] = beta1 * m[i] + (1.0f - beta1) * g[i]\n"
    "      v[i] = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i]\n"
    "      let mh = m[i] / (1.0f - powf(beta1, (f32)t))\n"
    "      let vh = v[i] / (1.0f - powf(beta2, (f32)t))\n"
    "      w[i] = w[i] - lr * mh / (sqrtf(vh) + eps)\n";

static void test_dump_adam(void **state) {
  (void)state;
  IrProgram *p = ir_program_new();
  IrRegion *r = build_adam(p, "split reorder shard(m, v) scratch(g) replicated(w) fuse");
  assert_int_equal(ir_schedule(r, NULL), 0);
  char *text = dump_string(r, false);
  assert_string_equal(text, adam_dump);
  free(text);
  ir_program_free(p);
}

static const char megatron_dump[] =
    "region megatron_mlp (megatron.cu:70:1)\n"
    "  clauses: replicated(residual, bias)\n"
    "  var hidden : size\n"
    "  var tokens : size\n"
    "  var ffn : size\n"
    "  var p : f32\n"
    "  var seed : i64\n"
    "  var offset : i64\n"
    "  tensor w2 : f32[hidden * ffn] local -> local (read only)\n"
    "  tensor act : f32[ffn * tokens] local -> local (read only)\n"
    "  tensor y : f32[hidden * tokens] local -> replicated\n"
    "  tensor out : f32[tokens * hidden] local -> replicated\n"
    "  tensor bias : f32[hidden] replicated -> replicated (read only)\n"
    "  tensor residual : f32[tokens * hidden] replicated -> replicated (read only)\n"
    "  y1 = cublasSgemm(w2, act; alpha=&one, beta=&zero)[hidden x tokens x ffn]  # megatron.cu:72:5\n"
    "  y2 = AllReduce(sum, y1)[tokens * hidden]  # megatron.cu:73:5\n"
    "  out1 = bias_dropout_residual(y2, bias, residual; p, seed, offset)[i < tokens * hidden]  # megatron.cu:74:5\n"
    "      let u = philox_uniform(seed, i, offset, 0)\n"
    "      let x = y[i] + bias[i % hidden]\n"
    "      out[i] = residual[i] + (u > p ? x / (1.0f - p) : 0.0f)\n";

static void test_dump_megatron(void **state) {
  (void)state;
  IrProgram *p = ir_program_new();
  IrRegion *r = build_megatron(p, "replicated(residual, bias)");
  assert_int_equal(ir_infer(r), 0);
  char *text = dump_string(r, false);
  assert_string_equal(text, megatron_dump);
  free(text);
  ir_program_free(p);
}

static void test_dot(void **state) {
  (void)state;
  IrProgram *p = ir_program_new();
  IrRegion *r = build_adam(p, "split reorder shard(m, v) scratch(g) replicated(w) fuse");
  assert_int_equal(ir_schedule(r, NULL), 0);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ir_emit_dot(f, r);
  fclose(f);
  assert_non_null(strstr(buf, "digraph \"adam_step\" {\n"));
  assert_non_null(strstr(buf, "subgraph cluster_s_fuse1 {"));
  assert_non_null(strstr(buf, "a_v1_0 [shape=ellipse, style=filled, fillcolor=lightyellow, label=\"g\\nlocal\"];"));
  assert_non_null(strstr(buf, "s_op3 [shape=box, label=\"adam_update @slice\"];"));
  assert_non_null(strstr(buf, "fillcolor=pink, label=\"m1\\nsliced\""));
  assert_int_equal(buf[len - 2], '}');
  free(buf);
  ir_program_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sizes),
      cmocka_unit_test(test_types),
      cmocka_unit_test(test_rounding),
      cmocka_unit_test(test_philox_kat),
      cmocka_unit_test(test_curand_uniform),
      cmocka_unit_test(test_layouts_adam),
      cmocka_unit_test(test_layouts_megatron),
      cmocka_unit_test(test_layouts_state_demoted),
      cmocka_unit_test(test_layout_contradiction),
      cmocka_unit_test(test_dump_adam),
      cmocka_unit_test(test_dump_megatron),
      cmocka_unit_test(test_dot),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
