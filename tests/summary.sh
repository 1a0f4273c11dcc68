#!/usr/bin/env bash
# summary.sh [--started EPOCH] [--budget SECONDS] RESULTS...: list failures, the
# slowest tests, the total wall time since EPOCH (a warning when it passes the
# budget: CI's own is 30 minutes on 2 cores), and print the closing
# 'N passed, N failed' line. Each RESULTS file holds record.sh's lines; a missing
# one counts nothing. Exits 1 when any test failed or none ran.
started= budget=
while [ $# -gt 0 ]; do
  case $1 in
    --started) started=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    *) break ;;
  esac
done
lines=$(cat "$@" 2>/dev/null)
pass=$(grep -c '^PASS ' <<<"$lines")
fail=$(grep -c '^FAIL ' <<<"$lines")
if [ "$fail" -ne 0 ]; then echo "failed tests:"; grep '^FAIL ' <<<"$lines" | sed 's/^FAIL /  /'; fi
echo "slowest tests:"
sed 's/s$//' <<<"$lines" | sort -k3 -t' ' -rn | head -8 | awk 'NF == 3 { printf "  %-28s %5ss\n", $2, $3 }'
if [ -n "$started" ]; then
  took=$(($(date +%s) - started))
  printf 'wall time: %dm%02ds\n' $((took / 60)) $((took % 60))
  if [ -n "$budget" ] && [ "$took" -gt "$budget" ]; then
    echo "warning: the run took ${took}s, over its budget of ${budget}s: move a long test to make soak" \
      "or make it cheaper (docs/design.md, Tests)"
  fi
fi
echo "tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
