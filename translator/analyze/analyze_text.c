// analyze_text.c: the user's own text for one element of a pointwise kernel
// (IrText, ir.h). Once the analysis has proven a kernel pointwise, code
// generation runs the kernel's text for each element of a slice rather than
// code printed from the IR, so that overloads, intrinsics, macros and helpers
// are resolved by the compiler exactly as in the program as written. The text
// is the element loop's statements; before them the locals declared before the
// loop that they use (transitively), and, when any of it reads where the thread
// is, threadIdx, blockIdx, blockDim and gridDim as the launch as written gives
// them to the thread of element i (one-dimensional launches: thread t = i under
// a guard, t = i % (gridDim.x * blockDim.x) in a grid-stride loop).
//
// Edits the generated function applies: `p[i]` of a buffer passed as its
// element (a reference) becomes `p`; the grid-stride loop's `continue` becomes
// `return` (the function is one element). A buffer named otherwise than as
// p[i] (p[i % h], &p[i], p + i, inside a macro) is passed as a pointer.
//
// A template's text is read in its instance (instantiate.c), under its
// parameters declared as the launch's arguments (IrText.scope).
//
// A kernel in namespaces has its text in them, reopened (IrText.ns_open); one
// defined in the region's function's namespace block, before the function,
// has it beside the function (IrText.beside).
//
// There is no text (the IR is printed, and text_why says why) for a vector
// kernel, Philox draws, sums (atomicAdd), helpers that read where the thread
// is, a kernel defined below the place generated code goes, by-value struct
// or vector parameters, a local declared elsewhere than before the loop,
// preprocessor lines among the statements, a macro #undef'd before the
// generated code, and text clang's locations cannot cut out exactly.
#include "analyze_impl.h"
#include "common/text.h"

#include "front/front.h"

#include <stdlib.h>
#include <string.h>

enum { TX_PARAMS = 64, TX_EDITS = 256, TX_DECLS = 64 };

typedef struct Tx {
  Az *az;
  int nparams;
  bool used[TX_PARAMS], raw[TX_PARAMS];
  bool index_used;
  bool coords[4];                  // threadIdx, blockIdx, blockDim, gridDim
  CXCursor decls[TX_DECLS];        // the DeclStmts before the element loop
  bool need[TX_DECLS];
  int ndecls;
  CXCursor addressed[TX_EDITS];    // subscripts under a unary &
  int naddressed;
  IrTextEdit edits[TX_EDITS];
  int nedits;
  // the piece being visited: its bytes [at, end) in `file`, copied at `body_at` of the body
  CXFile file;
  unsigned at, end;
  size_t body_at;
  const char *piece;
  bool helper_used[TX_PARAMS];     // the parameters of the helper holding the element loop it names
  bool collect;                    // record edits (false: only mark the declarations used)
  const char *why;
} Tx;

static const char *const COORDS[4] = {"threadIdx", "blockIdx", "blockDim", "gridDim"};

static bool is_coordinate(const Az *az, CXCursor d) {
  if (kind(d) != CXCursor_VarDecl || fe_in_user_code(az->fe, clang_getCursorLocation(d))) return false;
  char *name = fe_spelling(d);
  bool found = false;
  for (int i = 0; i < 4; i++) found |= strcmp(name, COORDS[i]) == 0;
  free(name);
  return found;
}

typedef struct Probe {
  const Az *az;
  int depth;
  char *helper;  // the helper that reads where the thread is (NULL: none)
} Probe;

static enum CXChildVisitResult probe_helper(CXCursor c, CXCursor parent, CXClientData data);

// Whether helper def (or one it calls) reads where the thread is: the text
// calls it, so it would see the generated kernel's thread, not the written one.
static void probe(Probe *p, CXCursor call) {
  CXCursor def = clang_getCursorDefinition(az_callee(call));
  if (clang_Cursor_isNull(def) || !fe_in_user_code(p->az->fe, clang_getCursorLocation(def)) || p->depth > 8) return;
  p->depth++;
  bool before = p->helper != NULL;
  clang_visitChildren(def, probe_helper, p);
  if (!before && p->helper && !*p->helper) {
    free(p->helper);
    p->helper = fe_spelling(def);
  }
  p->depth--;
}

static enum CXChildVisitResult probe_helper(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Probe *p = data;
  if (p->helper) return CXChildVisit_Break;
  if (kind(c) == CXCursor_DeclRefExpr && is_coordinate(p->az, clang_getCursorReferenced(c))) p->helper = strdup("");
  else if (kind(c) == CXCursor_CallExpr) probe(p, c);
  return p->helper ? CXChildVisit_Break : CXChildVisit_Recurse;
}

static bool offsets(CXCursor c, CXFile *file, unsigned *b, unsigned *e) {
  CXSourceRange r = clang_getCursorExtent(c);
  CXFile f2;
  clang_getFileLocation(clang_getRangeStart(r), file, NULL, NULL, b);
  clang_getFileLocation(clang_getRangeEnd(r), &f2, NULL, NULL, e);
  return *file && f2 && clang_File_isEqual(*file, f2) && *e >= *b;
}

static int param_index(const Tx *x, CXCursor d) {
  if (kind(d) != CXCursor_ParmDecl || !same(clang_getCursorSemanticParent(d), x->az->kernel)) return -1;
  int at = az_param_position(x->az, d);
  return at >= 0 && at < TX_PARAMS ? at : -1;
}

static int decl_index(const Tx *x, CXCursor d) {
  for (int i = 0; i < x->ndecls; i++) {
    Kids vars = kids(x->decls[i]);
    for (int v = 0; v < vars.n; v++)
      if (same(vars.v[v], d)) return i;
  }
  return -1;
}

// Whether the byte at `off` of the piece is inside an edit of buffer param.
// (param -2: of any buffer)
static bool inside_edit(const Tx *x, unsigned off, int param) {
  size_t at = x->body_at + (off - x->at);
  for (int i = 0; i < x->nedits; i++) {
    const IrTextEdit *ed = &x->edits[i];
    if ((ed->param == param || (param == -2 && ed->param >= 0)) && at >= ed->at && at < ed->at + ed->len) return true;
  }
  return false;
}

// An edit of the piece's bytes [b, e), if they are c's text exactly.
static bool add_edit(Tx *x, CXCursor c, int param, const char *repl) {
  CXFile f;
  unsigned b, e;
  if (!offsets(c, &f, &b, &e) || !clang_File_isEqual(f, x->file) || b < x->at || e > x->end) return false;
  char *text = fe_cursor_text(x->az->fe, c);
  bool exact = strlen(text) == e - b && strncmp(x->piece + (b - x->at), text, e - b) == 0;
  free(text);
  if (!exact) return false;
  if (x->nedits == TX_EDITS) {
    x->why = "it has too many accesses";
    return true;
  }
  x->edits[x->nedits++] = (IrTextEdit){(unsigned)(x->body_at + (b - x->at)), e - b, param, repl};
  return true;
}

static bool addressed(const Tx *x, CXCursor c) {
  for (int i = 0; i < x->naddressed; i++)
    if (same(x->addressed[i], c)) return true;
  return false;
}

static void subscript(Tx *x, CXCursor c) {
  Kids k = kids(c);
  if (k.n != 2) return;
  CXCursor base = az_strip(k.v[0]);
  int p = kind(base) == CXCursor_DeclRefExpr ? param_index(x, clang_getCursorReferenced(base)) : -1;
  // (A launch read as slices passes every buffer as its pointer: p[i] there is not element e.)
  if (p < 0 || x->az->slices || !az_is_pointer(clang_getCursorReferenced(base)) || !az_is_index(x->az, k.v[1])) return;
  if (addressed(x, c) || !add_edit(x, c, p, NULL)) x->raw[p] = true;
}

static void decl_ref(Tx *x, CXCursor c) {
  CXCursor d = clang_getCursorReferenced(c);
  CXFile f;
  unsigned b = 0, e;
  bool located = offsets(c, &f, &b, &e) && clang_File_isEqual(f, x->file) && b >= x->at && b < x->end;
  int p = param_index(x, d);
  if (p >= 0) {
    x->used[p] = true;
    if (x->collect && az_is_pointer(d) && !(located && inside_edit(x, b, p))) x->raw[p] = true;
    return;
  }
  if (same(d, x->az->index)) {
    if (x->collect && !(located && inside_edit(x, b, -2))) x->index_used = true;
    return;
  }
  int di = decl_index(x, d);
  if (di >= 0) {
    x->need[di] = true;
    return;
  }
  if (kind(d) == CXCursor_ParmDecl && x->az->loop_helper && same(clang_getCursorSemanticParent(d), x->az->body_fn)) {
    int n = clang_Cursor_getNumArguments(x->az->body_fn);
    for (int i = 0; i < n && i < TX_PARAMS; i++)
      if (same(clang_Cursor_getArgument(x->az->body_fn, (unsigned)i), d)) x->helper_used[i] = true;
    return;
  }
  if (kind(d) == CXCursor_VarDecl && same(clang_getCursorSemanticParent(d), x->az->body_fn)) {
    // A local of the kernel: the element's own (declared in the copied text) are fine.
    CXFile df;
    unsigned db, de;
    bool ours = offsets(d, &df, &db, &de) && clang_File_isEqual(df, x->file) && db >= x->at && db < x->end;
    if (!ours && x->collect) x->why = "it names a local declared outside the element loop and its declarations";
    return;
  }
  if (is_coordinate(x->az, d)) {
    char *name = fe_spelling(d);
    for (int i = 0; i < 4; i++)
      if (strcmp(name, COORDS[i]) == 0) x->coords[i] = true;
    free(name);
  }
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Tx *x = data;
  if (x->why) return CXChildVisit_Break;
  switch (kind(c)) {
  case CXCursor_UnaryOperator: {
    Kids k = kids(c);
    char *op = k.n == 1 ? az_unary_op(x->az, c, k.v[0]) : NULL;
    CXCursor operand = k.n == 1 ? az_strip(k.v[0]) : clang_getNullCursor();
    if (op && strcmp(op, "&") == 0 && kind(operand) == CXCursor_ArraySubscriptExpr && x->naddressed < TX_EDITS)
      x->addressed[x->naddressed++] = operand;
    free(op);
    break;
  }
  case CXCursor_ArraySubscriptExpr:
    if (x->collect) subscript(x, c);
    break;
  case CXCursor_DeclRefExpr: decl_ref(x, c); break;
  case CXCursor_CallExpr: {
    Probe p = {x->az, 0, NULL};
    probe(&p, c);
    if (p.helper) {
      x->why = ir_printf(x->az->ir, "helper '%s' reads where the thread is, and would see the generated "
                                    "kernel's thread", p.helper);
      free(p.helper);
    }
    break;
  }
  case CXCursor_ContinueStmt:
    if (x->collect && !add_edit(x, c, -1, "return")) x->why = "its 'continue' comes from a macro";
    break;
  default: break;
  }
  return CXChildVisit_Recurse;
}

// Visit statement s and what it holds (pre-order: a unary & before its operand).
static void visit_stmt(Tx *x, CXCursor s) {
  if (visit(s, clang_getNullCursor(), x) == CXChildVisit_Recurse) clang_visitChildren(s, visit, x);
}

// Which declarations before the loop the statements use (marked in x->need).
static void mark(Tx *x, const CXCursor *v, int n) {
  x->collect = false;
  x->file = NULL;
  for (int i = 0; i < n && !x->why; i++) visit_stmt(x, v[i]);
}

// Statements v[0..n) as a piece of the body (their bytes from the first's start
// to the last's end, comments between them kept): indented by the first one's
// column, with the `;` an expression statement's extent leaves out. Edits are
// collected while visiting them.
// ... written after `prefix`, indented by `indent` (-1: the first statement's column).
static char *add_piece_as(Tx *x, char *body, const char *prefix, int indent, const CXCursor *v, int n) {
  unsigned b, e, b2, e2, col;
  CXFile f, fl;
  if (!offsets(v[0], &f, &b, &e) || !offsets(v[n - 1], &fl, &b2, &e2) || !clang_File_isEqual(f, fl) || e2 < b) {
    x->why = "clang cannot tell where its statements are, as in a macro";
    return body;
  }
  CXSourceLocation from = clang_getRangeStart(clang_getCursorExtent(v[0]));
  clang_getFileLocation(from, NULL, NULL, &col, NULL);
  char *piece = fe_between(x->az->fe, from, clang_getRangeEnd(clang_getCursorExtent(v[n - 1])));
  size_t len = strlen(piece);
  if (len != e2 - b) {
    free(piece);
    x->why = "clang cannot tell where its statements are, as in a macro";
    return body;
  }
  for (const char *l = piece; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    if (l[strspn(l, " \t")] == '#') {
      free(piece);
      x->why = "its statements hold preprocessor lines";
      return body;
    }
  if (indent < 0) indent = col > 0 ? (int)col - 1 : 0;
  bool closed = len && (piece[len - 1] == ';' || piece[len - 1] == '}');
  x->file = f;
  x->at = b;
  x->end = e2;
  x->body_at = strlen(body) + (size_t)indent + strlen(prefix);
  x->piece = piece;
  x->collect = true;
  for (int i = 0; i < n && !x->why; i++) visit_stmt(x, v[i]);
  char *out = ir_printf(x->az->ir, "%s%*s%s%s%s\n", body, indent, "", prefix, piece, closed ? "" : ";");
  free(piece);
  return out;
}

static char *add_piece(Tx *x, char *body, const CXCursor *v, int n) { return add_piece_as(x, body, "", -1, v, n); }

// A statement's statements: a block's, or itself.
static AzList statements(CXCursor s) {
  AzList l = {0};
  if (kind(s) == CXCursor_CompoundStmt) clang_visitChildren(s, az_list_add, &l);
  else az_list_add(s, clang_getNullCursor(), &l);
  return l;
}

static bool has_sum(const IrOp *op) {
  for (const IrStmt *s = op->pw.body; s; s = s->next)
    if (s->kind == IR_S_REDUCE) return true;
  return false;
}

// Whether a and b (of one parse or two: a template's instance has its own) are declared
// in the same namespace.
static bool same_scope(CXCursor a, CXCursor b) {
  CXCursor pa = clang_getCursorSemanticParent(a), pb = clang_getCursorSemanticParent(b);
  if (kind(pa) == CXCursor_TranslationUnit || kind(pb) == CXCursor_TranslationUnit) return kind(pa) == kind(pb);
  CXString ua = clang_getCursorUSR(pa), ub = clang_getCursorUSR(pb);
  bool eq = strcmp(clang_getCString(ua), clang_getCString(ub)) == 0 && kind(pa) == CXCursor_Namespace;
  clang_disposeString(ua);
  clang_disposeString(ub);
  return eq;
}

// Why the kernel's text cannot be the element's (NULL: it can).
static const char *unsupported(const Az *az) {
  const KernelDef *def = az->launch->def;
  if (def->is_template && (!def->inst_fe || !def->header)) return "the kernel template has no instance";
  if (az->lanes > 1) return "the kernel's element is a vector";
  if (!clang_Cursor_isNull(az->philox)) return "the kernel draws Philox numbers";
  if (has_sum(az->op) || az->hand_sums || !clang_Cursor_isNull(az->tree)) return "the kernel sums with atomicAdd";
  if (!az->loop_form) return "its element loop was not found";
  if (az->loop_helper && !same_scope(az->body_fn, def->cursor))
    return ir_printf(az->ir, "its element loop is in __device__ helper '%s', in another namespace or class",
                     az->loop_helper);
  for (CXCursor p = clang_getCursorSemanticParent(def->cursor); kind(p) != CXCursor_TranslationUnit;
       p = clang_getCursorSemanticParent(p))
    if (kind(p) != CXCursor_Namespace || clang_Cursor_isNull(p)) return "the kernel is in a class";
  bool ok = true;
  if (!def->in_header && def->range.end.offset > place_decl(az->region_fe, az->ir->range.begin.offset))
    place_copy_beside(az->region_fe, def, az->ir->range.begin.offset, &ok);
  if (!ok) return "the kernel is defined below where generated code goes";
  return NULL;
}

static bool uses_tensor(const IrOp *op, const IrTensor *t) {
  for (const IrUse *u = op->reads; u; u = u->next)
    if (u->ref.t == t) return true;
  for (const IrUse *u = op->writes; u; u = u->next)
    if (u->ref.t == t) return true;
  return false;
}

static char *type_text(CXType t) {
  CXString s = clang_getTypeSpelling(t);
  char *out = strdup(clang_getCString(s));
  clang_disposeString(s);
  if (!out) COCONET_BUG("out of memory");
  return out;
}

// The text parameter of kernel parameter d (false: why recorded).
static bool text_param(Tx *x, CXCursor d, bool raw, IrTextParam *out) {
  Az *az = x->az;
  char *name = fe_spelling(d), *type = type_text(clang_getCursorType(d));
  *out = (IrTextParam){.name = ir_strdup(az->ir, name), .raw = raw};
  if (az_is_pointer(d)) {
    CXType pointee = clang_getPointeeType(clang_getCursorType(d));
    char *elem = type_text(pointee);
    out->decl = ir_strdup(az->ir, type);
    out->elem = ir_strdup(az->ir, elem);
    free(elem);
    const char *arg = az_launch_arg(az, d);
    out->tensor = arg ? ir_tensor_find(az->ir, arg) : NULL;
    if (!out->tensor || !uses_tensor(az->op, out->tensor) ||
        az_element_type_of(clang_getCanonicalType(pointee)) != out->tensor->type)
      x->why = "it names a buffer otherwise than the analysis saw";
  } else {
    IrType t = az_type_of(clang_getCanonicalType(clang_getCursorType(d)));
    if (t == IR_VOID) x->why = "it names a parameter passed as a struct or a vector";
    IrParam *p = NULL;
    for (IrParam *q = az->op->pw.params; q && !p; q = q->next)
      if (strcmp(q->name, name) == 0) p = q;
    if (!p && t != IR_VOID) {
      const char *arg = az_launch_arg(az, d);
      if (arg) p = az_param(az, name, t, arg)->param;
    }
    if (!p && !x->why) x->why = "it names a parameter the launch does not pass";
    out->param = p;
    out->decl = ir_printf(az->ir, "%s %s", type, name);
  }
  free(name);
  free(type);
  return !x->why;
}

// threadIdx, blockIdx, blockDim, gridDim as the launch as written gives them to
// the thread of element `index` (the text's lines, and its parameters).
static char *coordinates(Tx *x, char *body, const char *index, const char *slice, int indent, IrTextParam *params,
                         int *np) {
  Az *az = x->az;
  const char *block = az->block_x > 0 ? ir_printf(az->ir, "%lldu", az->block_x) : "coconet_block_x";
  if (az->block_x <= 0) {
    IrExpr *e = az_param(az, "coconet_block_x", IR_U32, ir_printf(az->ir, "dim3(%s).x", az->op->pw.block));
    params[(*np)++] = (IrTextParam){.name = "coconet_block_x", .decl = "unsigned coconet_block_x", .param = e->param};
  }
  bool grid = x->coords[3] || ((x->coords[0] || x->coords[1]) && !az->guarded);
  if (grid) {
    IrExpr *e = az_param(az, "coconet_grid_x", IR_U32, ir_printf(az->ir, "dim3(%s).x", az->op->pw.grid));
    params[(*np)++] = (IrTextParam){.name = "coconet_grid_x", .decl = "unsigned coconet_grid_x", .param = e->param};
  }
  body = ir_printf(az->ir, "%s%*s// coconet: where the launch as written puts the thread of element %s\n", body,
                   indent, "", index);
  if (x->coords[0] || x->coords[1]) {
    const char *t = az->guarded ? ir_printf(az->ir, "(size_t)%s", index)
                                : ir_printf(az->ir, "(size_t)%s %% ((size_t)coconet_grid_x * %s)", index, block);
    body = ir_printf(az->ir, "%s%*sconst size_t coconet_t = %s;\n", body, indent, "", t);
  }
  if (x->coords[2]) body = ir_printf(az->ir, "%s%*sconst dim3 blockDim(%s);\n", body, indent, "", block);
  if (x->coords[3] && az->slices) {
    IrExpr *e = az_param(az, "coconet_grid_y", IR_U32, az->slices);
    params[(*np)++] = (IrTextParam){.name = "coconet_grid_y", .decl = "unsigned coconet_grid_y", .param = e->param};
    body = ir_printf(az->ir, "%s%*sconst dim3 gridDim(coconet_grid_x, coconet_grid_y);\n", body, indent, "");
  } else if (x->coords[3]) {
    body = ir_printf(az->ir, "%s%*sconst dim3 gridDim(coconet_grid_x);\n", body, indent, "");
  }
  if (x->coords[0])
    body = ir_printf(az->ir, "%s%*sconst uint3 threadIdx = make_uint3((unsigned)(coconet_t %% %s), 0, 0);\n", body,
                     indent, "", block);
  if (x->coords[1] && az->slices)
    body = ir_printf(az->ir, "%s%*sconst uint3 blockIdx = make_uint3((unsigned)(coconet_t / %s), (unsigned)%s, 0);\n",
                     body, indent, "", block, slice);
  else if (x->coords[1])
    body = ir_printf(az->ir, "%s%*sconst uint3 blockIdx = make_uint3((unsigned)(coconet_t / %s), 0, 0);\n", body,
                     indent, "", block);
  return body;
}

// The kernel's namespaces, innermost last, reopened around the text.
static void namespaces(Az *az, IrText *t) {
  t->ns_open = t->ns_close = t->ns_prefix = "";
  for (CXCursor p = clang_getCursorSemanticParent(az->launch->def->cursor); kind(p) == CXCursor_Namespace;
       p = clang_getCursorSemanticParent(p)) {
    char *name = clang_Cursor_isAnonymous(p) ? strdup("") : fe_spelling(p);
    t->ns_open = ir_printf(az->ir, "namespace %s%s{\n%s", name, *name ? " " : "", t->ns_open);
    t->ns_close = ir_printf(az->ir, "%s}  // namespace %s\n", t->ns_close, name);
    if (*name) t->ns_prefix = ir_printf(az->ir, "%s::%s", name, t->ns_prefix);
    free(name);
  }
}

static CXCursor stmt_declaring(const AzList *l, CXCursor var) {
  for (int i = 0; i < l->n; i++) {
    if (kind(l->v[i]) != CXCursor_DeclStmt) continue;
    Kids vars = kids(l->v[i]);
    for (int v = 0; v < vars.n; v++)
      if (same(vars.v[v], var)) return l->v[i];
  }
  return clang_getNullCursor();
}

static enum CXChildVisitResult template_param(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (kind(c) == CXCursor_TemplateTypeParameter || kind(c) == CXCursor_NonTypeTemplateParameter)
    az_list_add(c, parent, data);
  return CXChildVisit_Continue;
}

// Whether expression c has an identifier among its tokens.
static bool names_something(const Az *az, CXCursor c) {
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(az->fe->tu, clang_getCursorExtent(c), &toks, &n);
  bool named = false;
  for (unsigned i = 0; i < n && !named; i++) named = clang_getTokenKind(toks[i]) == CXToken_Identifier;
  clang_disposeTokens(az->fe->tu, toks, n);
  return named;
}

// `T name` for a declaration of type t (NULL: a type whose spelling does not compose so).
static char *declaration(Az *az, CXType t, const char *name) {
  char *type = type_text(clang_getCanonicalType(t));
  size_t n = strlen(type);
  char *out = strpbrk(type, "([") ? NULL : ir_printf(az->ir, "%s%s%s", type, n && type[n - 1] == '*' ? "" : " ", name);
  free(type);
  return out;
}

// The element loop in a helper (analyze_helper.c): the kernel's arguments for the
// parameters the text names, then, in a block of their own (a parameter may have the
// name of a kernel parameter its argument reads), the helper's template arguments and
// its parameters bound to them. The block is closed after the element's statements.
static char *helper_open(Tx *x, char *body, const char *index, int indent) {
  Az *az = x->az;
  CXCursor fn = az->body_fn;
  char *kernel = fe_spelling(az->kernel);
  int open = indent >= 2 ? indent - 2 : 0;  // the element's statements keep their column, inside the block
  body = ir_printf(az->ir, "%s%*s// coconet: the arguments %s passes to %s, its parameters bound to them\n", body,
                   open, "", kernel, az->loop_helper);
  free(kernel);
  int n = clang_Cursor_getNumArguments(fn);
  char *binds = ir_strdup(az->ir, "");
  for (int i = 0; i < n && !x->why; i++) {
    if (i >= TX_PARAMS) return x->why = "its helper has too many parameters", body;
    if (!x->helper_used[i]) continue;
    CXCursor param = clang_Cursor_getArgument(fn, (unsigned)i);
    char *pname = fe_spelling(param);
    char *arg = declaration(az, clang_getCursorType(param), ir_printf(az->ir, "coconet_a%d", i));
    char *bound = declaration(az, clang_getCursorType(param), pname);
    free(pname);
    if (!arg || !bound) return x->why = "a parameter of its helper has a type coconet cannot declare", body;
    const Binding *b = az_find_local(az, param);  // (its argument: as written, or the parameter's default)
    if (!b || clang_Cursor_isNull(b->arg)) return x->why = "a parameter of its helper is bound to no argument", body;
    // A default names things where the helper is declared (a global, the helper's template
    // parameter), which the element's scope may not see so: only a default of literals is copied.
    if (!same(b->arg, clang_Cursor_getArgument(az->loop_call, (unsigned)i)) && names_something(az, b->arg))
      return x->why = "the call leaves out an argument whose default names something", body;
    body = add_piece_as(x, body, ir_printf(az->ir, "%s = ", arg), open, &b->arg, 1);
    binds = ir_printf(az->ir, "%s%*s%s = coconet_a%d;\n", binds, indent, "", bound, i);
  }
  body = ir_printf(az->ir, "%s%*s{\n", body, open, "");
  AzList tps = {0};
  CXCursor tmpl = clang_getSpecializedCursorTemplate(fn);
  if (!clang_Cursor_isNull(tmpl)) clang_visitChildren(tmpl, template_param, &tps);
  int na = clang_Cursor_isNull(tmpl) ? 0 : clang_Cursor_getNumTemplateArguments(fn);
  for (int i = 0; i < na && i < tps.n && !x->why; i++) {
    char *name = fe_spelling(tps.v[i]);
    enum CXTemplateArgumentKind k = clang_Cursor_getTemplateArgumentKind(fn, (unsigned)i);
    if (k == CXTemplateArgumentKind_Type) {
      char *type = type_text(clang_getCanonicalType(clang_Cursor_getTemplateArgumentType(fn, (unsigned)i)));
      body = ir_printf(az->ir, "%s%*susing %s [[maybe_unused]] = %s;\n", body, indent, "", name, type);
      free(type);
    } else if (k == CXTemplateArgumentKind_Integral) {
      char *decl = declaration(az, clang_getCursorType(tps.v[i]), name);
      if (!decl) x->why = "a template argument of its helper has a type coconet cannot declare";
      else body = ir_printf(az->ir, "%s%*s[[maybe_unused]] constexpr %s = %lld;\n", body, indent, "", decl,
                            clang_Cursor_getTemplateArgumentValue(fn, (unsigned)i));
    } else {
      x->why = "its helper has a template argument that is neither a type nor an integer";
    }
    free(name);
  }
  if (na > tps.n && !x->why) x->why = "its helper's template arguments are not all named";
  free(tps.v);
  char *name = fe_spelling(az->index);
  char *decl = declaration(az, clang_getCursorType(az->index), name);
  free(name);
  if (!decl) return x->why = "its helper's index has a type coconet cannot declare", body;
  x->index_used = true;
  return ir_printf(az->ir, "%s%s%*s[[maybe_unused]] %s = %s;\n", body, binds, indent, "", decl, index);
}

static IrText *build(Tx *x, const AzList *top, const AzList *elem) {
  Az *az = x->az;
  // The declarations before the loop, but the index's and the stride's.
  CXCursor index_stmt = stmt_declaring(top, az->index), stride_stmt = stmt_declaring(top, az->stride);
  for (int i = 0; i < az->loop_at && i < top->n; i++) {
    CXCursor s = top->v[i];
    if (kind(s) != CXCursor_DeclStmt || same(s, index_stmt) || same(s, stride_stmt)) continue;
    if (x->ndecls == TX_DECLS) return x->why = "it declares too many locals before its loop", NULL;
    x->decls[x->ndecls++] = s;
  }
  mark(x, elem->v, elem->n);
  for (int d = x->ndecls - 1; d >= 0 && !x->why; d--)
    if (x->need[d]) mark(x, &x->decls[d], 1);
  for (int i = 0; az->loop_helper && i < TX_PARAMS && i < clang_Cursor_getNumArguments(az->body_fn); i++) {
    const Binding *b = x->helper_used[i] ? az_find_local(az, clang_Cursor_getArgument(az->body_fn, (unsigned)i)) : NULL;
    if (b && !clang_Cursor_isNull(b->arg)) mark(x, &b->arg, 1);
  }
  bool coords = x->coords[0] || x->coords[1] || x->coords[2] || x->coords[3];
  // Slices: the text's i is element e's place in its slice, e % n; blockIdx.y is e / n.
  char *count = az->slices ? fe_spelling(az->count) : NULL;
  int count_at = az->slices ? param_index(x, az->count) : -1;
  if (az->slices && count_at < 0) {
    free(count);
    return x->why = "its count is not one of its parameters", NULL;
  }
  if (count_at >= 0) x->used[count_at] = true;
  const char *slice = count ? ir_printf(az->ir, "(coconet_e / (size_t)%s)", count) : NULL;
  unsigned col = 5;
  if (elem->n) clang_getFileLocation(clang_getRangeStart(clang_getCursorExtent(elem->v[0])), NULL, NULL, &col, NULL);
  int indent = col > 0 ? (int)col - 1 : 0;
  // (The element loop in a helper: its index is named in the helper's block, after the arguments, which
  // may name something else by its name; outside, the element's index is coconet_index.)
  char *index = az->loop_helper ? strdup("coconet_index") : fe_spelling(az->index);
  IrTextParam params[TX_PARAMS + 3];
  int np = 0;
  char *body = ir_strdup(az->ir, "");
  if (az->slices) {
    char *type = type_text(clang_getUnqualifiedType(clang_getCursorType(az->index)));
    body = ir_printf(az->ir, "%s%*s// coconet: element e of the flat buffer is %s of slice e / %s\n"
                             "%*sconst %s %s = (%s)(coconet_e %% (size_t)%s);\n",
                     body, indent, "", index, count, indent, "", type, index, type, count);
    free(type);
    x->index_used = true;
  }
  if (coords) {
    x->index_used = true;
    body = coordinates(x, body, index, slice, indent, params + TX_PARAMS, &np);
  }
  int ncoord = np;
  if (az->loop_helper && !x->why) body = helper_open(x, body, index, indent);
  // The element's statements in a block of their own after the locals (they may shadow them).
  int wrap = -1;
  for (int d = 0; d < x->ndecls && !x->why; d++)
    if (x->need[d]) {
      unsigned dcol = 1;
      clang_getFileLocation(clang_getRangeStart(clang_getCursorExtent(x->decls[d])), NULL, NULL, &dcol, NULL);
      if (wrap < 0) wrap = dcol > 0 ? (int)dcol - 1 : 0;
      body = add_piece(x, body, &x->decls[d], 1);
    }
  if (wrap >= 0) body = ir_printf(az->ir, "%s%*s{\n", body, wrap, "");
  if (elem->n && !x->why) body = add_piece(x, body, elem->v, elem->n);
  if (wrap >= 0) body = ir_printf(az->ir, "%s%*s}\n", body, wrap, "");
  if (az->loop_helper) body = ir_printf(az->ir, "%s%*s}\n", body, indent >= 2 ? indent - 2 : 0, "");
  // A buffer read only under a condition may be passed as a pointer (ir_pw_reads_lazily): the text
  // then names the index.
  bool lazy[TX_PARAMS] = {false};
  for (int p = 0; p < x->nparams; p++) {
    CXCursor d = clang_Cursor_getArgument(az->kernel, (unsigned)p);
    const char *arg = x->used[p] && !x->raw[p] && az_is_pointer(d) ? az_launch_arg(az, d) : NULL;
    IrTensor *t = arg ? ir_tensor_find(az->ir, arg) : NULL;
    lazy[p] = t && ir_pw_reads_lazily(az->ir, az->op, t);
    x->index_used |= lazy[p];
  }
  // name[index] of a buffer passed as a pointer stays as written: it names the index.
  for (int e = 0; e < x->nedits; e++)
    if (x->edits[e].param >= 0 && x->raw[x->edits[e].param]) x->index_used = true;
  IrText *t = NULL;
  if (!x->why) {
    t = ir_alloc(az->ir, sizeof *t);
    t->params = ir_alloc(az->ir, sizeof *t->params * (size_t)(x->nparams + 1 + ncoord));
    if (x->index_used && az->slices) {
      t->params[t->nparams++] = (IrTextParam){.name = "coconet_e", .decl = "size_t coconet_e"};
    } else {
      char *type = type_text(clang_getCursorType(az->index));
      const char *decl = ir_printf(az->ir, "%s %s", type, index);
      if (x->index_used) t->params[t->nparams++] = (IrTextParam){.name = ir_strdup(az->ir, index), .decl = decl};
      else t->index_decl = decl;
      free(type);
    }
    for (int p = 0; p < x->nparams && !x->why; p++)
      if (x->used[p]) {
        text_param(x, clang_Cursor_getArgument(az->kernel, (unsigned)p), x->raw[p], &t->params[t->nparams]);
        t->params[t->nparams++].lazy = lazy[p];
      }
    for (int c = 0; c < ncoord; c++) t->params[t->nparams++] = params[TX_PARAMS + c];
    t->body = body;
    t->scope = az->launch->def->is_template ? ir_strdup(az->ir, az->launch->def->header) : NULL;
    namespaces(az, t);
    const KernelDef *def = az->launch->def;
    t->beside = !def->in_header && def->range.end.offset > place_decl(az->region_fe, az->ir->range.begin.offset);
    t->edits = ir_alloc(az->ir, sizeof *t->edits * (size_t)(x->nedits + 1));
    t->nedits = x->nedits;
    memcpy(t->edits, x->edits, sizeof *t->edits * (size_t)x->nedits);
    // An edit's param: the text parameter's position, not the kernel's.
    for (int e = 0; e < t->nedits; e++) {
      if (t->edits[e].param < 0) continue;
      char *pname = fe_spelling(clang_Cursor_getArgument(az->kernel, (unsigned)t->edits[e].param));
      int found = -1;
      for (int p = 0; p < t->nparams && found < 0; p++)
        if (t->params[p].tensor && strcmp(t->params[p].name, pname) == 0) found = p;
      free(pname);
      t->edits[e].param = found;
    }
    t->loc = fe_any_loc(az->fe, clang_getRangeStart(clang_getCursorExtent(elem->n ? elem->v[0] : az->kbody)));
  }
  free(index);
  free(count);
  return x->why ? NULL : t;
}

void az_text(Az *az) {
  IrPointwise *pw = &az->op->pw;
  const char *why = unsupported(az);
  Tx x = {.az = az, .nparams = clang_Cursor_getNumArguments(az->kernel)};
  if (!why && (x.nparams < 0 || x.nparams > TX_PARAMS)) why = "the kernel has too many parameters";
  AzList top = {0}, elem = {0};
  if (!why) {
    clang_visitChildren(az->kbody, az_list_add, &top);
    CXCursor loop = az->loop_at < top.n ? top.v[az->loop_at] : clang_getNullCursor();
    Kids k = kids(loop);
    if (az->loop_form == LOOP_FOR && k.n == 4) elem = statements(k.v[3]);
    else if (az->loop_form == LOOP_IF && k.n == 2) elem = statements(k.v[1]);
    else if (az->loop_form == LOOP_WHILE && k.n == 2) {
      elem = statements(k.v[1]);
      if (elem.n) elem.n--;  // the stride
    } else if (az->loop_form == LOOP_RETURN)
      for (int i = az->loop_at + 1; i < top.n; i++) az_list_add(top.v[i], clang_getNullCursor(), &elem);
    else if (az->loop_form == LOOP_IF_AND || az->loop_form == LOOP_RETURN_OR)  // the guard's statement too
      for (int i = az->loop_at; i < (az->loop_form == LOOP_IF_AND ? az->loop_at + 1 : top.n); i++)
        az_list_add(top.v[i], clang_getNullCursor(), &elem);
    else why = "its element loop was not found";
  }
  char *gone = why ? NULL : az_macro_gone(az);
  if (gone && az->launch->def->is_template)
    az_fail(az, az->kbody, "kernel template '%s' uses '%s', which a file of yours #undefs or #defines again: coconet "
                           "reads a template's instance in a copy of its text at the end of the file, where '%s' "
                           "could mean something else; keep the macro defined once", az->launch->kernel, gone, gone);
  else if (gone)
    why = ir_printf(az->ir, "its text uses '%s', which a file of yours #undefs or #defines again: the copy could "
                            "mean something else", gone);
  free(gone);
  if (!why && !az_failed(az) && !az->launch->def->is_template) {
    SrcLoc other;
    char *clash = copy_name_clash(az->fe, az->launch->def->cursor, place_decl(az->fe, az->ir->range.begin.offset),
                                  &other);
    if (clash) {
      why = ir_printf(az->ir, "its text uses '%s', which a file of yours declares again after the kernel (%s:%u): "
                              "the copy could mean that one", clash, text_base_name(other.file), other.line);
    }
    free(clash);
  }
  if (az_failed(az)) why = az->why;
  if (!why) {
    pw->text = build(&x, &top, &elem);
    why = x.why;
  }
  pw->text_why = why;
  free(top.v);
  free(elem.v);
}
