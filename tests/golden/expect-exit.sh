#!/usr/bin/env bash
# expect-exit.sh CODE COMMAND...: run COMMAND; fail unless it exits with CODE.
want=$1; shift
"$@"
got=$?
if [ "$got" -ne "$want" ]; then
  echo "expect-exit: '$*' exited $got, expected $want" >&2
  exit 1
fi
