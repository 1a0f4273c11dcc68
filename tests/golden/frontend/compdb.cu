// Include paths and macros come from compile_commands.json with -p; nvcc's own
// flags in it are dropped. A depfile lists the input and its headers.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: sed -e "s|@DIR@|%inputs/compdb|g" -e "s|@FILE@|%s|g" %inputs/compdb/compile_commands.json.in > %t.dir/compile_commands.json
// RUN: %coconet --check -p %t.dir %s | %FileCheck %s
// RUN: %expect 1 %coconet --check %s 2>&1 | %FileCheck --check-prefix=NODB %s
// RUN: %coconet --check %s -- -I%inputs/compdb -DREGION_SIZE=8 | %FileCheck %s
// Flags after -- come last and win over the database's; relative paths in the
// database are taken from its "directory", wherever coconet runs.
// RUN: %expect 1 %coconet --check -p %t.dir %s -- -UREGION_SIZE 2>&1 | %FileCheck --check-prefix=OVERRIDE %s
// RUN: cd / && %coconet --check -p %t.dir %s | %FileCheck %s
// A file without an entry gets the flags of the most similar one (as clang tools do).
// RUN: sed -e "s|@DIR@|%inputs/compdb|g" -e "s|@FILE@|%s.other.cu|g" %inputs/compdb/compile_commands.json.in > %t.dir/compile_commands.json
// RUN: %coconet --check -p %t.dir %s | %FileCheck %s
// CMake's form for CUDA: the include paths in an --options-file (relative to
// "directory"), written nvcc's way, -isystem="DIR":
// RUN: sed -e "s|@DIR@|%inputs/compdb|g" -e "s|@FILE@|%s|g" %inputs/compdb/compile_commands.rsp.json.in > %t.dir/compile_commands.json
// RUN: %coconet --check -p %t.dir %s | %FileCheck %s
// RUN: %coconet --schedule=none -p %t.dir %s -o %t.out -MD -MF %t.d
// RUN: cmp %s %t.out
// RUN: %FileCheck --check-prefix=DEP %s < %t.d
#include <nccl.h>
#include "compdb_helper.h"

void f(float *g, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(from_db)
  {
    ncclAllReduce(g, g, REGION_SIZE, ncclFloat, ncclSum, comm, s);
    helper_scale(g);
  }
}

// CHECK: region from_db ({{.*}}compdb.cu:{{[0-9]+}}) in f: nccl:ncclAllReduce opaque
// NODB: compdb.cu:[[@LINE-11]]:10: fatal error: 'compdb_helper.h' file not found
// OVERRIDE: error: use of undeclared identifier 'REGION_SIZE'
// DEP: {{.*}}.out: {{.*}}compdb.cu \
// DEP-DAG: compdb_helper.h
// DEP-DAG: nccl.h
