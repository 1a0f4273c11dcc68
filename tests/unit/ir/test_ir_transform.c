// test_ir_transform.c: each schedule clause's rewrite and its failure modes
// (exact messages). Every schedule that succeeds is also checked by the
// interpreter against the region as written.
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

// Schedule; expect success, no diagnostics, and agreement with the original.
static IrRegion *scheduled(IrRegion *r) {
  char *err;
  assert_int_equal(schedule_captured(r, &err), 0);
  assert_string_equal(err, "");
  free(err);
  assert_int_equal(ir_verify(r, 5, 3, NULL), 0);
  return r;
}

static void expect_error(IrRegion *r, const char *message) {
  char *err;
  assert_int_equal(schedule_captured(r, &err), -1);
  assert_string_equal(err, message);
  assert_null(r->sched);
  free(err);
}

static int count_ops(const IrRegion *r, IrOpKind kind, int coll, IrPart part) {
  int n = 0;
  for (const IrOp *op = r->sched; op; op = op->next)
    n += op->kind == kind && (kind != IR_OP_COLLECTIVE || (int)op->coll.kind == coll) && op->span.part == part;
  return n;
}

// AR(g) in place, then kernel k: out[i] = <expr of g and x>, over `count`.
typedef enum { K_PLAIN, K_OTHER, K_BCAST, K_LOCAL, K_NOREAD } KernelShape;

static IrRegion *ar_kernel(const char *clauses, KernelShape shape, const char *count) {
  const char *f = "k.cu";
  IrRegion *r = ir_region_new(prog, "kr", L(f, 10, 1), R(f, 11, 1));
  add_clauses(r, clauses, L(f, 10, 30));
  IrSize *n = ir_size_parse(r, "n");
  IrTensor *g = ir_tensor_get_or_add(r, "g", IR_F32, n, L(f, 12, 20));
  ir_op_collective(r, R(f, 12, 5), &(IrCollective){.kind = IR_ALLREDUCE, .red = IR_RED_SUM, .in = g, .out = g,
                                                   .count = n, .dtype = IR_F32, .comm = "comm", .stream = "s"});
  IrTensor *x = ir_tensor_get_or_add(r, "x", IR_F32, n, L(f, 13, 30));
  IrTensor *o = ir_tensor_get_or_add(r, "o", IR_F32, n, L(f, 13, 27));
  IrOp *op = ir_op_pointwise(r, R(f, 13, 5), &(IrPointwise){.kernel = "k", .stream = "s", .count = ir_size_parse(r, count)});
  IrExpr *gi = ir_expr_read(r, g, IR_IDX_I, NULL);
  if (shape == K_OTHER) gi = ir_expr_at(ir_expr_read_other(r, g, "i + 1"), L(f, 14, 12));
  if (shape == K_BCAST) gi = ir_expr_at(ir_expr_read(r, g, IR_IDX_MOD, ir_size_var(r, "k")), L(f, 14, 12));
  if (shape == K_NOREAD) gi = ir_expr_float(r, 1, IR_F32);
  IrExpr *rhs = shape == K_LOCAL ? ir_expr_binary(r, IR_ADD, gi, ir_expr_read(r, x, IR_IDX_I, NULL)) : gi;
  ir_pw_store(r, op, o, ir_expr_binary(r, IR_MUL, rhs, ir_expr_float(r, 2, IR_F32)), L(f, 14, 5));
  return r;
}

//
// split
//

static void test_split(void **state) {
  (void)state;
  IrRegion *r = scheduled(build_adam(prog, "split"));
  assert_int_equal(count_ops(r, IR_OP_COLLECTIVE, IR_REDUCESCATTER, IR_PART_BODY), 1);
  assert_int_equal(count_ops(r, IR_OP_COLLECTIVE, IR_ALLREDUCE, IR_PART_TAIL), 1);
  assert_int_equal(count_ops(r, IR_OP_COLLECTIVE, IR_ALLGATHER, IR_PART_BODY), 1);
  assert_int_equal(count_ops(r, IR_OP_POINTWISE, 0, IR_PART_ALL), 1);
  assert_true(r->sched->generated);
  assert_string_equal(r->sched->coll.comm, "comm");
  assert_string_equal(r->sched->coll.wrapper, "NCCLCHECK");
  scheduled(build_adam(prog, "split(g)"));
}

static void test_split_errors(void **state) {
  (void)state;
  IrRegion *r = ir_region_new(prog, "empty", L("e.cu", 1, 1), R("e.cu", 2, 1));
  add_clauses(r, "split", L("e.cu", 1, 30));
  expect_error(r, "e.cu:1:30: error: split: region 'empty' has no ncclAllReduce to split\n");
  expect_error(build_adam(prog, "split(w)"), "adam.cu:57:46: error: split: no ncclAllReduce on 'w' in region 'adam_step'\n");
}

//
// reorder
//

static const char adam_sched[] =
    "scheduled adam_step: split reorder shard(m, v) scratch(g) replicated(w) fuse\n"
    "  var n : size\n"
    "  var lr : f32\n"
    "  var beta1 : f32\n"
    "  var beta2 : f32\n"
    "  var eps : f32\n"
    "  var t : i32\n"
    "  tensor g : f32[n] local -> sliced (scratch)\n"
    "  tensor w : f32[n] replicated -> replicated\n"
    "  tensor m : f32[n] replicated -> sliced (shard)\n"
    "  tensor v : f32[n] replicated -> sliced (shard)\n"
    "  g1 = ReduceScatter(sum, g)[n] @body fuse=1  # adam.cu:59:5\n"
    "  g2 = AllReduce(sum, g1)[n] @tail fuse=1  # adam.cu:59:5\n"
    "  (m1, v1, w1) = adam_update(m, g2, v, w; lr, beta1, beta2, eps, t)[i < n] @slice fuse=1  # adam.cu:60:5\n"
    "  (m2, v2, w2) = adam_update(m1, g2, v1, w1; lr, beta1, beta2, eps, t)[i < n] @tail fuse=1  # adam.cu:60:5\n"
    "  w3 = AllGather(w2)[n] @body fuse=1  # adam.cu:59:5\n";

static void test_reorder_adam(void **state) {
  (void)state;
  IrRegion *r = scheduled(build_adam(prog, "split reorder shard(m, v) scratch(g) replicated(w) fuse"));
  char *text = dump_string(r, true);
  assert_string_equal(text, adam_sched);
  free(text);
  assert_true(r->reorder_done);
  assert_int_equal(r->nfuse, 1);
  IrRegion *keep = scheduled(build_adam(prog, "split reorder replicated(w, m, v)"));
  assert_int_equal(count_ops(keep, IR_OP_COLLECTIVE, IR_ALLGATHER, IR_PART_BODY), 4);  // g, m, v, w
}

static void test_reorder_errors(void **state) {
  (void)state;
  expect_error(build_adam(prog, "reorder"),
               "adam.cu:57:40: error: reorder: needs split before it (reorder moves kernels between the "
               "ReduceScatter and the AllGather that split creates)\n");
  expect_error(ar_kernel("split reorder", K_OTHER, "n"),
               "k.cu:14:12: error: reorder: kernel 'k' reads g[i + 1]; only g[i] can be computed on a slice\n");
  expect_error(ar_kernel("split reorder", K_BCAST, "n"),
               "k.cu:14:12: error: reorder: kernel 'k' reads g[i % k]; only g[i] can be computed on a slice "
               "(broadcast reads are fine only for buffers the region's slice work does not write)\n");
  expect_error(ar_kernel("split reorder", K_PLAIN, "m"),
               "k.cu:13:5: error: reorder: kernel 'k' runs over m elements but 'g' has n; work on a slice "
               "needs the same count\n");
  expect_error(ar_kernel("split reorder", K_NOREAD, "n"),
               "k.cu:10:36: error: reorder: no pointwise kernel consumes the result of a split AllReduce; "
               "there is nothing to move between ReduceScatter and AllGather\n");
  expect_error(ar_kernel("split reorder", K_LOCAL, "n"),
               "k.cu:13:5: error: reorder: 'o' differs per rank (kernel 'k' computes it from local 'x'), so "
               "gathering its slices after the region would change it; declare it shard(o) or scratch(o), or "
               "'x' replicated(x) (shard and scratch only if nothing after the region reads the other ranks' "
               "slices: COCONET_CHECK=clauses catches such a read)\n"
               "k.cu:13:30: note: 'x' is local (may differ per rank) from here: nothing in the region makes it "
               "identical on every rank\n");
}

// The same kernels are legal when their outputs are not gathered.
static void test_reorder_local_shard(void **state) {
  (void)state;
  IrRegion *r = scheduled(ar_kernel("split reorder shard(o)", K_LOCAL, "n"));
  assert_int_equal(count_ops(r, IR_OP_POINTWISE, 0, IR_PART_SLICE), 1);
  assert_int_equal(count_ops(r, IR_OP_COLLECTIVE, IR_ALLGATHER, IR_PART_BODY), 1);  // only g
  scheduled(ar_kernel("split reorder replicated(x)", K_LOCAL, "n"));
  scheduled(ar_kernel("split reorder scratch(o)", K_LOCAL, "n"));
}

//
// shard and scratch
//

static void test_shard_errors(void **state) {
  (void)state;
  expect_error(build_adam(prog, "split shard(m, v)"),
               "adam.cu:57:52: error: shard: 'm' is computed by 'adam_update' on every element, not on this "
               "rank's slice; shard needs split and reorder to move its writer between the ReduceScatter and "
               "the AllGather\n"
               "adam.cu:60:5: note: 'm' is written here\n");
  expect_error(build_adam(prog, "shard(q)"), "adam.cu:57:46: error: shard: 'q' is not a buffer used in region 'adam_step'\n");
  expect_error(build_megatron(prog, "scratch(bias)"),
               "megatron.cu:70:48: error: scratch: 'bias' is not written in region 'megatron_mlp'\n");
  expect_error(build_adam(prog, "shard(m) scratch(m)"),
               "adam.cu:57:57: error: scratch: 'm' cannot be both shard and scratch\n");
}

// A shard output read by a later kernel would have to be gathered.
static void test_shard_read_later(void **state) {
  (void)state;
  IrRegion *r = build_adam(prog, "split reorder shard(m) replicated(w, v)");
  IrTensor *m = ir_tensor_find(r, "m"), *z = ir_tensor_get_or_add(r, "z", IR_F32, m->count, L("adam.cu", 62, 20));
  ir_op_opaque(r, R("adam.cu", 61, 5), "cudaDeviceSynchronize();");
  IrOp *k2 = ir_op_pointwise(r, R("adam.cu", 62, 5), &(IrPointwise){.kernel = "k2", .stream = "stream", .count = m->count});
  ir_pw_store(r, k2, z, ir_expr_read(r, m, IR_IDX_I, NULL), L("adam.cu", 62, 5));
  // The opaque statement comes first: it may read anything.
  expect_error(r, "adam.cu:57:60: error: shard: 'm' may be read later in the region by a statement coconet does not "
                  "see into, so its slices would have to be gathered\n"
                  "adam.cu:61:5: note: this statement may read 'm'\n");
}

// scratch(g) without reorder: the AllGather of g stays because the kernel reads g.
static void test_scratch(void **state) {
  (void)state;
  IrRegion *r = scheduled(build_adam(prog, "split scratch(g)"));
  assert_int_equal(count_ops(r, IR_OP_COLLECTIVE, IR_ALLGATHER, IR_PART_BODY), 1);
  IrRegion *d = scheduled(build_adam(prog, "split reorder scratch(g) replicated(w, m, v)"));
  for (const IrOp *op = d->sched; op; op = op->next)
    assert_false(op->kind == IR_OP_COLLECTIVE && op->coll.kind == IR_ALLGATHER && op->coll.out->scratch);
}

//
// fuse
//

static void test_fuse(void **state) {
  (void)state;
  IrRegion *r = scheduled(build_adam(prog, "fuse"));
  assert_int_equal(r->nfuse, 1);
  assert_int_equal(r->sched->fuse_group, 1);
  assert_int_equal(r->sched->next->fuse_group, 1);
  IrRegion *e = ir_region_new(prog, "nofuse", L("e.cu", 1, 1), R("e.cu", 2, 1));
  add_clauses(e, "fuse", L("e.cu", 1, 30));
  expect_error(e, "e.cu:1:30: error: fuse: no collective is followed by pointwise work on its result; fuse needs "
                  "ReduceScatter + kernels + AllGather (split reorder) or AllReduce + kernels\n");
  expect_error(ar_kernel("fuse", K_BCAST, "n"),
               "k.cu:14:12: error: fuse: kernel 'k' reads g[i % k]; only g[i] can be fused with the collective "
               "(broadcast reads are fine only for buffers the region's slice work does not write)\n");
}

//
// overlap
//

static void test_overlap_megatron(void **state) {
  (void)state;
  IrRegion *r = scheduled(build_megatron(prog, "overlap(chunks=4) split reorder scratch(y) fuse replicated(residual, bias)"));
  assert_int_equal(r->overlap_chunks, 4);
  assert_int_equal(r->nfuse, 4);
  int gemms = 0, n = 0;
  for (const IrOp *op = r->sched; op; op = op->next, n++) {
    assert_int_equal(op->span.nchunks, 4);
    gemms += op->kind == IR_OP_GEMM;
  }
  assert_int_equal(gemms, 4);
  assert_int_equal(n, 4 * 6);  // GEMM, RS, tail AR, kernel on slice and tail, AllGather(out)
  IrRegion *plain = scheduled(build_megatron(prog, "overlap(chunks=3)"));
  assert_int_equal(plain->overlap_chunks, 3);
}

// A GEMM (C = y, n columns) followed by an AllReduce of `count` elements.
static IrRegion *gemm_ar(const char *clauses, long ncols, const char *count, bool reader) {
  const char *f = "g.cu";
  IrRegion *r = ir_region_new(prog, "gr", L(f, 1, 1), R(f, 2, 1));
  add_clauses(r, clauses, L(f, 1, 30));
  IrSize *m = ir_size_var(r, "m"), *n = ncols ? ir_size_const(r, ncols) : ir_size_var(r, "n");
  IrTensor *a = ir_tensor_get_or_add(r, "a", IR_F32, NULL, L(f, 3, 40));
  IrTensor *b = ir_tensor_get_or_add(r, "b", IR_F32, NULL, L(f, 3, 43));
  IrTensor *y = ir_tensor_get_or_add(r, "y", IR_F32, NULL, L(f, 3, 46));
  ir_op_gemm(r, R(f, 3, 5), &(IrGemm){.fn = "cublasSgemm", .m = m, .n = n, .k = ir_size_var(r, "k"), .lda = m,
                                      .ldb = ir_size_var(r, "k"), .ldc = m, .alpha = "&one", .beta = "&zero",
                                      .alpha_known = true, .alpha_value = 1, .beta_known = true, .a = a, .b = b, .c = y});
  if (reader) {
    IrTensor *z = ir_tensor_get_or_add(r, "z", IR_F32, NULL, L(f, 4, 20));
    IrOp *k = ir_op_pointwise(r, R(f, 4, 5), &(IrPointwise){.kernel = "peek", .count = ir_size_mul(r, m, n)});
    ir_pw_store(r, k, z, ir_expr_read(r, y, IR_IDX_I, NULL), L(f, 4, 5));
  }
  ir_op_collective(r, R(f, 5, 5), &(IrCollective){.kind = IR_ALLREDUCE, .red = IR_RED_SUM, .in = y, .out = y,
                                                  .count = ir_size_parse(r, count), .dtype = IR_F32});
  return r;
}

static void test_overlap_errors(void **state) {
  (void)state;
  expect_error(build_megatron(prog, "split overlap"),
               "megatron.cu:70:46: error: overlap: write overlap before split (it chunks the AllReduce, which "
               "split then splits chunk by chunk)\n");
  expect_error(build_adam(prog, "overlap"),
               "adam.cu:57:40: error: overlap: no cuBLAS GEMM in region 'adam_step' produces the input of an ncclAllReduce\n");
  expect_error(gemm_ar("overlap(chunks=4)", 2, "m * 2", false), "g.cu:3:5: error: overlap: chunks=4 exceeds the GEMM's 2 columns\n");
  expect_error(gemm_ar("overlap(chunks=1)", 0, "m * n", false), "g.cu:1:30: error: overlap: chunks=1; at least 2 chunks are needed\n");
  expect_error(gemm_ar("overlap", 0, "m * k", false),
               "g.cu:5:5: error: overlap: the AllReduce's count is not the GEMM's m * n; overlap needs the "
               "collective to consume exactly the GEMM's output\n");
  expect_error(gemm_ar("overlap", 0, "n * m", true),
               "g.cu:4:5: error: overlap: 'peek' uses the GEMM's buffers between the GEMM and the AllReduce; "
               "overlap needs the GEMM's output consumed only by the collective\n"
               "g.cu:3:5: note: the GEMM is here\n");
  IrRegion *ok = scheduled(gemm_ar("overlap(chunks=2) split", 5, "m * 5", false));
  assert_int_equal(count_ops(ok, IR_OP_COLLECTIVE, IR_REDUCESCATTER, IR_PART_BODY), 2);
}

//
// schedule(auto) and --explain
//

static char *explain_string(const IrRegion *r) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ir_explain(f, r, NULL);
  fclose(f);
  return buf;
}

static void test_auto(void **state) {
  (void)state;
  IrRegion *r = scheduled(build_adam(prog, "shard(m, v) scratch(g) replicated(w) schedule(auto)"));
  char *text = explain_string(r);
  assert_non_null(strstr(text, "  - schedule(auto): as written: not legal here\n"));
  // The fused kernel overlaps communication and the update and saves launches: it wins.
  assert_non_null(strstr(text, "  - schedule(auto): chose split reorder fuse ("));
  assert_non_null(strstr(text, "  - reorder: 'w' is replicated: all-gathered after the slice work\n"));
  assert_non_null(strstr(text, "x)\n"));
  free(text);
  IrRegion *m = scheduled(build_megatron(prog, "scratch(y) replicated(residual, bias) schedule(auto)"));
  text = explain_string(m);
  assert_non_null(strstr(text, "schedule(auto): overlap(chunks=2) split reorder fuse: predicted"));
  assert_non_null(strstr(text, "schedule(auto): chose "));
  free(text);
}

static void test_explain_adam(void **state) {
  (void)state;
  IrRegion *r = scheduled(build_adam(prog, "split reorder shard(m, v) scratch(g) replicated(w) fuse"));
  char *text = explain_string(r);
  assert_non_null(strstr(text, "explain adam_step (adam.cu:57:1): split reorder shard scratch replicated fuse\n"
                               "  - split: AllReduce(sum, g) at adam.cu:59:5 -> ReduceScatter + AllGather, and an "
                               "AllReduce of the count % nranks tail\n"));
  assert_non_null(strstr(text, "  - scratch: the AllGather of 'g' is dead"));
  assert_non_null(strstr(text, "  predicted: "));
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_split),
      cmocka_unit_test(test_split_errors),
      cmocka_unit_test(test_reorder_adam),
      cmocka_unit_test(test_reorder_errors),
      cmocka_unit_test(test_reorder_local_shard),
      cmocka_unit_test(test_shard_errors),
      cmocka_unit_test(test_shard_read_later),
      cmocka_unit_test(test_scratch),
      cmocka_unit_test(test_fuse),
      cmocka_unit_test(test_overlap_megatron),
      cmocka_unit_test(test_overlap_errors),
      cmocka_unit_test(test_auto),
      cmocka_unit_test(test_explain_adam),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
