// codegen_kernel_impl.h: what the generated kernels' files share (the plan of
// a kernel: its buffers, scalars, sizes, statements and their names).
//
//   codegen_kernel.c        the plan, the element function, the grid-stride
//                           kernel over [lo, hi) and a block's share of it
//   codegen_kernel_fused.c  a fuse group's fused __global__ on the device API
//   codegen_text.c          the user's text for an element, as a __device__
//                           function the element function calls
#ifndef COCONET_CODEGEN_KERNEL_IMPL_H
#define COCONET_CODEGEN_KERNEL_IMPL_H

#include "codegen_impl.h"

enum { KMAX = 128 };

typedef struct KTensor {
  const IrTensor *t;
  const char *name;   // parameter name
  const char *vec;    // the vector loop's array
  bool pointer;       // some read is not at [i]: passed as a pointer, read in memory
  bool written;
  bool load;          // read before its first write: the vector loop loads it
  bool read;          // the element function reads it
  bool summed;        // summed into (atomicAdd): the kernel adds to it after its loops
} KTensor;

typedef struct KSum {  // one accumulator element a kernel sums into
  const IrTensor *t;
  long k;              // the element
  const char *name;    // the thread's partial sum
} KSum;

typedef struct KScalar {
  const IrVar *var;
  IrType type;
  const char *name;
  const char *arg;    // the launch argument as written
} KScalar;

typedef struct KSize {
  const IrSize *k;
  const char *name;
} KSize;

typedef struct KState {  // one curand Philox state of one op
  int op;
  const IrExpr *seed, *offset;
  const char *name;
  int ndraws;            // draws up to the last live one
  const char *draw[KMAX];  // names of live draws (NULL: drawn and discarded)
} KState;

typedef struct KStmt {
  const IrStmt *s;
  int op;
  bool live;
  const char *name;      // lets
} KStmt;

typedef struct Plan {
  const IrRegion *r;
  Kernel *k;
  Names names;
  KTensor tensors[KMAX];
  int ntensors;
  KScalar scalars[KMAX];
  int nscalars;
  KSize sizes[KMAX];
  int nsizes;
  KState states[KMAX];
  int nstates;
  KStmt stmts[KMAX * 4];
  int nstmts;
  KSum sums[KMAX];
  int nsums;
  bool uses_i;
  bool full;             // a table overflowed
  int cur_op;            // while walking
  const char *unit;      // indentation step
} Plan;

// The plan of k's ops: statements, liveness, tables, names; NULL after reporting why not.
Plan *plan_make(const IrRegion *r, const char *unit, Kernel *k);
void plan_free(Plan *p);
// `__device__ void NAME_elem(...)` (and the functions of the ops' texts it calls).
void emit_elem(Plan *p, Buf *b);
// The element function's arguments; lane is NULL in the scalar loop, "k" in the
// vector loop; tensor `subst` (if any) is read from the variable `subst_name`.
void elem_args_subst(Plan *p, Buf *b, const char *lane, const IrTensor *subst, const char *subst_name);
void elem_args(Plan *p, Buf *b, const char *lane);
int vector_width(const Plan *p);  // elements per vector step: 16 bytes of the widest [i] buffer; 0 when none

//
// codegen_text.c
//

// How the element function passes one parameter of an op's text.
typedef struct TextArg {
  const char *name;   // the element function's name for it
  bool element;       // a buffer passed as its element (a reference), not a pointer
  bool cast;          // a pointer the element function has const that the kernel declares not const
} TextArg;
// The op's text as `__device__ void NAME(...)`, with a comment naming the kernel;
// beside: the generated kernel goes beside the region's function, in its namespaces.
void text_function(Buf *b, const char *name, const IrOp *op, const TextArg *args, const char *unit, bool beside);
// The call of it, as a statement of the element function.
void text_call(Buf *b, const char *name, const IrOp *op, const TextArg *args, const char *unit, bool beside);

#endif
