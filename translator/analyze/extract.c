// extract.c: the front end's regions become IR regions (ir.h).
//
// Each classified statement becomes one op, in source order: NCCL calls become
// collectives, cuBLAS calls GEMMs, async copies/memsets/events their ops,
// launches pointwise ops (analyze.c), and everything else an opaque op that no
// transformation moves work across.
#include "analyze/analyze.h"
#include "common/text.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const struct { const char *name; IrClauseKind kind; } CLAUSES[] = {
    {"split", IR_CL_SPLIT}, {"reorder", IR_CL_REORDER}, {"shard", IR_CL_SHARD},
    {"scratch", IR_CL_SCRATCH}, {"fuse", IR_CL_FUSE}, {"overlap", IR_CL_OVERLAP},
    {"schedule", IR_CL_AUTO}, {"replicated", IR_CL_REPLICATED}, {"pipeline", IR_CL_PIPELINE},
};

static SrcLoc text_loc(const Frontend *fe, const Region *r, unsigned offset) {
  const char *p = fe->src.buf + r->pragma_range.begin.offset;
  unsigned base = r->pragma_range.begin.offset + (unsigned)(strstr(p, "coconet") - p);
  return source_loc(&fe->src, base + offset);
}

static void extract_clauses(const Frontend *fe, const Region *r, IrRegion *ir) {
  for (const PragmaClause *c = r->pragma->clauses; c; c = c->next) {
    for (size_t i = 0; i < sizeof CLAUSES / sizeof *CLAUSES; i++) {
      if (strcmp(c->name, CLAUSES[i].name) != 0) continue;
      IrClause *cl = ir_clause_add(ir, CLAUSES[i].kind, text_loc(fe, r, c->offset));
      const PragmaArg *chunks = pragma_find_key(c, "chunks");
      if (chunks) cl->chunks = pragma_arg_int(chunks);
      const PragmaArg *tag = pragma_find_key(c, "tag"), *group = pragma_find_key(c, "group");
      if (tag) cl->tag = ir_strdup(ir, tag->text);
      if (group) {
        cl->group = ir_strdup(ir, group->text);
        cl->group_loc = text_loc(fe, r, group->offset);
      }
      for (const PragmaArg *a = c->args; a && !a->key && CLAUSES[i].kind != IR_CL_AUTO; a = a->next)
        ir_clause_add_arg(ir, cl, a->text, text_loc(fe, r, a->offset));
    }
  }
}

static const char *arg(const Stmt *s, int i) { return i < s->nargs ? s->args[i].text : NULL; }

// A member chain as written, `sh.rows`, `layer->tokens` (blanks or anything
// else: NULL): the sizes read it as one variable (ir_size_parse).
static char *member_chain(const Frontend *fe, CXCursor c) {
  char *m = fe_text(fe, fe_range(fe, clang_getCursorExtent(c)));
  bool ok = text_ident_char(*m) && !isdigit((unsigned char)*m);
  for (const char *p = m; *p && ok; p++)
    ok = text_ident_char(*p) || *p == '.' || (p[0] == '-' && p[1] == '>') || (p[0] == '>' && p[-1] == '-');
  if (ok) return m;
  free(m);
  return NULL;
}

// A name or member chain whose variable keeps its value from `after` on: a
// local or parameter not assigned there, through `->` only a pointer to const.
static bool kept_from(const Frontend *fe, CXCursor c, unsigned after) {
  bool arrow = false;
  while (clang_getCursorKind(c) == CXCursor_MemberRefExpr || clang_getCursorKind(c) == CXCursor_UnexposedExpr) {
    FeKids ks = fe_kids(c);
    if (ks.n != 1) return false;
    if (clang_getCursorKind(c) == CXCursor_MemberRefExpr)
      arrow |= clang_getCanonicalType(clang_getCursorType(ks.v[0])).kind == CXType_Pointer;
    c = ks.v[0];
  }
  CXCursor d = clang_getCursorReferenced(c);
  enum CXCursorKind k = clang_getCursorKind(d);
  if (clang_getCursorKind(c) != CXCursor_DeclRefExpr) return false;
  if (k != CXCursor_VarDecl && k != CXCursor_ParmDecl) return k == CXCursor_EnumConstantDecl;
  CXType t = clang_getCanonicalType(clang_getCursorType(d));
  if (arrow && !(t.kind == CXType_Pointer && clang_isConstQualifiedType(clang_getPointeeType(t)))) return false;
  return !assigned_after(fe, d, after);
}

// Parentheses, an explicit cast to an integer type of 32 bits or more of an integer, or an
// implicit conversion that keeps the value (so, or an lvalue read): around one expression,
// whose value it is (`(size_t)n` is n; `(uint8_t)n`, `(size_t)f` of a float are not).
static bool value_kept(CXCursor c) {
  enum CXCursorKind k = clang_getCursorKind(c);
  FeKids ks = fe_kids(c);
  if (ks.n < 1) return false;
  if (k == CXCursor_ParenExpr) return ks.n == 1;
  CXType to = clang_getCursorType(c), from = clang_getCursorType(ks.v[ks.n - 1]);
  if (k == CXCursor_UnexposedExpr)
    return ks.n == 1 && (clang_equalTypes(clang_getCanonicalType(to), clang_getCanonicalType(from)) ||
                         (wide_integer_type(to) && integer_type(from)));
  if (k != CXCursor_CStyleCastExpr && k != CXCursor_CXXStaticCastExpr && k != CXCursor_CXXFunctionalCastExpr)
    return false;
  return wide_integer_type(to) && integer_type(from);
}

// A product of names, member chains and integer literals, through casts that keep the value:
// "tokens * hidden", "sh.rows * sh.h", each keeping its value from `after`
// (the local's declaration) on; NULL for anything else.
static char *product_text(const Frontend *fe, CXCursor c, unsigned after) {
  enum CXCursorKind k = clang_getCursorKind(c);
  FeKids t = fe_kids(c);
  if (k == CXCursor_IntegerLiteral) return fe_text(fe, fe_range(fe, clang_getCursorExtent(c)));
  if (k == CXCursor_DeclRefExpr)
    return kept_from(fe, c, after) ? fe_text(fe, fe_range(fe, clang_getCursorExtent(c))) : NULL;
  if (k == CXCursor_MemberRefExpr) return kept_from(fe, c, after) ? member_chain(fe, c) : NULL;
  if (k == CXCursor_UnexposedExpr || k == CXCursor_ParenExpr || k == CXCursor_CStyleCastExpr ||
      k == CXCursor_CXXStaticCastExpr || k == CXCursor_CXXFunctionalCastExpr)
    return value_kept(c) ? product_text(fe, t.v[t.n - 1], after) : NULL;
  if (k != CXCursor_BinaryOperator || t.n != 2) return NULL;
  SrcRange op = {fe_range(fe, clang_getCursorExtent(t.v[0])).end,
                 fe_range(fe, clang_getCursorExtent(t.v[1])).begin};
  char *optext = fe_text(fe, op);
  bool mul = strspn(optext, " \t\n") < strlen(optext) && optext[strspn(optext, " \t\n")] == '*';
  free(optext);
  char *a = mul ? product_text(fe, t.v[0], after) : NULL, *b = a ? product_text(fe, t.v[1], after) : NULL;
  char *out = NULL;
  if (a && b && asprintf(&out, "%s * %s", a, b) < 0) out = NULL;
  free(a);
  free(b);
  return out;
}

// The size a count argument stands for. A local never assigned after its
// initializer, a product (`const size_t n = (size_t)tokens * hidden;`, const or
// not; `sh.rows * sh.h`) of variables not assigned after it, is replaced by that
// product, so that sizes written differently compare equal in the IR.
const char *extract_size_text(const Frontend *fe, IrRegion *ir, const Piece *p) {
  CXSourceLocation at = clang_getLocationForOffset(fe->tu, fe->file, p->range.begin.offset);
  CXCursor c = clang_getCursor(fe->tu, at);
  // The cursor is the whole argument as written (not a text a wrapper's parameters were
  // replaced in), or a cast to an integer type of it, `(size_t)n`: the name's size (a count
  // keeps its value through the cast).
  SrcRange at_c = fe_range(fe, clang_getCursorExtent(c));
  char *raw = fe_text(fe, at_c);
  bool whole = at_c.end.offset == p->range.end.offset && strcmp(raw, p->text) == 0;
  free(raw);
  // A C-style cast that may change the value but is spelled with a name the sizes skip (a local
  // `typedef uint8_t uint32_t;`): the type as clang reads it, `(unsigned char)n`, another count.
  if (whole && clang_getCursorKind(c) == CXCursor_CStyleCastExpr && !value_kept(c) && p->text[0] == '(') {
    size_t close = strcspn(p->text, ")");
    char *spelled = strndup(p->text + 1, close - 1);
    if (!spelled) COCONET_BUG("out of memory");
    text_drop(spelled, spelled, TEXT_BLANKS);
    bool skipped = p->text[close] == ')' && ir_size_cast_skipped(spelled);
    free(spelled);
    if (skipped) {
      CXString real = clang_getTypeSpelling(clang_getCanonicalType(clang_getCursorType(c)));
      const char *out = ir_printf(ir, "(%s)%s", clang_getCString(real), p->text + close + 1);
      clang_disposeString(real);
      return out;
    }
  }
  while (whole && value_kept(c)) {
    FeKids ks = fe_kids(c);
    c = ks.v[ks.n - 1];
  }
  CXCursor d = clang_getCursorReferenced(c);
  // A member of this named alone (`n_` in a method) is `this->n_`, as the other counts may write it.
  if (clang_getCursorKind(c) == CXCursor_MemberRefExpr && clang_getCursorKind(d) == CXCursor_FieldDecl &&
      fe_kids(c).n == 0 && text_is_identifier(p->text))
    return ir_printf(ir, "this->%s", p->text);
  if (clang_getCursorKind(c) != CXCursor_DeclRefExpr || clang_getCursorKind(d) != CXCursor_VarDecl ||
      !never_assigned(fe, d) || !wide_integer_type(clang_getCursorType(d)))  // a uint8_t's value is its own
    return p->text;
  char *name = fe_spelling(d), *inner = fe_text(fe, fe_range(fe, clang_getCursorExtent(c)));
  whole = whole && strcmp(name, inner) == 0;
  free(name);
  free(inner);
  FeKids t = fe_kids(d);
  unsigned from = 0;  // the local's declaration
  clang_getFileLocation(clang_getCursorLocation(d), NULL, NULL, NULL, &from);
  char *prod = whole && t.n ? product_text(fe, t.v[t.n == 1 ? 0 : 1], from) : NULL;
  if (prod && !strchr(prod, '*') && strpbrk(prod, ".>")) {  // `const int h = layer.hidden;` stays h, as
    free(prod);                                              // in the products other sizes hold
    prod = NULL;
  }
  const char *out = prod ? ir_strdup(ir, prod) : p->text;
  free(prod);
  return out;
}

static const struct { const char *name; IrCollKind kind; int nargs; } COLLECTIVES[] = {
    {"ncclAllReduce", IR_ALLREDUCE, 7},         {"ncclReduceScatter", IR_REDUCESCATTER, 7},
    {"ncclAllGather", IR_ALLGATHER, 6},         {"ncclBroadcast", IR_BROADCAST, 7},
    {"ncclReduce", IR_REDUCE, 8},               {"ncclSend", IR_SEND, 6},
    {"ncclRecv", IR_RECV, 6},
};

typedef struct FindCall {
  const char *name;
  CXCursor call;
} FindCall;

static enum CXChildVisitResult find_call(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  FindCall *f = data;
  if (clang_getCursorKind(c) == CXCursor_CallExpr) {
    char *name = fe_spelling(c);
    bool hit = strcmp(name, f->name) == 0;
    free(name);
    if (hit) {
      f->call = c;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

// Argument i of the statement's call (null when there is none).
static CXCursor call_argument(const Stmt *s, int i) {
  FindCall f = {s->callee, clang_getNullCursor()};
  if (find_call(s->cursor, s->cursor, &f) == CXChildVisit_Recurse) clang_visitChildren(s->cursor, find_call, &f);
  if (clang_Cursor_isNull(f.call) || i >= clang_Cursor_getNumArguments(f.call)) return clang_getNullCursor();
  return clang_Cursor_getArgument(f.call, (unsigned)i);
}

// A pointer's element type; IR_VOID for void (or not a pointer) and unknown types.
static IrType pointee_of(CXCursor a) {
  CXType t = clang_getCanonicalType(clang_getCursorType(a));
  if (t.kind != CXType_Pointer) return IR_VOID;
  CXType p = clang_getUnqualifiedType(clang_getCanonicalType(clang_getPointeeType(t)));
  if (p.kind == CXType_Void) return IR_VOID;
  CXString ps = clang_getTypeSpelling(p);
  IrType it = ir_type_from_name(clang_getCString(ps));
  clang_disposeString(ps);
  return it;
}

// A buffer argument through its conversions to `void *`: parentheses, implicit
// conversions and casts, C-style or C++ (`(const void *)g`,
// `reinterpret_cast<void *>(g)`), down to the typed pointer they convert (a
// cast between typed pointers stays); the argument itself when there is none.
static CXCursor typed_buffer(CXCursor a) {
  while (!clang_Cursor_isNull(a) && pointee_of(a) == IR_VOID) {
    FeKids k = fe_kids(a);
    enum CXCursorKind kind = clang_getCursorKind(a);
    bool cast = kind == CXCursor_CStyleCastExpr || kind == CXCursor_CXXStaticCastExpr ||
                kind == CXCursor_CXXReinterpretCastExpr || kind == CXCursor_CXXConstCastExpr;
    if (k.n == 0 || (!cast && k.n != 1) || (!cast && kind != CXCursor_UnexposedExpr && kind != CXCursor_ParenExpr))
      break;
    a = k.last;
  }
  return a;
}

// The element type argument i of the statement's call points to, through the
// conversion to `const void *` (IR_VOID when it is untyped or unknown).
static IrType pointee_type(const Stmt *s, int i) { return pointee_of(typed_buffer(call_argument(s, i))); }

// The text of buffer argument i as the typed pointer it converts (`g` for
// `(const void *)g`), when that is written in the argument; else the argument's text.
static const char *buffer_text(const Frontend *fe, IrRegion *ir, const Stmt *s, int i) {
  CXCursor a = call_argument(s, i), b = typed_buffer(a);
  if (clang_Cursor_isNull(b) || clang_equalCursors(a, b) || pointee_of(b) == IR_VOID) return arg(s, i);
  SrcRange r = fe_range(fe, clang_getCursorExtent(b));
  const Piece *p = &s->args[i];
  if (!r.begin.file || r.begin.offset < p->range.begin.offset || r.end.offset > p->range.end.offset ||
      r.end.offset <= r.begin.offset)
    return arg(s, i);
  char *text = fe_text(fe, r);
  const char *out = ir_strdup(ir, text);
  free(text);
  return out;
}

// A recognised NCCL call kept as written (not modelled) says why, once, where it is.
static bool kept_as_written(const Stmt *s, const char *why) {
  diag_warning(&s->range.begin, "%s is kept as written and no schedule applies to it: %s", s->callee, why);
  return false;
}

static IrTensor *tensor(IrRegion *ir, const Stmt *s, const char *text, IrType type) {
  return ir_tensor_get_or_add(ir, text, type, NULL, s->range.begin);
}

// ncclAllReduce(send, recv, count, dtype, op, comm, stream) and its siblings.
static bool extract_collective(const Frontend *fe, IrRegion *ir, const Stmt *s) {
  for (size_t i = 0; i < sizeof COLLECTIVES / sizeof *COLLECTIVES; i++) {
    if (strcmp(s->callee, COLLECTIVES[i].name) != 0) continue;
    if (s->nargs != COLLECTIVES[i].nargs) return false;
    IrCollKind k = COLLECTIVES[i].kind;
    bool p2p = k == IR_SEND || k == IR_RECV;
    bool has_red = k == IR_ALLREDUCE || k == IR_REDUCESCATTER || k == IR_REDUCE;
    int dt = p2p ? 2 : 3;
    IrCollective c = {.kind = k, .wrapper = s->wrapper};
    c.dtype_text = arg(s, dt);
    c.dtype = ir_type_from_name(c.dtype_text);
    // A datatype from a variable, a constexpr or a macro: the buffer's pointer type says it.
    IrType buf = pointee_type(s, 0);
    if (c.dtype == IR_VOID || (buf == IR_BOOL && ir_type_is_narrow(c.dtype))) c.dtype = buf;  // NCCL has no bool
    if (c.dtype == IR_VOID)
      return kept_as_written(s, "neither its datatype nor its buffer's pointer type tells the element type");
    // A datatype macro inside another macro's argument has no text libclang gives: generated calls spell the type.
    if (!c.dtype_text || !*c.dtype_text) c.dtype_text = ir_nccl_type_name(c.dtype);
    if (buf != IR_VOID && buf != c.dtype &&
        (ir_type_size(buf) != ir_type_size(c.dtype) || (ir_type_is_narrow(buf) && ir_type_is_narrow(c.dtype)))) {
      diag_error(&s->args[dt].range.begin, "%s: datatype '%s' is %s but the buffer points to %s", s->callee,
                 c.dtype_text, ir_type_name(c.dtype), ir_type_name(buf));
      return true;  // reported: not modelled, and the error stops the translation
    }
    c.count_text = arg(s, p2p ? 1 : 2);
    c.count = ir_size_parse(ir, extract_size_text(fe, ir, &s->args[p2p ? 1 : 2]));
    c.red = has_red ? ir_red_from_name(arg(s, 4)) : IR_RED_NONE;
    if (has_red && c.red == IR_RED_NONE)
      return kept_as_written(s, "its reduction operator is not one of ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg");
    if (k == IR_BROADCAST) c.root = arg(s, 4);
    if (k == IR_REDUCE) c.root = arg(s, 5);
    if (p2p) c.peer = arg(s, 3);
    c.comm = arg(s, s->nargs - 2);
    c.stream = arg(s, s->nargs - 1);
    if (k != IR_RECV) c.in = tensor(ir, s, buffer_text(fe, ir, s, 0), c.dtype);
    if (k == IR_RECV) c.out = tensor(ir, s, buffer_text(fe, ir, s, 0), c.dtype);
    else if (k != IR_SEND) c.out = tensor(ir, s, buffer_text(fe, ir, s, 1), c.dtype);
    ir_op_collective(ir, s->range, &c);
    if (s->seen_through)
      ir_region_note(ir, ir_printf(ir, "the call of '%s' (%s:%u:%u) is the %s inside it%s%s%s, seen through (its "
                                       "parameters stand for the call's arguments)", s->seen_through,
                                   s->seen_loc.file ? s->seen_loc.file : "?", s->seen_loc.line, s->seen_loc.col,
                                   s->callee, s->seen_path ? " (through '" : "", s->seen_path ? s->seen_path : "",
                                   s->seen_path ? "')" : ""));
    return true;
  }
  return false;
}

static bool is_trans(const char *op) { return op && strcmp(op, "CUBLAS_OP_N") != 0; }

static bool literal_value(const char *text, double *v) {
  if (!text) return false;
  const char *p = text[0] == '&' ? text + 1 : text;
  char *end;
  *v = strtod(p, &end);
  return end != p && (*end == '\0' || strcmp(end, "f") == 0);
}

// cublasSgemm/Hgemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc) and
// cublasGemmEx(h, ta, tb, m, n, k, alpha, A, At, lda, B, Bt, ldb, beta, C, Ct, ldc, compute, algo).
static bool extract_gemm(const Frontend *fe, IrRegion *ir, const Stmt *s) {
  bool ex = strcmp(s->callee, "cublasGemmEx") == 0;
  if (s->nargs != (ex ? 19 : 14) || s->nargs > IR_GEMM_MAX_ARGS) return false;
  IrGemm g = {.fn = s->callee, .nargs = s->nargs, .wrapper = s->wrapper};
  for (int i = 0; i < s->nargs; i++) g.args[i] = s->args[i].text;
  g.transa = is_trans(arg(s, 1));
  g.transb = is_trans(arg(s, 2));
  g.m = ir_size_parse(ir, extract_size_text(fe, ir, &s->args[3]));
  g.n = ir_size_parse(ir, extract_size_text(fe, ir, &s->args[4]));
  g.k = ir_size_parse(ir, extract_size_text(fe, ir, &s->args[5]));
  g.alpha = arg(s, 6);
  g.alpha_known = literal_value(g.alpha, &g.alpha_value);
  IrType at, bt, ct;
  int a = 7, b = ex ? 10 : 9, beta = ex ? 13 : 11, c = ex ? 14 : 12;
  if (ex) {
    at = ir_type_from_name(arg(s, 8));
    bt = ir_type_from_name(arg(s, 11));
    ct = ir_type_from_name(arg(s, 15));
    g.lda = ir_size_parse(ir, extract_size_text(fe, ir, &s->args[9]));
    g.ldb = ir_size_parse(ir, extract_size_text(fe, ir, &s->args[12]));
    g.ldc = ir_size_parse(ir, extract_size_text(fe, ir, &s->args[16]));
  } else {
    at = bt = ct = strcmp(s->callee, "cublasHgemm") == 0 ? IR_F16 : IR_F32;
    g.lda = ir_size_parse(ir, extract_size_text(fe, ir, &s->args[8]));
    g.ldb = ir_size_parse(ir, extract_size_text(fe, ir, &s->args[10]));
    g.ldc = ir_size_parse(ir, extract_size_text(fe, ir, &s->args[13]));
  }
  if (at == IR_VOID || bt == IR_VOID || ct == IR_VOID) return false;
  g.beta = arg(s, beta);
  g.beta_known = literal_value(g.beta, &g.beta_value);
  g.a = tensor(ir, s, arg(s, a), at);
  g.b = tensor(ir, s, arg(s, b), bt);
  g.c = tensor(ir, s, arg(s, c), ct);
  ir_op_gemm(ir, s->range, &g);
  return true;
}

// "n * sizeof(float)" -> element type float, count n.
static bool bytes_to_elems(IrRegion *ir, const char *bytes, IrType *type, IrSize **count) {
  const char *so = bytes ? strstr(bytes, "sizeof(") : NULL;
  if (!so) return false;
  const char *close = strchr(so, ')');
  if (!close) return false;
  char tname[64];
  snprintf(tname, sizeof tname, "%.*s", (int)(close - so - 7), so + 7);
  *type = ir_type_from_name(tname);
  if (*type == IR_VOID) return false;
  char rest[512];
  snprintf(rest, sizeof rest, "%.*s1%s", (int)(so - bytes), bytes, close + 1);
  *count = ir_size_parse(ir, rest);
  return true;
}

// A size in bytes as elements: "n * sizeof(float)", or, for a buffer of 1-byte
// elements (`uint8_t *mask`), any byte count as written ("n").
static bool bytes_of(IrRegion *ir, const Stmt *s, int buffer, const char *bytes, IrType *type, IrSize **count) {
  if (bytes_to_elems(ir, bytes, type, count)) return true;
  IrType t = pointee_type(s, buffer);
  if (t == IR_VOID || ir_type_size(t) != 1 || !bytes) return false;
  *type = t;
  *count = ir_size_parse(ir, bytes);
  return *count != NULL;
}

static bool extract_cuda(IrRegion *ir, const Stmt *s) {
  IrType t;
  IrSize *count;
  if (strcmp(s->callee, "cudaMemcpyAsync") == 0 && s->nargs == 5 && bytes_of(ir, s, 0, arg(s, 2), &t, &count)) {
    IrCopy c = {.count = count, .bytes_text = arg(s, 2), .kind_text = arg(s, 3), .stream = arg(s, 4)};
    c.dst = ir_tensor_get_or_add(ir, arg(s, 0), t, count, s->range.begin);
    c.src = ir_tensor_get_or_add(ir, arg(s, 1), t, count, s->range.begin);
    ir_op_copy(ir, s->range, &c);
    return true;
  }
  if (strcmp(s->callee, "cudaMemsetAsync") == 0 && s->nargs == 4 && bytes_of(ir, s, 0, arg(s, 2), &t, &count)) {
    IrMemset m = {.count = count, .bytes_text = arg(s, 2), .stream = arg(s, 3),
                  .value = (int)strtol(arg(s, 1), NULL, 0)};  // (0x01 too)
    m.dst = ir_tensor_get_or_add(ir, arg(s, 0), t, count, s->range.begin);
    ir_op_memset(ir, s->range, &m);
    return true;
  }
  bool wait = strcmp(s->callee, "cudaStreamWaitEvent") == 0;
  if ((wait && s->nargs >= 2) || (strcmp(s->callee, "cudaEventRecord") == 0 && s->nargs >= 1)) {
    IrEvent e = {.wait = wait, .event = arg(s, wait ? 1 : 0), .stream = arg(s, wait ? 0 : 1)};
    ir_op_event(ir, s->range, &e);
    return true;
  }
  return false;
}

// Whether the region has a clause that changes its statements.
static bool schedules(const Region *r) {
  static const char *const names[] = {"split", "reorder", "fuse", "overlap", "schedule", "pipeline"};
  for (size_t i = 0; i < 6; i++)
    if (pragma_find_clause(r->pragma, names[i])) return true;
  return false;
}

// Schedules that move or slice kernels need every launch to be pointwise.
static bool needs_pointwise(const Region *r) {
  static const char *const names[] = {"reorder", "fuse", "schedule"};
  for (size_t i = 0; i < 3; i++)
    if (pragma_find_clause(r->pragma, names[i])) return true;
  return false;
}

static int extract_launch(const Frontend *fe, const Program *prog, const Region *r, IrRegion *ir,
                          const Stmt *s, bool scheduling) {
  char *why;
  SrcLoc why_loc;
  extract_launch_paths(fe, ir, s);
  if (analyze_launch(fe, ir, s, prog, &why, &why_loc)) return 0;
  bool rowish = false;
  if (s->launch->def) {
    char *row_why;
    SrcLoc row_loc;
    IrOp *row = analyze_rowwise(fe, ir, s, &rowish, &row_why, &row_loc);
    if (row) {
      free(why);
      char *fuse_why = needs_pointwise(r) && !row->pw.row_fuse_why ? rows_copy_why(fe, s, &row->pw.row_fuse_loc)
                                                                     : NULL;
      if (fuse_why) row->pw.row_fuse_why = ir_strdup(ir, fuse_why);
      free(fuse_why);
      return 0;
    }
    if (rowish) {
      free(why);
      why = row_why;
      why_loc = row_loc;
    } else {
      free(row_why);
    }
  }
  char *text = fe_text(fe, s->range);
  ir_op_opaque(ir, s->range, text);
  free(text);
  int status = 0;
  if (scheduling && needs_pointwise(r)) {
    diag_error(&why_loc, "%s", why);
    diag_note(&s->range.begin, "region '%s' needs this launch to be %s for its schedule", r->name,
              rowish ? "row-wise (or pointwise)" : "pointwise");
    if (s->launch->other)
      diag_note(&s->range.begin, "'%s' picks its kernel at run time, and the region schedules with none of those it "
                "may launch; the reason above is for the first, '%s', which it launches when %s", s->launch->wrapper,
                s->launch->kernel, s->launch->when);
    for (const Launch *o = s->launch->other; o; o = o->other) {
      SrcLoc at = fe_any_loc(fe, clang_getCursorLocation(o->call));
      diag_note(&at, "and '%s', which it launches when %s: %s", o->kernel, o->when, o->why_not ? o->why_not : "?");
    }
    status = -1;
  }
  free(why);
  return status;
}

// The pointer a buffer expression offsets: "buf + off" -> "buf" (the text up
// to a top-level '+' or '-'), whitespace removed.
static void pointer_base(const char *text, char *out, size_t cap) {
  int depth = 0;
  size_t n = 0;
  for (const char *p = text; *p && n + 1 < cap; p++) {
    if (*p == '(' || *p == '[') depth++;
    if (*p == ')' || *p == ']') depth--;
    if (depth == 0 && (*p == '+' || (*p == '-' && p[1] != '>'))) break;
    if (*p != ' ' && *p != '\t' && *p != '\n') out[n++] = *p;
  }
  out[n] = '\0';
}

// Buffers are told apart by their text: distinct pointer variables are taken
// to be distinct memory (as __restrict__ would say; docs/pragmas.md), but two
// texts that offset the same pointer ("buf", "buf + n") may overlap, and no
// schedule moves work between them.
static int check_overlap(const Region *r, const IrRegion *ir) {
  if (!r->pragma->clauses || (!pragma_find_clause(r->pragma, "split") &&
                              !pragma_find_clause(r->pragma, "fuse") &&
                              !pragma_find_clause(r->pragma, "overlap") &&
                              !pragma_find_clause(r->pragma, "schedule")))
    return 0;
  for (const IrTensor *a = ir->tensors; a; a = a->next) {
    for (const IrTensor *b = a->next; b; b = b->next) {
      char ba[256], bb[256];
      pointer_base(a->text, ba, sizeof ba);
      pointer_base(b->text, bb, sizeof bb);
      if (strcmp(ba, bb) != 0) continue;
      diag_error(&b->first_use, "'%s' and '%s' may overlap (both offset '%s'); coconet cannot schedule work on buffers it cannot tell apart",
                 a->text, b->text, ba);
      diag_note(&a->first_use, "'%s' is used here", a->text);
      return -1;
    }
  }
  return 0;
}

// A statement coconet does not see into that only checks for errors
// (`cudaCheck(cudaGetLastError());`, a synchronize) and names no buffer of the
// region: it reads and writes none. (A call front read through to the same:
// Stmt.error_check, already set.)
static void mark_error_checks(IrRegion *ir) {
  static const char *const queries[] = {"cudaGetLastError", "cudaPeekAtLastError", "cudaDeviceSynchronize",
                                        "cudaStreamSynchronize"};
  for (IrOp *op = ir->ops; op; op = op->next) {
    if (op->kind != IR_OP_OPAQUE || !op->text || op->error_check) continue;
    bool query = false;
    for (size_t i = 0; i < sizeof queries / sizeof *queries && !query; i++)
      query = text_find_word(op->text, queries[i]) != NULL;
    for (const IrTensor *t = ir->tensors; t && query; t = t->next) {
      size_t n = 0;
      while (text_ident_char(t->text[n])) n++;
      char base[128];
      snprintf(base, sizeof base, "%.*s", (int)(n < sizeof base ? n : sizeof base - 1), t->text);
      if (n == 0 || text_find_word(op->text, base)) query = false;
    }
    op->error_check = query;
  }
}

// Collectives that may run one after another instead of in a group: all on one
// communicator and stream (a group of several communicators is what keeps one
// thread driving several devices from deadlocking), none reading or writing
// what another writes (NCCL runs a group's calls in no order). Not sends and
// receives: a send and a receive between two ranks need their group not to
// deadlock.
static bool independent(IrOp *const *c, int n) {
  for (int i = 0; i < n; i++) {
    if (n > 1 && (c[i]->coll.kind == IR_SEND || c[i]->coll.kind == IR_RECV)) return false;
    if (strcmp(c[i]->coll.comm, c[0]->coll.comm) != 0 || strcmp(c[i]->coll.stream, c[0]->coll.stream) != 0)
      return false;
    for (int j = 0; j < n; j++) {
      if (i == j || !c[j]->coll.out) continue;
      if (c[i]->coll.out == c[j]->coll.out || c[i]->coll.in == c[j]->coll.out) return false;
    }
  }
  return true;
}

static bool touches(const IrOp *op, const IrTensor *t) {
  if (!t) return false;
  for (const IrUse *u = op->reads; u; u = u->next)
    if (u->ref.t == t) return true;
  for (const IrUse *u = op->writes; u; u = u->next)
    if (u->ref.t == t) return true;
  return false;
}

// A buffer the run-time test can tell apart from others: a variable of known
// element type and count (not `&g[0]` or `(float *)g`, which name g another way).
static bool nameable(const IrTensor *t) {
  if (!t || !t->count || t->type == IR_VOID || !*t->text || (*t->text >= '0' && *t->text <= '9')) return false;
  for (const char *p = t->text; *p; p++)
    if (!text_ident_char(*p)) return false;
  return true;
}

static bool uses_nameable(const IrUse *u) {
  for (; u; u = u->next)
    if (!nameable(u->ref.t)) return false;
  return true;
}

static void mark_apart(IrUse *u) {
  for (; u; u = u->next) u->ref.t->apart = true;
}

// Move collective c down past the kernel launches after it, on its stream,
// that touch none of its buffers (they run the same in either order), to just
// before the first op that does: each collective of a group then comes right
// before the kernels that consume it, where split and reorder take it. A
// kernel may reach c's buffer by another name (a local `float *view = g;`, the
// caller passing one buffer twice): their buffers and c's are marked to be
// tested apart at run time (the region as written runs when they are not).
static void sink(IrRegion *ir, IrOp *c) {
  IrOp **link = &ir->ops;
  while (*link && *link != c) link = &(*link)->next;
  if (!*link || !nameable(c->coll.in) || !nameable(c->coll.out)) return;
  IrOp *last = NULL;
  for (IrOp *p = c->next; p && p->kind == IR_OP_POINTWISE && strcmp(p->pw.stream, c->coll.stream) == 0 &&
                          uses_nameable(p->reads) && uses_nameable(p->writes) && !touches(p, c->coll.in) &&
                          !touches(p, c->coll.out);
       p = p->next)
    last = p;
  if (!last) return;
  for (IrOp *p = c->next; p != last->next; p = p->next) {
    mark_apart(p->reads);
    mark_apart(p->writes);
  }
  c->coll.in->apart = c->coll.out->apart = true;
  *link = c->next;
  c->next = last->next;
  last->next = c;
}

// ncclGroupStart()/ncclGroupEnd() around one collective and nothing else
// group nothing: the schedule leaves the two calls out (the collective is
// split on its own), and --explain says so. Around several independent
// collectives on one communicator and stream, the same: each is split on its
// own. Other groups are kept.
static void ungroup(IrRegion *ir, int ngroups) {
  enum { MAX = 16 };
  for (int k = 1; k <= ngroups; k++) {
    IrOp *in[MAX + 2], **link[MAX + 2];
    int n = 0;
    for (IrOp **pp = &ir->ops; *pp; pp = &(*pp)->next) {
      if ((*pp)->nccl_group != k) continue;
      if (n < MAX + 2) in[n] = *pp, link[n] = pp;
      n++;
    }
    if (n < 3 || n > MAX + 2 || in[0]->kind != IR_OP_OPAQUE || in[n - 1]->kind != IR_OP_OPAQUE) continue;
    bool all = true;
    for (int i = 1; i < n - 1; i++) all &= in[i]->kind == IR_OP_COLLECTIVE;
    if (!all || !independent(in + 1, n - 2)) continue;
    if (!ir->written) {  // the statements as written, before the first change
      for (IrOp *op = ir->ops; op; op = op->next) ir->nwritten++;
      ir->written = ir_alloc(ir, sizeof *ir->written * (size_t)ir->nwritten);
      int w = 0;
      for (IrOp *op = ir->ops; op; op = op->next) ir->written[w++] = op;
    }
    *link[n - 1] = in[n - 1]->next;  // the end first: its link is the last collective's next
    *link[0] = in[0]->next;
    for (int i = 1; i < n - 1; i++) in[i]->nccl_group = 0;
    for (int i = n - 2; i >= 1 && n > 3; i--) sink(ir, in[i]);
    if (n == 3)
      ir_region_note(ir, ir_printf(ir, "ncclGroupStart()/ncclGroupEnd() at %s:%u:%u hold one collective, which "
                                       "they do not group with anything: the schedule leaves them out",
                                   in[0]->loc.file ? in[0]->loc.file : "?", in[0]->loc.line, in[0]->loc.col));
    else
      ir_region_note(ir, ir_printf(ir, "ncclGroupStart()/ncclGroupEnd() at %s:%u:%u hold %d collectives on one "
                                       "communicator and stream that do not read each other's results: the "
                                       "schedule leaves the group out and splits each on its own, each moved down "
                                       "to the first statement that uses its buffers (they run one after another, "
                                       "an order NCCL may run them in)",
                                   in[0]->loc.file ? in[0]->loc.file : "?", in[0]->loc.line, in[0]->loc.col, n - 2));
  }
}

static enum CXChildVisitResult find_memory_read(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  enum CXCursorKind k = clang_getCursorKind(c);
  bool deref = false;
  if (k == CXCursor_UnaryOperator) {  // *p (a pointer's target may be what a kernel wrote)
    FeKids op = fe_kids(c);
    CXType t = op.n == 1 ? clang_getCanonicalType(clang_getCursorType(op.v[0])) : (CXType){0};
    deref = t.kind == CXType_Pointer && clang_getCanonicalType(clang_getCursorType(c)).kind != CXType_Pointer;
  }
  if (k == CXCursor_ArraySubscriptExpr || deref) {
    *(bool *)data = true;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

// A declaration in the region of locals holding values that nothing in the
// region changes (`const int blocks = (n + 255) / 256;`, `dim3 grid(cols / 32,
// rows);`): arithmetic or dim3 variables never assigned, each initialized
// from variables, members, literals and pure calls (min, max, the C library's
// math, constructors), reading no element or pointer's target. Neither a
// collective nor a launch changes them, so the schedule declares them first,
// unless a statement before it names one (an outer variable the local then
// hides). A local named as coconet's own (`coconet_p`) is one too: the
// generated names avoid every name the file spells (codegen's Names).
static bool region_local(const Frontend *fe, const Region *r, const Stmt *s) {
  if (clang_getCursorKind(s->cursor) != CXCursor_DeclStmt) return false;
  FeKids vars = fe_kids(s->cursor);
  if (vars.n == 0 || vars.n > FE_KIDS) return false;
  for (int i = 0; i < vars.n; i++) {
    CXCursor v = vars.v[i];
    CXType t = clang_getCanonicalType(clang_getCursorType(v));
    CXString ts = clang_getTypeSpelling(clang_getUnqualifiedType(t));
    bool dim3 = strcmp(clang_getCString(ts), "dim3") == 0;
    clang_disposeString(ts);
    bool arith = t.kind >= CXType_Bool && t.kind <= CXType_LongDouble;
    FeKids init = fe_kids(v);
    bool memory = false;
    if (init.n) clang_visitChildren(v, find_memory_read, &memory);
    if (clang_getCursorKind(v) != CXCursor_VarDecl || !(arith || dim3) || !init.n || memory ||
        !wrapper_pure(init.last) || !never_assigned(fe, v))
      return false;
    char *name = fe_spelling(v);
    bool named = false;
    for (const Stmt *b = r->stmts; b && b != s && !named; b = b->next) {
      char *text = fe_text(fe, b->range);
      named = text_find_word(text, name) != NULL;
      free(text);
    }
    free(name);
    if (named) return false;
  }
  return true;
}

static int extract_region(const Frontend *fe, const Program *prog, const Region *r, IrProgram *p,
                          bool scheduling) {
  IrRegion *ir = ir_region_new(p, r->name, r->pragma_range.begin, r->range);
  extract_clauses(fe, r, ir);
  int status = 0, group = 0, ngroups = 0, depth = 0;
  unsigned errors = diag_error_count();
  bool opaque = false;  // a statement coconet does not see into, or one with side effects, came before
  IrHoist **locals = &ir->locals;
  for (const Stmt *s = r->stmts; s; s = s->next) {
    bool done = false;
    if (s->kind == STMT_OPAQUE && !opaque && region_local(fe, r, s)) {
      IrHoist *h = ir_alloc(ir, sizeof *h);
      char *text = fe_text(fe, s->range);
      *h = (IrHoist){.text = ir_strdup(ir, text), .range = s->range};
      free(text);
      *locals = h;
      locals = &h->next;
      continue;
    }
    bool start = s->kind == STMT_NCCL && strcmp(s->callee, "ncclGroupStart") == 0;
    bool end = s->kind == STMT_NCCL && strcmp(s->callee, "ncclGroupEnd") == 0;
    if (start && depth++ == 0) group = ++ngroups;
    switch (s->kind) {
    case STMT_NCCL: done = extract_collective(fe, ir, s); break;
    case STMT_GEMM: done = extract_gemm(fe, ir, s); break;
    case STMT_CUDA: done = extract_cuda(ir, s); break;
    case STMT_LAUNCH:
      if (extract_launch(fe, prog, r, ir, s, scheduling)) status = -1;
      done = true;
      break;
    case STMT_OPAQUE: break;
    }
    if (done && s->kind == STMT_NCCL && s->guard) ir_region_assume_guard(ir, s->guard, s->callee, s->range.begin);
    IrOp *tail = ir->ops;
    while (tail && tail->next) tail = tail->next;
    if (done && s->beside && tail && tail->kind != IR_OP_OPAQUE && tail->range.begin.offset == s->range.begin.offset)
      tail->beside = extract_beside(fe, r, ir, s);
    // (what a host function runs besides its collective may change what a later local reads)
    bool check = extract_is_check(fe, r, s);
    if ((extract_stmt_has_effects(s) && !check) || s->beside) opaque = true;
    if (!done) {
      opaque |= !check;
      char *text = fe_text(fe, s->range);
      IrOp *op = ir_op_opaque(ir, s->range, text);
      if (s->why_opaque) op->why_opaque = ir_strdup(ir, s->why_opaque);
      op->error_check = check;
      if (s->why_not_check) op->why_not_check = ir_strdup(ir, s->why_not_check);
      char through[256];
      const Stmt *reaches = s->error_check && !check ? extract_check_reached(fe, r, s, through, sizeof through) : NULL;
      if (reaches)
        op->why_not_check = ir_printf(ir, "it uses a static local of '%s', which the statement at line %u calls too",
                                      through, reaches->range.begin.line);
      free(text);
    }
    IrOp *last = ir->ops;
    while (last && last->next) last = last->next;
    if (last && depth > 0) last->nccl_group = group;
    if (end && depth > 0) depth--;
  }
  mark_error_checks(ir);
  if (diag_error_count() > errors) status = -1;  // a call's arguments contradict each other
  if (status || !scheduling) return status;
  if (schedules(r) && directives_check_region_lines(fe, r)) return -1;
  // No collective (one inside a call not seen through, say): the schedule stage says so, and
  // why the call was not seen through; what follows checks work moved around a collective.
  bool collective = false;
  for (const IrOp *op = ir->ops; op && !collective; op = op->next) collective = op->kind == IR_OP_COLLECTIVE;
  if (!collective) return 0;
  if (check_overlap(r, ir) || extract_check_assumptions(fe, r, ir)) return -1;
  if (!schedules(r)) return 0;
  if (extract_hoist_effects(fe, r, ir)) return -1;
  ungroup(ir, ngroups);
  return 0;
}

int extract_program(const Frontend *fe, const Program *prog, IrProgram *ir, bool scheduling) {
  int status = 0;
  for (const Region *r = prog->regions; r; r = r->next)
    if (extract_region(fe, prog, r, ir, scheduling)) status = -1;
  return status;
}
