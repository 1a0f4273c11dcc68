// driver.h: the driver's own (main.c runs the stages in order): --verify.
#ifndef COCONET_DRIVER_H
#define COCONET_DRIVER_H

#include "front/front.h"
#include "ir/ir.h"

//
// verify_exec.c: --verify[=N]
//

// Build and run, for each region, a harness program (the file translated for
// the host backend plus the region as written and as scheduled, on random
// inputs) under mpirun for 1..o->verify_exec ranks and report like --verify=ir.
// host_text is the whole file translated with --target=host, scheduled[i] the
// generated block of region i (host target). Returns 0, or 1 on a mismatch or
// when a region cannot be run (reported).
int verify_exec(const Options *o, const Frontend *fe, const Program *prog, const IrProgram *ir, const char *host_text,
                const char *const *scheduled);

#endif
