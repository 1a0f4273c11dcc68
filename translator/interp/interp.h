// interp.h: the reference interpreter, N simulated ranks in one process, and
// --verify=ir (interp*.c; interp_impl.h is their own map).
#ifndef COCONET_INTERP_H
#define COCONET_INTERP_H

#include <stdint.h>

#include "ir/ir.h"

//
// interp.c: the reference interpreter (N simulated ranks in one process)
//

// A pinned variable value (tests); all others are drawn from the seed.
typedef struct IrBinding {
  const char *text;
  double value;
} IrBinding;

typedef struct IrInterpConfig {
  int nranks;
  uint64_t seed;             // same seed = same variables and same initial data
  const IrBinding *bind;     // pinned variables
  int nbind;
  long max_elems;            // sizes are drawn so no tensor exceeds this (0: 4000)
} IrInterpConfig;

// One element value: double for float types (exact for f16/bf16/f32/f64), int64 for ints.
typedef union IrVal {
  double f;
  int64_t i;
} IrVal;

typedef struct IrRunTensor {
  const IrTensor *t;
  long count;
  IrVal **init;              // [rank][element] contents at region entry
  IrVal **data;              // [rank][element] contents at region exit
  bool **written;            // [rank][element] written by slice work (shard comparison)
  bool *any_written;         // [element] written by some op on some rank
} IrRunTensor;

// What one ncclSend sent: data[r] is what rank r's peer receives (for a
// pipeline send, the slices of the group's ranks and the tail, reassembled).
typedef struct IrRunMessage {
  const IrOp *op;
  long count;
  IrVal **data;              // [rank][element]
} IrRunMessage;

typedef struct IrRun {
  int nranks;
  int ntensors;
  IrRunTensor *tensors;      // indexed by tensor id - 1
  int nvars;
  double *vars;              // indexed by var id (vars[0] unused)
  uint64_t seed;             // the configuration's (what a ncclRecv receives is drawn from it)
  IrRunMessage *sent;        // the region's ncclSends, in order
  int nsent;
  int nrecv;                 // ncclRecvs run so far
} IrRun;

// Run region->ops (scheduled = false) or region->sched for cfg->nranks ranks.
// Returns NULL after reporting an error (an op it cannot run, an out-of-bounds access).
IrRun *ir_interp_run(const IrRegion *r, bool scheduled, const IrInterpConfig *cfg);
void ir_run_free(IrRun *run);
double ir_run_get(const IrRun *run, const IrTensor *t, int rank, long idx);  // exit value
double ir_run_init(const IrRun *run, const IrTensor *t, int rank, long idx); // entry value
// Philox4x32-10 (Random123 / curand): one block of 4 outputs.
void ir_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
// curand_init(seed, subsequence, offset, &s) followed by draw+1 curand_uniform(&s): the last.
float ir_curand_uniform(uint64_t seed, uint64_t subsequence, uint64_t offset, uint64_t draw);

// Compare original and scheduled for 1..max_ranks ranks on `trials` random
// inputs each (a schedule that leaves the region as written is reported ok
// without running it); print the max relative error per output to report (may be NULL).
// Returns 0 when all agree within tolerance (exact for integers; relative 1e-5
// for f32, 1e-12 for f64, 1e-3 for f16, 8e-3 for bf16: see interp_verify.c),
// 1 on mismatch (the first one is described in report), -1 when it cannot run.
int ir_verify(const IrRegion *r, int max_ranks, int trials, FILE *report);
// Max relative error between two runs over the tensors that must agree (live,
// shard slices, not scratch); *bad gets the first tensor beyond tolerance or NULL.
double ir_run_compare(const IrRegion *r, const IrRun *a, const IrRun *b, const IrTensor **bad);

#endif
