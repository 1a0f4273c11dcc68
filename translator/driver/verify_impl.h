// verify_impl.h: what verify_exec.c and verify_harness.c share.
//   verify_exec.c     --verify: the harness program built with coconet-cc
//                     --target=host, run under mpirun for 1..N ranks, its report
//                     read back and summed up
//   verify_harness.c  one region's harness function (verify_harness.h maps it;
//                     verify_inputs.c: its inputs)
//   verify_globals.c  the file's variables, set back between a region's two runs
//   verify_members.c  the objects of the user's structs: pointers read only through `->`, and
//                     the members that hold the rank count or the rank
//   verify_cache.c    COCONET_VERIFY_CACHE: a test run's memo of harness builds and runs
#ifndef COCONET_VERIFY_IMPL_H
#define COCONET_VERIFY_IMPL_H

#include <stdio.h>

#include "codegen/codegen.h"
#include "driver/driver.h"

// Random inputs each region runs on.
enum { TRIALS = 3 };

typedef struct Verified {   // one region of the harness
  const IrRegion *r;
  int index;                // its number in the harness (-1: not in it)
  long ulp;                 // the bound
  bool reassociated;        // its schedule sums in another order: floats also pass within a normwise bound
  char first[1024];         // its first mismatch, or why the harness did not finish it
  bool failed;
  bool stopped;             // the harness stopped before the region finished: not a mismatch
} Verified;

// Write region v->index's harness function: the region as written (the file's
// text with the lowering edits) and as scheduled (NULL: as written). -1
// (reported) when the region cannot be run.
int harness_write_region(FILE *f, const Frontend *fe, const Region *fr, const IrRegion *r, const Edit *lowered,
                         const char *scheduled, const Verified *v);

// verify_globals.c: the file's own variables (namespace scope, defined in it,
// not const, not __shared__; numbers, enums, arrays and classes of them without
// pointers): coconet_verify_globals_save/_restore/_compare, which each region's
// harness calls so that state a region changes (`g_step++`) is the same before
// its run as written and its run as scheduled, and is compared after them.
void harness_write_globals(FILE *f, const Frontend *fe);

// verify_members.c: the assignments (malloc'd lines; NULL for a library's
// type) that give the harness's object of the user's struct `record` (`object`,
// a pointer to it or the object itself) the rank count and this rank in the
// members the program sets from MPI_Comm_size/ncclCommCount and
// MPI_Comm_rank/ncclCommUserRank.
char *harness_members(const Frontend *fe, CXType record, const char *object, bool pointer);
// Is the pointer variable target read in root only through `->`, or passed to
// functions of the user's that read their parameter only so (4 calls deep)?
bool harness_object_only(CXCursor root, CXCursor target);

// COCONET_VERIFY_CACHE=DIR: the commands that build and run the harness file
// HARNESS are answered from DIR when another process ran them (waiting while it
// runs), else run and recorded. COMMANDS: their text, less temporary paths.
// NULL where the variable is not set or DIR cannot be used: vcache_run runs.
typedef struct VerifyCache VerifyCache;
VerifyCache *vcache_open(const char *harness, const char *commands);
int vcache_run(VerifyCache *c, const char *cmd, char **out, int (*run)(const char *cmd, char **out));
void vcache_close(VerifyCache *c);

#endif
