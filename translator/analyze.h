// analyze.h: the kernel analysis' own header (analyze.c: the element loop and
// the entry point; analyze_expr.c: expressions and the element body's statements).
// What the analysis accepts is described in analyze.c.
#ifndef COCONET_ANALYZE_H
#define COCONET_ANALYZE_H

#include "translator.h"
#include "ir.h"

typedef struct Binding {
  CXCursor decl;     // a local VarDecl or a helper's ParmDecl
  IrExpr *value;
} Binding;

typedef struct Az {
  const Frontend *fe;
  IrRegion *ir;
  IrOp *op;
  const Launch *launch;
  CXCursor kernel;        // the __global__ definition
  CXCursor index;         // the element index variable
  CXCursor count;         // the count parameter (null when the bound is an expression)
  CXCursor bound;         // the element loop's bound as written (`n`, `rows * cols`, `p.n`)
  char *count_text;       // an expression bound in the launch's terms ("R * C"), else NULL
  bool guarded;           // the element loop is a guard (if (i < n)), not grid-stride
  long long block_x;      // the launch's blockDim.x when it is a constant, else 0
  CXCursor stride;        // a local holding blockDim.x * gridDim.x (null if none); never read otherwise
  const char *hint_index; // from #pragma coconet pointwise
  const char *hint_count;
  Binding *locals;
  int nlocals, cap;
  CXCursor philox;        // the curandStatePhilox4_32_10_t variable (null if none)
  IrExpr *seed, *offset;
  int draws;
  int depth;              // inlining depth of __device__ helpers
  char *why;              // the first reason it is not pointwise
  SrcLoc why_loc;
} Az;

typedef FeKids Kids;
static inline Kids kids(CXCursor c) { return fe_kids(c); }
static inline enum CXCursorKind kind(CXCursor c) { return clang_getCursorKind(c); }
static inline bool same(CXCursor a, CXCursor b) { return clang_equalCursors(a, b) != 0; }

typedef enum { B_NONE, B_BLOCKIDX_X, B_BLOCKDIM_X, B_THREADIDX_X, B_GRIDDIM_X } Builtin;

// analyze_expr.c
bool az_failed(const Az *az);
// Record the first reason the kernel is not pointwise, at a cursor; returns NULL.
IrExpr *az_fail(Az *az, CXCursor at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
char *az_text_of(const Az *az, CXCursor c);               // source text (malloc'd)
CXCursor az_strip(CXCursor c);                            // without implicit nodes and parentheses
CXCursor az_referenced(CXCursor ref);
char *az_op_between(const Az *az, CXCursor lhs, CXCursor rhs);  // the operator text (malloc'd)
IrType az_type_of(CXType t);
bool az_is_pointer(CXCursor decl);
bool az_is_integer_var(CXCursor d);
Builtin az_builtin(const Az *az, CXCursor c);             // blockIdx.x and friends
bool az_is_binary(const Az *az, CXCursor c, const char *op, CXCursor *lhs, CXCursor *rhs);
bool az_is_product(const Az *az, CXCursor c, Builtin x, Builtin y);
bool az_is_index_expr(const Az *az, CXCursor c);          // blockIdx.x * blockDim.x + threadIdx.x
bool az_is_index(const Az *az, CXCursor c);               // a reference to the element index
int az_param_position(const Az *az, CXCursor decl);
const char *az_launch_arg(const Az *az, CXCursor param);  // the launch's argument for a parameter
bool az_simple_name(const char *t);                        // a name or a member chain
bool az_is_assignment(const Az *az, CXCursor s, CXCursor *lhs, CXCursor *rhs, char **op);
void az_decl_stmt(Az *az, CXCursor s);                    // locals of the element body
void az_stmt(Az *az, CXCursor s);                         // one statement of the element body

#endif
