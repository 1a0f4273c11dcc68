// ir_test_util.c: hand-built regions and helpers shared by the IR unit tests.
#include "ir_test_util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

SrcLoc L(const char *file, unsigned line, unsigned col) {
  SrcLoc l = {file, line, col, 0};
  return l;
}

SrcRange R(const char *file, unsigned line, unsigned col) {
  SrcRange r = {L(file, line, col), L(file, line, col + 1)};
  return r;
}

static const struct {
  const char *name;
  IrClauseKind kind;
} clause_names[] = {
    {"split", IR_CL_SPLIT},     {"reorder", IR_CL_REORDER},   {"shard", IR_CL_SHARD},
    {"scratch", IR_CL_SCRATCH}, {"fuse", IR_CL_FUSE},         {"overlap", IR_CL_OVERLAP},
    {"schedule", IR_CL_AUTO},   {"replicated", IR_CL_REPLICATED},
};

// One clause at p; returns the text after it.
static const char *add_clause(IrRegion *r, const char *p, SrcLoc at, const char *start) {
  const char *q = p;
  while (isalpha((unsigned char)*q)) q++;
  SrcLoc loc = at;
  loc.col += (unsigned)(p - start);
  IrClause *c = NULL;
  for (size_t i = 0; i < sizeof clause_names / sizeof clause_names[0]; i++)
    if (strlen(clause_names[i].name) == (size_t)(q - p) && strncmp(clause_names[i].name, p, (size_t)(q - p)) == 0)
      c = ir_clause_add(r, clause_names[i].kind, loc);
  if (!c) abort();
  if (*q != '(') return q;
  for (q++; *q && *q != ')';) {
    while (*q == ' ' || *q == ',') q++;
    const char *e = q;
    while (*e && *e != ',' && *e != ')') e++;
    char arg[64];
    snprintf(arg, sizeof arg, "%.*s", (int)(e - q), q);
    if (strncmp(arg, "chunks=", 7) == 0) c->chunks = atoi(arg + 7);
    else if (c->kind != IR_CL_AUTO) {
      SrcLoc aloc = at;
      aloc.col += (unsigned)(q - start);
      ir_clause_add_arg(r, c, arg, aloc);
    }
    q = e;
  }
  return *q ? q + 1 : q;
}

void add_clauses(IrRegion *r, const char *text, SrcLoc at) {
  for (const char *p = text; *p;) {
    while (*p == ' ') p++;
    if (*p) p = add_clause(r, p, at, text);
  }
}

static IrExpr *f32(IrRegion *r, double v) { return ir_expr_float(r, v, IR_F32); }
static IrExpr *bin(IrRegion *r, IrBinaryOp op, IrExpr *a, IrExpr *b) { return ir_expr_binary(r, op, a, b); }

IrRegion *build_adam(IrProgram *p, const char *clauses) {
  const char *f = "adam.cu";
  IrRegion *r = ir_region_new(p, "adam_step", L(f, 57, 1), R(f, 58, 1));
  add_clauses(r, clauses, L(f, 57, 40));
  IrSize *n = ir_size_parse(r, "n");
  IrTensor *g = ir_tensor_get_or_add(r, "g", IR_F32, n, L(f, 59, 29));
  ir_op_collective(r, R(f, 59, 5),
                   &(IrCollective){.kind = IR_ALLREDUCE, .red = IR_RED_SUM, .in = g, .out = g, .count = n,
                                   .dtype = IR_F32, .dtype_text = "ncclFloat", .count_text = "n",
                                   .comm = "comm", .stream = "stream", .wrapper = "NCCLCHECK"});
  IrTensor *w = ir_tensor_get_or_add(r, "w", IR_F32, n, L(f, 60, 45));
  IrTensor *m = ir_tensor_get_or_add(r, "m", IR_F32, n, L(f, 60, 51));
  IrTensor *v = ir_tensor_get_or_add(r, "v", IR_F32, n, L(f, 60, 54));
  IrOp *op = ir_op_pointwise(r, R(f, 60, 5),
                             &(IrPointwise){.kernel = "adam_update", .grid = "blocks", .block = "256",
                                            .shmem = "0", .stream = "stream",
                                            .args_text = "w, g, m, v, n, lr, beta1, beta2, eps, t", .count = n});
  IrExpr *lr = ir_expr_param(r, ir_pw_param(r, op, "lr", IR_F32, "lr"));
  IrExpr *b1 = ir_expr_param(r, ir_pw_param(r, op, "beta1", IR_F32, "beta1"));
  IrExpr *b2 = ir_expr_param(r, ir_pw_param(r, op, "beta2", IR_F32, "beta2"));
  IrExpr *eps = ir_expr_param(r, ir_pw_param(r, op, "eps", IR_F32, "eps"));
  IrExpr *t = ir_expr_param(r, ir_pw_param(r, op, "t", IR_I32, "t"));
  IrExpr *gi = ir_expr_read(r, g, IR_IDX_I, NULL);
  SrcLoc at = L(f, 60, 5);
  ir_pw_store(r, op, m, bin(r, IR_ADD, bin(r, IR_MUL, b1, ir_expr_read(r, m, IR_IDX_I, NULL)),
                            bin(r, IR_MUL, bin(r, IR_SUB, f32(r, 1), b1), gi)), at);
  ir_pw_store(r, op, v, bin(r, IR_ADD, bin(r, IR_MUL, b2, ir_expr_read(r, v, IR_IDX_I, NULL)),
                            bin(r, IR_MUL, bin(r, IR_MUL, bin(r, IR_SUB, f32(r, 1), b2), gi), gi)), at);
  IrExpr *tf = ir_expr_cast(r, IR_F32, t);
  IrExpr *mh = ir_pw_let(r, op, "mh", bin(r, IR_DIV, ir_expr_read(r, m, IR_IDX_I, NULL),
                                          bin(r, IR_SUB, f32(r, 1), ir_expr_call(r, IR_FN_POW, IR_F32, b1, tf))), at);
  IrExpr *vh = ir_pw_let(r, op, "vh", bin(r, IR_DIV, ir_expr_read(r, v, IR_IDX_I, NULL),
                                          bin(r, IR_SUB, f32(r, 1), ir_expr_call(r, IR_FN_POW, IR_F32, b2, tf))), at);
  IrExpr *step = bin(r, IR_DIV, bin(r, IR_MUL, lr, mh),
                     bin(r, IR_ADD, ir_expr_call(r, IR_FN_SQRT, IR_F32, vh, NULL), eps));
  ir_pw_store(r, op, w, bin(r, IR_SUB, ir_expr_read(r, w, IR_IDX_I, NULL), step), at);
  return r;
}

static IrExpr *param(IrRegion *r, IrOp *op, const char *name, IrType t) {
  return ir_expr_param(r, ir_pw_param(r, op, name, t, name));
}

IrRegion *build_megatron(IrProgram *p, const char *clauses) {
  const char *f = "megatron.cu";
  IrRegion *r = ir_region_new(p, "megatron_mlp", L(f, 70, 1), R(f, 71, 1));
  add_clauses(r, clauses, L(f, 70, 40));
  IrSize *hidden = ir_size_parse(r, "hidden"), *tokens = ir_size_parse(r, "tokens");
  IrSize *ffn = ir_size_parse(r, "ffn"), *count = ir_size_parse(r, "tokens * hidden");
  IrTensor *w2 = ir_tensor_get_or_add(r, "w2", IR_F32, NULL, L(f, 72, 90));
  IrTensor *act = ir_tensor_get_or_add(r, "act", IR_F32, NULL, L(f, 72, 102));
  IrTensor *y = ir_tensor_get_or_add(r, "y", IR_F32, NULL, L(f, 72, 120));
  IrGemm g = {.fn = "cublasSgemm", .nargs = 14, .wrapper = "CUBLASCHECK", .m = hidden, .n = tokens, .k = ffn,
              .lda = hidden, .ldb = ffn, .ldc = hidden, .alpha = "&one", .beta = "&zero",
              .alpha_known = true, .beta_known = true, .alpha_value = 1, .beta_value = 0,
              .a = w2, .b = act, .c = y};
  const char *args[] = {"handle", "CUBLAS_OP_N", "CUBLAS_OP_N", "hidden", "tokens", "ffn", "&one",
                        "w2", "hidden", "act", "ffn", "&zero", "y", "hidden"};
  for (int i = 0; i < 14; i++) g.args[i] = args[i];
  ir_op_gemm(r, R(f, 72, 5), &g);
  ir_op_collective(r, R(f, 73, 5),
                   &(IrCollective){.kind = IR_ALLREDUCE, .red = IR_RED_SUM, .in = y, .out = y, .count = count,
                                   .dtype = IR_F32, .dtype_text = "ncclFloat", .count_text = "tokens * hidden",
                                   .comm = "comm", .stream = "stream", .wrapper = "NCCLCHECK"});
  IrTensor *out = ir_tensor_get_or_add(r, "out", IR_F32, count, L(f, 74, 45));
  IrTensor *bias = ir_tensor_get_or_add(r, "bias", IR_F32, hidden, L(f, 74, 53));
  IrTensor *res = ir_tensor_get_or_add(r, "residual", IR_F32, count, L(f, 74, 59));
  IrOp *op = ir_op_pointwise(r, R(f, 74, 5),
                             &(IrPointwise){.kernel = "bias_dropout_residual", .grid = "grid", .block = "256",
                                            .stream = "stream", .count = count,
                                            .args_text = "out, y, bias, residual, hidden, tokens * hidden, p, seed, offset"});
  IrExpr *pp = param(r, op, "p", IR_F32), *seed = param(r, op, "seed", IR_I64), *off = param(r, op, "offset", IR_I64);
  SrcLoc at = L(f, 74, 5);
  IrExpr *u = ir_pw_let(r, op, "u", ir_expr_philox(r, seed, off, 0), at);
  IrExpr *x = ir_pw_let(r, op, "x", bin(r, IR_ADD, ir_expr_read(r, y, IR_IDX_I, NULL),
                                        ir_expr_read(r, bias, IR_IDX_MOD, hidden)), at);
  IrExpr *kept = ir_expr_select(r, bin(r, IR_GT, u, pp), bin(r, IR_DIV, x, bin(r, IR_SUB, f32(r, 1), pp)), f32(r, 0));
  ir_pw_store(r, op, out, bin(r, IR_ADD, ir_expr_read(r, res, IR_IDX_I, NULL), kept), at);
  return r;
}

char *capture_stderr(void (*f)(void *), void *arg) {
  fflush(stderr);
  FILE *tmp = tmpfile();
  int saved = dup(2);
  dup2(fileno(tmp), 2);
  f(arg);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  long len = ftell(tmp);
  char *buf = calloc((size_t)len + 1, 1);
  rewind(tmp);
  if (len > 0 && fread(buf, 1, (size_t)len, tmp) != (size_t)len) buf[0] = 0;
  fclose(tmp);
  return buf;
}

typedef struct {
  IrRegion *r;
  int rc;
} ScheduleCall;

static void call_schedule(void *arg) {
  ScheduleCall *c = arg;
  c->rc = ir_schedule(c->r, NULL);
}

int schedule_captured(IrRegion *r, char **out) {
  setenv("COCONET_COLOR", "0", 1);
  ScheduleCall c = {r, 0};
  *out = capture_stderr(call_schedule, &c);
  return c.rc;
}

char *dump_string(const IrRegion *r, bool scheduled) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ir_dump(f, r, scheduled);
  fclose(f);
  return buf;
}
