#!/usr/bin/env bash
# record.sh NAME COMMAND...: run one test, print its output, and append
# "PASS NAME SECONDS" or "FAIL NAME SECONDS" to $COCONET_TEST_RESULTS (the seconds
# let the summary show where the CI time goes). NAME gets $COCONET_TEST_TAG in front
# (asan/ under SANITIZE=1). Exits with the command's status.
name=${COCONET_TEST_TAG:-}$1; shift
start=$SECONDS
"$@"
status=$?
took=$((SECONDS - start))
if [ -n "${COCONET_TEST_RESULTS:-}" ]; then
  if [ $status -eq 0 ]; then echo "PASS $name ${took}s" >>"$COCONET_TEST_RESULTS"
  else echo "FAIL $name ${took}s" >>"$COCONET_TEST_RESULTS"; fi
fi
if [ $status -ne 0 ]; then echo "FAILED: $name (exit $status)" >&2; fi
exit $status
