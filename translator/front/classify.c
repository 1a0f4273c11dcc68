// classify.c: what each statement of a region is.
//
// A statement is recognised when it is exactly one known call, bare
// (`ncclAllReduce(...);`) or as the only argument of an error-check wrapper,
// macro or function (`NCCLCHECK(ncclAllReduce(...));`). Anything else is
// opaque: kept where it is, an ordering barrier for every transformation.
#include "front/front.h"
#include "common/cuda_names.h"
#include "common/text.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const char *stmt_kind_name(StmtKind k) {
  switch (k) {
  case STMT_NCCL: return "nccl";
  case STMT_LAUNCH: return "launch";
  case STMT_GEMM: return "gemm";
  case STMT_CUDA: return "cuda";
  case STMT_OPAQUE: return "opaque";
  }
  return "?";
}

const char *wrap_kind_name(WrapKind k) {
  switch (k) {
  case WRAP_NONE: return "none";
  case WRAP_MACRO: return "macro";
  case WRAP_FUNCTION: return "function";
  }
  return "?";
}


static enum CXChildVisitResult first_child(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  *(CXCursor *)data = c;
  return CXChildVisit_Break;
}

static enum CXChildVisitResult find_overload_set(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (clang_getCursorKind(c) != CXCursor_OverloadedDeclRef) return CXChildVisit_Recurse;
  *(CXCursor *)data = c;
  return CXChildVisit_Break;
}

// The function a call calls. In a template, a call with dependent arguments
// names an overload set (clang resolves it per instantiation): its first
// declaration stands for it.
static CXCursor callee_decl(CXCursor call) {
  CXCursor ref = clang_getCursorReferenced(call);
  if (!clang_Cursor_isNull(ref) && clang_getCursorKind(ref) != CXCursor_OverloadedDeclRef) return ref;
  CXCursor callee = clang_getNullCursor(), set = clang_getNullCursor();
  clang_visitChildren(call, first_child, &callee);
  if (clang_Cursor_isNull(callee)) return callee;
  if (clang_getCursorKind(callee) == CXCursor_OverloadedDeclRef) set = callee;
  else clang_visitChildren(callee, find_overload_set, &set);
  if (clang_Cursor_isNull(set) || clang_getNumOverloadedDecls(set) == 0) return clang_getNullCursor();
  return clang_getOverloadedDecl(set, 0);
}

// The API a call names: cuBLAS's `_v2` entry points are reported by the
// names users write (cublas_v2.h maps cublasSgemm to cublasSgemm_v2).
static char *callee_name(CXCursor call) {
  CXCursor decl = callee_decl(call);
  if (clang_Cursor_isNull(decl)) return NULL;
  char *name = fe_spelling(decl);
  size_t n = strlen(name);
  if (n > 3 && strcmp(name + n - 3, "_v2") == 0) name[n - 3] = '\0';
  return name;
}

static enum CXChildVisitResult find_global_attr(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_CUDAGlobalAttr) {
    *(bool *)data = true;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Continue;
}

bool cursor_is_kernel(CXCursor decl) {
  bool found = false;
  clang_visitChildren(decl, find_global_attr, &found);
  return found;
}

// A launch is a CallExpr whose callee is __global__ (its second child is the
// launch configuration call).
static bool is_launch(CXCursor call) {
  CXCursor ref = callee_decl(call);
  if (clang_Cursor_isNull(ref)) return false;
  if (cursor_is_kernel(ref)) return true;
  CXCursor tmpl = clang_getSpecializedCursorTemplate(ref);
  return !clang_Cursor_isNull(tmpl) && cursor_is_kernel(tmpl);
}

static StmtKind call_kind(CXCursor call, const char *name) {
  if (is_launch(call)) return STMT_LAUNCH;
  if (cuda_name_in(name, NCCL_CALLS)) return STMT_NCCL;
  if (cuda_name_in(name, GEMM_CALLS)) return STMT_GEMM;
  if (cuda_name_in(name, CUDA_CALLS)) return STMT_CUDA;
  return STMT_OPAQUE;
}

// A call of a kind classify reads (an NCCL or CUDA call, a launch, ...).
static bool known_call(const Frontend *fe, CXCursor c) {
  (void)fe;
  if (clang_getCursorKind(c) != CXCursor_CallExpr) return false;
  char *name = callee_name(c);
  bool yes = name && call_kind(c, name) != STMT_OPAQUE;
  free(name);
  return yes;
}

// Tokens of a range of the main file.
typedef struct Toks {
  CXTranslationUnit tu;
  CXToken *t;
  unsigned n;
} Toks;

static Toks tokens_of(const Frontend *fe, SrcRange r) {
  CXSourceLocation b = clang_getLocationForOffset(fe->tu, fe->file, r.begin.offset);
  CXSourceLocation e = clang_getLocationForOffset(fe->tu, fe->file, r.end.offset);
  Toks t = {fe->tu, NULL, 0};
  clang_tokenize(fe->tu, clang_getRange(b, e), &t.t, &t.n);
  return t;
}

static void tokens_free(Toks *t) {
  if (t->t) clang_disposeTokens(t->tu, t->t, t->n);
}

static unsigned tok_offset(const Frontend *fe, const Toks *t, unsigned i) {
  return fe_loc(fe, clang_getTokenLocation(t->tu, t->t[i])).offset;
}

static unsigned tok_end(const Frontend *fe, const Toks *t, unsigned i) {
  return fe_loc(fe, clang_getRangeEnd(clang_getTokenExtent(t->tu, t->t[i]))).offset;
}

static bool tok_is(const Toks *t, unsigned i, const char *s) {
  if (i >= t->n) return false;
  CXString sp = clang_getTokenSpelling(t->tu, t->t[i]);
  bool eq = strcmp(clang_getCString(sp), s) == 0;
  clang_disposeString(sp);
  return eq;
}

static char *tok_text(const Toks *t, unsigned i) {
  CXString sp = clang_getTokenSpelling(t->tu, t->t[i]);
  char *s = strdup(clang_getCString(sp));
  clang_disposeString(sp);
  return s;
}

// Index of the first token at or after offset.
static unsigned tok_at(const Frontend *fe, const Toks *t, unsigned offset) {
  unsigned i = 0;
  while (i < t->n && tok_offset(fe, t, i) < offset) i++;
  return i;
}

// Extend a statement's range over its trailing ';' (expression statements'
// extents stop before it).
static SrcRange with_semicolon(const Frontend *fe, SrcRange r) {
  unsigned i = r.end.offset;
  while (i < fe->src.len && (fe->src.buf[i] == ' ' || fe->src.buf[i] == '\t')) i++;
  if (i < fe->src.len && fe->src.buf[i] == ';') r.end = source_loc(&fe->src, i + 1);
  return r;
}

static Piece piece(const Frontend *fe, unsigned b, unsigned e) {
  Piece p = {0};
  p.range.begin = source_loc(&fe->src, b);
  p.range.end = source_loc(&fe->src, e);
  p.text = fe_text(fe, p.range);
  return p;
}

// Split tokens [from, to) at top-level commas into pieces.
static Piece *split_pieces(const Frontend *fe, const Toks *t, unsigned from, unsigned to, int *n) {
  Piece *out = xcalloc(to - from + 1, sizeof *out);
  *n = 0;
  int depth = 0;
  unsigned start = from;
  for (unsigned i = from; i <= to; i++) {
    bool at_end = i == to;
    if (!at_end && (tok_is(t, i, "(") || tok_is(t, i, "[") || tok_is(t, i, "{"))) depth++;
    if (!at_end && (tok_is(t, i, ")") || tok_is(t, i, "]") || tok_is(t, i, "}"))) depth--;
    if (at_end || (depth == 0 && tok_is(t, i, ","))) {
      if (i > start) out[(*n)++] = piece(fe, tok_offset(fe, t, start), tok_end(fe, t, i - 1));
      start = i + 1;
    }
  }
  return out;
}

// Index of the token closing the bracket opened at i (or t->n).
static unsigned matching(const Toks *t, unsigned i, const char *open, const char *close) {
  int depth = 0;
  for (; i < t->n; i++) {
    if (tok_is(t, i, open)) depth++;
    else if (tok_is(t, i, close) && --depth == 0) return i;
  }
  return t->n;
}

static Piece *call_args(const Frontend *fe, CXCursor call, int *n) {
  int count = clang_Cursor_getNumArguments(call);
  Piece *out = xcalloc((size_t)(count > 0 ? count : 0) + 1, sizeof *out);
  *n = 0;
  for (int i = 0; i < count; i++) {
    SrcRange r = fe_range(fe, clang_getCursorExtent(clang_Cursor_getArgument(call, (unsigned)i)));
    if (!r.begin.file) continue;  // a default argument: not written
    out[(*n)++] = piece(fe, r.begin.offset, r.end.offset);
  }
  return out;
}

static enum CXChildVisitResult collect_params(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (clang_getCursorKind(c) != CXCursor_ParmDecl) return CXChildVisit_Continue;
  KernelDef *k = data;
  Param *p = &k->params[k->nparams++];
  p->name = fe_spelling(c);
  CXString ts = clang_getTypeSpelling(clang_getCursorType(c));
  p->type = strdup(clang_getCString(ts));
  clang_disposeString(ts);
  return CXChildVisit_Continue;
}

static enum CXChildVisitResult count_params(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_ParmDecl) ++*(int *)data;
  return CXChildVisit_Continue;
}

// The header that holds definition def (its path and bytes; *end: where def
// ends in it), NULL when libclang does not give its contents.
static SourceFile *header_of(const Frontend *fe, CXCursor def, unsigned *end) {
  CXFile file;
  clang_getFileLocation(clang_getRangeEnd(clang_getCursorExtent(def)), &file, NULL, NULL, end);
  size_t size = 0;
  const char *buf = file ? clang_getFileContents(fe->tu, file, &size) : NULL;
  if (!buf || *end > size) return NULL;
  SourceFile *src = xcalloc(1, sizeof *src);
  CXString name = clang_getFileName(file);
  src->path = strdup(clang_getCString(name));
  if (!src->path) COCONET_BUG("out of memory");
  clang_disposeString(name);
  src->buf = xcalloc(size + 1, 1);
  memcpy(src->buf, buf, size);
  src->len = size;
  return src;
}

static bool same_place(CXCursor a, CXCursor b) {
  CXFile fa, fb;
  unsigned oa, ob;
  clang_getFileLocation(clang_getCursorLocation(a), &fa, NULL, NULL, &oa);
  clang_getFileLocation(clang_getCursorLocation(b), &fb, NULL, NULL, &ob);
  return fa && fb && clang_File_isEqual(fa, fb) && oa == ob;
}

// Whether the specialization a launch calls is an explicit one (`template <> __global__
// void k<float>(float *x, ...) { ... }`): its own declaration and definition, elsewhere than
// the template's.
// That is the code the launch runs, read as a plain function (the template's instance
// would be the primary template's code).
static bool explicit_specialization(CXCursor decl, CXCursor tmpl) {
  if (clang_getCursorKind(decl) != CXCursor_FunctionDecl) return false;
  CXCursor spec = clang_getCursorDefinition(decl), pattern = clang_getCursorDefinition(tmpl);
  if (clang_Cursor_isNull(pattern)) return false;
  if (!clang_Cursor_isNull(spec)) return !same_place(spec, pattern);
  // Only declared here (`template <> __global__ void k<float>(float *, int);`, defined in
  // another file): not the template's code either; the kernel has no definition here.
  return !same_place(decl, pattern) && !same_place(decl, tmpl);
}

// The kernel's definition (for a template, the pattern: parameters read `T *`; for an
// explicit specialization, its own definition),
// as the translated file sees it (a launch in a header's view too).
static KernelDef *kernel_def(const Frontend *fe, CXCursor call) {
  if (fe->root) fe = fe->root;
  CXCursor decl = callee_decl(call);
  CXCursor tmpl = clang_getCursorKind(decl) == CXCursor_FunctionTemplate
                      ? decl
                      : clang_getSpecializedCursorTemplate(decl);
  bool is_template = !clang_Cursor_isNull(tmpl) && !explicit_specialization(decl, tmpl);
  CXCursor def = clang_getCursorDefinition(is_template ? tmpl : decl);
  if (clang_Cursor_isNull(def)) return NULL;
  KernelDef *k = xcalloc(1, sizeof *k);
  k->name = fe_spelling(def);
  k->cursor = def;
  k->is_template = is_template;
  k->in_header = !fe_in_main_file(fe, clang_getCursorLocation(def));
  if (!k->in_header) k->range = fe_range(fe, clang_getCursorExtent(def));
  k->inst = clang_getNullCursor();
  if (is_template && k->in_header) k->hsrc = header_of(fe, def, &k->hend);
  if (is_template && k->in_header && !k->hsrc)
    k->why = xasprintf("kernel template '%s': coconet cannot read the header that defines it", k->name);
  else if (is_template)
    instance_describe(fe, decl, def, k);
  int np = 0;
  clang_visitChildren(def, count_params, &np);
  k->params = xcalloc((size_t)np + 1, sizeof *k->params);
  clang_visitChildren(def, collect_params, k);
  return k;
}

static enum CXChildVisitResult find_body(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_CompoundStmt) {
    *(CXCursor *)data = c;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Continue;
}

const char CLASSIFY_MACRO_ARGS[] = "a macro in its launch stands for more than one argument or launch setting";
const char CLASSIFY_MACRO_LAUNCH[] = "its kernel launch is written in the body of macro";
const char CLASSIFY_DEFAULT_ARGS[] = "its launch leaves kernel parameters to their default arguments; coconet reads a "
                                     "launch that writes out every argument: write them out";

static Launch *launch_of(const Frontend *fe, CXCursor call, const Toks *t, unsigned first) {
  unsigned open = first;
  while (open < t->n && !tok_is(t, open, "<<<")) open++;
  unsigned close = open;
  while (close < t->n && !tok_is(t, close, ">>>")) close++;
  if (close >= t->n || !tok_is(t, close + 1, "(")) return NULL;
  unsigned args_end = matching(t, close + 1, "(", ")");
  if (args_end >= t->n) return NULL;
  Launch *l = xcalloc(1, sizeof *l);
  Piece name = piece(fe, tok_offset(fe, t, first), tok_end(fe, t, open - 1));
  char *lt = strchr(name.text, '<');
  if (lt) {
    char *gt = strrchr(lt, '>');
    if (gt) *gt = '\0';
    l->template_args = strdup(lt + 1);
    while (lt > name.text && (lt[-1] == ' ' || lt[-1] == '\t')) lt--;
    *lt = '\0';
  }
  l->kernel = name.text;
  int nconf;
  Piece *conf = split_pieces(fe, t, open + 1, close, &nconf);
  Piece *slots[] = {&l->grid, &l->block, &l->shmem, &l->stream};
  for (int i = 0; i < nconf && i < 4; i++) *slots[i] = conf[i];
  free(conf);
  l->args = split_pieces(fe, t, close + 2, args_end, &l->nargs);
  // An argument whose calls change nothing (1.0f - powf(beta1, t)), and a grid whose macro is
  // an expression of its arguments (CEIL_DIV(n, 256)), are pure for the order of evaluation.
  for (int i = 0; i < l->nargs && i < clang_Cursor_getNumArguments(call); i++)
    l->args[i].pure = wrapper_pure(clang_Cursor_getArgument(call, (unsigned)i));
  FeKids kids = fe_kids(call);
  CXCursor config = kids.n > 1 ? kids.v[1] : clang_getNullCursor();
  for (int i = 0; i < nconf && i < 4 && !clang_Cursor_isNull(config) && i < clang_Cursor_getNumArguments(config); i++)
    slots[i]->pure = wrapper_pure(clang_Cursor_getArgument(config, (unsigned)i));
  l->call = call;
  l->def = kernel_def(fe, call);
  if (l->def && !l->def->in_header) {
    CXCursor body = clang_getNullCursor();
    clang_visitChildren(l->def->cursor, find_body, &body);
    if (!clang_Cursor_isNull(body)) l->def->body = fe_range(fe->root ? fe->root : fe, clang_getCursorExtent(body));
  }
  return l;
}

// After the call in `NAME(CALL, ...)`, tokens [from, to): only constants a checking
// function is told where it is by (`, "all-reduce"`, `, __FILE__, __LINE__`).
static bool only_check_context(const Toks *t, unsigned from, unsigned to) {
  if (from >= to || !tok_is(t, from, ",")) return false;
  for (unsigned i = from; i < to; i++) {
    CXTokenKind k = clang_getTokenKind(t->t[i]);
    bool ok = k == CXToken_Literal || tok_is(t, i, ",") || tok_is(t, i, "__FILE__") || tok_is(t, i, "__LINE__") ||
              tok_is(t, i, "__func__");
    if (!ok) return false;
  }
  return true;
}

// Is token i the name of a function of the C or C++ library (exit, not a
// macro or a lambda of the user's named so)?
static bool library_call(const Frontend *fe, const Toks *t, unsigned i) {
  CXCursor c = clang_getCursor(fe->tu, clang_getTokenLocation(t->tu, t->t[i]));
  CXCursor fn = clang_getCursorReferenced(c);
  return clang_getCursorKind(c) != CXCursor_MacroExpansion && clang_getCursorKind(fn) == CXCursor_FunctionDecl &&
         clang_Location_isInSystemHeader(clang_getCursorLocation(fn));
}

// Why `if (CALL ...) ...` (t: its tokens up to last) is not a check of CALL's
// result that fails the program, or NULL when it is one.
static const char *if_check_why(const Frontend *fe, const Toks *t, unsigned last, unsigned call_end) {
  unsigned after = 2;
  while (after < last && tok_offset(fe, t, after) < call_end) after++;
  // `CALL != ncclSuccess` (cudaSuccess, 0), or the call alone: true when it failed.
  bool alone = tok_is(t, after, ")");
  unsigned act = alone ? after + 1 : after + 3;
  if (act >= last || (!alone && (!tok_is(t, after, "!=") || !tok_is(t, after + 2, ")") ||
                                 !(tok_is(t, after + 1, "ncclSuccess") || tok_is(t, after + 1, "cudaSuccess") ||
                                   tok_is(t, after + 1, "0")))))
    return "its condition is not 'CALL != ncclSuccess'";
  bool block = tok_is(t, act, "{") && tok_is(t, last - 1, "}");
  for (unsigned i = act + 1, depth = 1; block && i + 1 < last; i++) {  // one block: no else after it
    depth += tok_is(t, i, "{") ? 1u : tok_is(t, i, "}") ? -1u : 0u;
    if (depth == 0) return "it has an else";
  }
  if (block) {  // its last statement fails: `... abort(); }`, `... throw ...; }`; nothing leaves it before
    static const char *const flow[] = {"if", "return", "goto", "break", "continue", "for", "while", "do",
                                       "switch", "co_return"};
    for (unsigned i = act + 1; i + 1 < last; i++)
      for (size_t f = 0; f < sizeof flow / sizeof *flow; f++)
        if (tok_is(t, i, flow[f])) return "its block has a statement that may leave it or loop";
    unsigned end = last - 2, from = end;
    while (from > act + 1 && !tok_is(t, from - 1, ";") && !tok_is(t, from - 1, "{") && !tok_is(t, from - 1, "}"))
      from--;
    if (!tok_is(t, end, ";")) return "its block does not end in a statement that fails the program";
    act = from;
  }
  bool std = act + 2 < last && tok_is(t, act, "std") && tok_is(t, act + 1, "::");
  unsigned verb = std ? act + 2 : act;
  if (!std && tok_is(t, act, "throw")) return NULL;
  if (!tok_is(t, verb, "abort") && !tok_is(t, verb, "exit") && !tok_is(t, verb, "terminate"))
    return "its branch does not end in abort(), exit(...), std::terminate() or a throw";
  return library_call(fe, t, verb) ? NULL : "its abort, exit or terminate is not the C or C++ library's";
}

// Is the statement exactly `CALL;`, `NAME(CALL);`, `NAME(CALL, "what");` or `if (CALL !=
// ncclSuccess) throw ...;`? Sets wrap and wrapper.
static bool call_is_whole_statement(const Frontend *fe, Stmt *s, const Toks *t, unsigned call_begin,
                                    unsigned call_end) {
  unsigned first = 0, last = t->n;
  while (last > 0 && tok_offset(fe, t, last - 1) >= s->range.end.offset) last--;
  if (last > 0 && tok_is(t, last - 1, ";")) last--;
  if (last == 0) return false;
  if (tok_offset(fe, t, first) == call_begin && tok_end(fe, t, last - 1) == call_end) return true;
  // if (CALL != ncclSuccess) throw ... / abort() / exit(...), or a block that ends so (`{ fprintf(...);
  // exit(1); }`), without else: a check; the generated calls get coconet's own.
  if (last > 6 && tok_is(t, 0, "if") && tok_is(t, 1, "(") && tok_offset(fe, t, 2) == call_begin) {
    const char *why = if_check_why(fe, t, last, call_end);
    if (why && !s->why_opaque)
      s->why_opaque = xasprintf("the 'if' around the call is not a check coconet reads: %s; coconet reads 'if (CALL != "
                                "ncclSuccess)' (or cudaSuccess, 0, or the call alone) without else whose branch, a "
                                "statement or the last of a block with no if, return, goto or loop, is the C "
                                "library's abort(), exit(...), std::terminate() or a throw", why);
    return !why;
  }
  // NAME ( CALL )
  if (last < 4 || !tok_is(t, 1, "(") || !tok_is(t, last - 1, ")")) return false;
  if (clang_getTokenKind(t->t[0]) != CXToken_Identifier) return false;
  if (tok_offset(fe, t, 2) != call_begin) return false;
  if (tok_end(fe, t, last - 2) != call_end) {
    // NAME(CALL, "what"): the calls generated in its place get coconet's own check.
    unsigned after = 2;
    while (after < last && tok_offset(fe, t, after) < call_end) after++;
    return only_check_context(t, after, last - 1);
  }
  s->wrapper = tok_text(t, 0);
  // A function wrapper is the statement's own call; otherwise a macro.
  bool function = clang_getCursorKind(s->cursor) == CXCursor_CallExpr;
  if (function) {
    char *outer = callee_name(s->cursor);
    function = outer && strcmp(outer, s->wrapper) == 0;
    free(outer);
  }
  s->wrap = function ? WRAP_FUNCTION : WRAP_MACRO;
  return true;
}

// Is the call written in the statement itself? A call that comes whole out of
// a macro body (`#define AR(b) ncclAllReduce(b, ...)`) has no text of its own
// to rewrite: its statement stays opaque.
static bool written_here(const Frontend *fe, CXCursor call, SrcRange cr) {
  char *text = fe_text(fe, cr);
  bool ok;
  if (is_launch(call)) {
    ok = strstr(text, "<<<") != NULL;
  } else {
    char *name = callee_name(call);
    size_t n = strlen(name);
    ok = strncmp(text, name, n) == 0 && !(isalnum((unsigned char)text[n]) || text[n] == '_');
    if (!ok && strncmp(text, name, n) == 0) ok = strncmp(text + n, "_v2", 3) == 0;
    free(name);
  }
  free(text);
  return ok;
}

// Why a launch the statement of range r makes is not read: the macro whose body
// writes it (the first macro used in the statement), or NULL when none is.
static char *macro_launch_why(const Frontend *fe, SrcRange r) {
  Toks t = tokens_of(fe, r);
  char *why = NULL;
  for (unsigned i = 0; i < t.n && !why; i++) {
    if (clang_getTokenKind(t.t[i]) != CXToken_Identifier) continue;
    CXCursor c = clang_getCursor(fe->tu, clang_getTokenLocation(fe->tu, t.t[i]));
    if (clang_getCursorKind(c) != CXCursor_MacroExpansion) continue;
    CXCursor def = clang_getCursorReferenced(c);
    char *name = fe_spelling(c);
    SrcLoc at = fe_any_loc(fe, clang_getCursorLocation(def));
    why = xasprintf("%s '%s' at %s:%u; coconet reads a launch whose kernel, '<<<', '>>>' and arguments are written "
                    "out, in the region or in a launcher's body: write it out there",
                    CLASSIFY_MACRO_LAUNCH, name, text_base_name(at.file), at.line);
    free(name);
  }
  tokens_free(&t);
  return why;
}

// A statement calling a host function of the user's: the call itself, or the
// call checked (`NCCLCHECK(allreduce(...));`, `if (allreduce(...) !=
// ncclSuccess) abort();`: the wrapper, as around a collective).
static void see_through(const Frontend *fe, Stmt *s) {
  CXCursor call = wrapper_call_in(fe, s->cursor);
  if (clang_Cursor_isNull(call)) return;
  SrcRange cr = fe_range(fe, clang_getCursorExtent(call));
  bool checked = false;
  if (cr.begin.file && cr.begin.offset != s->range.begin.offset) {
    Toks t = tokens_of(fe, s->range);
    checked = call_is_whole_statement(fe, s, &t, cr.begin.offset, cr.end.offset);
    tokens_free(&t);
  }
  wrapper_see_through(fe, s, call, checked);
  if (s->kind == STMT_OPAQUE) {
    free(s->wrapper);
    s->wrapper = NULL;
    s->wrap = WRAP_NONE;
  }
}

// A call in a template whose function its arguments decide (`wrapper(out, ...)`
// with `T *out`): coconet reads calls resolved, and this one is not until the
// template is instantiated. Why the statement is opaque then, or NULL.
static enum CXChildVisitResult find_dependent_call(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (clang_getCursorKind(c) != CXCursor_CallExpr || clang_getCursorType(c).kind != CXType_Dependent)
    return CXChildVisit_Recurse;
  *(CXCursor *)data = c;
  return CXChildVisit_Break;
}

static char *dependent_call_why(const Frontend *fe, CXCursor cursor) {
  CXCursor call = clang_getNullCursor();
  if (clang_getCursorKind(cursor) == CXCursor_CallExpr) find_dependent_call(cursor, cursor, &call);
  if (clang_Cursor_isNull(call)) clang_visitChildren(cursor, find_dependent_call, &call);
  if (clang_Cursor_isNull(call)) return NULL;
  char *name = fe_cursor_text(fe, call);  // an unresolved call has no name of its own: its text up to '('
  name[strcspn(name, "(")] = '\0';
  CXCursor fn = place_function(fe, fe_range(fe, clang_getCursorExtent(call)).begin.offset);
  bool member = clang_getCursorKind(fn) != CXCursor_FunctionTemplate;
  char *tmpl = fe_spelling(member ? clang_getCursorSemanticParent(fn) : fn);
  char *instance = member ? xasprintf("an explicit instantiation `template class %s<...>;` or a variable of "
                                      "that class", tmpl)
                          : xasprintf("a call of '%s'", tmpl);
  char *why = xasprintf("its call of '%s' depends on the parameters of the template the region is in, and coconet "
                        "reads calls as they resolve, which this one does only in an instance: coconet reads such a "
                        "region in each instance of its template that this file makes (%s), and this file makes "
                        "none", name, instance);
  free(name);
  free(tmpl);
  free(instance);
  return why;
}

// `if (C) { collective; }` with no else and a C without effects (an engine's
// `if (tensor_para_.world_size_ > 1) ftNcclAllReduceSum(...);`), or such an
// if around another: the collective, guarded by C (and the inner ones); else NULL.
// (body: the statement of its body read as the collective)
static Stmt *guarded_in(const Frontend *fe, CXCursor cursor, CXCursor body);

static Stmt *guarded_collective(const Frontend *fe, CXCursor cursor) {
  FeKids k = fe_kids(cursor);
  if (clang_getCursorKind(cursor) != CXCursor_IfStmt || k.n != 2) return NULL;
  CXCursor body = k.last;
  if (clang_getCursorKind(body) == CXCursor_CompoundStmt) {
    FeKids b = fe_kids(body);
    if (b.n != 1) return NULL;
    body = b.v[0];
  }
  return guarded_in(fe, cursor, body);
}

static Stmt *guarded_in(const Frontend *fe, CXCursor cursor, CXCursor body) {
  FeKids k = fe_kids(cursor);
  char *cond = fe_cursor_text(fe, k.v[0]);
  // A macro in it may stand for what differs where coconet writes the test (`__LINE__`): not read.
  // Nor one with a comment, which the test's one line would not end (it is written in comments too).
  char *macro = fe_macro_in(fe, fe_range(fe, clang_getCursorExtent(k.v[0])));
  if (source_has_effects(cond) || strstr(cond, "coconet_") || strstr(cond, "__LINE__") || macro ||
      strstr(cond, "//") || strstr(cond, "/*")) {
    free(macro);
    free(cond);
    return NULL;
  }
  Stmt *s = classify_stmt(fe, body);
  if (s->kind != STMT_NCCL || strcmp(s->callee, "ncclGroupStart") == 0 || strcmp(s->callee, "ncclGroupEnd") == 0) {
    stmt_free(s);
    free(cond);
    return NULL;
  }
  // (`if (A) { if (B) collective; }` is the collective under A && B)
  char *inner = s->guard;
  text_one_line(cond);
  s->guard = inner ? xasprintf("((%s) && %s)", text_unwrap(cond), inner) : xasprintf("(%s)", text_unwrap(cond));
  free(inner);
  free(cond);
  s->range = with_semicolon(fe, fe_range(fe, clang_getCursorExtent(cursor)));
  return s;
}

static Stmt *classify_plain(const Frontend *fe, CXCursor cursor);

const char CLASSIFY_IF_COLLECTIVE[] = "it is an 'if' around a collective, which coconet reads as the collective under "
                                      "a run-time test only written `if (C) collective;` (or a call of a wrapper it "
                                      "sees through): no else, a condition without effects, macros or comments, the "
                                      "collective alone in its body, or followed by error checks only";

// Whether c is a call of an NCCL collective (not a group call).
static bool collective_call(const Frontend *fe, CXCursor c) {
  if (!known_call(fe, c)) return false;
  char *name = callee_name(c);
  bool yes = call_kind(c, name) == STMT_NCCL && strcmp(name, "ncclGroupStart") && strcmp(name, "ncclGroupEnd");
  free(name);
  return yes;
}

Stmt *classify_region_stmt(const Frontend *fe, CXCursor cursor) {
  Stmt *s = classify_stmt(fe, cursor);
  FeKids k = fe_kids(cursor);
  if (s->kind != STMT_OPAQUE || clang_getCursorKind(cursor) != CXCursor_IfStmt || k.n != 2 ||
      clang_getCursorKind(k.last) != CXCursor_CompoundStmt)
    return s;
  FeKids b = fe_kids(k.last);
  Stmt *checks = NULL, **tail = &checks;
  bool all = b.n > 1 && b.n < FE_KIDS;
  for (int i = 1; i < b.n && all; i++) {
    *tail = classify_stmt(fe, b.v[i]);
    all = (*tail)->kind == STMT_OPAQUE && (*tail)->error_check;
    tail = &(*tail)->next;
  }
  Stmt *guarded = all ? guarded_in(fe, cursor, b.v[0]) : NULL;
  if (!guarded) {
    while (checks) {
      Stmt *next = checks->next;
      stmt_free(checks);
      checks = next;
    }
    return s;
  }
  stmt_free(s);
  guarded->next = checks;
  return guarded;
}

Stmt *classify_stmt(const Frontend *fe, CXCursor cursor) {
  Stmt *guarded = guarded_collective(fe, cursor);
  if (guarded) return guarded;
  Stmt *s = classify_plain(fe, cursor);
  // (an error check written out or in a macro, `CHECK_LAST();` for `do { cudaError_t e = ...; } while (0)`;
  // not a declaration, whose names the statements after it use)
  if (s->kind == STMT_OPAQUE && clang_getCursorKind(cursor) != CXCursor_DeclStmt) {
    s->why_not_check = wrapper_checks_only(fe, cursor, &s->check_through);
    s->error_check = s->why_not_check == NULL;
  }
  CXCursor call;
  if (s->kind == STMT_OPAQUE && !s->why_opaque && clang_getCursorKind(cursor) == CXCursor_IfStmt &&
      fe_count_below(fe, cursor, collective_call, true, &call) > 0) {
    s->why_opaque = strdup(CLASSIFY_IF_COLLECTIVE);
  }
  return s;
}

static Stmt *classify_plain(const Frontend *fe, CXCursor cursor) {
  Stmt *s = xcalloc(1, sizeof *s);
  s->kind = STMT_OPAQUE;
  s->cursor = cursor;
  s->range = with_semicolon(fe, fe_range(fe, clang_getCursorExtent(cursor)));
  CXCursor call = cursor;
  int count = known_call(fe, cursor) ? 1 : fe_count_below(fe, cursor, known_call, true, &call);
  if (count != 1) {
    if (count == 0) see_through(fe, s);
    if (s->kind == STMT_OPAQUE && !s->why_opaque) s->why_opaque = dependent_call_why(fe, cursor);
    return s;
  }
  SrcRange cr = fe_range(fe, clang_getCursorExtent(call));
  if (!cr.begin.file || !cr.end.file || !written_here(fe, call, cr)) {
    if (is_launch(call)) s->why_opaque = macro_launch_why(fe, s->range);
    return s;
  }
  Toks t = tokens_of(fe, s->range);
  if (call_is_whole_statement(fe, s, &t, cr.begin.offset, cr.end.offset)) {
    s->callee = callee_name(call);
    s->kind = call_kind(call, s->callee);
    s->call_range = cr;
    if (s->kind == STMT_LAUNCH) {
      s->launch = launch_of(fe, call, &t, tok_at(fe, &t, cr.begin.offset));
      if (s->launch && (s->launch->nargs != clang_Cursor_getNumArguments(call) || !s->launch->block.text)) {
        // A macro in the launch stands for several arguments (`PAIR(a, b)`): its texts are not the call's.
        // Or the launch leaves parameters to their defaults, which have no place in the source.
        int defaults = clang_Cursor_getNumArguments(call) - fe_written_args(call);
        bool left = defaults && s->launch->block.text && s->launch->nargs + defaults == clang_Cursor_getNumArguments(call);
        launch_free(s->launch);
        s->launch = NULL;
        s->why_opaque = strdup(left ? CLASSIFY_DEFAULT_ARGS : CLASSIFY_MACRO_ARGS);
      }
      if (!s->launch) s->kind = STMT_OPAQUE;
      else {
        free(s->callee);
        s->callee = strdup(s->launch->kernel);
        s->args = s->launch->args;
        s->nargs = s->launch->nargs;
      }
    } else {
      s->args = call_args(fe, call, &s->nargs);
    }
  } else {
    free(s->wrapper);
    s->wrapper = NULL;
    s->wrap = WRAP_NONE;
  }
  tokens_free(&t);
  return s;
}

static void pieces_free(Piece *p, int n) {
  for (int i = 0; i < n; i++) free(p[i].text);
  free(p);
}

void launch_free(Launch *l) {
  if (l->other) launch_free(l->other);
  free(l->when);
  free(l->why_not);
  free(l->kernel);
  free(l->wrapper);
  free(l->wrapper_path);
  free(l->template_args);
  free(l->grid.text);
  free(l->block.text);
  free(l->shmem.text);
  free(l->stream.text);
  pieces_free(l->args, l->nargs);
  if (l->def) {
    for (int i = 0; i < l->def->nparams; i++) {
      free(l->def->params[i].name);
      free(l->def->params[i].type);
    }
    free(l->def->params);
    free(l->def->name);
    free(l->def->header);
    if (l->def->hsrc) source_free(l->def->hsrc);
    free(l->def->hsrc);
    free(l->def->args);
    free(l->def->why);
    free(l->def);
  }
  free(l);
}

void stmt_put_first(Stmt *s, Launch *l) {
  Launch **at = &s->launch;
  while (*at && *at != l) at = &(*at)->other;
  if (!*at) COCONET_BUG("launch not among the statement's");
  *at = l->other;
  l->other = s->launch;
  s->launch = l;
  s->args = l->args;
  s->nargs = l->nargs;
  free(s->callee);
  s->callee = strdup(l->kernel);
}

void stmt_free(Stmt *s) {
  if (!s) return;
  if (s->launch) launch_free(s->launch);
  else pieces_free(s->args, s->nargs);
  free(s->callee);
  free(s->wrapper);
  free(s->why_opaque);
  free(s->seen_through);
  free(s->seen_path);
  free(s->guard);
  free(s->why_not_check);
  free(s->check_through);
  beside_free(s->beside);
  free(s);
}
