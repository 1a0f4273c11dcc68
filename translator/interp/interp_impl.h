// interp_impl.h: what interp*.c share (not used outside them).
#ifndef COCONET_INTERP_IMPL_H
#define COCONET_INTERP_IMPL_H

#include "interp/interp.h"

enum { INTERP_MAX_LETS = 64 };

typedef struct Interp {
  const IrRegion *r;
  IrRun *run;
  int nranks;
  bool failed;                              // an error was reported; stop
  int rank;                                 // pointwise: the rank being run
  long i;                                   // pointwise: the element index
  const IrOp *op;                           // the op being run (messages)
  const IrStmt *lets[INTERP_MAX_LETS];      // pointwise: let statements seen for this element
  IrVal let_vals[INTERP_MAX_LETS];
  int nlets;
} Interp;

// Typed arithmetic (interp_eval.c): values are IrVal read as the given type.
IrVal interp_convert(IrVal v, IrType from, IrType to);
IrVal interp_arith(int op, IrType t, IrVal a, IrVal b);  // IrBinaryOp, operands of type t
double interp_to_double(IrVal v, IrType t);
IrVal interp_from_double(double d, IrType t);
IrVal interp_eval(Interp *in, const IrExpr *e);
// Shared by interp.c and interp_coll.c.
IrRunTensor *interp_tensor(Interp *in, const IrTensor *t);
// Store v into t[j] on rank (bounds-checked; marks written elements).
void interp_store(Interp *in, const IrTensor *t, int rank, long j, IrVal v);
bool interp_in_bounds(Interp *in, const IrTensor *t, long lo, long hi);
long interp_size(Interp *in, const IrSize *s);
// The element range of op's span over count elements on rank.
void interp_span(Interp *in, const IrOp *op, const IrSize *count, int rank, long *lo, long *hi);
// What the k-th ncclRecv of a run receives at element j: drawn from the seed,
// the same on every rank (a pipeline sender's group holds the buffer identically).
IrVal interp_received(const Interp *in, const IrTensor *t, int k, long j);
// A new entry of in->run->sent for op, count elements per rank (zeroed).
IrRunMessage *interp_message(Interp *in, const IrOp *op, long count);
void interp_collective(Interp *in, const IrOp *op);  // interp_coll.c
void interp_gemm(Interp *in, const IrOp *op);        // interp_coll.c

// Report an interpreter error once (sets in->failed).
void interp_fail(Interp *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
