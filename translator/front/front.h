// front.h: the front end, what later stages may use of it: the source file,
// the libclang parse (frontend*.c; frontend_impl.h is their own map), the
// statements of a region classified (classify.c, wrapper.c), kernel templates'
// instances (instantiate.c), regions in templates read per instance
// (instance_region.c), the directives (directives.c), where generated
// text goes (places.c) and the byte-range edits of the file (edit.c).
#ifndef COCONET_FRONT_H
#define COCONET_FRONT_H

#include <clang-c/Index.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/diag.h"
#include "common/options.h"
#include "pragma.h"

//
// source.c
//

typedef struct SourceFile {
  char *path;
  char *buf;   // contents, NUL-terminated (the NUL is not counted in len)
  size_t len;
} SourceFile;

// Read a whole file; on failure prints "coconet: cannot read ..." and returns -1.
int source_read(const char *path, SourceFile *out);
void source_free(SourceFile *f);

// True when the text holds a `#pragma coconet` directive or a `_Pragma`
// operator outside comments, string, character and raw string literals:
// only then does the file need libclang. Conservative: a `_Pragma` anywhere in
// code counts, so that one producing `coconet` is diagnosed rather than missed.
bool source_needs_translation(const char *buf, size_t len);

// Line and column (1-based) of a byte offset.
SrcLoc source_loc(const SourceFile *f, unsigned offset);

// Write len bytes to path ("-" or NULL = stdout). A regular file is replaced
// atomically (a temporary file renamed over it, keeping its mode: other hard
// links to it keep the old contents); a symbolic link is followed to the file
// it names; a device or FIFO is written into, never replaced. Returns 0 or -1
// (reported).
int source_write(const char *path, const char *buf, size_t len);
// Whether two paths name the same existing file (device and inode).
bool source_same_file(const char *a, const char *b);
// Whether evaluating an expression as written may have side effects (a
// call, ++/--, an assignment, new/delete); conservative.
bool source_has_effects(const char *text);
// The same without counting calls: ++/--, an assignment, new/delete.
bool source_assigns(const char *text);

//
// frontend.c
//

// In an instance parse (instantiate.c) the TU's main file is src followed by
// copies of template definitions: bytes [at, at + len) of the TU's buffer copy
// src's bytes from `from` on, and [header, at) declare the template's
// parameters (they map to `from`).
typedef struct FeCopy {
  unsigned header, at, len, from;
  const SourceFile *src;  // the file `from` indexes: a header's (NULL: the main file)
} FeCopy;

typedef struct Frontend {
  CXIndex index;
  CXTranslationUnit tu;
  CXFile file;        // the main file inside the TU
  SourceFile src;     // the main file's bytes (offsets index into src.buf)
  char *tmpdir;       // the stand-ins: prelude, an empty texture_fetch_functions.h, omp.h
  bool tmpdir_cached; // ... in the cache directory (kept), not a temporary one
  char **pch_deps;    // the headers the precompiled prelude holds, when it was used (for -MD)
  int npch_deps;
  char **args;        // the flags the TU was parsed with
  int nargs;
  FeCopy *copies;     // an instance parse: where its copies come from
  int ncopies;
  const struct Frontend *root;  // a header's view (wrapper.c: file and src are the header's), else NULL
  struct FeNames *names;  // a main parse: what fe_names_in_use computes on first use
} Frontend;

// Parse opts->input with the CUDA 13 flag set (see frontend.c) plus flags from
// -p DIR and after `--`, with the prelude precompiled in the cache directory
// ($COCONET_CACHE; frontend.c) when there is one. Clang's errors are printed as
// clang formats them; returns -1 when there are any (or the parse failed), else 0.
int frontend_parse(const Options *opts, SourceFile src, Frontend *fe);
void frontend_dispose(Frontend *fe);
// Parse base's main file again, with `extra` appended (copies describes it);
// out shares base's src and tmpdir (base outlives it). Clang's errors are
// not printed: the first is returned in *error (malloc'd) with -1.
int frontend_parse_appended(const Frontend *base, const char *extra, FeCopy *copies, int ncopies, Frontend *out,
                            char **error);
// Parse text (len bytes) as base's main file with out's flags (base's when it
// has none) into out->index, tu and file (the rest of out is the caller's).
enum CXErrorCode frontend_parse_text(const Frontend *base, const char *text, size_t len, Frontend *out);

// The CUDA installation used for parsing (CUDA_HOME, nvcc on PATH, /usr/local/cuda).
const char *frontend_cuda_home(void);

// Locations and text of cursors in the main file. Macro arguments map to
// where they are spelled, macro bodies to the expansion.
SrcLoc fe_loc(const Frontend *fe, CXSourceLocation loc);
SrcRange fe_range(const Frontend *fe, CXSourceRange r);
bool fe_in_main_file(const Frontend *fe, CXSourceLocation loc);
char *fe_text(const Frontend *fe, SrcRange r);  // malloc'd copy of the bytes
// The bytes between two locations (malloc'd), in the main file as fe_text
// reads them, or in the header both are in (a kernel defined there); "" when
// they are in different files.
char *fe_between(const Frontend *fe, CXSourceLocation from, CXSourceLocation to);
// The text of a cursor, wherever it is (fe_between of its extent; malloc'd).
char *fe_cursor_text(const Frontend *fe, CXCursor c);
// A cursor's extent as file locations, for clang_tokenize: an expression that
// starts in a macro's body has an extent whose start clang_tokenize reads where
// the body is spelled (CEIL_DIV(n, 256) in the main file: from its #define on).
CXSourceRange fe_file_extent(CXCursor c);
// In the user's code: the main file or a header that is not a system header
// (CUDA's, the C++ library's): where kernels and the helpers coconet reads
// may be defined.
bool fe_in_user_code(const Frontend *fe, CXSourceLocation loc);
// fe_loc, and for a location in an included header (a kernel defined there)
// that header's path, line and column, its bytes registered for diagnostics.
SrcLoc fe_any_loc(const Frontend *fe, CXSourceLocation loc);

// The #include lines of file f the preprocessor saw (inside a namespace block
// too; one a skipped #if holds is not), in order: for each, the line [begin,
// end) in f's bytes (without its newline), its number, the file it includes
// and whether its name is quoted. fe_file_bytes: the bytes of a file of the
// parse (the main file's as read).
typedef struct FeInclude {
  CXFile from, to;
  unsigned begin, end, line;
  bool quoted;
} FeInclude;
typedef void (*FeIncludeFn)(const FeInclude *in, void *data);
void fe_includes(const Frontend *fe, CXFile f, FeIncludeFn fn, void *data);
const char *fe_file_bytes(const Frontend *fe, CXFile f, size_t *len);
// How many of a call's arguments are written in the source: a parameter's default
// (a CXXDefaultArgExpr) has no place there.
int fe_written_args(CXCursor call);
char *fe_spelling(CXCursor c);                    // malloc'd cursor spelling
// The first macro expanded in a range of the main file (malloc'd), or NULL.
// libclang 16 places code from a macro's body where the macro is used (its
// spelling locations are expansion locations), so the operators written in
// the body cannot be read; this names the macro for the message.
char *fe_macro_in(const Frontend *fe, SrcRange r);

// macro.c: a macro's definition, read from its tokens (the translation unit's).
// fe_function_macro: a function-like macro whose body is an expression of its
// parameters alone (`#define CEIL_DIV(M, N) (((M) + (N)-1) / (N))`: numbers,
// operators, parameters, casts to builtin types, sizeof; no other name, no
// assignment, ++ or --, no # or ##, not variadic), its tokens in m (fe_macro_free
// them). fe_macro_param: the parameter a token of the body names, or -1.
// fe_macro_pure: such a function-like macro, or an object-like one of the same
// tokens but parameters (`#define BLK (2 * 64)`). fe_macro_ceil_div: a
// function-like one of two parameters whose body is `((A) + (B) - 1) / (B)`, each
// use of a parameter parenthesized.
typedef struct FeMacro {
  CXToken *toks;
  unsigned n;
  unsigned body;    // the index of the body's first token
  unsigned params;  // parameter p is toks[2 + 2 * p]
} FeMacro;
bool fe_function_macro(CXTranslationUnit tu, CXCursor def, FeMacro *m);
int fe_macro_param(CXTranslationUnit tu, const FeMacro *m, CXToken t);
void fe_macro_free(CXTranslationUnit tu, FeMacro *m);
bool fe_macro_pure(CXTranslationUnit tu, CXCursor def);
bool fe_macro_ceil_div(CXTranslationUnit tu, CXCursor def);
// Is expression c written inside the expansion of a pure macro (its operators
// then are the body's, none an assignment)?
bool fe_in_pure_macro(CXCursor c);
bool fe_token_is(CXTranslationUnit tu, CXToken t, const char *text);
char *fe_token_text(CXTranslationUnit tu, CXToken t);  // malloc'd

// The children of a cursor: the first FE_KIDS of them in v, the last, and how many.
enum { FE_KIDS = 8 };
typedef struct FeKids {
  CXCursor v[FE_KIDS];
  CXCursor last;
  int n;
} FeKids;
FeKids fe_kids(CXCursor c);
// Up to max direct children of c of kinds a, b or c2 into out; returns how many.
int fe_kids_of_kind(CXCursor c, enum CXCursorKind a, enum CXCursorKind b, enum CXCursorKind c2, CXCursor *out,
                    int max);
// A function's declaration: a function, method, constructor, destructor,
// conversion or function template.
bool fe_is_function(enum CXCursorKind k);
// How many cursors below root (at any depth, root left out) pass test, with nested those inside
// one that passes too; *last: the last one visited.
int fe_count_below(const Frontend *fe, CXCursor root, bool (*test)(const Frontend *fe, CXCursor c), bool nested,
                   CXCursor *last);

//
// classify.c
//

typedef enum {
  STMT_NCCL,      // ncclAllReduce ... ncclGroupEnd
  STMT_LAUNCH,    // kernel<<<grid, block, shmem, stream>>>(args)
  STMT_GEMM,      // cublasSgemm, cublasHgemm, cublasGemmEx
  STMT_CUDA,      // cudaMemcpyAsync, cudaMemsetAsync, cudaEventRecord, cudaStreamWaitEvent
  STMT_OPAQUE,    // anything else: kept in place, an ordering barrier
} StmtKind;

typedef enum { WRAP_NONE, WRAP_MACRO, WRAP_FUNCTION } WrapKind;

// A piece of source text: an argument, a launch configuration expression.
typedef struct Piece {
  char *text;      // the bytes as written
  SrcRange range;
  bool pure;       // its calls change nothing (a launch's text seen through a wrapper: each call
                   // is one its locals' initializers were proven pure by, on the AST)
} Piece;

typedef struct Param {
  char *name;
  char *type;      // as clang spells it ("const float *")
} Param;

// The __global__ definition a launch calls.
typedef struct KernelDef {
  char *name;
  CXCursor cursor;     // the definition (a template pattern for templates)
  SrcRange range;      // the whole definition
  SrcRange body;       // its { ... }
  Param *params;
  int nparams;
  bool is_template;
  // Defined in an included header: only its cursor is used (range and body are
  // empty; its texts are read through it, as fuse's copy does; headers are never
  // rewritten).
  bool in_header;
  // A template: the launch's instance (instantiate.c), also of a template in a header. header declares the
  // template's parameters as the launch's arguments ("typedef float T;"),
  // the definition's text from offset `from` on follows it; args spells the
  // arguments ("float, 256"). inst is the instance's definition in inst_fe.
  // why says why there is none (malloc'd), else NULL.
  char *header, *args, *why;
  unsigned from;
  // A template in a header: the header's path and bytes (from and hend index
  // them; hend is the definition's end), else NULL.
  SourceFile *hsrc;
  unsigned hend;
  CXCursor inst;
  const struct Frontend *inst_fe;
} KernelDef;

typedef struct Launch {
  char *kernel;          // name as written, without template arguments
  char *template_args;   // "float, 4" or NULL
  Piece grid, block;
  Piece shmem, stream;   // text NULL when not written
  Piece *args;
  int nargs;
  KernelDef *def;        // NULL when the definition is not in the translation unit
  CXCursor call;         // the launch's call (inside the wrapper, for one seen through)
  char *wrapper;         // the host function the launch is seen through (wrapper.c), or NULL
  char *wrapper_path;    // the functions below it the launch is seen through ("invokeB"), or NULL
  SrcLoc wrapper_loc;
  // A launcher that picks its kernel at run time (wrapper_dispatch.c): the path's conditions
  // in the region's terms ("!(n == 0) && n % 4 == 0"), else NULL; the other launches it may
  // make instead (the driver puts the one the schedule is for first); why the schedule is not
  // for this one (malloc'd), else NULL.
  char *when;
  struct Launch *other;
  char *why_not;
} Launch;

// What a host function seen through runs besides its collective (wrapper_beside.c): its
// statements that read none of its parameters or locals, leave it by no return or goto and
// reach no kernel, CUDA, NCCL or cuBLAS call (a log line, FT_LOG_DEBUG("%s start",
// __PRETTY_FUNCTION__)), also a local whose initializer calls such a function. The
// schedule runs them, as written, in a copy of their own inside the function's namespaces.
enum { BESIDE_MAX = 16 };
typedef struct Beside {
  CXCursor fn;              // the function whose body holds them (a template's instance)
  char *name;               // its name ("ftNcclAllReduceSum")
  char *title;              // as explained ("ftNcclAllReduceSum<float>")
  SrcLoc loc;               // where it is defined (a header's path for one in a header)
  bool in_main;             // defined in the translated file, at byte offset:
  unsigned offset;
  char *text;               // the statements as written, each from its line's start
  char *ns_open, *ns_close, *ns_prefix;  // its namespaces ("namespace ft {\n", "}  // namespace ft\n", "ft::")
  char *scope;              // its template's parameters as the instance's arguments ("typedef float T;\n"), or ""
  CXCursor stmts[BESIDE_MAX];
  SrcLoc at[BESIDE_MAX];    // where each statement is
  int n;
} Beside;
void beside_free(Beside *b);

typedef struct Stmt {
  StmtKind kind;
  SrcRange range;        // the whole statement, including its ';'
  CXCursor cursor;
  char *callee;          // "ncclAllReduce", "cublasGemmEx", kernel name; NULL if opaque
  WrapKind wrap;         // the error-check wrapper around the call
  char *wrapper;         // its name ("NCCLCHECK", "ncclCheck") or NULL
  SrcRange call_range;   // the call itself, inside the wrapper
  Piece *args;           // call arguments (launch arguments for launches)
  int nargs;
  Launch *launch;        // for STMT_LAUNCH
  char *why_opaque;      // an opaque call coconet nearly saw into (a host wrapper): why not, else NULL
  char *seen_through;    // STMT_NCCL: the host function the collective is seen through (wrapper.c), or NULL
  char *seen_path;       // ... and the functions below it, or NULL
  SrcLoc seen_loc;       // ... where the function is
  char *guard;           // STMT_NCCL written as `if (guard) { collective; }` (no else, a guard without
                         // effects): the condition, the statement's range the whole if; else NULL
  Beside *beside;        // a host function seen through: what it runs besides the collective, else NULL
  bool error_check;      // STMT_OPAQUE: a call of the user's that only checks for errors (sync_check_cuda_error())
  char *why_not_check;   // STMT_OPAQUE: why it is not read as one, else NULL
  char *check_through;   // ... one: the functions returning a static local it uses (" getLogger"), or NULL
  struct Stmt *next;
} Stmt;

const char *stmt_kind_name(StmtKind k);
const char *wrap_kind_name(WrapKind k);

// A __global__ function (or function template) declaration.
bool cursor_is_kernel(CXCursor decl);

// Classify one statement of a region. Never fails: unknown forms are opaque.
Stmt *classify_stmt(const Frontend *fe, CXCursor stmt);
// The same for a statement written in the region itself, which may be several:
// `if (C) { collective; checks... }` (FasterTransformer's `if (tensor_para_.world_size_ >
// 1) { ftNcclAllReduceSum(...); sync_check_cuda_error(); }`) is the collective guarded by
// C, then its error checks (Stmt.error_check) as statements of their own, unguarded: they
// change nothing, so running them when C does not hold changes only when an error is
// reported. The list, linked through next.
Stmt *classify_region_stmt(const Frontend *fe, CXCursor stmt);
// A launch classify_stmt leaves opaque, its why_opaque: a macro in it stands for several arguments.
extern const char CLASSIFY_MACRO_ARGS[];
// ... and the start of one whose launch a macro's body writes ("... 'LAUNCH' (f.h:12); ...").
extern const char CLASSIFY_MACRO_LAUNCH[];
// ... and one that leaves kernel parameters to their default arguments.
extern const char CLASSIFY_DEFAULT_ARGS[];
// An `if` around a collective (or a wrapper's) that is not the guarded form classify reads: why.
extern const char CLASSIFY_IF_COLLECTIVE[];
void stmt_free(Stmt *s);
void launch_free(Launch *l);
// A launch statement whose launcher picks its kernel at run time: l (one of
// s->launch's chain) becomes its launch, the first of the chain, the others
// after it in their order.
void stmt_put_first(Stmt *s, Launch *l);

// wrapper.c: an opaque statement that is a call of a host function of the
// user's (in this file or a header; a template's instance too) whose body is
// initialized locals and one launch or collective (or `return` of one, and of
// its result or cudaGetLastError() after it), or one call of another such
// function, becomes that launch or collective, its texts in the caller's terms
// (Launch.wrapper, Stmt.seen_through name the function). The statement is
// exactly the call, or (checked) a check of its result around it.
void wrapper_see_through(const Frontend *fe, Stmt *s, CXCursor call, bool checked);
// wrapper_beside.c: NULL when statement st only checks for errors (FasterTransformer's
// sync_check_cuda_error(), which synchronizes and throws when FT_DEBUG_LEVEL is DEBUG), else
// why not (malloc'd). A check names no variable of the program but its own locals and
// constants (not `this`, no method of the program's objects), and the functions it calls
// (their bodies read, 8 deep, 64 in all) reach no kernel and no CUDA, NCCL or cuBLAS call but
// the error queries and synchronizes (cudaGetLastError, cudaDeviceSynchronize) and queries
// that change nothing, use no global of the user's but constants of numbers (their static
// locals: theirs alone; of a function returning a pointer or a reference to one, a singleton's,
// that function's name goes into *through, " getLogger", for analyze), change no environment or
// random state, and call nothing coconet does not see but the C and C++ libraries, given no
// type or function of the program (std::invoke(f), a container of the user's type).
char *wrapper_checks_only(const Frontend *fe, CXCursor st, char **through);
// The call of a host function of the user's a statement is, or holds as its
// only one (`NCCLCHECK(allreduce(...))`, `if (allreduce(...) != ncclSuccess)
// abort();`: checked, when classify reads the rest as a check of its result);
// a null cursor if none.
CXCursor wrapper_call_in(const Frontend *fe, CXCursor stmt);
// Does expression e change nothing when evaluated: no assignment, and calls
// only of min/max, the C library's math as its headers declare it (powf),
// constructors and helpers returning such an expression? (wrapper_pure.c)
bool wrapper_pure(CXCursor e);

//
// instantiate.c
//

// For a launch of a kernel template: fill k's header, args and from from the
// called specialization decl of template tmpl (or set k->why).
void instance_describe(const Frontend *fe, CXCursor decl, CXCursor tmpl, KernelDef *k);
// The template arguments of a function template specialization as code spells
// them ("float, 256"; malloc'd), or NULL when one is neither a type nor an integer.
char *template_args_of(CXCursor decl);
// The parameters of the template that function decl instantiates, declared as
// its arguments ("typedef float T;\nconstexpr int B = 256;\n"; malloc'd); "" for a
// function that is not a template's instance; NULL when an argument is neither a
// type nor an integer, or a pack.
char *template_bindings(CXCursor decl);
// Template argument i of a specialization as written in code ("float", "256"), or NULL.
char *template_arg_spelling(CXCursor decl, unsigned i);
// Type spelling s (taken) named from the global namespace when it starts with a
// namespace (`cfg::Scale` -> `::cfg::Scale`: code written in another scope could
// find another `cfg`); returns the result.
char *template_global_name(char *s);
// The type and non-type parameters of template tmpl, at most max of them
// (-1: it has a template template parameter).
int template_params(CXCursor tmpl, CXCursor *out, int max);
// The offset just after the template parameter list's closing '>' (last: its last parameter).
unsigned template_head_end(const SourceFile *src, CXCursor last);

//
// places.c: where generated text goes, and the names it must not declare
//

// Where text for file scope goes before offset: the start of the top-level
// declaration that holds it (outside namespaces and classes), above the
// comment lines directly on top of it.
unsigned place_decl(const Frontend *fe, unsigned offset);
// The function definition (or function template) that holds offset, when a
// namespace holds it directly: *fn gets it and the result is where text goes
// before it, inside the namespace; else *fn is null and the result is
// place_decl's.
unsigned place_fn(const Frontend *fe, unsigned offset, CXCursor *fn);
// The namespaces declaration c is in, outermost first, as text that reopens them
// ("namespace ft {\n"), closes them ("}  // namespace ft\n") and qualifies a
// name ("ft::"; an anonymous one is neither named nor qualified); malloc'd each.
// False when a class holds c (the texts are those of the namespaces around it).
bool place_namespaces(CXCursor c, char **ns_open, char **ns_close, char **ns_prefix);
// The function (method, template) whose definition holds offset, wherever it is
// written (`void ns::f() {...}` at file scope, a member in its class), or null.
CXCursor place_function(const Frontend *fe, unsigned offset);
// Where a copy of the kernel def goes for the region at offset: beside the
// region's function (true), when the kernel is in its namespaces and defined
// before it; else above the top-level declaration holding the region (false),
// when defined before that; *ok says whether either holds.
bool place_copy_beside(const Frontend *fe, const KernelDef *def, unsigned offset, bool *ok);
// Where an #include for the generated code goes, for code used from offset
// `before` on: the start of the line after the file's last #include before it
// that is at file scope and in the same #if blocks as `before` (*found), else
// (*found false) nowhere: the caller places it above the declaration instead.
unsigned place_include(const Frontend *fe, unsigned before, bool *found);
// What generated names must not be (for text_has_ident): the main file's text,
// then the names starting with coconet_ the translation unit declares or
// defines as macros outside system headers (a header's, a pasted one). A walk
// of the translation unit, on first use, kept for the parse (fe->names).
typedef struct FeNames {
  char *text;
} FeNames;
const char *fe_names_in_use(const Frontend *fe);

//
// directives.c
//

typedef struct Region {
  Pragma *pragma;        // the parsed directive
  char *name;            // name(ID) or FUNCTION_LINE
  char *function;        // the enclosing function
  SrcRange pragma_range; // from '#' to the end of the pragma's last line
  SrcRange range;        // the statement the pragma applies to
  SrcLoc function_start; // where the enclosing function's definition begins
  CXCursor cursor;
  struct RegionInstance *instances;  // in a template, its statements depending on the parameters:
  int ninstances;                    // the region read in each instance (instance_region.c)
  int instances_more;                // instances past the 8 read (they run the region as written)
  char *instance_why;    // ... or why it is read in none (NULL: not such a region)
  char *bind;            // in an instance parse: its parameters declared ("typedef half T; ")
  Stmt *stmts;           // the statements inside (the block's children)
  int nstmts;
  struct Region *next;
} Region;

// `#pragma coconet symmetric` on a cudaMalloc, `pointwise` on a __global__.
typedef struct Annotation {
  Pragma *pragma;
  SrcRange pragma_range;
  SrcRange range;        // the statement or definition it applies to
  char *target;          // symmetric: the allocated pointer's text; pointwise: the kernel
  struct Annotation *next;
} Annotation;

typedef struct Program {
  Region *regions;
  Annotation *symmetric;
  Annotation *pointwise;
  int nregions;
  Frontend *instances;   // the instance parse of the regions' kernel templates, or NULL
} Program;

// Find, parse, attach and validate every directive of the main file. Errors
// are reported through diag; returns -1 when there were any.
int directives_collect(const Frontend *fe, Program *prog);
// The same for the one region whose pragma's '#' is at offset pragma_at (an instance parse).
int directives_collect_one(const Frontend *fe, Program *prog, unsigned pragma_at);
// A region that is rewritten holds no preprocessor line but #if ... #endif and
// coconet's own (-1 after reporting one).
int directives_check_region_lines(const Frontend *fe, const Region *r);
void program_free(Program *prog);

// instantiate.c: parse, once, an instance of every kernel template that a
// region launches, and point each launch's KernelDef at its instance (or
// say in its `why` why there is none). Never fails: the analysis reports.
void instantiate_program(const Frontend *fe, Program *prog);

// instance_region.c: a region in a template (a function template, a member
// of a class template) whose statements depend on the template's parameters
// is read in each instance the main file makes; the generated code picks the
// instance's schedule with `if constexpr`. Never fails: a region that has no
// instance says why in its instance_why, and is analyzed as its pattern.
typedef struct RegionInstance {
  char *label;      // "T = half": the instance, in messages and comments
  char *test;       // "std::is_same<T, half>::value": the generated code's branch
  SourceFile text;  // the main file, the template's head replaced in place (same offsets)
  Frontend fe;      // its parse
  Program prog;     // the region read there: its only region, named REGION_ARGS
} RegionInstance;
void instance_regions(const Frontend *fe, Program *prog);
void region_instances_free(Region *r);

//
// edit.c: byte-range edits of the main file; the output = the input with them, nothing else
//

typedef struct Edit {
  unsigned begin, end;  // replace bytes [begin, end) of the input (begin == end: insert)
  char *text;           // the new bytes (owned)
  struct Edit *next;
} Edit;

void edit_add(Edit **list, unsigned begin, unsigned end, const char *text);
void edits_free(Edit *list);
// Append the edits of more (the list takes them).
void edits_append(Edit **list, Edit *more);
// The input with the edits applied (sorted by offset; overlapping edits are a
// bug). With line_directives, `#line 1 "input"` first and a `#line N "input"`
// after each edit that changes the line count make __FILE__ and compiler
// messages point at the input's lines.
// Returns a malloc'd buffer and its length.
char *edits_apply(const SourceFile *src, const Edit *edits, bool line_directives, size_t *len);

// Bytes [begin, end) of the input with the edits that lie inside them applied (malloc'd).
char *edits_apply_span(const SourceFile *src, const Edit *edits, unsigned begin, unsigned end);

#endif
