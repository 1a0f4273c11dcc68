#!/usr/bin/env bash
# pipeline-check.sh "MPIRUN" PROGRAM: the translated tests/host/programs/pipeline_check.cu.
# "ok" must agree with its CPU reference with stages of 1 to 3 ranks; in the
# other modes the two ends of an exchange do not match, which the receiver
# must stop (non-zero, never a hang) with the reason.
name=pipeline-check mpirun=$1 prog=$2
. "$(dirname "$0")/run-modes.sh"
for t in 1 2 3; do run $((2 * t)) ok 0 "pipeline_check: ok: 2 stages of $t ranks, 1001 elements and 37 rows of 96: ok"; done
run 4 wrong-tag 1 "pipeline_check.cu:87: device 0: ncclRecv failed: pipeline(tag=other): the sending region (tag=act, its ncclSend at line 73) has another tag"
run 4 short 1 "pipeline_check.cu:80: device 0: ncclRecv failed: pipeline(tag=act): the sending region (tag=act, its ncclSend at line 73) has count 1001, this one 1000"
finish
