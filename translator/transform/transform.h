// transform.h: the schedule: each clause of a region applied to a copy of its
// ops (one file per transformation; transform_impl.h maps them).
#ifndef COCONET_TRANSFORM_H
#define COCONET_TRANSFORM_H

#include "ir/ir.h"

//
// schedule.c: the schedule clauses (one function each, in the file named for it)
//

typedef struct IrSchedOptions {
  const IrCostModel *model;  // for schedule(auto) and --explain (NULL: defaults)
  bool quiet;                // do not report errors (schedule(auto) probing)
} IrSchedOptions;

// Apply the region's clauses in the order written (information clauses shard,
// scratch and replicated take effect first) to a copy of region->ops, leaving the
// result in region->sched. Runs ir_infer first. On error (reported through
// diag) region->sched is left NULL and -1 is returned. opt may be NULL.
int ir_schedule(IrRegion *r, const IrSchedOptions *opt);
// Each transformation applied, the precondition it checked, and the cost model's
// prediction for the region as written vs scheduled.
void ir_explain(FILE *f, const IrRegion *r, const IrCostModel *model);

#endif
