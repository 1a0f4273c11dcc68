#!/usr/bin/env bash
# record.sh NAME COMMAND...: run one test, print its output, and append
# "PASS NAME" or "FAIL NAME" to $COCONET_TEST_RESULTS. Exits with the command's status.
name=$1; shift
"$@"
status=$?
if [ -n "${COCONET_TEST_RESULTS:-}" ]; then
  if [ $status -eq 0 ]; then echo "PASS $name" >>"$COCONET_TEST_RESULTS"
  else echo "FAIL $name" >>"$COCONET_TEST_RESULTS"; fi
fi
if [ $status -ne 0 ]; then echo "FAILED: $name (exit $status)" >&2; fi
exit $status
