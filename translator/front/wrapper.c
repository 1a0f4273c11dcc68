// wrapper.c: a launch or an NCCL collective inside small host functions, seen through.
//
// Training code often launches a kernel from a host function that computes the
// grid and launches, nothing else; inference engines launch from a template
// `invoke` function, sometimes called through another, and all-reduce through
// a project function around the NCCL call:
//
//   template <typename T> void invokeScale(T *x, float a, int n, cudaStream_t s) {
//     dim3 grid((n + 255) / 256);
//     scale<T><<<grid, 256, 0, s>>>(x, a, n);
//   }
//   template <typename T> void allReduceSum(const T *in, T *out, int n, Param p, cudaStream_t s) {
//     ncclDataType_t type = getNcclDataType<T>();
//     NCCLCHECK(ncclGroupStart());
//     NCCLCHECK(ncclAllReduce((const void *)in, (void *)out, n, type, ncclSum, p.comm, s));
//     NCCLCHECK(ncclGroupEnd());
//   }
//
// A region statement that is exactly a call of such a function of the user's
// (in this file or a header) is classified as the launch or the collective, its texts in the
// caller's terms (wrapper_text.c): each parameter of the function stands for
// the call's argument, each local for its initializer, each template parameter
// for the instance's argument as spelled ("float"). The body must be
// declarations of initialized locals, then the one launch, the one collective
// (in a group of its own or none), or a call of another such function (to any
// depth). No text that moves to the caller may have side effects (a call, ++,
// an assignment: with no other statement, nothing else can change a parameter
// or a local) or read a name that is not the functions' own (a global, a name
// of their namespace, a macro that is not a constant: the caller may have
// another of that name). A collective's buffers lose their casts to `void *`;
// its datatype, a constant there (a trait's member for the instance's T), is
// its enumerator, and when its text cannot move (a trait's call) is spelled
// from the buffer's type. Templates are read as the instance the call uses (libclang
// gives its body); a launch of a kernel template gets the instance's arguments
// written out. Functions in the user's headers are read there (never
// rewritten). Beside a collective, statements that read none of the function's
// names and reach no kernel, CUDA or NCCL call (a log line) are kept for a copy
// the generated code runs (wrapper_beside.c). Anything else (a second
// statement, side effects) leaves the call opaque, with a note why.
#include "front/wrapper_impl.h"

#include "common/cuda_names.h"
#include "common/text.h"

#include <stdlib.h>
#include <string.h>

bool wrapper_effects(const Frontend *fe, const Wrapper *w, SrcRange r, bool pure, bool *foreign) {
  char *t = wrapper_substituted(fe, w, r, foreign);
  bool yes = !*t || (pure ? source_assigns(t) : source_has_effects(t));
  free(t);
  return yes;
}

const Frontend *wrapper_root(const Frontend *fe) { return fe->root ? fe->root : fe; }

// The call a statement is: the statement itself, or inside the cleanups of the
// temporaries its arguments make (a `const float &` parameter given 0.5f).
static CXCursor statement_call(CXCursor c) {
  while (clang_getCursorKind(c) == CXCursor_UnexposedExpr && fe_kids(c).n == 1) c = fe_kids(c).v[0];
  return c;
}

// A text of the launch, in the caller's terms. The generated code uses it in
// the caller's scope, where a name the function reads from its own scope (a
// global, an enumerator of its namespace) may name another thing.
static void substitute_piece(const Wrapper *w, Piece *p, const char **why) {
  if (!p->text) return;
  bool foreign = false;
  char *t = wrapper_substituted(wrapper_root(w->fe), w, p->range, &foreign);
  // What the names stand for was checked where they are declared (arguments, locals' initializers);
  // the text's own calls and macros must change nothing (classify: CEIL_DIV(n, block), powf(b, t)).
  if (source_has_effects(p->text) && !p->pure && !*why)
    *why = "a text of its launch has side effects (a call, ++, an assignment)";
  p->pure = !foreign;
  if (foreign && !*why)
    *why = "a text of its launch reads a variable that is not the function's parameter or local, a name of its "
           "namespace or class, a macro, or a local whose initializer has side effects";
  // A whole argument needs no parentheses ("g + n" is read as a buffer plus an
  // offset, as written in a launch), unless a comma is the outermost operator.
  char *u = strdup(t);
  if (!u) COCONET_BUG("out of memory");
  text_unwrap(u);
  int depth = 0;
  bool comma = false;
  for (const char *c = u; *c; c++) {
    depth += *c == '(' || *c == '[' || *c == '{' ? 1 : *c == ')' || *c == ']' || *c == '}' ? -1 : 0;
    comma |= depth == 0 && *c == ',';
  }
  if (!comma) {
    free(t);
    t = u;
  } else {
    free(u);
  }
  free(p->text);
  p->text = t;
}

// A local's initializer: `int b = E;` -> E; `dim3 grid(E);` -> E (a dim3 of one
// value is that value converted; *dim3 set); NULL range (begin.file NULL) for any other.
static SrcRange initializer(const Frontend *fe, CXCursor var, bool *dim3, CXCursor *expr) {
  FeKids init = fe_kids(var);
  SrcRange none = {0};
  if (clang_getCursorKind(var) != CXCursor_VarDecl || !init.n) return none;
  CXCursor e = init.last;
  *expr = e;
  SrcRange r = fe_range(fe, clang_getCursorExtent(e));
  // A constructor call written as the declaration (`dim3 grid(E)`) starts at the variable's name.
  if (r.begin.offset <= fe_loc(fe, clang_getCursorLocation(var)).offset) {
    if (!wrapper_is_dim3(clang_getCursorType(var))) return none;
    while (clang_getCursorKind(e) == CXCursor_UnexposedExpr && fe_kids(e).n == 1) e = fe_kids(e).v[0];
    if (clang_getCursorKind(e) != CXCursor_CallExpr) return none;
    // Default arguments (dim3's y and z) have no place in the source.
    int n = clang_Cursor_getNumArguments(e), written = 0;
    for (int i = 0; i < n; i++)
      written += fe_range(fe, clang_getCursorExtent(clang_Cursor_getArgument(e, (unsigned)i))).begin.file != NULL;
    if (written != 1) return none;
    *dim3 = true;
    *expr = clang_Cursor_getArgument(e, 0);
    return fe_range(fe, clang_getCursorExtent(*expr));
  }
  return r;
}

void wrapper_locals(const Frontend *ffe, Wrapper *w, CXCursor st, const char **why, bool *foreign, bool *calls) {
  const Frontend *root = wrapper_root(ffe);
  FeKids vars = fe_kids(st);
  for (int j = 0; j < vars.n && j < FE_KIDS && !*why; j++) {
    bool dim3 = false;
    CXCursor e = clang_getNullCursor();
    SrcRange r = initializer(ffe, vars.v[j], &dim3, &e);
    if (!r.begin.file) {
      *why = "its body declares a local without an initializer of one value";
      continue;
    }
    if (clang_Cursor_hasVarDeclGlobalStorage(vars.v[j]) == 1 && !clang_isConstQualifiedType(clang_getCursorType(vars.v[j]))) {
      *why = "its body has a static local (it keeps its value from call to call)";
      continue;
    }
    // One with side effects (a trait call: getNcclDataType<T>()) refuses a text that reads it.
    wrapper_add(w, vars.v[j], r, w, NULL, dim3);
    w->v[w->n - 1].impure = wrapper_effects(root, w, r, wrapper_calls_pure(e), foreign);
    if (!dim3) w->v[w->n - 1].cast = wrapper_conversion(vars.v[j], wrapper_written_type(e));
    // One that assigns (`const int k = ++g_calls;`) or calls a function that changes something
    // (`int t = log_launch();`): the generated code, which does not run the function, runs it only in a
    // copy of the statement (wrapper_beside.c).
    char *init = fe_text(ffe, r);
    if (source_assigns(init) || (w->v[w->n - 1].impure && !wrapper_calls_pure(e))) *calls = true;
    free(init);
  }
}

// The function a call statement calls, when it is a host function of the
// user's (this file or a header of theirs; a static member function of a
// class too) with a body (a template's instance: libclang gives the
// instance's body).
static CXCursor host_function(const Frontend *fe, CXCursor call) {
  CXCursor none = clang_getNullCursor();
  if (clang_getCursorKind(call) != CXCursor_CallExpr) return none;
  CXCursor callee = clang_getCursorReferenced(call);
  // A static member function of a class that is not a template (`Launcher::go(...)`) is one too.
  CXCursor owner = clang_getCursorSemanticParent(callee);
  bool member = clang_getCursorKind(callee) == CXCursor_CXXMethod && clang_CXXMethod_isStatic(callee) &&
                (clang_getCursorKind(owner) == CXCursor_ClassDecl || clang_getCursorKind(owner) == CXCursor_StructDecl) &&
                clang_Cursor_isNull(clang_getSpecializedCursorTemplate(owner));
  if ((clang_getCursorKind(callee) != CXCursor_FunctionDecl && !member) || cursor_is_kernel(callee)) return none;
  CXCursor fn = clang_getCursorDefinition(callee);
  if (clang_Cursor_isNull(fn) || !fe_in_user_code(wrapper_root(fe), clang_getCursorLocation(fn))) return none;
  // A checking function around a collective (`check_nccl(ncclAllReduce(...), "what")`): the collective.
  for (int i = 0; i < clang_Cursor_getNumArguments(call); i++) {
    CXCursor a = clang_Cursor_getArgument(call, (unsigned)i);
    while (clang_getCursorKind(a) == CXCursor_UnexposedExpr && fe_kids(a).n == 1) a = fe_kids(a).v[0];
    char *name = clang_getCursorKind(a) == CXCursor_CallExpr ? fe_spelling(clang_getCursorReferenced(a)) : NULL;
    bool nccl = name && cuda_name_in(name, NCCL_CALLS);
    free(name);
    if (nccl) return none;
  }
  return fn;
}

// A launch in a function of a namespace may name its kernel by a name that means it
// only there (`detail::rowk` inside `eng`): the generated code launches it where
// the region is, so the name becomes the whole one (`eng::detail::rowk`).
static void qualify_kernel(Launch *l) {
  CXCursor k = clang_getCursorReferenced(l->call);
  if (!clang_Cursor_isNull(clang_getSpecializedCursorTemplate(k))) k = clang_getSpecializedCursorTemplate(k);
  Text full = {0};
  text_add(&full, "");
  for (CXCursor p = clang_getCursorSemanticParent(k); clang_getCursorKind(p) == CXCursor_Namespace;
       p = clang_getCursorSemanticParent(p)) {
    char *ns = fe_spelling(p);
    if (*ns) {  // (an anonymous namespace's names are seen from the one around it)
      char *t = xasprintf("%s::%s", ns, full.s);
      free(full.s);
      full = (Text){t, strlen(t), strlen(t) + 1};
    }
    free(ns);
  }
  char *name = fe_spelling(k), *whole = xasprintf("%s%s", full.s, name);
  const char *written = strncmp(l->kernel, "::", 2) == 0 ? l->kernel + 2 : l->kernel;
  if (*full.s && strcmp(written, whole) != 0) {
    free(l->kernel);
    l->kernel = whole;
    whole = NULL;
  }
  free(whole);
  free(name);
  free(full.s);
}

// Its name as the explanation gives it: "invokeScale<float>" for a template's instance.
Launch *wrapper_launch(const Wrapper *w, Stmt *s, const char **why) {
  Launch *launch = s->launch;
  qualify_kernel(launch);
  s->launch = NULL;
  s->args = NULL;
  s->nargs = 0;
  // The generated code uses the grid and block in the caller too (the launch it falls back to, a
  // thread's coordinates).
  Piece *conf[] = {&launch->grid, &launch->block, &launch->shmem, &launch->stream};
  for (int c = 0; c < 4; c++) substitute_piece(w, conf[c], why);
  for (int a = 0; a < launch->nargs; a++) {
    substitute_piece(w, &launch->args[a], why);
    // An integer passed down as the region wrote it (`n`): the region's text, which the region's sizes
    // read through a local never reassigned, as the collective's count is.
    CXCursor e = clang_Cursor_getArgument(launch->call, (unsigned)a);
    enum CXTypeKind k = clang_getCanonicalType(clang_getCursorType(e)).kind;
    SrcRange as_written = k >= CXType_Bool && k <= CXType_Int128 ? wrapper_region_range(wrapper_root(w->fe), w, e)
                                                                  : (SrcRange){0};
    if (as_written.begin.file) {  // (without a conversion that keeps its value: `(size_t)n`)
      free(launch->args[a].text);
      launch->args[a].text = fe_text(wrapper_root(w->fe), as_written);
      launch->args[a].range = as_written;
    }
  }
  return launch;
}

static char *function_name(CXCursor fn) {
  char *name = fe_spelling(fn), *args = NULL;
  if (clang_getCursorKind(fn) == CXCursor_CXXMethod) {  // Launcher::go
    char *owner = fe_spelling(clang_getCursorSemanticParent(fn)), *full = xasprintf("%s::%s", owner, name);
    free(owner);
    free(name);
    name = full;
  }
  if (!clang_Cursor_isNull(clang_getSpecializedCursorTemplate(fn)) && (args = template_args_of(fn))) {
    char *full = xasprintf("%s<%s>", name, args);
    free(name);
    name = full;
  }
  free(args);
  return name;
}

// Does a function's text launch a kernel or call an NCCL collective?
static bool does_work(const char *text) {
  bool work = strstr(text, "<<<") != NULL;
  for (const char *const *c = NCCL_CALLS; *c && !work; c++)
    work = strncmp(*c, "ncclGroup", 9) != 0 && strstr(text, *c) != NULL;
  return work;
}

typedef struct Reach {
  const Frontend *fe;
  int depth;
  int *budget;  // functions left to read (recursion and fan-out stay bounded)
  bool yes;
} Reach;

static bool reaches(const Frontend *fe, CXCursor fn, int depth, int *budget);

static enum CXChildVisitResult find_launching_call(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Reach *r = data;
  if (clang_getCursorKind(c) == CXCursor_CallExpr) {
    CXCursor fn = host_function(r->fe, c), callee = clang_getCursorReferenced(c);
    CXCursor tmpl = clang_getSpecializedCursorTemplate(callee);
    // (a launch a macro's body writes: no '<<<' in the function's text)
    if (cursor_is_kernel(callee) || (!clang_Cursor_isNull(tmpl) && cursor_is_kernel(tmpl))) r->yes = true;
    else if (!clang_Cursor_isNull(fn) && reaches(r->fe, fn, r->depth + 1, r->budget)) r->yes = true;
  }
  return r->yes ? CXChildVisit_Break : CXChildVisit_Recurse;
}

// Does fn launch a kernel, itself or through the functions of this file it calls?
// (Only then is a word on why a call of it is not seen through worth saying.)
static bool reaches(const Frontend *fe, CXCursor fn, int depth, int *budget) {
  if (--*budget < 0) return false;
  char *text = fe_cursor_text(fe, fn);
  Reach r = {fe, depth, budget, does_work(text)};
  free(text);
  if (!r.yes && depth < WRAPPER_DEPTH) clang_visitChildren(fn, find_launching_call, &r);
  return r.yes;
}

static bool launches(const Frontend *fe, CXCursor fn, int depth) {
  int budget = 64;
  return reaches(fe, fn, depth, &budget);
}

typedef struct Seen {
  Stmt *nccl;        // the collective the chain ends in (its texts in the region's terms), or NULL
  const char *why;   // why not seen through, or NULL
  bool launches;     // a function of the chain launches a kernel (worth a word when refused)
  bool is_template;  // a function of the chain is a template's instance
  char *path;        // the functions below the region's call ("invokeB, invokeC"), or NULL
  char *stmt;        // the statement that is not seen through (" ('log(x)' at f.h:12)"), or NULL
  Beside *beside;    // what a function of the chain runs besides its collective (a log line), or NULL
} Seen;

// " ('log(x)' at f.h:12)", or with a reason " ('log(x)' at f.h:12: it reads parameter 'n' ...)" (malloc'd).
static char *stmt_note(const Frontend *ffe, CXCursor st, const char *reason) {
  char *text = fe_cursor_text(ffe, st);
  SrcLoc at = fe_any_loc(ffe, clang_getCursorLocation(st));
  char *note = xasprintf(" ('%.*s%s' at %s:%u%s%s)", 60, text, strlen(text) > 60 ? "..." : "",
                         text_base_name(at.file), at.line, reason ? ": " : "", reason ? reason : "");
  free(text);
  return note;
}

// A directive in fn's body whose lines the preprocessor left out, which may hold the launch or
// collective not found there (`#ifdef BUILD_MULTI_GPU` without -DBUILD_MULTI_GPU):
// "; '#ifdef BUILD_MULTI_GPU' at f.h:12 leaves out lines 12-17 ..." (malloc'd), or NULL.
static char *skipped_in(const Frontend *ffe, CXCursor fn) {
  SrcRange body = fe_range(ffe, clang_getCursorExtent(fn));
  CXSourceRangeList *skipped = clang_getSkippedRanges(ffe->tu, ffe->file);
  char *note = NULL;
  for (unsigned i = 0; skipped && i < skipped->count && !note; i++) {
    SrcRange r = fe_range(ffe, skipped->ranges[i]);
    if (r.begin.offset < body.begin.offset || r.begin.offset >= body.end.offset || r.begin.offset >= ffe->src.len)
      continue;
    const char *line = ffe->src.buf + r.begin.offset;
    int len = (int)strcspn(line, "\r\n");
    while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\\')) len--;
    note = xasprintf("; '%.*s' at %s:%u leaves out lines %u-%u of it: coconet reads the program as the flags after "
                     "`--` define it, so give it the macros its build defines", len > 60 ? 60 : len, line,
                     text_base_name(r.begin.file), r.begin.line, r.begin.line, r.end.line);
  }
  clang_disposeSourceRangeList(skipped);
  return note;
}

static const char *const NOT_BESIDE = "its body has a statement that is not an initialized local, a launch, an NCCL "
                                      "collective or group call, a call of such a function, or one coconet can run "
                                      "beside its collective";
static const char *const NOT_BESIDE_AFTER = "its body has a statement after the collective that coconet cannot run "
                                            "beside it";

// Statement st of fn's body kept to run beside the chain's collective (wrapper_beside.c):
// true; else false, and with why, sn->why and sn->stmt say why not.
static bool beside(const Frontend *ffe, CXCursor fn, CXCursor st, Seen *sn, const char *why) {
  char *title = function_name(fn), *reason = wrapper_beside(ffe, fn, st, title, sn->nccl != NULL, &sn->beside);
  free(title);
  if (reason && why && !sn->why) {
    sn->why = why;
    free(sn->stmt);
    sn->stmt = stmt_note(ffe, st, reason);
  }
  free(reason);
  return reason == NULL;
}

bool wrapper_error_check(const Frontend *fe, CXCursor st) {
  char *t = fe_cursor_text(fe, st), *u = text_without(t, TEXT_BLANKS);
  free(t);
  size_t n = strlen(u);
  while (n && u[n - 1] == ';') u[--n] = '\0';
  static const char *const queries[] = {"cudaGetLastError()", "cudaPeekAtLastError()"};
  bool yes = false;
  for (int q = 0; q < 2 && !yes; q++) {
    const char *at = strstr(u, queries[q]);
    size_t k = strlen(queries[q]);
    if (!at) continue;
    size_t pre = (size_t)(at - u), post = n - pre - k;
    // QUERY, or NAME(QUERY) with NAME an identifier (or a member chain of one: ns::check).
    bool name = pre > 1 && u[pre - 1] == '(' && post == 1 && u[n - 1] == ')';
    for (size_t i = 0; name && i + 1 < pre; i++) name = text_ident_char(u[i]) || u[i] == ':';
    yes = (pre == 0 && post == 0) || name;
  }
  free(u);
  return yes;
}

// The front end to read fn's body with: the translated file's, or, for a
// function in a header, a view of the same parse whose file and bytes are the
// header's (*view holds it).
static const Frontend *file_of(const Frontend *root, CXCursor fn, Frontend *view) {
  CXSourceLocation at = clang_getCursorLocation(fn);
  CXFile file = NULL;
  clang_getFileLocation(at, &file, NULL, NULL, NULL);
  size_t len = 0;
  const char *buf = file && !clang_File_isEqual(file, root->file) ? clang_getFileContents(root->tu, file, &len) : NULL;
  if (!buf) return root;
  *view = *root;
  view->file = file;
  view->src = (SourceFile){.path = (char *)fe_any_loc(root, at).file, .buf = (char *)buf, .len = len};
  view->copies = NULL;
  view->ncopies = 0;
  view->root = root;
  return view;
}

// Argument i as the call's tokens write it (empty where the call leaves it to its default).
static SrcRange written_argument(const Frontend *fe, CXCursor call, unsigned i) {
  CXToken *t = NULL;
  unsigned n = 0;
  SrcRange r = {0};
  clang_tokenize(fe->tu, fe_file_extent(call), &t, &n);
  unsigned k = 0, arg = 0, from = 0;
  while (k < n && !fe_token_is(fe->tu, t[k], "(")) k++;
  for (int depth = 0; k < n; k++) {
    bool open = fe_token_is(fe->tu, t[k], "(") || fe_token_is(fe->tu, t[k], "[") || fe_token_is(fe->tu, t[k], "{");
    bool close = fe_token_is(fe->tu, t[k], ")") || fe_token_is(fe->tu, t[k], "]") || fe_token_is(fe->tu, t[k], "}");
    if (depth == 1 && (close || fe_token_is(fe->tu, t[k], ","))) {
      if (arg++ == i && k > from) {
        r.begin = fe_loc(fe, clang_getTokenLocation(fe->tu, t[from]));
        r.end = fe_loc(fe, clang_getRangeEnd(clang_getTokenExtent(fe->tu, t[k - 1])));
        break;
      }
      from = k + 1;
    }
    if (open && depth++ == 0) from = k + 1;
    if (close && --depth == 0) break;
  }
  clang_disposeTokens(fe->tu, t, n);
  return r;
}

// An `if` classify reads as a check of one call's result (`if (ncclAllReduce(...) != ncclSuccess) throw ...;`).
static bool checked_call(const Frontend *ffe, CXCursor st) {
  Stmt *s = classify_stmt(ffe, st);
  bool yes = s->kind != STMT_OPAQUE;
  stmt_free(s);
  return yes;
}

// An assignment statement (`k = k * 2;`, `block.x += 32;`: wrapper_dispatch reads or refuses it).
static bool assigns(CXCursor st) {
  while (clang_getCursorKind(st) == CXCursor_UnexposedExpr && fe_kids(st).n == 1) st = fe_kids(st).v[0];
  enum CXCursorKind k = clang_getCursorKind(st);
  return k == CXCursor_BinaryOperator || k == CXCursor_CompoundAssignOperator;
}

// See through the call `call` of fn (its arguments in up's terms, written in
// the file fe reads) down to one launch, its texts in the region's terms;
// NULL (and sn->why) otherwise.
static Launch *see(const Frontend *fe, const Wrapper *up, CXCursor call, CXCursor fn, int depth, Seen *sn) {
  const Frontend *root = wrapper_root(fe);
  Frontend view;
  const Frontend *ffe = file_of(root, fn, &view);
  int nparams = clang_Cursor_getNumArguments(fn), nargs = clang_Cursor_getNumArguments(call);
  FeKids k = fe_kids(fn);
  CXCursor body = k.n ? k.last : clang_getNullCursor();
  if (nparams < 0 || nparams != nargs || clang_getCursorKind(body) != CXCursor_CompoundStmt) {
    sn->why = "it takes other arguments than the call gives (default arguments, variadic)";
    return NULL;
  }
  sn->launches |= launches(root, fn, depth);
  Wrapper w = {ffe, up, NULL, 0, fn};
  bool foreign = false;
  for (int i = 0; i < nparams; i++) {
    CXCursor arg = clang_Cursor_getArgument(call, (unsigned)i), param = clang_Cursor_getArgument(fn, (unsigned)i);
    SrcRange r = fe_range(fe, clang_getCursorExtent(arg));
    // An argument that is a macro written in another macro's arguments (`CUDA_CHECK(f(w, LR))`): where it is written.
    if (r.end.offset <= r.begin.offset) r = written_argument(fe, call, (unsigned)i);
    const Wrapper *terms = up;
    if (r.end.offset <= r.begin.offset) {
      // A default argument: its text where fn declares it, in fn's terms (a template's parameters).
      CXCursor e = wrapper_default_argument(fn, (unsigned)i);
      r = clang_Cursor_isNull(e) ? (SrcRange){0} : fe_range(ffe, clang_getCursorExtent(e));
      terms = &w;
      if (!r.begin.file && !sn->why) sn->why = "the call leaves an argument to a default coconet does not read";
      else if (wrapper_effects(root, &w, r, wrapper_calls_pure(e), &foreign) && !sn->why)
        sn->why = "the call leaves an argument to a default with side effects (a call, ++, an assignment)";
      if (!r.begin.file) continue;
    } else if (wrapper_effects(root, up, r, wrapper_calls_pure(arg), &foreign) && !sn->why) {
      // (a call of a pure function moves with the text: `launch(w, g, lr_at(step), n, s)`)
      sn->why = "an argument of the call has side effects (a call, ++, an assignment)";
    }
    // A dim3 parameter given one value (`256`): param.x is that value.
    CXType at = wrapper_written_type(arg);
    wrapper_add(&w, param, r, terms, NULL, wrapper_is_dim3(clang_getCursorType(param)) && !wrapper_is_dim3(at));
    w.v[w.n - 1].cast = wrapper_conversion(param, at);
  }
  CXCursor tmpl = clang_getSpecializedCursorTemplate(fn);
  if (!clang_Cursor_isNull(tmpl)) {
    sn->is_template = true;
    FeKids tps = fe_kids(tmpl);
    for (int i = 0, arg = 0; i < tps.n && i < FE_KIDS; i++) {
      enum CXCursorKind tk = clang_getCursorKind(tps.v[i]);
      if (tk != CXCursor_TemplateTypeParameter && tk != CXCursor_NonTypeTemplateParameter &&
          tk != CXCursor_TemplateTemplateParameter)
        continue;
      char *spelled = template_arg_spelling(fn, (unsigned)arg++);
      if (!spelled && !sn->why) sn->why = "a template argument of the call is neither a type nor an integer";
      if (spelled) {
        wrapper_add(&w, tps.v[i], (SrcRange){0}, NULL, spelled, false);
        w.v[w.n - 1].name = fe_spelling(tps.v[i]);
      }
    }
  }
  FeKids stmts = fe_kids(body);
  Launch *launch = NULL;
  bool last = false;
  // The chain's path above the call this body makes, and whether that call was seen through: a statement
  // after it in the way (`ncclResult_t r = helper(...); ...`) is this body's, named by the path above.
  char *outer_path = NULL;
  bool inner_seen = false;
  int starts = 0, ends = 0;
  CXCursor result = clang_getNullCursor();  // `ncclResult_t r = <the collective>;`
  for (int i = 0; i < stmts.n && i < FE_KIDS && !sn->why; i++) {
    CXCursor st = stmts.v[i];
    if (clang_getCursorKind(st) == CXCursor_ReturnStmt) {
      FeKids rk = fe_kids(st);
      CXCursor e = rk.n == 1 ? statement_call(rk.v[0]) : clang_getNullCursor();
      if (rk.n == 0 || (sn->nccl && !clang_Cursor_isNull(result) &&
                        clang_equalCursors(clang_getCursorReferenced(e), result)))
        continue;  // `return;`, `return r;` (the generated code checks the collectives it runs)
      if (last && !sn->nccl && wrapper_error_check(ffe, e)) continue;  // `return cudaGetLastError();`
      st = e;  // `return CALL;`: the call, as a statement of its own
    }
    CXCursor inner = host_function(root, st), call = clang_getNullCursor();
    CXCursor res = !sn->nccl && clang_getCursorKind(st) == CXCursor_DeclStmt ? wrapper_collective_result(st, &call)
                                                                               : clang_getNullCursor();
    // `ncclResult_t r = helper(...);`: the helper's collective, r its result.
    if (!clang_Cursor_isNull(res) && !clang_Cursor_isNull(host_function(root, call))) {
      st = call;
      inner = host_function(root, call);
      result = res;
      res = clang_getNullCursor();
    }
    Stmt *coll = clang_Cursor_isNull(res) ? NULL : classify_stmt(ffe, call);
    if (coll && (coll->kind != STMT_NCCL || !strcmp(coll->callee, "ncclGroupStart") ||
                 !strcmp(coll->callee, "ncclGroupEnd"))) {
      stmt_free(coll);
      coll = NULL;
    }
    if (last && !sn->nccl && wrapper_error_check(ffe, st)) {
      continue;  // the generated code checks what it launches
    } else if (coll) {
      wrapper_collective(&w, call, coll, &sn->why);
      sn->nccl = coll;
      result = res;
    } else if (sn->nccl && !clang_Cursor_isNull(result) && wrapper_result_check(ffe, st, result)) {
      continue;  // the failure's branch: the generated code checks the collectives it runs
    } else if (last && !sn->nccl) {
      sn->why = "its body has a statement after the launch";
    } else if (sn->nccl && (clang_getCursorKind(st) == CXCursor_DeclStmt || !clang_Cursor_isNull(inner))) {
      beside(ffe, fn, st, sn, NOT_BESIDE_AFTER);
    } else if (clang_getCursorKind(st) == CXCursor_DeclStmt) {
      bool calls = false;
      wrapper_locals(ffe, &w, st, &sn->why, &foreign, &calls);
      // (`ncclDataType_t t = getNcclDataType<T>();`, a trait that logs: the copy calls it)
      if (calls && !sn->why)
        beside(ffe, fn, st, sn, "its body has a local whose initializer calls a function that may change "
                                "something or assigns a variable, and coconet cannot run it beside a collective");
    } else if (!clang_Cursor_isNull(inner) && !launches(root, inner, depth + 1)) {
      beside(ffe, fn, st, sn, NOT_BESIDE);  // (`log_start(name);`: it launches nothing)
    } else if (!clang_Cursor_isNull(inner) && depth >= WRAPPER_DEPTH) {
      sn->why = "it calls host functions more than 8 deep (or itself)";
    } else if (!clang_Cursor_isNull(inner)) {
      last = true;
      char *name = function_name(inner), *path = sn->path;
      sn->path = path ? xasprintf("%s, %s", path, name) : strdup(name);
      free(outer_path);
      outer_path = path;
      free(name);
      launch = see(ffe, &w, st, inner, depth + 1, sn);
      inner_seen = !sn->why;
      // The call must be the whole statement: the body's last statement is the call itself.
    } else if (clang_getCursorKind(st) == CXCursor_IfStmt && beside(ffe, fn, st, sn, NULL)) {
      continue;  // (`if (verbose) printf(...);`: it launches nothing)
    } else if ((clang_getCursorKind(st) == CXCursor_IfStmt || assigns(st)) && !launch && !sn->nccl &&
               stmts.n <= FE_KIDS && !checked_call(ffe, st)) {
      // A launcher that picks its kernel at run time (or assigns its locals first, `block.x = ...;`):
      // the launch of each path (wrapper_dispatch.c).
      launch = wrapper_dispatch(ffe, &w, stmts.v + i, stmts.n - i, &sn->why, &sn->stmt);
      break;
    } else {
      Stmt *s = classify_stmt(ffe, st);
      bool group = s->kind == STMT_NCCL && (!strcmp(s->callee, "ncclGroupStart") || !strcmp(s->callee, "ncclGroupEnd"));
      last = !group;
      if (group) {
        // Around the one collective: a group of one groups nothing. Before it only a start, after it only an end.
        bool start = !strcmp(s->callee, "ncclGroupStart");
        if (start != !sn->nccl || (start ? ++starts : ++ends) > 1) sn->why = "its body has another statement";
        last = !start;
      } else if (s->kind == STMT_NCCL && !sn->nccl) {
        wrapper_collective(&w, st, s, &sn->why);
        sn->nccl = s;
        s = NULL;
        last = false;
      } else if (s->kind == STMT_LAUNCH && s->wrap == WRAP_NONE && !s->launch->wrapper && !sn->nccl) {
        launch = wrapper_launch(&w, s, &sn->why);
      } else if (s->why_opaque && strcmp(s->why_opaque, CLASSIFY_MACRO_ARGS) == 0) {
        sn->why = CLASSIFY_MACRO_ARGS;
      } else if (s->why_opaque && strcmp(s->why_opaque, CLASSIFY_DEFAULT_ARGS) == 0) {
        sn->why = "its launch leaves kernel parameters to their default arguments";
      } else if (s->why_opaque && !strncmp(s->why_opaque, CLASSIFY_MACRO_LAUNCH, strlen(CLASSIFY_MACRO_LAUNCH))) {
        sn->why = "its kernel launch is written in a macro's body, not out in the function";
        const char *macro = s->why_opaque + strlen(CLASSIFY_MACRO_LAUNCH) + 1;  // "'M' at f.h:3; ..."
        sn->stmt = xasprintf(" (%.*s)", (int)strcspn(macro, ";"), macro);
      } else {
        if (beside(ffe, fn, stmts.v[i], sn, sn->nccl ? NOT_BESIDE_AFTER : NOT_BESIDE))  // (`return ...` whole)
          last = sn->nccl != NULL;
      }
      stmt_free(s);
    }
  }
  // (a launch's chain: the generated code runs it without the function's other statements)
  char *skipped = !sn->why && !launch && !sn->nccl ? skipped_in(ffe, fn) : NULL;
  if (skipped) {
    sn->why = "its body has no kernel launch or NCCL collective as the program is read";
    free(sn->stmt);
    sn->stmt = skipped;
  }
  if (!sn->why && sn->beside && !sn->nccl && depth == 1) {
    sn->why = NOT_BESIDE;
    sn->stmt = stmt_note(ffe, sn->beside->stmts[0], "coconet runs such statements beside a collective, not a launch");
  }
  if (!sn->why && starts != ends) sn->why = "its ncclGroupStart and ncclGroupEnd do not pair";
  if (!sn->why && ((!launch && !sn->nccl) || stmts.n > FE_KIDS))
    sn->why = "its body is not initialized locals and then one kernel launch or NCCL collective";
  if (inner_seen && sn->why) {
    free(sn->path);
    sn->path = outer_path;
    outer_path = NULL;
  }
  free(outer_path);
  wrapper_free(&w);
  if (sn->why && launch) {
    launch_free(launch);
    launch = NULL;
  }
  return launch;
}

static bool user_call(const Frontend *fe, CXCursor c) { return !clang_Cursor_isNull(host_function(fe, c)); }

CXCursor wrapper_call_in(const Frontend *fe, CXCursor stmt) {
  CXCursor call = statement_call(stmt);
  if (user_call(fe, call)) return call;
  // (the outer call of `check(launch(w, lr_of(lr), n))`: the argument's call is the launcher's to see)
  return fe_count_below(fe, stmt, user_call, false, &call) == 1 ? call : clang_getNullCursor();
}

void wrapper_see_through(const Frontend *fe, Stmt *s, CXCursor call, bool checked) {
  CXCursor fn = host_function(fe, call);
  if (clang_Cursor_isNull(fn)) return;
  Seen sn = {0};
  Launch *l = see(fe, NULL, call, fn, 1, &sn);
  // A launch of a kernel template inside a template: its arguments written out as the instance's.
  for (Launch *a = l; a && sn.is_template; a = a->other)
    if (a->def && a->def->is_template && a->def->args) {
      free(a->template_args);
      a->template_args = strdup(a->def->args);
    }
  // The statement must be the call and its ';', nothing around it but a check of its result.
  SrcRange cr = fe_range(fe, clang_getCursorExtent(call));
  // (an `if` around it that is not a check classify reads: classify's reason)
  char *around = s->why_opaque;
  s->why_opaque = NULL;
  if (!sn.why && !checked && cr.begin.offset != s->range.begin.offset) {
    bool guard = sn.nccl && clang_getCursorKind(s->cursor) == CXCursor_IfStmt;
    sn.why = around ? around : guard ? CLASSIFY_IF_COLLECTIVE : "the statement is more than the call";
  }
  char *name = function_name(fn);
  SrcLoc at = fe_any_loc(fe, clang_getCursorLocation(fn));
  if (sn.why && sn.launches) {
    s->why_opaque = xasprintf("the call of '%s' (%s:%u:%u) is not seen through as the kernel launch or collective "
                              "inside it: %s%s%s%s%s; coconet sees through a host function whose body is initialized "
                              "locals and then one launch, one NCCL collective (in a group of its own or none), or "
                              "one call of another such function, and beside a collective, statements that read none "
                              "of its parameters or locals and reach no kernel, CUDA or NCCL call",
                              name, at.file ? at.file : "?", at.line, at.col, sn.path ? "(in '" : "",
                              sn.path ? sn.path : "", sn.path ? "') " : "", sn.why, sn.stmt ? sn.stmt : "");
  }
  free(sn.stmt);
  free(around);
  if (!sn.why && sn.nccl) {
    // The collective, its texts in the region's terms; coconet's own check wraps what it generates.
    Stmt *c = sn.nccl;
    s->kind = STMT_NCCL;
    s->callee = c->callee;
    s->args = c->args;
    s->nargs = c->nargs;
    s->call_range = cr;
    s->seen_through = name;
    s->seen_path = sn.path;
    s->seen_loc = at;
    s->beside = sn.beside;
    c->callee = NULL;
    c->args = NULL;
    c->nargs = 0;
    stmt_free(c);
    return;
  }
  beside_free(sn.beside);
  if (sn.why || !l) {  // (a collective seen inside, the statement more than its call: not read)
    free(name);
    free(sn.path);
    stmt_free(sn.nccl);
    if (l) launch_free(l);
    return;
  }
  s->kind = STMT_LAUNCH;
  s->wrap = WRAP_NONE;  // a launcher's result checked: the generated code checks what it launches
  free(s->wrapper);
  s->wrapper = NULL;
  s->launch = l;
  for (Launch *a = l->other; a; a = a->other) {
    a->wrapper = strdup(name);
    a->wrapper_path = sn.path ? strdup(sn.path) : NULL;
    a->wrapper_loc = at;
  }
  l->wrapper = name;
  l->wrapper_path = sn.path;
  l->wrapper_loc = at;
  s->callee = strdup(l->kernel);
  s->call_range = cr;
  s->args = l->args;
  s->nargs = l->nargs;
}
