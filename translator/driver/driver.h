// driver.h: the driver's own (main.c runs the stages in order): --verify, regions read per instance.
#ifndef COCONET_DRIVER_H
#define COCONET_DRIVER_H

#include "codegen/codegen.h"
#include "front/front.h"
#include "ir/ir.h"

//
// verify_exec.c: --verify[=N]
//

// One region to verify: read in parse fe (the main one, or its instance's), its
// IR, and its generated block (host target).
typedef struct VerifyItem {
  const Frontend *fe;
  const Region *fr;
  const IrRegion *r;
  const char *scheduled;
} VerifyItem;

// Build and run, for the regions, a harness program (the file translated for
// the host backend plus each region as written and as scheduled, on random
// inputs) under mpirun for 1..o->verify_exec ranks and report like --verify=ir.
// host_text is the whole file translated with --target=host, fe its main
// parse. Returns 0, or 1 on a mismatch or when a region cannot be run (reported).
int verify_exec(const Options *o, const Frontend *fe, const VerifyItem *items, int n, const char *host_text);

//
// instances.c: regions read per instance of their template
//

// An instance's region as the translation made it.
typedef struct InstanceRun {
  const Region *of;    // the region in the template
  const char *label;   // the instance ("T = half")
  const Frontend *fe;  // the instance's parse
  const Region *fr;    // the region read there
  IrProgram *ir;       // its IR (its only region)
  char *body;          // its generated block, or NULL
} InstanceRun;
typedef struct InstanceRuns {
  InstanceRun *v;      // room for every instance of the program's regions
  int n;
} InstanceRuns;

// prog without the regions read per instance, or that could not be (their structs copied, what they
// point to shared).
Program instances_work(const Program *prog);
void instances_work_free(Program *work);
// The code of region r (r->ninstances > 0): each instance extracted, scheduled
// and generated (appended to runs), the statement an `if constexpr` choosing
// among their blocks; -1 after reporting an instance's errors.
int instances_code(const Options *o, const Frontend *fe, const Region *r, const IrCostModel *model, RegionCode *code,
                   InstanceRuns *runs);
void instances_runs_free(InstanceRuns *runs);

#endif
