#!/usr/bin/env bash
# summary.sh RESULTS: list failures and print the closing 'N passed, N failed' line.
# Exits 1 when any test failed or none ran.
results=$1
pass=$(grep -c '^PASS ' "$results")
fail=$(grep -c '^FAIL ' "$results")
if [ "$fail" -ne 0 ]; then echo "failed tests:"; grep '^FAIL ' "$results" | sed 's/^FAIL /  /'; fi
echo "tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
