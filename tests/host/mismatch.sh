#!/usr/bin/env bash
# mismatch.sh "MPIRUN" PROGRAM: runs each case of tests/host/mismatch.cu on 2
# ranks; a mistake must end the job non-zero (never hang: each run has a time
# limit) and print the report with both ranks' calls, within the rank timeout
# (COCONET_HOST_TIMEOUT) plus 10 seconds.
mpirun=$1 prog=$2
failed=0 passed=0
run() {  # run CASE STATUS(0|nonzero) MESSAGE...
  local what=$1 want=$2 out status limit=${TIMEOUT:-20}
  shift 2
  local start=$SECONDS
  out=$(COCONET_HOST_TIMEOUT=$limit timeout 120 $mpirun -np 2 "$prog" "$what" 2>&1)
  status=$?
  local took=$((SECONDS - start)) ok=1
  if [ $took -gt $((limit + 10)) ]; then
    echo "mismatch: '$what' took $took s, more than COCONET_HOST_TIMEOUT=$limit s + 10 s" >&2
    ok=0
  fi
  if [ "$want" = 0 ]; then [ $status -eq 0 ] || ok=0; else [ $status -ne 0 ] && [ $status -ne 124 ] || ok=0; fi
  for message in "$@"; do grep -qF -- "$message" <<<"$out" || ok=0; done
  if [ $ok = 1 ]; then
    passed=$((passed + 1))
  else
    echo "mismatch: '$what' exited $status; expected $want and: $*" >&2
    echo "$out" | head -30 >&2
    failed=$((failed + 1))
  fi
}
src=mismatch.cu
run kind 1 "error: collective mismatch" "rank 0: call 2: ncclAllReduce count 1000 float32 sum at" \
  "rank 1: call 2: ncclReduceScatter count 500 float32 sum at" "$src:"
run allgather 1 "rank 1: call 2: ncclAllGather count 1000 float32 at"
run count 1 "rank 0: call 2: ncclAllReduce count 1000 float32 sum" "rank 1: call 2: ncclAllReduce count 500 float32 sum"
run dtype 1 "rank 1: call 2: ncclAllReduce count 1000 int32 sum"
run op 1 "rank 1: call 2: ncclAllReduce count 1000 float32 max"
run root 1 "rank 0: call 2: ncclBroadcast count 1000 float32 root 0" "rank 1: call 2: ncclBroadcast count 1000 float32 root 1"
run group 1 "rank 0: call 2: ncclAllReduce count 1000 float32 sum at" "; call 3: ncclAllGather"
run skip 1 "rank 0: call 2: ncclAllReduce count 1000 float32 sum" "rank 1: ncclCommDestroy after 1 collectives at"
TIMEOUT=3 run late 1 "error: timeout: waited 3 s for the other ranks of communicator" "in call 2: ncclAllReduce count 1000" \
  "; rank 1 has not arrived"
run unmatched-send 1 "error: unmatched send: rank 0's ncclSend count 1000 float32 to rank 1 at " "$src:" \
  "was not received: rank 1 destroyed the communicator without its ncclRecv"
run p2p-count 1 "error: send/recv mismatch: on communicator" \
  "rank 1's ncclRecv count 500 float32 from rank 0 at " "$src:" \
  "rank 0's ncclSend count 1000 float32 to rank 1 at " "does not match"
run p2p-dtype 1 "rank 1's ncclRecv count 1000 int32 from rank 0 at" "rank 0's ncclSend count 1000 float32 to rank 1 at"
TIMEOUT=3 run p2p-peer 1 "error: timeout: waited 3 s for the matching ncclSend of ncclRecv count 1000 float32 from rank 1 at " \
  "$src:"
run p2p-same 0
COCONET_HOST_ON_ERROR=continue run p2p-continue 0 "error: send/recv mismatch" \
  "rank 1: continued after the send/recv mismatch" "rank 0: continued after the send/recv mismatch"
COCONET_HOST_ON_ERROR=continue run continue 0 "error: collective mismatch" "rank 0: continued after ncclInvalidUsage" \
  "rank 1: continued after ncclInvalidUsage"
run group3 1 "rank 0: call 2: ncclAllReduce count 1000 float32 sum at" "; call 4: ncclAllReduce count 10 float32 sum" \
  "; call 4: ncclAllReduce count 20 float32 sum"
run long-group 1 "rank 0: call 2: ncclAllReduce count 10 float32 sum at" "; call 21: ncclAllReduce count 10" \
  "rank 1: call 2: ncclAllReduce count 1000 float32 sum at"
run group3-same 0
run same 0
COCONET_DEBUG=INFO COCONET_DEBUG_SUBSYS=COLL run same 0 \
  "ncclCommDestroy: comm" "rank 1/2 ran 2 operations: AllReduce 1 (4000 bytes in), ReduceScatter 1 (4000 bytes in)"
echo "host mismatch tests: $passed passed, $failed failed"
[ $failed -eq 0 ]
