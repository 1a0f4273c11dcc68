#!/usr/bin/env bash
# rows-check.sh "MPIRUN" PROGRAM: the translated tests/host/programs/rows_check.cu.
# "ok" must agree with its CPU reference on 1 to 4 ranks; each other mode is a
# launch the translation cannot run as written, which the generated run-time
# checks must stop (non-zero, never a hang) with the reason.
name=rows-check mpirun=$1 prog=$2
. "$(dirname "$0")/run-modes.sh"
for np in 1 2 3 4; do run "$np" ok 0 "rows_check: ok: $np ranks, 37 rows of 96: ok"; done
run 2 short-grid 1 "rows_check.cu:" "rmsnorm_warp failed: as written it reaches 36 of its 37 rows (grid 9 x 4 rows a block)"
run 2 padded 1 "rmsnorm_warp failed: its row stride stride is 104 but its rows have 96 elements"
run 2 no-scale 1 "scale failed: null: the kernel skips a null buffer"
finish
