#!/usr/bin/env bash
# summary.sh RESULTS: list failures, the slowest tests, and print the closing
# 'N passed, N failed' line. Exits 1 when any test failed or none ran.
results=$1
pass=$(grep -c '^PASS ' "$results")
fail=$(grep -c '^FAIL ' "$results")
if [ "$fail" -ne 0 ]; then echo "failed tests:"; grep '^FAIL ' "$results" | sed 's/^FAIL /  /'; fi
echo "slowest tests:"
sort -k3 -t' ' -rn <(sed 's/s$//' "$results") | head -8 | awk '{ printf "  %-28s %5ss\n", $2, $3 }'
echo "tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
