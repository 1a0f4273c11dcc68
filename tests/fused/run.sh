#!/bin/sh
# Fused kernels on the host backend: tests/fused/sgd.cu translated (split
# reorder fuse and a one-shot fuse, symmetric buffers) must print what the
# program as written prints, bit for bit, at every rank count, in f32, f16 and
# bf16; with a buffer that is not symmetric, ranks that do not share memory, or
# a one-shot buffer over the size limit, the call site takes the fallback path
# (and says why under COCONET_DEBUG=INFO); ranks on different paths, or a
# buffer at another offset on one rank, end the job with a report; with the
# LSA barriers broken (a test-only fault) and the peers lagging, the results
# must differ, or the emulation could not expose a race.
# Usage: run.sh COCONET BUILD_DIR "MPIRUN" "RANKS" CXX CXXFLAGS... -- LDLIBS...
set -eu
coconet=$1 out=$2 mpirun=$3 ranks=$4 cxx=$5
shift 5
cxxflags=
while [ "$1" != -- ]; do cxxflags="$cxxflags $1"; shift; done
shift
ldlibs="$*"
src=tests/fused/sgd.cu
mpif=$(mpicxx --showme:compile)
mkdir -p "$out"
fail() { echo "tests/fused/run.sh: FAIL: $*" >&2; exit 1; }

build() {  # NAME SCHEDULE_FLAGS DEFINES (the program as written keeps its pragmas)
  "$coconet" --target=host $2 "$src" -o "$out/$1.cu" -- $mpif $3
  # shellcheck disable=SC2086
  $cxx $cxxflags -Wno-unknown-pragmas $3 "$out/$1.cu" -o "$out/$1" $ldlibs
}

run() {  # BINARY NP [ENV...]: rank lines, sorted
  bin=$1 np=$2
  shift 2
  env "$@" $mpirun -np "$np" "$bin" 2>"$out/stderr" | sort
}

for variant in f32: f16:-DELEM_HALF bf16:-DELEM_BF16; do
  name=${variant%%:*} defs=${variant#*:}
  build "written-$name" --schedule=none "$defs"
  build "fused-$name" "" "$defs"
  for np in $ranks; do
    run "$out/written-$name" "$np" > "$out/written.txt"
    run "$out/fused-$name" "$np" COCONET_DEBUG=INFO > "$out/fused.txt"
    [ "$(wc -l < "$out/fused.txt")" -eq "$np" ] || fail "$name np=$np: $(cat "$out/stderr")"
    cmp -s "$out/written.txt" "$out/fused.txt" || fail "$name np=$np: fused differs from as written:
$(cat "$out/written.txt")
---
$(cat "$out/fused.txt")"
    for region in sgd act; do
      grep -q "region $region: fused kernel on symmetric memory ($np ranks)" "$out/stderr" ||
        fail "$name np=$np: the fused kernel of $region did not run: $(cat "$out/stderr")"
    done
    echo "fused $name np=$np: equal to as written"
  done
done

# The fused row-wise kernel: examples/tp_norm (AllReduce -> residual + RMSNorm,
# split reorder fuse on symmetric buffers) prints what the program as written
# prints, bit for bit; 37 tokens leave rows over at most rank counts, and with 8
# ranks a block's rows are a few of many.
tp=examples/tp_norm/tp_norm.cu
tp_run() {  # BINARY NP [ENV...]: its checksum line (the timings differ run to run)
  bin=$1 np=$2
  shift 2
  env "$@" $mpirun -np "$np" "$bin" -tokens 37 -hidden 300 -layers 2 2>"$out/stderr" | grep "checksum=" || true
}
"$coconet" --target=host --schedule=none "$tp" -o "$out/tp-written.cu" -- $mpif
"$coconet" --target=host "$tp" -o "$out/tp-fused.cu" -- $mpif -DCOCONET_EXAMPLE_FUSE
# shellcheck disable=SC2086
$cxx $cxxflags -Wno-unknown-pragmas -DOMPI_SKIP_MPICXX=1 "$out/tp-written.cu" -o "$out/tp-written" $ldlibs
# shellcheck disable=SC2086
$cxx $cxxflags -Wno-unknown-pragmas -DOMPI_SKIP_MPICXX=1 -DCOCONET_EXAMPLE_FUSE "$out/tp-fused.cu" -o "$out/tp-fused" $ldlibs
for np in $ranks; do
  tp_run "$out/tp-written" "$np" > "$out/written.txt"
  tp_run "$out/tp-fused" "$np" COCONET_DEBUG=INFO > "$out/fused.txt"
  grep -q "checksum=" "$out/fused.txt" || fail "tp_norm np=$np: $(cat "$out/stderr")"
  cmp -s "$out/written.txt" "$out/fused.txt" || fail "tp_norm np=$np: fused differs from as written:
$(cat "$out/written.txt")
---
$(cat "$out/fused.txt")"
  grep -q "region tp_norm: fused kernel on symmetric memory ($np ranks)" "$out/stderr" ||
    fail "tp_norm np=$np: the fused row-wise kernel did not run: $(cat "$out/stderr")"
  echo "fused rows (tp_norm) np=$np: equal to as written"
done
# Its tail barrier broken and the peers lagging: the rows left over race.
tp_run "$out/tp-written" 3 > "$out/written.txt"
tp_run "$out/tp-fused" 3 COCONET_HOST_FAULT=lsa-barrier COCONET_HOST_LSA_DELAY_US=20000 > "$out/fused.txt"
grep -q "checksum=" "$out/fused.txt" || fail "tp_norm with faulty barriers did not finish: $(cat "$out/stderr")"
if cmp -s "$out/written.txt" "$out/fused.txt"; then
  fail "tp_norm with COCONET_HOST_FAULT=lsa-barrier still agrees: the emulation cannot expose the rows' races"
fi
echo "fault: broken LSA barriers in the fused row-wise kernel are exposed (results differ)"

# Ranks in LSA domains of one: the NCCL path, equal results.
run "$out/written-f32" 2 > "$out/written.txt"
run "$out/fused-f32" 2 COCONET_DEBUG=INFO COCONET_HOST_LSA_SIZE=1 > "$out/fused.txt"
cmp -s "$out/written.txt" "$out/fused.txt" || fail "NCCL path (LSA domains of 1) differs from as written"
grep -q "region sgd: NCCL path: the 2 ranks are not one LSA domain (1 share memory" "$out/stderr" ||
  fail "no fallback message for LSA domains: $(cat "$out/stderr")"
echo "fallback: ranks not in one LSA domain: NCCL path, equal to as written"

# A weight buffer that is not symmetric: the NCCL path.
build written-plain --schedule=none -DPLAIN_MALLOC
build fused-plain "" -DPLAIN_MALLOC
run "$out/written-plain" 3 > "$out/written.txt"
run "$out/fused-plain" 3 COCONET_DEBUG=INFO > "$out/fused.txt"
cmp -s "$out/written.txt" "$out/fused.txt" || fail "NCCL path (w not symmetric) differs from as written"
grep -q "region sgd: NCCL path: 'w' is not in symmetric memory" "$out/stderr" ||
  fail "no fallback message for a buffer not symmetric: $(cat "$out/stderr")"
echo "fallback: a buffer not symmetric: NCCL path, equal to as written"

# A one-shot buffer larger than COCONET_ONESHOT_MAX_BYTES: as written, equal results.
build fused-limit "" -DCOCONET_ONESHOT_MAX_BYTES=256
run "$out/written-f32" 3 > "$out/written.txt"
run "$out/fused-limit" 3 COCONET_DEBUG=INFO > "$out/fused.txt"
cmp -s "$out/written.txt" "$out/fused.txt" || fail "one-shot over its size limit differs from as written"
grep -q "region act: NCCL path: 'x' has 4012 bytes, more than the one-shot kernel takes (COCONET_ONESHOT_MAX_BYTES, 256)" \
  "$out/stderr" || fail "no fallback message for the one-shot size limit: $(cat "$out/stderr")"
grep -q "region sgd: fused kernel on symmetric memory (3 ranks)" "$out/stderr" ||
  fail "the split fused kernel did not run with the one-shot limit lowered: $(cat "$out/stderr")"
echo "fallback: a one-shot buffer over COCONET_ONESHOT_MAX_BYTES: as written, equal"

# Ranks that disagree: the host backend must end the job and say who does what.
build fused-rank0-plain "" -DRANK0_PLAIN
run "$out/fused-rank0-plain" 2 COCONET_HOST_TIMEOUT=20 > "$out/fused.txt"
[ -s "$out/fused.txt" ] && fail "rank 0 on the NCCL path and rank 1 on the fused kernel: the job did not fail"
grep -q "collective mismatch" "$out/stderr" && grep -q "rank 0: call 1: ncclReduceScatter" "$out/stderr" &&
  grep -q "rank 1: call 1: the fused kernel of region sgd" "$out/stderr" ||
  fail "no report of rank 0 on the NCCL path and rank 1 on the fused kernel: $(cat "$out/stderr")"
echo "mismatch: one rank on the NCCL path, the other on the fused kernel: reported"
build fused-rank-offset "" -DRANK_OFFSET
run "$out/fused-rank-offset" 2 COCONET_HOST_TIMEOUT=20 > "$out/fused.txt"
[ -s "$out/fused.txt" ] && fail "rank 1's weights at another offset: the job did not fail"
grep -q "rank 0: call 1: the fused kernel of region sgd, its buffers at offsets 0, 0 of their windows" "$out/stderr" &&
  grep -q "rank 1: call 1: the fused kernel of region sgd, its buffers at offsets 0, 256 of their windows" "$out/stderr" ||
  fail "no report of a buffer at another offset: $(cat "$out/stderr")"
echo "mismatch: a buffer at another offset of its window on one rank: reported"

# The barriers broken and the peers lagging: the race must show.
run "$out/written-f32" 2 > "$out/written.txt"
run "$out/fused-f32" 2 COCONET_HOST_FAULT=lsa-barrier COCONET_HOST_LSA_DELAY_US=20000 > "$out/fused.txt"
[ "$(wc -l < "$out/fused.txt")" -eq 2 ] || fail "the faulty run did not finish: $(cat "$out/stderr")"
if cmp -s "$out/written.txt" "$out/fused.txt"; then
  fail "with COCONET_HOST_FAULT=lsa-barrier the fused program still agrees: the emulation cannot expose races"
fi
echo "fault: broken LSA barriers are exposed (results differ)"
