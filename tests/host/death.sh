#!/usr/bin/env bash
# death.sh PROGRAM: runs each failure case of tests/host/death.cu (as a
# single process; MPI starts as a singleton where a case needs it); each must
# exit non-zero and print the expected message.
prog=$1
failed=0 passed=0
expect() {
  local what=$1 message=$2 out status
  out=$("$prog" "$what" 2>&1)
  status=$?
  if [ $status -ne 0 ] && grep -qF -- "$message" <<<"$out"; then
    passed=$((passed + 1))
  else
    echo "death: '$what' exited $status; expected a failure saying: $message" >&2
    echo "$out" | head -20 >&2
    failed=$((failed + 1))
  fi
}
expect simple-barrier "must be launched with COCONET_HOST_SYNC"
expect deadlock "error: deadlock: in kernel deadlock_kernel"
expect absent-lane "reads lane 16, which does not exist"
expect mixed-ops "lane 1 is at __ballot_sync but lane 0 is at __shfl_sync"
expect trap "error: __trap(): in kernel trap_kernel"
expect grid-sync "needs a cooperative launch"
expect cub-block "cub::BlockReduce for blocks of 128 x 1 x 1 threads in a block of 64 x 1 x 1"
expect attribute "attribute 21 is not emulated"
expect init-all "the host backend runs one MPI rank per GPU"
expect rank-mismatch "maps NCCL ranks to MPI_COMM_WORLD ranks"
expect window "is not inside an ncclMemAlloc allocation"
expect peer-ptr "is not inside a window registered on comm"
expect rows-reached "layernorm_warp failed: as written it reaches 96 of its 100 rows (grid 24 x 4 rows a block)"
expect rows-warps "layernorm_warp failed: blocks of 48 threads are not whole warps, so two blocks share a row"
expect row-stride "rmsnorm failed: its row stride in_stride is 4096 but its rows have 2048 elements"
expect null-buffer "mean failed: null: the kernel skips a null buffer"
# Out-of-bounds device memory: COCONET_HOST_MEMCHECK=1's reports, or under
# AddressSanitizer (make SANITIZE=1) ASan's, which sees device buffers as they
# were asked for (exact sizes).
if [ "$("$prog" build)" = asan ]; then
  for what in memcheck-write-far memcheck-write-near memcheck-read memcheck-free; do
    expect $what "ERROR: AddressSanitizer: heap-buffer-overflow"
  done
else
  expect memcheck-write-far "error: memcheck: kernel overflow_kernel launched at tests/host/death.cu:"
  expect memcheck-write-far "accessed byte 4096 of device allocation #2 (4000 bytes at"
  expect memcheck-write-far "allocated at tests/host/death.cu:"
  expect memcheck-write-near "wrote byte 4000 of device allocation #2 (4000 bytes at"
  expect memcheck-read "error: memcheck: kernel overread_kernel launched at tests/host/death.cu:"
  expect memcheck-read "accessed byte 5200 of device allocation #2"
  expect memcheck-free "error: memcheck: a kernel or copy before this cudaFree wrote byte 4000 of device allocation #2"
fi
echo "host death tests: $passed passed, $failed failed"
[ $failed -eq 0 ]
