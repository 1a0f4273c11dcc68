#!/usr/bin/env bash
# mpirun-each.sh "MPIRUN" "N1 N2 ..." PROGRAM [ARGS...]: runs PROGRAM with each
# number of ranks in turn; fails as soon as one run fails.
mpirun=$1 counts=$2
shift 2
for n in $counts; do
  echo "== $n rank(s): $*"
  $mpirun -np "$n" "$@" || { echo "FAILED with $n rank(s): $*" >&2; exit 1; }
done
