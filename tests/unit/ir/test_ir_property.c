// test_ir_property.c: random regions (an AllReduce and a chain of 1-3
// pointwise kernels with random expression trees over tensors of random
// types and layouts, counts that often do not divide by the rank count),
// scheduled with every combination of clauses; each schedule the translator
// accepts must compute what the region as written computes, for 1..8 ranks,
// in the reference interpreter. A failure prints the program's seed, the
// clauses and both op lists. COCONET_PROPERTY_PROGRAMS overrides the number
// of programs, COCONET_PROPERTY_SEED the first seed.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "ir_test_util.h"

typedef struct Gen {
  uint64_t s;
  IrRegion *r;
  IrSize *count;
  IrTensor *x;           // the reduced buffer (AllReduce output)
  IrTensor *in[4];       // other inputs
  int nin;
  IrTensor *bias;        // read as bias[i % kk], or bias[i / kk] when it has count elements
  bool bias_mod_only;    // bias has kk elements
  IrTensor *outs[8];     // kernel outputs so far
  int nouts;
  char shard[128];       // candidate shard(...) list: fresh outputs
  IrParam *params[2];
  IrOp *op;              // the kernel being built
  int depth;
} Gen;

static uint64_t next(Gen *g) {
  g->s ^= g->s << 13;
  g->s ^= g->s >> 7;
  g->s ^= g->s << 17;
  return g->s;
}

static int pick(Gen *g, int n) { return (int)(next(g) % (uint64_t)n); }

static IrType any_type(Gen *g) {
  static const IrType types[] = {IR_F32, IR_F32, IR_F16, IR_BF16, IR_F64, IR_I32};
  return types[pick(g, 6)];
}

static SrcLoc at(int line) { return L("rand.cu", (unsigned)line, 5); }

// Draws are sequenced statement by statement (never two in one argument
// list) so that a seed builds the same program with every compiler.
static IrExpr *leaf(Gen *g) {
  IrRegion *r = g->r;
  switch (pick(g, 9)) {
  case 0: case 1: return ir_expr_read(r, g->x, IR_IDX_I, NULL);
  case 2: return g->nin ? ir_expr_read(r, g->in[pick(g, g->nin)], IR_IDX_I, NULL) : ir_expr_index(r);
  case 3: return g->nouts ? ir_expr_read(r, g->outs[pick(g, g->nouts)], IR_IDX_I, NULL) : ir_expr_float(r, 0.5, IR_F32);
  case 4: return ir_expr_param(r, g->params[pick(g, 2)]);
  case 5:
    if (g->bias_mod_only || pick(g, 2)) return ir_expr_read(r, g->bias, IR_IDX_MOD, ir_size_var(r, "kk"));
    return ir_expr_read(r, g->bias, IR_IDX_DIV, ir_size_var(r, "kk"));
  case 6: {
    if (pick(g, 2)) return ir_expr_int(r, pick(g, 7) - 3, IR_I32);
    double v = 0.25 * pick(g, 9);
    return ir_expr_float(r, v, any_type(g));
  }
  case 7: return ir_expr_cast(r, IR_F32, ir_expr_binary(r, IR_MOD, ir_expr_index(r), ir_expr_int(r, 5, IR_I64)));
  default: {
    IrExpr *offset = ir_expr_int(r, pick(g, 6), IR_I64);
    return ir_expr_philox(r, ir_expr_param(r, g->params[1]), offset, pick(g, 5));
  }
  }
}

static IrExpr *tree(Gen *g, int depth);

static IrExpr *math(Gen *g, int depth) {
  IrRegion *r = g->r;
  IrExpr *a = ir_expr_cast(r, IR_F32, tree(g, depth - 1));
  switch (pick(g, 5)) {
  case 0: return ir_expr_call(r, IR_FN_FABS, IR_F32, a, NULL);
  case 1: return ir_expr_call(r, IR_FN_SQRT, IR_F32, ir_expr_call(r, IR_FN_FABS, IR_F32, a, NULL), NULL);
  case 2: return ir_expr_call(r, IR_FN_TANH, IR_F32, a, NULL);
  case 3: return ir_expr_call(r, IR_FN_FMAX, IR_F32, a, ir_expr_cast(r, IR_F32, tree(g, depth - 1)));
  default: return ir_expr_call(r, IR_FN_EXP, IR_F32, ir_expr_unary(r, IR_NEG, ir_expr_call(r, IR_FN_FABS, IR_F32, a, NULL)), NULL);
  }
}

static IrExpr *tree(Gen *g, int depth) {
  IrRegion *r = g->r;
  if (depth <= 0 || pick(g, 4) == 0) return leaf(g);
  static const IrBinaryOp arith[] = {IR_ADD, IR_SUB, IR_MUL, IR_DIV, IR_ADD, IR_MUL};
  switch (pick(g, 6)) {
  case 0: case 1: case 2: {
    IrBinaryOp op = arith[pick(g, 6)];
    IrExpr *a = tree(g, depth - 1);
    return ir_expr_binary(r, op, a, tree(g, depth - 1));
  }
  case 3: {
    IrBinaryOp op = pick(g, 2) ? IR_LT : IR_GE;
    IrExpr *a = tree(g, depth - 1);
    IrExpr *c = ir_expr_binary(r, op, a, tree(g, depth - 1));
    IrExpr *then = tree(g, depth - 1);
    return ir_expr_select(r, c, then, tree(g, depth - 1));
  }
  case 4: {
    IrType t = any_type(g);
    return ir_expr_cast(r, t, tree(g, depth - 1));
  }
  default: return math(g, depth);
  }
}

// Kernel j: 1-2 outputs, fresh or an input updated in place.
static void kernel(Gen *g, int j) {
  IrRegion *r = g->r;
  char name[32];
  snprintf(name, sizeof name, "k%d", j);
  g->op = ir_op_pointwise(r, R("rand.cu", 20 + j, 5), &(IrPointwise){.kernel = name, .count = g->count});
  g->params[0] = ir_pw_param(r, g->op, "s0", IR_F32, "s0");
  g->params[1] = ir_pw_param(r, g->op, "seed", IR_I64, "seed");
  IrExpr *first = ir_expr_read(r, g->x, IR_IDX_I, NULL);
  if (pick(g, 2)) first = ir_pw_let(r, g->op, "t", ir_expr_binary(r, IR_ADD, first, tree(g, 2)), at(20 + j));
  int nout = 1 + pick(g, 2);
  for (int q = 0; q < nout && g->nouts < 8; q++) {
    IrTensor *t;
    if (g->nin && pick(g, 3) == 0) {
      t = g->in[pick(g, g->nin)];
    } else {
      snprintf(name, sizeof name, "o%d_%d", j, q);
      t = ir_tensor_get_or_add(r, name, any_type(g), g->count, at(20 + j));
      snprintf(g->shard + strlen(g->shard), sizeof g->shard - strlen(g->shard), "%s%s", g->shard[0] ? ", " : "", name);
    }
    IrExpr *v = q == 0 ? ir_expr_binary(r, IR_MUL, first, tree(g, 3)) : tree(g, 3);
    ir_pw_store(r, g->op, t, v, at(20 + j));
    g->outs[g->nouts++] = t;
  }
}

static const IrRedOp reds[] = {IR_RED_SUM, IR_RED_SUM, IR_RED_SUM, IR_RED_MAX, IR_RED_MIN, IR_RED_PROD, IR_RED_AVG};

// The program of `seed` with the given clauses; *shard gets the fresh outputs.
static IrRegion *program(IrProgram *p, uint64_t seed, const char *clauses, char *shard) {
  Gen g = {.s = seed * 0x9E3779B97F4A7C15ull + 1};
  IrRegion *r = g.r = ir_region_new(p, "rand", L("rand.cu", 1, 1), R("rand.cu", 2, 1));
  static const char *counts[] = {"n", "n", "a * b", "7", "13", "1"};
  g.count = ir_size_parse(r, counts[pick(&g, 6)]);
  IrTensor *in = ir_tensor_get_or_add(r, "g", any_type(&g), g.count, at(10));
  g.x = pick(&g, 3) ? in : ir_tensor_get_or_add(r, "gr", in->type, g.count, at(10));
  IrRedOp red = reds[pick(&g, 7)];
  if (red == IR_RED_PROD && ir_type_is_float(in->type)) red = IR_RED_SUM;
  ir_op_collective(r, R("rand.cu", 10, 5), &(IrCollective){.kind = IR_ALLREDUCE, .red = red, .in = in, .out = g.x,
                                                          .count = g.count, .dtype = in->type, .comm = "comm"});
  char repl[64] = "";
  g.nin = 1 + pick(&g, 3);
  for (int i = 0; i < g.nin; i++) {
    char name[8];
    snprintf(name, sizeof name, "x%d", i);
    g.in[i] = ir_tensor_get_or_add(r, name, any_type(&g), g.count, at(11 + i));
    if (pick(&g, 2)) snprintf(repl + strlen(repl), sizeof repl - strlen(repl), "%s%s", repl[0] ? ", " : "", name);
  }
  g.bias_mod_only = pick(&g, 2);
  g.bias = ir_tensor_get_or_add(r, "bias", any_type(&g), g.bias_mod_only ? ir_size_var(r, "kk") : g.count, at(15));
  int nk = 1 + pick(&g, 3);
  for (int j = 0; j < nk; j++) kernel(&g, j);
  char all[512];
  snprintf(all, sizeof all, "%s%s%s%s", clauses, repl[0] ? " replicated(" : "", repl, repl[0] ? ")" : "");
  add_clauses(r, all, L("rand.cu", 1, 30));
  if (shard) strcpy(shard, g.shard);
  return r;
}

enum { NSETS = 9 };

typedef struct Stats {
  int legal[NSETS], illegal[NSETS];
  long runs;
  double max_err;
} Stats;

static const char *clause_set(int k, const char *shard, const char *out_name, char *buf, size_t len) {
  switch (k) {
  case 0: return "";
  case 1: return "split";
  case 2: return "split reorder";
  case 3: snprintf(buf, len, "split reorder shard(%s)", shard); return shard[0] ? buf : "split reorder";
  case 4: snprintf(buf, len, "split reorder scratch(%s)", out_name); return buf;
  case 5: return "split reorder fuse";
  case 6: snprintf(buf, len, "split reorder shard(%s) fuse", shard); return shard[0] ? buf : "split reorder fuse";
  case 7: return "fuse";
  default: snprintf(buf, len, "schedule(auto)%s%s%s", shard[0] ? " shard(" : "", shard, shard[0] ? ")" : ""); return buf;
  }
}

static void fail_program(IrRegion *r, uint64_t seed, const char *clauses, int nranks, const IrTensor *bad) {
  fprintf(stderr, "property: program seed %llu, clauses '%s': '%s' differs with %d rank(s)\n",
          (unsigned long long)seed, clauses, bad->name, nranks);
  ir_dump(stderr, r, false);
  ir_dump(stderr, r, true);
  fail_msg("rerun with COCONET_PROPERTY_SEED=%llu COCONET_PROPERTY_PROGRAMS=1", (unsigned long long)seed);
}

// Original and scheduled agree for 1..8 ranks (inputs and sizes differ per rank count).
static void check_schedule(IrRegion *r, uint64_t seed, const char *clauses, Stats *st) {
  for (int nranks = 1; nranks <= 8; nranks++) {
    IrInterpConfig cfg = {.nranks = nranks, .seed = seed * 131 + (uint64_t)nranks, .max_elems = 160};
    IrRun *a = ir_interp_run(r, false, &cfg), *b = ir_interp_run(r, true, &cfg);
    assert_non_null(a);
    assert_non_null(b);
    const IrTensor *bad;
    double err = ir_run_compare(r, a, b, &bad);
    ir_run_free(a);
    ir_run_free(b);
    if (bad) fail_program(r, seed, clauses, nranks, bad);
    if (err > st->max_err) st->max_err = err;
    st->runs++;
  }
}

static long env_long(const char *name, long fallback) {
  const char *v = getenv(name);
  return v ? strtol(v, NULL, 10) : fallback;
}

static void test_random_programs(void **state) {
  (void)state;
  long programs = env_long("COCONET_PROPERTY_PROGRAMS", 200), first = env_long("COCONET_PROPERTY_SEED", 1);
  Stats st = {0};
  clock_t start = clock();
  for (long s = first; s < first + programs; s++) {
    IrProgram *p = ir_program_new();
    char shard[128];
    IrRegion *probe = program(p, (uint64_t)s, "", shard);
    const char *x = probe->ops->coll.out->name;
    for (int k = 0; k < NSETS; k++) {
      char buf[256];
      const char *clauses = clause_set(k, shard, x, buf, sizeof buf);
      IrRegion *r = program(p, (uint64_t)s, clauses, NULL);
      if (ir_schedule(r, &(IrSchedOptions){.quiet = true}) != 0) {
        st.illegal[k]++;
        continue;
      }
      st.legal[k]++;
      check_schedule(r, (uint64_t)s, clauses, &st);
    }
    ir_program_free(p);
  }
  static const char *names[NSETS] = {"as written", "split", "split reorder", "+ shard(outputs)", "+ scratch(reduced)",
                                     "+ fuse", "+ shard + fuse", "fuse", "schedule(auto)"};
  printf("property: %ld programs, %ld interpreter comparisons (1..8 ranks), max relative error %g, %.2f s\n",
         programs, st.runs, st.max_err, (double)(clock() - start) / CLOCKS_PER_SEC);
  for (int k = 0; k < NSETS; k++) printf("property:   %-20s %4d legal, %4d rejected\n", names[k], st.legal[k], st.illegal[k]);
  assert_int_equal(st.illegal[0], 0);
  assert_true(st.legal[2] > programs / 10);
  assert_true(st.legal[3] > programs / 4);
  assert_true(st.legal[5] > programs / 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_programs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
