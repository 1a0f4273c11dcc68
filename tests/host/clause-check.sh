#!/usr/bin/env bash
# clause-check.sh "MPIRUN" PROGRAM: the translated tests/host/programs/clause_check.cu
# under COCONET_CHECK=clauses. Clauses that hold run equal to the CPU reference on
# 1 to 4 ranks; a false replicated(w) stops the program with the clause, the buffer
# and the rank; a read the shard or scratch clause forbids sees NaN. Without the
# switch the false clause goes unseen by coconet: only the program's own
# reference check finds that the result is wrong.
name=clause-check mpirun=$1 prog=$2
. "$(dirname "$0")/run-modes.sh"
export COCONET_CHECK=clauses
for np in 1 2 3 4; do run "$np" ok 0 "clause_check: ok: $np ranks: ok"; done
run 2 differ 1 "COCONET_CHECK=clauses: region 'sgd': replicated(w) does not hold: rank" "of 2 holds other bytes"
run 3 read-scratch 0 "clause_check: read-scratch: rank 2 reads g[0] after the region: NaN (poisoned)"
run 3 read-shard 0 "clause_check: read-shard: rank 2 reads mom[0] after the region: NaN (poisoned)"
unset COCONET_CHECK
run 2 differ 1 "values differ from the reference"
run 3 read-scratch 0 "clause_check: read-scratch: rank 2 reads g[0] after the region: a number"
finish
