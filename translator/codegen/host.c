// host.c: --target=host, the rest of the file lowered for the CPU backend.
//
// The code generator lowers what it generates; this pass lowers what the user
// wrote, everywhere in the main file (runtime/host/include/coconet_host.h is
// the contract):
//
//   k<<<grid, block>>>(a, b)
//     -> coconet_host_launch(COCONET_HOST_SIMPLE, k, grid, block, 0, 0, a, b)
//   extern __shared__ float s[];
//     -> float *s = (float *)coconet_host_dynamic_shared();
//
// The launch's text is kept: the edits insert `coconet_host_launch(FLAGS, `,
// replace `<<<` by a comma, and replace `>>>(` by the missing configuration
// arguments and a comma. A kernel whose name is overloaded (a host function
// of the same name) is cast to its pointer type, `static_cast<void (*)(P...)>(k)`;
// a kernel template launched with arguments that depend on an enclosing
// template becomes coconet_host_launch_call (the runtime calls it, and the
// call deduces its template arguments at each instantiation). FLAGS is COCONET_HOST_SIMPLE only when the kernel
// provably reaches no barrier or warp collective; the proof walks the bodies
// of everything it calls (calls into system headers are judged by name:
// __syncthreads*, *_sync, __activemask, the legacy shuffles and votes,
// cooperative_groups beyond its queries, cuda:: barriers and pipelines, CUB's
// block and warp collectives).
// A callee without a body, a call through a pointer, a dependent call on an
// unknown type and inline assembly make it COCONET_HOST_SYNC.
#include "codegen/codegen_impl.h"
#include "common/cuda_names.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void *xrealloc(void *p, size_t size) {
  p = realloc(p, size);
  if (!p) COCONET_BUG("out of memory");
  return p;
}

//
// Does a kernel reach a barrier or a warp collective?
//

static bool has_prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static bool has_suffix(const char *s, const char *x) {
  size_t n = strlen(s), m = strlen(x);
  return n >= m && strcmp(s + n - m, x) == 0;
}

// Barriers and warp collectives by name, wherever they are declared:
// __syncthreads*, __syncwarp, __shfl*_sync, __ballot_sync, __any_sync,
// __all_sync, __match_*_sync, __reduce_*_sync, __barrier_sync, wmma's *_sync,
// and the legacy forms without _sync.
static bool is_collective_name(const char *name) {
  return has_prefix(name, "__sync") || has_suffix(name, "_sync") || has_prefix(name, "__cluster_barrier") ||
         cuda_name_in(name, CUDA_LEGACY_WARP_CALLS);
}

static bool contains_any(const char *s, const char *const *words) {
  for (; *words; words++)
    if (strstr(s, *words)) return true;
  return false;
}

// The outermost namespace a declaration is in ("" for none), and the
// innermost namespace or class that declares it.
static void decl_scopes(CXCursor decl, char **outer_ns, char **parent) {
  *outer_ns = strdup("");
  *parent = NULL;
  for (CXCursor c = clang_getCursorSemanticParent(decl);
       !clang_Cursor_isNull(c) && clang_getCursorKind(c) != CXCursor_TranslationUnit;
       c = clang_getCursorSemanticParent(c)) {
    if (!*parent) *parent = fe_spelling(c);
    if (clang_getCursorKind(c) == CXCursor_Namespace) {
      free(*outer_ns);
      *outer_ns = fe_spelling(c);
    }
  }
  if (!*parent) *parent = strdup("");
}

// A callee declared in a system header (CUDA's, the C++ library's) is
// judged by its name: its body, if clang sees one, is the GPU's.
static bool library_call_syncs(CXCursor decl, const char *name) {
  char *ns, *parent;
  decl_scopes(decl, &ns, &parent);
  enum CXCursorKind k = clang_getCursorKind(decl);
  bool sync = false;
  if (strcmp(ns, "cooperative_groups") == 0)
    sync = !(cuda_name_in(name, CUDA_GROUP_QUERIES) || k == CXCursor_Constructor || k == CXCursor_Destructor ||
             strcmp(name, "operator()") == 0);
  else if (strcmp(ns, "cuda") == 0)
    sync = contains_any(name, CUDA_SYNC_WORDS) || contains_any(parent, CUDA_SYNC_WORDS);
  else if (strcmp(ns, "cub") == 0)
    sync = k != CXCursor_Constructor && k != CXCursor_Destructor;  // block and warp collectives
  free(ns);
  free(parent);
  return sync;
}

// The proof in progress for one kernel: the definitions already walked.
typedef struct Proof {
  CXCursor *seen;
  size_t nseen, cap;
  bool syncs;  // a barrier or a collective was found, or could not be excluded
} Proof;

static bool seen_before(Proof *p, CXCursor def) {
  for (size_t i = 0; i < p->nseen; i++)
    if (clang_equalCursors(p->seen[i], def)) return true;
  if (p->nseen == p->cap) {
    p->cap = p->cap ? 2 * p->cap : 16;
    p->seen = xrealloc(p->seen, p->cap * sizeof *p->seen);
  }
  p->seen[p->nseen++] = def;
  return false;
}

static enum CXChildVisitResult walk_body(CXCursor c, CXCursor parent, CXClientData data);

// The definition of a function, or of the template it is a specialization of.
static CXCursor definition_of(CXCursor decl) {
  CXCursor def = clang_getCursorDefinition(decl);
  if (!clang_Cursor_isNull(def)) return def;
  CXCursor tmpl = clang_getSpecializedCursorTemplate(decl);
  return clang_Cursor_isNull(tmpl) ? tmpl : clang_getCursorDefinition(tmpl);
}

// Account for a call of decl (a function, method or function template).
static void check_callee(Proof *p, CXCursor decl) {
  char *name = fe_spelling(decl);
  if (is_collective_name(name)) p->syncs = true;
  else if (clang_Location_isInSystemHeader(clang_getCursorLocation(decl))) p->syncs = library_call_syncs(decl, name);
  else {
    CXCursor def = definition_of(decl);
    if (clang_Cursor_isNull(def)) p->syncs = !clang_CXXMethod_isDefaulted(decl);
    else if (!seen_before(p, def)) clang_visitChildren(def, walk_body, p);
  }
  free(name);
}

static enum CXChildVisitResult find_overload_set(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (clang_getCursorKind(c) != CXCursor_OverloadedDeclRef) return CXChildVisit_Recurse;
  *(CXCursor *)data = c;
  return CXChildVisit_Break;
}

// The callee of an unresolved call: an operator's overload set is one of its
// children (`a * b`: a, the set, b); otherwise the callee is the first child
// (a namespace qualifier aside), which holds the set when there is one.
typedef struct Callee {
  CXCursor first, set;
} Callee;

static enum CXChildVisitResult find_callee(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Callee *callee = data;
  CXCursor ref = clang_getCursorKind(c) == CXCursor_OverloadedDeclRef ? c : clang_getCursorReferenced(c);
  if (clang_getCursorKind(ref) == CXCursor_OverloadedDeclRef) {
    char *name = fe_spelling(ref);
    bool op = has_prefix(name, "operator");
    free(name);
    if (op) {
      callee->set = ref;
      return CXChildVisit_Break;
    }
  }
  if (clang_getCursorKind(c) != CXCursor_NamespaceRef && clang_Cursor_isNull(callee->first)) callee->first = c;
  return CXChildVisit_Continue;
}

// A call clang could not resolve (in a template): every function of its
// overload set counts; a functional cast or temporary (`T(1)`) calls nothing
// that can synchronize; anything else (`g.sync()` on a dependent g) may.
static void check_unresolved_call(Proof *p, CXCursor call) {
  Callee callee = {clang_getNullCursor(), clang_getNullCursor()};
  CXCursor ref = clang_getCursorReferenced(call);
  if (clang_getCursorKind(ref) == CXCursor_OverloadedDeclRef) callee.set = ref;
  else clang_visitChildren(call, find_callee, &callee);
  if (clang_Cursor_isNull(callee.set) && !clang_Cursor_isNull(callee.first)) {
    CXCursor first = clang_getCursorKind(callee.first) == CXCursor_OverloadedDeclRef
                         ? callee.first
                         : clang_getCursorReferenced(callee.first);
    if (clang_getCursorKind(first) == CXCursor_OverloadedDeclRef) callee.set = first;
    else clang_visitChildren(callee.first, find_overload_set, &callee.set);
  }
  if (!clang_Cursor_isNull(callee.set)) {
    for (unsigned i = 0; i < clang_getNumOverloadedDecls(callee.set) && !p->syncs; i++)
      check_callee(p, clang_getOverloadedDecl(callee.set, i));
    return;
  }
  enum CXCursorKind k = clang_getCursorKind(callee.first);
  p->syncs = !(k == CXCursor_TypeRef || k == CXCursor_TemplateRef);
}

static enum CXChildVisitResult walk_body(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Proof *p = data;
  switch (clang_getCursorKind(c)) {
  case CXCursor_GCCAsmStmt:
  case CXCursor_MSAsmStmt: p->syncs = true; break;
  case CXCursor_CallExpr: {
    CXCursor ref = clang_getCursorReferenced(c);
    if (fe_is_function(clang_getCursorKind(ref))) check_callee(p, ref);
    else if (clang_Cursor_isNull(ref) || clang_getCursorKind(ref) == CXCursor_OverloadedDeclRef)
      check_unresolved_call(p, c);
    else p->syncs = true;  // through a pointer or a variable
    break;
  }
  default: break;
  }
  return p->syncs ? CXChildVisit_Break : CXChildVisit_Recurse;
}

// COCONET_HOST_SIMPLE when every kernel the launch may call is proven free of
// barriers and collectives (a dependent launch names an overload set).
static const char *launch_flags(CXCursor call) {
  Proof p = {0};
  CXCursor ref = clang_getCursorReferenced(call);
  if (!clang_Cursor_isNull(ref) && fe_is_function(clang_getCursorKind(ref))) check_callee(&p, ref);
  else check_unresolved_call(&p, call);
  if (p.nseen == 0) p.syncs = true;  // no kernel body found
  free(p.seen);
  return p.syncs ? "COCONET_HOST_SYNC" : "COCONET_HOST_SIMPLE";
}

//
// The edits
//

typedef struct Lower {
  const Frontend *fe;
  CXFile file;      // the file lowered: the main file, or a header (host_include.c)
  const char *buf;  // its bytes
  size_t len;
  Edit **edits;
  int errors;
  bool whole;         // the whole file: its macros' bodies are lowered too
  CXCursor seen[16];  // kernels already asked about (kernel_name_overloaded), and the answers
  bool seen_overloaded[16];
  int nseen;
} Lower;

// Is [b, e) inside (or across) an edit made before this pass?
static bool already_edited(const Edit *edits, unsigned b, unsigned e) {
  for (const Edit *x = edits; x; x = x->next)
    if (x->begin < e && b < x->end) return true;
  return false;
}

typedef struct Toks {
  CXTranslationUnit tu;
  CXToken *t;
  unsigned n;
} Toks;

static bool tok_is(const Toks *t, unsigned i, const char *s) {
  CXString sp = clang_getTokenSpelling(t->tu, t->t[i]);
  bool eq = strcmp(clang_getCString(sp), s) == 0;
  clang_disposeString(sp);
  return eq;
}

static unsigned tok_begin(const Lower *l, const Toks *t, unsigned i) {
  return fe_loc(l->fe, clang_getTokenLocation(t->tu, t->t[i])).offset;
}

static unsigned tok_end(const Lower *l, const Toks *t, unsigned i) {
  return fe_loc(l->fe, clang_getRangeEnd(clang_getTokenExtent(t->tu, t->t[i]))).offset;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Index of the token that closes the bracket opened at i, or t->n.
static unsigned closing(const Toks *t, unsigned i) {
  int depth = 0;
  for (; i < t->n; i++) {
    if (tok_is(t, i, "(") || tok_is(t, i, "[") || tok_is(t, i, "{")) depth++;
    else if ((tok_is(t, i, ")") || tok_is(t, i, "]") || tok_is(t, i, "}")) && --depth == 0) return i;
  }
  return t->n;
}

typedef struct SameName {
  const char *name;
  int count;
} SameName;

static enum CXChildVisitResult count_same_name(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  SameName *s = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate) {
    CXString sp = clang_getCursorSpelling(c);
    if (strcmp(clang_getCString(sp), s->name) == 0 && clang_equalCursors(c, clang_getCanonicalCursor(c))) s->count++;
    clang_disposeString(sp);
  }
  return CXChildVisit_Continue;
}

// Whether the kernel's name also names another function in its scope (say a
// host wrapper of the same name): then the host launch, which takes the
// kernel as a function pointer, needs its type to pick it. Counts each
// function once (its first declaration); the last 16 kernels' answers are kept.
static bool kernel_name_overloaded(Lower *l, CXCursor kernel) {
  for (int i = 0; i < l->nseen && i < 16; i++)
    if (clang_equalCursors(l->seen[i], kernel)) return l->seen_overloaded[i];
  CXString sp = clang_getCursorSpelling(kernel);
  SameName s = {clang_getCString(sp), 0};
  clang_visitChildren(clang_getCursorSemanticParent(kernel), count_same_name, &s);
  clang_disposeString(sp);
  const int slot = l->nseen++ % 16;
  l->seen[slot] = kernel;
  l->seen_overloaded[slot] = s.count > 1;
  return s.count > 1;
}

// "static_cast<void (*)(P1, P2)>(" for a kernel, as its parameters are declared.
static char *kernel_pointer_cast(CXCursor kernel) {
  char *out = xasprintf("static_cast<void (*)(");
  int n = clang_Cursor_getNumArguments(kernel);
  for (int i = 0; i < n; i++) {
    CXString t = clang_getTypeSpelling(clang_getCursorType(clang_Cursor_getArgument(kernel, (unsigned)i)));
    char *next = xasprintf("%s%s%s", out, i ? ", " : "", clang_getCString(t));
    clang_disposeString(t);
    free(out);
    out = next;
  }
  char *done = xasprintf("%s)>(", out);
  free(out);
  return done;
}

// The launch configuration from token `from` on: *open its '<<<', *close its
// '>>>', *commas the commas between them; whether it is whole, the call's '('
// and ')' after it within the tokens.
static bool config_tokens(const Toks *t, unsigned from, unsigned *open, unsigned *close, unsigned *commas) {
  unsigned o = from;
  while (o < t->n && !tok_is(t, o, "<<<")) o++;
  unsigned c = o, n = 0;
  int depth = 0;
  for (; c < t->n && !tok_is(t, c, ">>>"); c++) {
    if (tok_is(t, c, "(") || tok_is(t, c, "[") || tok_is(t, c, "{")) depth++;
    else if (tok_is(t, c, ")") || tok_is(t, c, "]") || tok_is(t, c, "}")) depth--;
    else if (depth == 0 && tok_is(t, c, ",")) n++;
  }
  *open = o, *close = c, *commas = n;
  return o < t->n && c + 2 < t->n && tok_is(t, c + 1, "(") && n <= 3 && closing(t, c + 1) < t->n;
}

// The edits of a launch whose configuration tokens config_tokens found:
// `head` before byte `at` (where the kernel's name begins), the '<<<' a comma,
// `>>>(` the configuration's missing arguments and a comma.
static void edit_launch(Lower *l, const Toks *t, unsigned at, const char *head, bool cast, unsigned open,
                        unsigned close, unsigned commas) {
  bool no_args = tok_is(t, close + 2, ")");
  unsigned after_paren = tok_end(l, t, close + 1);
  const char *sep = no_args ? "" : (after_paren < l->len && is_space(l->buf[after_paren])) ? "," : ", ";
  char zeros[16] = "";
  for (unsigned i = commas; i < 3; i++) strcat(zeros, ", 0");
  char *tail = xasprintf("%s%s", zeros, sep);
  unsigned conf_begin = tok_end(l, t, open);
  bool spaced = conf_begin < l->len && is_space(l->buf[conf_begin]);
  edit_add(l->edits, at, at, head);
  edit_add(l->edits, tok_begin(l, t, open), conf_begin, cast ? (spaced ? ")," : "), ") : spaced ? "," : ", ");
  edit_add(l->edits, tok_end(l, t, close - 1), after_paren, tail);
  free(tail);
}

//
// Launches written in a macro's body
//

// The first token of the kernel a launch's '<<<' at `open` follows: its name,
// qualified or not, and its template arguments; `open` when there is none at
// or after `first`.
static unsigned kernel_start(const Toks *t, unsigned first, unsigned open) {
  unsigned j = open;
  if (j > first && tok_is(t, j - 1, ">")) {
    int depth = 0;
    for (j--; j > first; j--) {
      depth += tok_is(t, j, ">") ? 1 : tok_is(t, j, ">>") ? 2 : tok_is(t, j, "<") ? -1 : 0;
      if (depth == 0) break;
    }
    if (depth != 0) return open;
  }
  if (j == first || clang_getTokenKind(t->t[j - 1]) != CXToken_Identifier) return open;
  j--;
  while (j >= first + 2 && tok_is(t, j - 1, "::") && clang_getTokenKind(t->t[j - 2]) == CXToken_Identifier) j -= 2;
  if (j > first && tok_is(t, j - 1, "::")) j--;
  // A name pasted together (`nm##_kernel`) or a string of one: the macro's use makes it.
  if (j > first && (tok_is(t, j - 1, "##") || tok_is(t, j - 1, "#"))) return open;
  return j;
}

static void tokenize_range(const Lower *l, SrcRange r, Toks *t) {
  t->tu = l->fe->tu;
  CXSourceLocation b = clang_getLocationForOffset(t->tu, l->file, r.begin.offset);
  CXSourceLocation e = clang_getLocationForOffset(t->tu, l->file, r.end.offset);
  clang_tokenize(t->tu, clang_getRange(b, e), &t->t, &t->n);
}

// The launches of a #define's body (FasterTransformer's `k<N><<<m, block, 0,
// stream>>>(...)` in a macro of its launchers), each written whole there: its
// kernel, '<<<', '>>>' and arguments. Lowered once, for every use of the macro
// (edit): each use may launch another kernel, or an overload or instance that
// its arguments pick, so the launch calls the kernel as written,
// `coconet_host_launch_call(COCONET_HOST_SYNC, (k<N>), m, block, 0, stream, ...)`,
// with the flag that runs any kernel. False when one is not whole
// (`#define OPEN <<<`): then nothing is edited, and its uses are refused.
static bool macro_launches(Lower *l, CXCursor def, bool edit) {
  Toks t = {l->fe->tu, NULL, 0};
  clang_tokenize(t.tu, clang_getCursorExtent(def), &t.t, &t.n);
  unsigned open, close, commas;
  bool whole = true;
  for (unsigned from = 0; from < t.n && whole; from = close + 1) {
    whole = config_tokens(&t, from, &open, &close, &commas);
    if (open >= t.n) return clang_disposeTokens(t.tu, t.t, t.n), true;
    unsigned k = kernel_start(&t, 1, open);
    whole = whole && k < open;
    if (whole && edit)
      edit_launch(l, &t, tok_begin(l, &t, k), "coconet_host_launch_call(COCONET_HOST_SYNC, (", true, open, close,
                  commas);
  }
  clang_disposeTokens(t.tu, t.t, t.n);
  return whole;
}

// Whether a #define's body, when it launches, writes out `values` configuration
// values in one of its launches (its text is lowered once, for every use; a
// use's launch gives that many). A body without a launch uses another macro.
static bool macro_config_written(Lower *l, CXCursor def, unsigned values) {
  Toks t = {l->fe->tu, NULL, 0};
  clang_tokenize(t.tu, clang_getCursorExtent(def), &t.t, &t.n);
  unsigned open = 0, close = 0, commas, launches = 0;
  bool found = false;
  for (unsigned from = 0; from < t.n && !found; from = close + 1) {
    bool whole = config_tokens(&t, from, &open, &close, &commas);
    if (open >= t.n) break;
    launches++;
    found = whole && commas + 1 == values;
  }
  clang_disposeTokens(t.tu, t.t, t.n);
  return found || launches == 0;
}

static void lower_macro_def(Lower *l, CXCursor def) {
  if (macro_launches(l, def, false)) macro_launches(l, def, true);
}

// The definition of the macro whose use holds the tokens of [r) (the first
// macro used there), or a null cursor.
static CXCursor macro_used_in(const Lower *l, SrcRange r) {
  Toks t;
  tokenize_range(l, r, &t);
  CXCursor def = clang_getNullCursor();
  for (unsigned i = 0; i < t.n && clang_Cursor_isNull(def); i++) {
    if (clang_getTokenKind(t.t[i]) != CXToken_Identifier) continue;
    CXCursor c = clang_getCursor(t.tu, clang_getTokenLocation(t.tu, t.t[i]));
    if (clang_getCursorKind(c) == CXCursor_MacroExpansion) def = clang_getCursorReferenced(c);
  }
  clang_disposeTokens(t.tu, t.t, t.n);
  return clang_getCursorKind(def) == CXCursor_MacroDefinition ? def : clang_getNullCursor();
}

static enum CXChildVisitResult find_config_call(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_CallExpr) {
    char *name = fe_spelling(c);
    bool found = strcmp(name, "__cudaPushCallConfiguration") == 0;
    free(name);
    if (found) {
      *(CXCursor *)data = c;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Continue;
}

// A launch's configuration call (__cudaPushCallConfiguration), or a null cursor:
// a launch is a call with one among its children.
static CXCursor config_call(CXCursor call) {
  CXCursor found = clang_getNullCursor();
  clang_visitChildren(call, find_config_call, &found);
  return found;
}

static bool is_launch(CXCursor call) { return !clang_Cursor_isNull(config_call(call)); }

// How many values a launch's configuration gives: its defaults (the shared
// memory, the stream) have no place in the source. A macro may give several
// (`#define CFG(n) (n + 127) / 128, 128`, `<<<CFG(n)>>>`).
static unsigned config_values(CXCursor call) { return (unsigned)fe_written_args(config_call(call)); }

// Why a launch written in a macro's body cannot be lowered, or NULL: lower_macro_def
// lowers the body, in the file that defines it (a header of the user's is
// lowered too), when each launch there is written whole.
static const char *macro_launch_why(Lower *l, CXCursor call, CXCursor def) {
  if (clang_Cursor_isNull(def)) return "its '<<<' or '>>>' is not written in this file (a launch inside a macro?)";
  if (clang_Location_isInSystemHeader(clang_getCursorLocation(def))) return "it is written in a system header's macro";
  if (!macro_launches(l, def, false))
    return "its kernel, '<<<', '>>>' and arguments are not all written in the body of the macro it is in (or its "
           "kernel's name is pasted together with ##)";
  if (!macro_config_written(l, def, config_values(call)))
    return "its configuration's values are not all written out in the macro's body (a macro there gives several "
           "of them)";
  // The lowered launch passes its arguments on as they are (`auto`): one that only the kernel's
  // parameter type makes what it is (NULL or 0 for a pointer, `{...}`) would not compile.
  for (int i = 0; i < clang_Cursor_getNumArguments(call); i++) {
    CXCursor a = clang_Cursor_getArgument(call, (unsigned)i);
    while (clang_getCursorKind(a) == CXCursor_UnexposedExpr && fe_kids(a).n == 1) a = fe_kids(a).v[0];
    enum CXCursorKind k = clang_getCursorKind(a);
    enum CXTypeKind pt = clang_getCanonicalType(clang_getCursorType(clang_Cursor_getArgument(call, (unsigned)i))).kind;
    CXTranslationUnit tu = clang_Cursor_getTranslationUnit(a);
    CXToken *first = clang_getToken(tu, clang_getRangeStart(clang_getCursorExtent(a)));
    bool braced = first && fe_token_is(tu, *first, "{");
    if (first) clang_disposeTokens(tu, first, 1);
    if (braced || k == CXCursor_InitListExpr || (pt == CXType_Pointer && clang_getCanonicalType(clang_getCursorType(a)).kind !=
                                                                   CXType_Pointer &&
                                       clang_getCanonicalType(clang_getCursorType(a)).kind != CXType_NullPtr))
      return "an argument of it in the macro's use becomes the kernel's parameter only by its type (NULL or 0 for a "
             "pointer, {...}), and the lowered launch passes arguments on as they are; write it as that type "
             "(nullptr, a cast)";
  }
  return NULL;
}

// Lower one launch, spelled in the main file as the tokens of [b, e).
static void lower_launch(Lower *l, CXCursor call, SrcRange r) {
  const Frontend *fe = l->fe;
  Toks t;
  tokenize_range(l, r, &t);
  unsigned open, close, commas;
  if (!config_tokens(&t, 0, &open, &close, &commas) || open == 0) {
    const char *why = macro_launch_why(l, call, macro_used_in(l, r));
    if (why) {
      diag_error(&r.begin, "--target=host: cannot lower this kernel launch: %s; write the launch out", why);
      l->errors++;
    }
  } else {
    // A macro giving several values (`<<<CFG(n)>>>`) is kept as written: only the missing ones are added.
    const unsigned values = config_values(call);
    if (values > commas + 1 && values <= 4) commas = values - 1;
    CXCursor callee = clang_getCursorReferenced(call);
    const bool is_template = !clang_Cursor_isNull(clang_getSpecializedCursorTemplate(callee));
    unsigned lt = 0;
    while (lt < open && !tok_is(&t, lt, "<")) lt++;
    // A launch whose kernel clang resolves only at instantiation (arguments
    // that depend on an enclosing template): the launch calls it, so that the
    // call picks and deduces it at each instantiation.
    const enum CXCursorKind ck = clang_getCursorKind(callee);
    const bool unresolved = clang_Cursor_isNull(callee) || clang_isInvalid(ck) || ck == CXCursor_OverloadedDeclRef ||
                            ck == CXCursor_FunctionTemplate;
    const bool by_call = lt == open && !is_template && unresolved;
    char *cast = !is_template && ck == CXCursor_FunctionDecl && kernel_name_overloaded(l, callee)
                     ? kernel_pointer_cast(callee)
                     : strdup("");
    char *head = xasprintf("coconet_host_launch%s(%s, %s", by_call ? "_call" : "", launch_flags(call), cast);
    edit_launch(l, &t, r.begin.offset, head, cast[0], open, close, commas);
    // A template's arguments, all of them (some may be deduced at the launch):
    // the host launch takes the kernel as a function pointer.
    char *targs = lt == 0 || !is_template ? NULL : template_args_of(callee);
    if (targs) {
      char *spelled = xasprintf("<%s>", targs);
      edit_add(l->edits, tok_end(l, &t, lt - 1), tok_end(l, &t, open - 1), spelled);
      free(spelled);
      free(targs);
    }
    free(cast);
    free(head);
  }
  clang_disposeTokens(fe->tu, t.t, t.n);
}

static enum CXChildVisitResult find_shared_attr(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_CUDASharedAttr) {
    *(bool *)data = true;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Continue;
}

static bool has_shared_attr(CXCursor var) {
  bool found = false;
  clang_visitChildren(var, find_shared_attr, &found);
  return found;
}

// An `extern __shared__ T name[]` declaration.
static bool is_dynamic_shared(CXCursor var) {
  return clang_getCursorKind(var) == CXCursor_VarDecl && clang_Cursor_getStorageClass(var) == CX_SC_Extern &&
         clang_getCursorType(var).kind == CXType_IncompleteArray && has_shared_attr(var);
}

// The declaration that replaces an `extern __shared__` array: a pointer to
// its element type (T *name, or T (*name)[N] for arrays of arrays) set to the
// block's dynamic shared memory.
static char *shared_pointer(CXCursor var, bool as_macro) {
  CXString ts = clang_getTypeSpelling(clang_getArrayElementType(clang_getCursorType(var)));
  char *elem = strdup(clang_getCString(ts));
  clang_disposeString(ts);
  char *name = fe_spelling(var);
  char *dims = strchr(elem, '[');
  const char *suffix = "";
  if (dims) {
    suffix = dims;
    while (dims > elem && dims[-1] == ' ') dims--;
  }
  char *base = strndup(elem, (size_t)(dims ? dims - elem : (ptrdiff_t)strlen(elem)));
  char *cast = dims ? xasprintf("%s (*)%s", base, suffix) : xasprintf("%s *", base);
  char *out = as_macro ? xasprintf("#define %s ((%s)coconet_host_dynamic_shared())", name, cast)
              : dims   ? xasprintf("%s (*%s)%s = (%s)coconet_host_dynamic_shared();", base, name, suffix, cast)
                       : xasprintf("%s *%s = (%s)coconet_host_dynamic_shared();", base, name, cast);
  free(cast);
  free(base);
  free(name);
  free(elem);
  return out;
}

typedef struct DeclList {
  CXCursor vars[8];
  int n;
  bool other;  // a declaration that is not an extern __shared__ array
} DeclList;

static enum CXChildVisitResult collect_vars(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  DeclList *d = data;
  if (is_dynamic_shared(c) && d->n < 8) d->vars[d->n++] = c;
  else d->other = true;
  return CXChildVisit_Continue;
}

// `extern __shared__ T a[], b[];` inside a function: one pointer per array.
static void lower_shared_stmt(Lower *l, CXCursor stmt, SrcRange r) {
  DeclList d = {.n = 0};
  clang_visitChildren(stmt, collect_vars, &d);
  if (d.n == 0) return;
  if (d.other) {
    diag_error(&r.begin, "--target=host: cannot lower this declaration: declare each 'extern __shared__' "
                         "array in a declaration of its own");
    l->errors++;
    return;
  }
  char *text = strdup("");
  for (int i = 0; i < d.n; i++) {
    char *one = shared_pointer(d.vars[i], false);
    char *joined = xasprintf("%s%s%s", text, i ? " " : "", one);
    free(one);
    free(text);
    text = joined;
  }
  edit_add(l->edits, r.begin.offset, r.end.offset, text);
  free(text);
}

// `extern __shared__ T name[];` at namespace scope: every later use of the
// name means the block's dynamic shared memory, which a macro says.
static void lower_shared_global(Lower *l, CXCursor var, SrcRange r) {
  const char *buf = l->buf;
  unsigned b = r.begin.offset, e = r.end.offset;
  while (b > 0 && (buf[b - 1] == ' ' || buf[b - 1] == '\t')) b--;
  while (e < l->len && (buf[e] == ' ' || buf[e] == '\t')) e++;
  bool semicolon = e < l->len && buf[e] == ';';
  if (semicolon) e++;
  while (e < l->len && (buf[e] == ' ' || buf[e] == '\t')) e++;
  if (!semicolon || (b > 0 && buf[b - 1] != '\n') || (e < l->len && buf[e] != '\n' && buf[e] != '\r')) {
    diag_error(&r.begin, "--target=host: cannot lower this declaration: put a namespace-scope "
                         "'extern __shared__' array on a line of its own");
    l->errors++;
    return;
  }
  char *text = shared_pointer(var, true);
  edit_add(l->edits, r.begin.offset, e, text);
  free(text);
}

// The range of cursor c when it is written in the file being lowered.
static bool lowered_range(const Lower *l, CXCursor c, SrcRange *r) {
  if (clang_File_isEqual(l->file, l->fe->file)) {
    if (!fe_in_main_file(l->fe, clang_getCursorLocation(c))) return false;
    *r = fe_range(l->fe, clang_getCursorExtent(c));
    return r->begin.file && r->end.file;
  }
  CXSourceRange x = clang_getCursorExtent(c);
  CXFile fb = NULL, fe = NULL;
  clang_getFileLocation(clang_getRangeStart(x), &fb, NULL, NULL, NULL);
  clang_getFileLocation(clang_getRangeEnd(x), &fe, NULL, NULL, NULL);
  if (!fb || !fe || !clang_File_isEqual(fb, l->file) || !clang_File_isEqual(fe, l->file)) return false;
  *r = (SrcRange){fe_any_loc(l->fe, clang_getRangeStart(x)), fe_any_loc(l->fe, clang_getRangeEnd(x))};
  return true;
}

static enum CXChildVisitResult lower_visit(CXCursor c, CXCursor parent, CXClientData data) {
  Lower *l = data;
  SrcRange r;
  enum CXCursorKind ck = clang_getCursorKind(c);
  // A header #included inside `namespace ops { ... }` or `extern "C++" { ... }`: its declarations are the block's.
  bool block = (ck == CXCursor_Namespace || ck == CXCursor_LinkageSpec || ck == CXCursor_UnexposedDecl) &&
               !clang_Location_isInSystemHeader(clang_getCursorLocation(c));
  if (!lowered_range(l, c, &r)) return block ? CXChildVisit_Recurse : CXChildVisit_Continue;
  bool edited = already_edited(*l->edits, r.begin.offset, r.end.offset);
  enum CXCursorKind k = ck;
  if (k == CXCursor_CallExpr && is_launch(c)) {
    if (!edited) lower_launch(l, c, r);
    return CXChildVisit_Continue;
  }
  if (k == CXCursor_MacroDefinition && !edited && l->whole) lower_macro_def(l, c);
  if (k == CXCursor_DeclStmt && !edited) lower_shared_stmt(l, c, r);
  if (k == CXCursor_VarDecl && is_dynamic_shared(c) && clang_getCursorKind(parent) != CXCursor_DeclStmt) {
    if (!edited) lower_shared_global(l, c, r);
    return CXChildVisit_Continue;
  }
  return CXChildVisit_Recurse;
}

static int lower_in(const Frontend *fe, CXCursor c, CXFile file, bool whole, Edit **edits) {
  size_t len = 0;
  const char *buf = clang_File_isEqual(file, fe->file) ? fe->src.buf : clang_getFileContents(fe->tu, file, &len);
  if (clang_File_isEqual(file, fe->file)) len = fe->src.len;
  if (!buf) return 0;
  Lower l = {.fe = fe, .file = file, .buf = buf, .len = len, .edits = edits, .whole = whole};
  clang_visitChildren(c, lower_visit, &l);
  return l.errors ? -1 : 0;
}

int host_lower_file(const Frontend *fe, CXFile file, Edit **edits) {
  return lower_in(fe, clang_getTranslationUnitCursor(fe->tu), file, true, edits);
}

int host_lower_in(const Frontend *fe, CXCursor c, Edit **edits) {
  CXFile file = NULL;
  clang_getFileLocation(clang_getRangeStart(clang_getCursorExtent(c)), &file, NULL, NULL, NULL);
  return lower_in(fe, c, file ? file : fe->file, false, edits);
}
