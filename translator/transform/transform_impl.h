// transform_impl.h: what the files of transform/ share (not used outside
// them). The transformations rewrite a working copy of the region's op list;
// each clause is one function, in the file named for it, that checks its
// preconditions, reports a failure through tf_fail (silent while
// schedule(auto) probes candidates) and returns -1, or rewrites the list and
// returns 0.
//
//   schedule.c   ir_schedule: error checks after the kernels that follow them,
//                then the clauses in the order written; the helpers below;
//                shard/scratch/replicated; the final pass; --explain
//   legal.c      what every schedule needs first
//   split.c      split          reorder.c    reorder (and the chain it moves)
//   fuse.c       fuse           overlap.c    overlap(chunks=K)
//   auto.c       schedule(auto) pipeline.c   pipeline, run from the final pass
#ifndef COCONET_TRANSFORM_IMPL_H
#define COCONET_TRANSFORM_IMPL_H

#include "transform/transform.h"

typedef struct TfCtx {
  IrRegion *r;
  IrOp *list;                // the working op list (clones of region->ops, then rewritten)
  bool quiet;                // probing: report nothing
  const IrCostModel *model;  // schedule(auto)
  bool split, reorder;       // which clauses have run
  int nfuse;                 // fused groups so far
  int chunks;                // overlap chunks (0 = none)
  IrStep *steps;             // explanation, in order
} TfCtx;

// Report an error (unless quiet) and return -1.
int tf_fail(TfCtx *c, const SrcLoc *loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void tf_note(TfCtx *c, const SrcLoc *loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void tf_step(TfCtx *c, IrClauseKind clause, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

const IrUse *tf_read(const IrOp *op, const IrTensor *t);
bool tf_writes(const IrOp *op, const IrTensor *t);
IrOp *tf_clone(TfCtx *c, const IrOp *op);  // a copy with its own use lists, next = NULL
IrOp *tf_clone_list(TfCtx *c, const IrOp *list);
// A generated collective modelled on `like` (comm, stream, wrapper, count, reduction).
IrOp *tf_collective(TfCtx *c, const IrOp *like, IrCollKind kind, IrTensor *in, IrTensor *out,
                    IrPart part);
bool tf_same_chunk(const IrOp *a, const IrOp *b);
bool tf_same_text(const char *a, const char *b);  // equal but for blanks

// The pointwise kernels that directly follow `after` and consume x (or what an
// earlier one of them writes): at most max, stored in chain; their count.
int tf_chain(const IrOp *after, const IrTensor *x, IrOp **chain, int max);
// Can kernel p run on a part of the elements of coll's output x? It must run
// on coll's stream over coll's count, and may read x and everything the chain
// writes only at [i]. Reports as "CLAUSE: ..." when report is set.
int tf_check_slice(TfCtx *c, const char *clause, const IrOp *p, const IrOp *coll, IrOp **chain, int n,
                   bool report);

// Region-wide preconditions of every schedule (legal.c): no kernel
// inside an NCCL group, one stream unless events order the streams.
int tf_legal(TfCtx *c);

int tf_split(TfCtx *c, const IrClause *cl);
int tf_reorder(TfCtx *c, const IrClause *cl);
int tf_fuse(TfCtx *c, const IrClause *cl);
int tf_overlap(TfCtx *c, const IrClause *cl);
int tf_auto(TfCtx *c, const IrClause *cl);
// pipeline sends and receives slices (pipeline.c); it runs from
// tf_finish, after every other clause.
int tf_pipeline(TfCtx *c, const IrClause *cl);
// Apply one schedule clause (information clauses do nothing here).
int tf_apply(TfCtx *c, const IrClause *cl);
// pipeline, dead AllGather elimination and the shard/scratch checks, at the end.
int tf_finish(TfCtx *c);

enum { TF_MAX_CHAIN = 64 };

#endif
