# run-modes.sh: sourced by the scripts that run a translated program in its
# modes (rows-check.sh, pipeline-check.sh); they set $name, $mpirun, $prog.
# run NP MODE STATUS(0|nonzero) MESSAGE...: run the program on NP ranks in
# MODE; it must exit with STATUS (nonzero: stopped, never a hang) and print
# every MESSAGE. finish: the summary, and the exit status.
failed=0 passed=0
run() {
  local np=$1 mode=$2 want=$3 out status ok=1
  shift 3
  out=$(timeout 120 $mpirun -np "$np" "$prog" "$mode" 2>&1)
  status=$?
  if [ "$want" = 0 ]; then [ $status -eq 0 ] || ok=0; else [ $status -ne 0 ] && [ $status -ne 124 ] || ok=0; fi
  for message in "$@"; do grep -qF -- "$message" <<<"$out" || ok=0; done
  if [ $ok = 1 ]; then
    passed=$((passed + 1))
  else
    echo "$name: '$mode' on $np rank(s) exited $status; expected $want and: $*" >&2
    echo "$out" | head -20 >&2
    failed=$((failed + 1))
  fi
}
finish() {
  echo "$name: $passed passed, $failed failed"
  [ $failed = 0 ]
}
