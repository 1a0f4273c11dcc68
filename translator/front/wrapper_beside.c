// wrapper_beside.c: what a host function seen through runs besides its
// collective (front.h's Beside). Project NCCL wrappers log:
//
//   template <typename T> void allReduceSum(const T *in, T *out, int n, Param p, cudaStream_t s) {
//     FT_LOG_DEBUG("%s start", __PRETTY_FUNCTION__);
//     ncclDataType_t type = getNcclDataType<T>();   // which logs too
//     NCCLCHECK(ncclAllReduce((const void *)in, (void *)out, n, type, ncclSum, p.comm, s));
//     FT_LOG_DEBUG("%s stop", __PRETTY_FUNCTION__);
//   }
//
// The schedule does not call the function, so it runs such statements itself,
// as written, in a copy of their own (codegen), before the collective. A
// statement may run there when it reads none of the function's parameters or
// locals (but the locals of the statements kept before it), holds no
// preprocessor directive, leaves the function by no return or goto (after the
// collective, by no throw or exit() written in it either: an error path of a
// function it calls, FasterTransformer's fmtstr throwing on a bad format, is
// taken to end the program), calls through no pointer or function object, and
// reaches, through the functions it calls (their bodies read, 8 deep, 64 in
// all), no kernel, no CUDA, NCCL or cuBLAS call (by name, or a function the
// CUDA toolkit declares) but queries that change nothing (cudaGetDevice:
// CUDA_QUERIES), no virtual call and no function whose body coconet
// does not see, but the C and C++ libraries' and a singleton's constructor (the
// initializer of a function's static local, run once), also through the
// destructors of the objects it makes: it then changes nothing the region
// computes with, on the device or in a buffer, whenever it runs (analyze/beside.c
// checks that it assigns no variable the collective's call reads). The same walk
// tells a statement of the region that only checks for errors
// (wrapper_checks_only).
#include "front/wrapper_impl.h"

#include "common/cuda_names.h"
#include "common/text.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void beside_free(Beside *b) {
  if (!b) return;
  free(b->name);
  free(b->title);
  free(b->text);
  free(b->ns_open);
  free(b->ns_close);
  free(b->ns_prefix);
  free(b->scope);
  free(b);
}

typedef struct Walk {
  const Frontend *fe;   // the translated file's
  CXCursor fn, st;      // the function and its statement (depth 0)
  const Beside *kept;   // the statements kept before it (their locals are the copy's)
  int depth, *budget;
  bool once;            // inside the initializer of a function's static local (run the first time only)
  bool after;           // the statement comes after the collective: it must not leave before it
  bool checks;          // a statement of the region that only checks for errors (wrapper_checks_only)
  char *why;            // malloc'd
  char *through;        // checks: the functions returning a static local it uses (" getLogger"), malloc'd
} Walk;

static bool inside(CXCursor outer, CXCursor c) {
  CXSourceRange r = clang_getCursorExtent(outer);
  unsigned b, e, at;
  CXFile fb, fe, fa;
  clang_getExpansionLocation(clang_getRangeStart(r), &fb, NULL, NULL, &b);
  clang_getExpansionLocation(clang_getRangeEnd(r), &fe, NULL, NULL, &e);
  clang_getExpansionLocation(clang_getCursorLocation(c), &fa, NULL, NULL, &at);
  return fb && clang_File_isEqual(fb, fa) && clang_File_isEqual(fe, fa) && at >= b && at <= e;
}

// A name of the CUDA toolkit's libraries that may touch the device (cudaMemcpy, cuMemcpy, ncclSend, cublasSgemm).
static bool device_api(const char *name) {
  static const char *const prefixes[] = {"cuda", "nccl", "cublas", "cudnn", "curand", "cusparse", "cufft",
                                         "cusolver", "cutensor", "nvshmem"};
  for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
    if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0) return true;
  return strncmp(name, "cu", 2) == 0 && isupper((unsigned char)name[2]);
}

static bool in_cuda_toolkit(CXCursor decl) {
  CXFile f;
  clang_getExpansionLocation(clang_getCursorLocation(decl), &f, NULL, NULL, NULL);
  if (!f) return false;
  CXString name = clang_getFileName(f);
  const char *home = frontend_cuda_home();
  bool yes = home && strncmp(clang_getCString(name), home, strlen(home)) == 0;
  clang_disposeString(name);
  return yes;
}

// The reason: before, the name of c quoted, after.
static void set_why(Walk *w, const char *before, CXCursor c, const char *after) {
  if (w->why) return;
  char *name = fe_spelling(c);
  w->why = xasprintf("%s '%s'%s", before, name, after);
  free(name);
}

static enum CXChildVisitResult walk(CXCursor c, CXCursor parent, CXClientData data);
static void walk_call(Walk *w, CXCursor c);

static enum CXChildVisitResult find_call_operator(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k != CXCursor_CXXMethod && k != CXCursor_FunctionTemplate) return CXChildVisit_Continue;
  char *n = fe_spelling(c);
  *(bool *)data = strcmp(n, "operator()") == 0;
  free(n);
  return *(bool *)data ? CXChildVisit_Break : CXChildVisit_Continue;
}

// A variable or member through which a call goes to what coconet does not see: a pointer to a function or
// member, an object with an operator() (std::function, a lambda kept in a variable).
static bool callable(CXCursor d) {
  CXType t = clang_getCanonicalType(clang_getCursorType(d));
  while (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference)
    t = clang_getCanonicalType(clang_getPointeeType(t));
  if (t.kind == CXType_MemberPointer) return true;
  if (t.kind == CXType_Pointer) {
    enum CXTypeKind p = clang_getCanonicalType(clang_getPointeeType(t)).kind;
    return p == CXType_FunctionProto || p == CXType_FunctionNoProto;
  }
  if (t.kind != CXType_Record) return false;
  bool yes = false;
  CXCursor decl = clang_getTypeDeclaration(t), tmpl = clang_getSpecializedCursorTemplate(decl);
  clang_visitChildren(decl, find_call_operator, &yes);
  if (!yes && !clang_Cursor_isNull(tmpl)) clang_visitChildren(tmpl, find_call_operator, &yes);  // (std::function)
  return yes;
}

static enum CXChildVisitResult find_destructor(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  if (clang_getCursorKind(c) != CXCursor_Destructor) return CXChildVisit_Continue;
  *(CXCursor *)data = c;
  return CXChildVisit_Break;
}

// The destructor an object of type t runs when it goes (a temporary, a local, a member): its body walked as a
// call's; a class without one of its own runs its members' and bases' (a depth of them).
static void walk_destructor(Walk *w, CXType t, int depth) {
  t = clang_getCanonicalType(t);
  while (t.kind == CXType_ConstantArray) t = clang_getCanonicalType(clang_getArrayElementType(t));
  CXCursor decl = clang_getTypeDeclaration(t);
  if (t.kind != CXType_Record || clang_Cursor_isNull(decl) || depth > 4 || w->why ||
      clang_Location_isInSystemHeader(clang_getCursorLocation(decl)))
    return;
  CXCursor dtor = clang_getNullCursor();
  clang_visitChildren(decl, find_destructor, &dtor);
  if (!clang_Cursor_isNull(dtor)) {
    walk_call(w, dtor);
    return;
  }
  FeKids k = fe_kids(decl);
  for (int i = 0; i < k.n && i < FE_KIDS; i++)
    if (clang_getCursorKind(k.v[i]) == CXCursor_FieldDecl || clang_getCursorKind(k.v[i]) == CXCursor_CXXBaseSpecifier)
      walk_destructor(w, clang_getCursorType(k.v[i]), depth + 1);
}

// A type of the user's, or one of the libraries' made of one (`std::vector<Layer>`, a lambda's):
// a library call given or making such a value may run the user's code, which coconet does not see
// there (a constructor, an operator<, a callable std::invoke calls).
static bool user_type(CXType t, int depth) {
  t = clang_getCanonicalType(t);
  while (t.kind == CXType_Pointer || t.kind == CXType_LValueReference || t.kind == CXType_RValueReference ||
         t.kind == CXType_ConstantArray || t.kind == CXType_IncompleteArray)
    t = clang_getCanonicalType(t.kind == CXType_ConstantArray || t.kind == CXType_IncompleteArray
                                   ? clang_getArrayElementType(t)
                                   : clang_getPointeeType(t));
  if (t.kind == CXType_FunctionProto || t.kind == CXType_FunctionNoProto) return true;
  if (t.kind != CXType_Record || depth > 4) return false;
  if (!clang_Location_isInSystemHeader(clang_getCursorLocation(clang_getTypeDeclaration(t)))) return true;
  for (int i = 0, n = clang_Type_getNumTemplateArguments(t); i < n; i++)
    if (user_type(clang_Type_getTemplateArgumentAsType(t, (unsigned)i), depth + 1)) return true;
  return false;
}

// Whether a call of a library function (callee, in a system header) may run the user's code: an
// argument (a function too: `std::invoke(bump)`), the result, a template argument or the class
// of a method of a user's type.
static bool runs_user_code(CXCursor call, CXCursor callee) {
  if (user_type(clang_getCursorType(call), 0)) return true;
  for (int i = 0, n = clang_Cursor_getNumArguments(call); i < n; i++)
    if (user_type(clang_getCursorType(clang_Cursor_getArgument(call, (unsigned)i)), 0)) return true;
  for (int i = 0, n = clang_Cursor_getNumTemplateArguments(callee); i < n; i++)
    if (clang_Cursor_getTemplateArgumentKind(callee, (unsigned)i) == CXTemplateArgumentKind_Type &&
        user_type(clang_Cursor_getTemplateArgumentType(callee, (unsigned)i), 0))
      return true;
  enum CXCursorKind ck = clang_getCursorKind(callee);
  if (ck == CXCursor_CXXMethod || ck == CXCursor_Constructor || ck == CXCursor_Destructor)
    return user_type(clang_getCursorType(clang_getCursorSemanticParent(callee)), 0);
  return false;
}

// Library functions that change what a later call reads: the environment (a kernel's argument may
// read getenv), the C library's random state.
static bool changes_process(const char *name) {
  static const char *const names[] = {"setenv", "putenv", "unsetenv", "clearenv", "srand", "rand", "random",
                                      "srandom", "drand48", "lrand48", "mrand48", "srand48", NULL};
  return cuda_name_in(name, names);
}

// A variable whose value no one may change: const, of a number, an enumeration, or a pointer to
// such a constant (not a class, whose mutable members may change).
static bool constant(CXType t) {
  t = clang_getCanonicalType(t);
  if (!clang_isConstQualifiedType(t)) return false;
  while (t.kind == CXType_ConstantArray) t = clang_getCanonicalType(clang_getArrayElementType(t));
  if (t.kind == CXType_Pointer) return constant(clang_getPointeeType(t));
  return t.kind != CXType_Record && t.kind != CXType_LValueReference && t.kind != CXType_RValueReference;
}

// Functions that end the program (or jump out of the statement) when called.
static bool leaves(const char *name) {
  static const char *const names[] = {"exit", "_exit", "_Exit", "quick_exit", "abort", "terminate", "longjmp",
                                      "siglongjmp", "__assert_fail", NULL};
  return cuda_name_in(name, names);
}

static void walk_call(Walk *w, CXCursor c) {
  // (a destructor: the callee itself; a call: what it references)
  CXCursor callee = clang_getCursorKind(c) == CXCursor_Destructor ? c : clang_getCursorReferenced(c);
  enum CXCursorKind ck = clang_getCursorKind(callee);
  if (clang_Cursor_isNull(callee) || ck == CXCursor_VarDecl || ck == CXCursor_FieldDecl || ck == CXCursor_ParmDecl) {
    // (a call libclang leaves unresolved, or through a variable: a pointer to a function, a function object)
    if (!w->why)
      w->why = strdup("it calls through a pointer or a function object, whose target coconet does not see");
    return;
  }
  if (clang_getCursorKind(c) == CXCursor_CallExpr) walk_destructor(w, clang_getCursorType(c), 0);  // (its result's)
  char *name = fe_spelling(callee);
  static const char *const errors[] = {"cudaGetLastError", "cudaPeekAtLastError", "cudaDeviceSynchronize",
                                       "cudaStreamSynchronize", NULL};
  bool builtin = strncmp(name, "__builtin", 9) == 0 || cuda_name_in(name, CUDA_QUERIES) ||
                 (w->checks && cuda_name_in(name, errors));
  bool api = device_api(name), gone = leaves(name), process = changes_process(name);
  free(name);
  if (process) return set_why(w, "it calls", callee, ", which changes what a later call reads");
  // (a method of an object of the program, `checkError()` in a method of its class: it may change it)
  if (w->checks && w->depth == 0 && clang_getCursorKind(callee) == CXCursor_CXXMethod &&
      !clang_CXXMethod_isStatic(callee))
    return set_why(w, "it calls method", callee, " of an object of the program, which it may change");
  if (gone && w->after && w->depth == 0)
    return set_why(w, "it calls", callee, ", which leaves before the collective in the copy, after it as written");
  if (builtin) return;  // (a compiler's built-in, a query of the device that changes nothing)
  CXCursor tmpl = clang_getSpecializedCursorTemplate(callee);
  if (cursor_is_kernel(callee) || (!clang_Cursor_isNull(tmpl) && cursor_is_kernel(tmpl)))
    return set_why(w, "it launches kernel", callee, "");
  if (clang_CXXMethod_isVirtual(callee))
    return set_why(w, "it calls virtual function", callee, ", whose override coconet does not see");
  CXCursor def = clang_getCursorDefinition(callee);
  if (!clang_Cursor_isNull(def) && fe_in_user_code(w->fe, clang_getCursorLocation(def))) {
    if (clang_equalCursors(def, w->fn)) return set_why(w, "it calls", callee, " again");
    if (w->depth >= WRAPPER_DEPTH || --*w->budget < 0) {
      if (!w->why) w->why = strdup("it calls functions deeper or more of them than coconet reads (8 deep, 64)");
      return;
    }
    Walk in = *w;
    in.depth++;
    clang_visitChildren(def, walk, &in);
    w->why = in.why;
    w->through = in.through;
    return;
  }
  if (api) return set_why(w, "it calls", callee, ", which may touch the device");
  if (clang_Location_isInSystemHeader(clang_getCursorLocation(callee))) {
    if (in_cuda_toolkit(callee)) set_why(w, "it calls", callee, " of the CUDA toolkit, which may touch the device");
    else if (clang_getCursorKind(c) == CXCursor_CallExpr && runs_user_code(c, callee))
      set_why(w, "it calls", callee, " of a library with a type or a function of the program, whose code coconet "
                                     "does not follow there");
    return;
  }
  if (clang_CXXMethod_isDefaulted(callee)) return;  // (`= default`: the class's members' own)
  // A singleton's constructor defined in another file (`static Logger instance;` in `getLogger()`,
  // FasterTransformer's): it runs once, the first time; taken to change nothing the region computes with.
  if (w->once && !w->checks) return;
  set_why(w, "it calls", callee, ", whose body coconet does not see (it may launch a kernel or copy to the device)");
}

static enum CXChildVisitResult walk(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Walk *w = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (w->depth == 0 && (k == CXCursor_ReturnStmt || k == CXCursor_GotoStmt || k == CXCursor_IndirectGotoStmt)) {
    w->why = strdup("it leaves the function (a return or a goto)");
  } else if (w->depth == 0 && (k == CXCursor_BreakStmt || k == CXCursor_ContinueStmt || k == CXCursor_LabelStmt)) {
    w->why = strdup("it leaves the loop it is in, or a goto jumps to it");  // (`break;`: the kernels after it)
  } else if (k == CXCursor_AsmStmt || k == CXCursor_GCCAsmStmt || k == CXCursor_MSAsmStmt) {
    w->why = strdup("it holds inline assembly");
  } else if (w->after && w->depth == 0 && k == CXCursor_CXXThrowExpr) {
    w->why = strdup("it may throw, which in the copy comes before the collective, as written after it");
  } else if ((k == CXCursor_DeclRefExpr || k == CXCursor_MemberRefExpr) && callable(clang_getCursorReferenced(c))) {
    set_why(w, "it reads", clang_getCursorReferenced(c),
            ", a pointer to a function or a function object, whose target coconet does not see");
  } else if (k == CXCursor_CallExpr) {
    walk_call(w, c);
  } else if (w->depth == 0 && k == CXCursor_VarDecl && clang_Cursor_hasVarDeclGlobalStorage(c) == 1) {
    // (the copy's would count its own calls, the function's those the region makes as written)
    set_why(w, "it declares static local", c, ", which the copy would keep apart from the function's");
  } else if (k == CXCursor_VarDecl && clang_Cursor_hasVarDeclGlobalStorage(c) == 1 && !w->once) {
    Walk in = *w;
    in.once = true;
    clang_visitChildren(c, walk, &in);
    w->why = in.why;
    w->through = in.through;
    return w->why ? CXChildVisit_Break : CXChildVisit_Continue;
  } else if (k == CXCursor_VarDecl && clang_Cursor_hasVarDeclGlobalStorage(c) != 1) {
    walk_destructor(w, clang_getCursorType(c), 0);  // (a local of a class: its destructor runs too)
  } else if (w->checks && k == CXCursor_CXXThisExpr) {
    w->why = strdup("it is given 'this', and coconet does not follow what it changes there");
  } else if (w->checks && (k == CXCursor_DeclRefExpr || k == CXCursor_MemberRefExpr)) {
    // (a check names nothing of the program: not the region's variables (but its own locals), not a
    // global of the user's but a constant; a static local is its function's state alone when that
    // function returns no pointer or reference, through which another could reach it)
    CXCursor d = clang_getCursorReferenced(c), owner = clang_getCursorSemanticParent(d);
    enum CXCursorKind dk = clang_getCursorKind(d), pk = clang_getCursorKind(owner);
    // (anything but a function or a constant is a variable: a structured binding too)
    bool variable = dk != CXCursor_FunctionDecl && dk != CXCursor_CXXMethod && dk != CXCursor_FunctionTemplate &&
                    dk != CXCursor_Constructor && dk != CXCursor_ConversionFunction &&
                    dk != CXCursor_EnumConstantDecl && dk != CXCursor_NonTypeTemplateParameter;
    bool global = dk == CXCursor_VarDecl && clang_Cursor_hasVarDeclGlobalStorage(d) == 1;
    bool own = pk == CXCursor_FunctionDecl || pk == CXCursor_CXXMethod || pk == CXCursor_FunctionTemplate;
    enum CXTypeKind rk = clang_getCanonicalType(clang_getCursorResultType(owner)).kind;
    bool leaks = rk == CXType_Pointer || rk == CXType_LValueReference || rk == CXType_RValueReference;
    bool fixed = global && (constant(clang_getCursorType(d)) ||
                            clang_Location_isInSystemHeader(clang_getCursorLocation(d)));  // (stderr)
    if (!variable || fixed || inside(w->st, d))
      ;
    else if (w->depth == 0)
      set_why(w, "it reads", d, ", a variable of the program, and coconet does not follow what it changes");
    else if (global && own && leaks) {
      // (a singleton's, FasterTransformer's `static Logger instance;` in getLogger(): others may reach it
      // through that function, which analyze checks no other statement of the region calls)
      char *fn = fe_spelling(owner), *all = xasprintf("%s %s", w->through ? w->through : "", fn);
      free(fn);
      free(w->through);
      w->through = all;
    }
    else if (global && !own)
      set_why(w, "it uses global", d, ", which the region's work may use");
  } else if (w->depth == 0 && (k == CXCursor_DeclRefExpr || k == CXCursor_MemberRefExpr || k == CXCursor_VariableRef)) {
    CXCursor d = clang_getCursorReferenced(c);
    enum CXCursorKind dk = clang_getCursorKind(d);
    bool own = (dk == CXCursor_ParmDecl || dk == CXCursor_VarDecl) &&
               clang_equalCursors(clang_getCursorSemanticParent(d), w->fn);
    bool kept = inside(w->st, d);
    for (int i = 0; w->kept && i < w->kept->n && !kept; i++) kept = inside(w->kept->stmts[i], d);
    if (own && !kept)
      set_why(w, dk == CXCursor_ParmDecl ? "it reads parameter" : "it reads local", d, " of the function");
  }
  return w->why ? CXChildVisit_Break : CXChildVisit_Recurse;
}

char *wrapper_beside(const Frontend *ffe, CXCursor fn, CXCursor st, const char *title, bool after, Beside **into) {
  const Frontend *root = wrapper_root(ffe);
  Beside *b = *into;
  if (b && !clang_equalCursors(b->fn, fn))
    return strdup("coconet copies the statements beside the collective of one function of the chain only");
  if (b && b->n == BESIDE_MAX) return strdup("coconet copies 16 statements beside the collective at most");
  int budget = 64;
  Walk w = {root, fn, st, b, 0, &budget, false, after, false, NULL, NULL};
  walk(st, clang_getNullCursor(), &w);  // (the statement itself: a `return`)
  if (!w.why) clang_visitChildren(st, walk, &w);
  if (w.why) return w.why;
  char *text = fe_cursor_text(ffe, st);
  SrcLoc at = fe_any_loc(root, clang_getCursorLocation(st));
  if (!text || !*text || !at.file) {
    free(text);
    return strdup("it is written in a macro's body, which coconet cannot copy");
  }
  for (const char *l = text; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    if (l[strspn(l, " \t")] == '#') {
      free(text);
      return strdup("it holds a preprocessor directive, which the copy would read again where it goes");
    }
  if (!b) {
    b = xcalloc(1, sizeof *b);
    b->fn = fn;
    b->name = fe_spelling(fn);
    b->title = strdup(title);
    b->loc = fe_any_loc(root, clang_getCursorLocation(fn));
    b->in_main = fe_in_main_file(root, clang_getCursorLocation(fn));
    b->offset = b->in_main ? fe_loc(root, clang_getCursorLocation(fn)).offset : 0;
    b->scope = template_bindings(fn);
    bool ns = place_namespaces(fn, &b->ns_open, &b->ns_close, &b->ns_prefix);
    if (!ns || !b->scope) {
      beside_free(b);
      free(text);
      return strdup(ns ? "the function's template has an argument that is neither a type nor an integer, which "
                         "the copy would declare"
                       : "the function is a member of a class, whose names a copy outside the class could not use");
    }
    *into = b;
  }
  // Each statement from its line's start (its indentation kept for the copy), with its ';'.
  size_t n = strlen(text);
  bool declaration = clang_getCursorKind(st) == CXCursor_DeclStmt;
  char *line = xasprintf("%*s%s%s%s\n", (int)(at.col ? at.col - 1 : 0), "", declaration ? "[[maybe_unused]] " : "",
                         text, text[n - 1] == ';' || text[n - 1] == '}' ? "" : ";");
  char *all = xasprintf("%s%s", b->text ? b->text : "", line);
  free(b->text);
  free(line);
  free(text);
  b->text = all;
  b->stmts[b->n] = st;
  b->at[b->n++] = at;
  return NULL;
}

char *wrapper_checks_only(const Frontend *fe, CXCursor st, char **through) {
  int budget = 64;
  Walk w = {wrapper_root(fe), clang_getNullCursor(), st, NULL, 0, &budget, false, false, true, NULL, NULL};
  if (walk(st, clang_getNullCursor(), &w) == CXChildVisit_Recurse) clang_visitChildren(st, walk, &w);
  *through = w.through;
  return w.why;
}
