#!/usr/bin/env bash
# run.sh BIN OUTDIR: the end-to-end gate. Each example is built twice for the
# host backend with coconet-cc --target=host: as written (--schedule=none) and
# with the schedule its pragma asks for. Both run under mpirun -np 1..4 on
# sizes that do not divide by the rank counts; their checksums must agree
# (exactly where the schedule keeps every operation's order; within the
# dtype's tolerance where chunked GEMMs or sums in another order may round
# differently).
# Then --verify=4 runs each example's region code itself, as written and
# as scheduled, and compares every buffer it leaves (a region that sends to
# another pipeline stage it must refuse, with the reason: its peer is not run).
# MPIRUN and RUN_ENV (the programs') come from the environment, and coconet runs in
# it as make's TRANSLATOR_RUN_ENV leaves it (runtime/host/host.mk);
# E2E_RANKS (say "2") keeps only those rank counts of each example's list, and
# E2E_VERIFY_RANKS (default 4) is --verify's: the sanitizer run's sample.
set -u
bin=$1
out=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
read -r -a mpi <<<"$(mpicxx --showme:compile)"
read -r -a mpirun <<<"${MPIRUN:-mpirun --oversubscribe --allow-run-as-root}"
read -r -a runenv <<<"${RUN_ENV:-env}"
pass=0 fail=0

# name source tolerance rank-counts args...
examples=(
  "adam examples/adam/adam.cu 0 1,2,3,4 -n 100003 -steps 3"
  "row_linear examples/megatron/row_linear.cu 1e-3 1,2,3,4 -tokens 37 -hidden 1000 -k 64 -iters 2"
  "adamw examples/adamw/adamw.cu 0 1,2,3,4 -n 100003 -steps 3"
  "tp_norm examples/tp_norm/tp_norm.cu 0 1,2,3,4 -tokens 37 -hidden 300 -layers 2"
  "lamb examples/lamb/lamb.cu 1e-5 1,2,3,4 -n 100003 -steps 3"
  "pipeline examples/pipeline/pipeline.cu 0 2,4,6 -tokens 37 -hidden 300 -micro 2"
  "adamw_clip examples/adamw_clip/adamw_clip.cu 1e-5 1,2,3,4 -n 100003 -steps 3"
)

build() {  # build NAME SRC VARIANT FLAGS...
  local name=$1 src=$2 variant=$3; shift 3
  "$bin/coconet-cc" --target=host "$@" "${mpi[@]}" "$root/$src" -o "$out/${name}_$variant"
}

checksum() { sed -n 's/.* checksum=\([^ ]*\).*/\1/p' | tail -n 1; }

for ex in "${examples[@]}"; do
  read -r name src tol nps args <<<"$ex"
  read -r -a args <<<"$args"
  if ! build "$name" "$src" orig --coconet-flags=--schedule=none || ! build "$name" "$src" sched; then
    echo "e2e: FAIL $name: build"; fail=$((fail + 1)); continue
  fi
  for np in ${nps//,/ }; do
    if [ -n "${E2E_RANKS:-}" ] && [[ " $E2E_RANKS " != *" $np "* ]]; then continue; fi
    a=$("${runenv[@]}" "${mpirun[@]}" -np "$np" "$out/${name}_orig" "${args[@]}" 2>&1 | checksum)
    b=$("${runenv[@]}" "${mpirun[@]}" -np "$np" "$out/${name}_sched" "${args[@]}" 2>&1 | checksum)
    if [ -n "$a" ] && [ -n "$b" ] && python3 -c "import sys; a, b, t = map(float, sys.argv[1:]); sys.exit(0 if abs(a - b) <= t * max(abs(a), abs(b)) else 1)" "$a" "$b" "$tol"; then
      printf 'e2e: ok   %-10s np=%d  original %s  scheduled %s\n' "$name" "$np" "$a" "$b"
      pass=$((pass + 1))
    else
      printf 'e2e: FAIL %-10s np=%d  original %s  scheduled %s (tolerance %s)\n' "$name" "$np" "${a:-none}" "${b:-none}" "$tol"
      fail=$((fail + 1))
    fi
  done
done
# The translation checked by running each example's own region code as written
# and as scheduled (coconet --verify), every buffer compared.
for ex in "${examples[@]}"; do
  read -r name src _ <<<"$ex"
  log="$out/${name}.verify-exec"
  "$bin/coconet" --verify="${E2E_VERIFY_RANKS:-4}" "$root/$src" -- "${mpi[@]}" >"$log" 2>&1
  status=$?
  if grep -q "ncclSend" "$root/$src"; then
    if [ $status = 1 ] && grep -q "cannot be run by the harness: it sends or receives (ncclSend/ncclRecv)" "$log"; then
      printf 'e2e: ok   %-10s --verify refuses it (its peer is another stage)\n' "$name"
      pass=$((pass + 1))
    else
      printf 'e2e: FAIL %-10s --verify did not refuse it\n' "$name"; cat "$log"
      fail=$((fail + 1))
    fi
  elif [ $status = 0 ] && grep -q "^verify .*: ok" "$log"; then
    printf 'e2e: ok   %-10s --verify=%s (%s)\n' "$name" "${E2E_VERIFY_RANKS:-4}" \
      "$(grep -c ' ULP apart' "$log") buffers compared"
    pass=$((pass + 1))
  else
    printf 'e2e: FAIL %-10s --verify=%s\n' "$name" "${E2E_VERIFY_RANKS:-4}"; cat "$log"
    fail=$((fail + 1))
  fi
done
echo "e2e: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
