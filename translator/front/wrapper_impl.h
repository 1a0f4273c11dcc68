// wrapper_impl.h: host functions seen through (front.h's wrapper_see_through),
// private to its three files.
//   wrapper.c       the walk down the chain of calls to one launch or one NCCL
//                   collective, and why a call is not seen through
//   wrapper_text.c  the texts of the chain in the caller's terms
//   wrapper_pure.c  what a text runs that it does not show: impure calls, default arguments
//   wrapper_dispatch.c  a launcher that picks its kernel at run time: the launch of each path
//   wrapper_beside.c    what a function runs besides its collective (a log line): kept for a copy;
//                       a statement of the region that only checks for errors
//   wrapper_nccl.c      the collective a chain ends in: its texts in the caller's terms, its result
#ifndef COCONET_WRAPPER_IMPL_H
#define COCONET_WRAPPER_IMPL_H

#include "front/front.h"

struct Wrapper;

// A name of a function seen through and what it stands for.
typedef struct Subst {
  CXSourceLocation at;       // where the parameter, local or template parameter is declared
  SrcRange range;            // the call's argument or the local's initializer
  const struct Wrapper *in;  // whose names the range reads (NULL: the region's, as written)
  char *fixed;               // a template argument as spelled, else NULL
  char *name;                // a template parameter's name (its uses in an instance are found by it)
  char *cast;                // the declared type, when the value's differs ("float" for an int 1)
  bool dim3;                 // a dim3 of one value: NAME.x is the value, NAME.y and NAME.z are 1
  bool impure;               // a local whose initializer has side effects: a text reading it cannot move
} Subst;

// One function of the chain, from the region's call down.
typedef struct Wrapper {
  const Frontend *fe;        // the function's file: the translated file's front end, or a view of a header
                             // (the same parse, its file and bytes the header's; root: the translated file's)
  const struct Wrapper *up;  // the function calling this one, NULL for the region's call
  Subst *v;
  int n;
  CXCursor fn;               // the function (its body is where names inside macro arguments are found)
} Wrapper;

enum { WRAPPER_DEPTH = 8 };

// wrapper.c

// The translated file's front end (fe may be a header's view).
const Frontend *wrapper_root(const Frontend *fe);
// Does the text of range r (in w's terms) have side effects, or read a name
// that is not the functions' own (*foreign)? pure: its calls are all pure.
bool wrapper_effects(const Frontend *fe, const Wrapper *w, SrcRange r, bool pure, bool *foreign);
// `cudaCheck(cudaGetLastError());` (any one checking function or macro around
// the query, or none; cudaPeekAtLastError too) after a launch: it reads no
// buffer and names nothing of the function's.
bool wrapper_error_check(const Frontend *fe, CXCursor st);
// The locals a declaration statement of w's body declares, each standing for its initializer
// (*why when one cannot; *calls when one calls a function that may change something, which
// only a copy of the statement would run: wrapper_beside.c).
void wrapper_locals(const Frontend *ffe, Wrapper *w, CXCursor st, const char **why, bool *foreign, bool *calls);
// The launch statement s of w's body (classified: STMT_LAUNCH), taken from s, its texts in
// the region's terms (*why when one cannot move there).
Launch *wrapper_launch(const Wrapper *w, Stmt *s, const char **why);

// wrapper_nccl.c

// The collective statement st of w's body (classified: s), its texts in the region's terms
// (*why when one cannot move there).
void wrapper_collective(const Wrapper *w, CXCursor st, Stmt *s, const char **why);
// `ncclResult_t r = ncclAllReduce(...);`: the local r (its one initializer the call, *call) or a
// null cursor.
CXCursor wrapper_collective_result(CXCursor st, CXCursor *call);
// After that: `if (r != ncclSuccess) ...` (or `ncclSuccess != r`, `r != 0`, `r`) with no else.
bool wrapper_result_check(const Frontend *fe, CXCursor st, CXCursor result);

// wrapper_beside.c

// Statement st of fn's body (read in ffe, fn's file; title names fn; after: it comes after the
// collective) kept in *into (made on the first) when it may run beside the chain's collective,
// in a copy; else why not (malloc'd), *into as it was.
char *wrapper_beside(const Frontend *ffe, CXCursor fn, CXCursor st, const char *title, bool after, Beside **into);

// wrapper_dispatch.c

// The statements v[0, n) of w's body, from an `if` on, read as paths that each end in
// one launch (or in none: a `return;`, the body's end), the locals of each path standing for
// what it declares or assigns them: the launches, chained by Launch.other in the order
// written, each with Launch.when, the path's conditions in the region's terms. NULL with
// *why (and *stmt, the statement in the way) when a path holds another statement or a
// condition cannot move to the region.
Launch *wrapper_dispatch(const Frontend *ffe, Wrapper *w, const CXCursor *v, int n, const char **why, char **stmt);

// wrapper_text.c

// The text of range r of w's body in the region's terms (w NULL: the region's
// own text, in root's file). *foreign: a name that is not the functions' own was read.
char *wrapper_substituted(const Frontend *root, const Wrapper *w, SrcRange r, bool *foreign);
// Expression e of w's body when it is a parameter whose argument is, through the chain of
// calls, text of the region as written (`n` passed on as `n`, no conversion that changes its
// value): that text's range in root's file, else a null range (begin.file NULL).
SrcRange wrapper_region_range(const Frontend *root, const Wrapper *w, CXCursor e);
// A type as clang spells its canonical form (malloc'd).
char *wrapper_type_spelling(CXType t);
bool wrapper_is_dim3(CXType t);
// The type a value of type `from` is converted to when it initializes decl, when that
// changes what the text computes; NULL otherwise (malloc'd).
char *wrapper_conversion(CXCursor decl, CXType from);
// An expression's type before the implicit conversions around it.
CXType wrapper_written_type(CXCursor e);
void wrapper_add(Wrapper *w, CXCursor decl, SrcRange range, const Wrapper *in, char *fixed, bool dim3);
void wrapper_free(Wrapper *w);

// wrapper_pure.c (front.h has wrapper_pure: no assignment and wrapper_calls_pure)

// Does expression e call only pure functions (assignments are the text's to say)?
bool wrapper_calls_pure(CXCursor e);
// The default argument of fn's parameter i, where fn or its first declaration gives it; or a null cursor.
CXCursor wrapper_default_argument(CXCursor fn, unsigned i);

#endif
