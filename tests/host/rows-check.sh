#!/usr/bin/env bash
# rows-check.sh "MPIRUN" PROGRAM: the translated tests/host/programs/rows_check.cu.
# "ok" must agree with its CPU reference on 1 to 4 ranks; each other mode is a
# launch the translation cannot run as written, which the generated run-time
# checks must stop (non-zero, never a hang) with the reason.
mpirun=$1 prog=$2
failed=0 passed=0
run() {  # run NP MODE STATUS(0|nonzero) MESSAGE...
  local np=$1 mode=$2 want=$3 out status ok=1
  shift 3
  out=$(timeout 120 $mpirun -np "$np" "$prog" "$mode" 2>&1)
  status=$?
  if [ "$want" = 0 ]; then [ $status -eq 0 ] || ok=0; else [ $status -ne 0 ] && [ $status -ne 124 ] || ok=0; fi
  for message in "$@"; do grep -qF -- "$message" <<<"$out" || ok=0; done
  if [ $ok = 1 ]; then
    passed=$((passed + 1))
  else
    echo "rows-check: '$mode' on $np rank(s) exited $status; expected $want and: $*" >&2
    echo "$out" | head -20 >&2
    failed=$((failed + 1))
  fi
}
for np in 1 2 3 4; do run "$np" ok 0 "rows_check: ok: $np ranks, 37 rows of 96: ok"; done
run 2 short-grid 1 "rows_check.cu:" "rmsnorm_warp failed: as written it reaches 36 of its 37 rows (grid 9 x 4 rows a block)"
run 2 padded 1 "rmsnorm_warp failed: its row stride stride is 104 but its rows have 96 elements"
run 2 no-scale 1 "scale failed: null: the kernel skips a null buffer"
echo "rows-check: $passed passed, $failed failed"
[ $failed = 0 ]
