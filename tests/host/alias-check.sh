#!/usr/bin/env bash
# alias-check.sh "MPIRUN" PROGRAM: the translated tests/host/programs/alias_check.cu.
# Every mode (a bias apart from the reduced buffer, the caller passing that
# buffer as the bias, a local pointing at it) must agree with its CPU reference
# on 1 to 4 ranks: the aliased ones through the region as written, which the
# generated run-time test picks.
name=alias-check mpirun=$1 prog=$2
. "$(dirname "$0")/run-modes.sh"
for np in 1 2 3 4; do
  for mode in apart caller local; do run "$np" "$mode" 0 "alias_check: $mode: $np ranks: ok"; done
done
finish
