#!/usr/bin/env bash
# host.sh [BUILD]: every example of bench/examples.conf on the CPU host backend, as
# written (--schedule=none) and scheduled, at np = 2 and 4 (BENCH_NPS), side by side in
# one run: ROUNDS (default 2) alternating rounds of (as written, scheduled) per np, the
# programs' own time_ms= lines (first step of each run dropped), median per variant.
# Prints, for each example and np: the two median step times and their ratio, the
# checksums' agreement, and the bytes each rank moves per step, computed from the
# schedule (bench/examples.py traffic, from coconet --dump=ir at the run's sizes):
# network bytes sent per rank by the collectives (ring formulas) and memory bytes of
# the region's pointwise kernels (the optimizer's traffic for Adam). Appends the table
# to bench/RESULTS.md (BENCH_RESULTS= to skip) with the date and the machine.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
bin=$build/bin
out=$build/bench/host
rounds=${ROUNDS:-2}
read -r -a nps <<<"${BENCH_NPS:-2 4}"
cores=$(nproc)
# shellcheck source=lib.sh
source "$root/bench/lib.sh"
BENCH_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)  # read by results_section (lib.sh)
export BENCH_LOAD
mkdir -p "$out"
start=$(date +%s.%N)
load_examples || { echo "host.sh: no examples in bench/examples.conf" >&2; exit 1; }

echo "host.sh: building ${#EX_NAME[@]} examples twice (coconet-cc --target=host) ..."
for i in "${!EX_NAME[@]}"; do
  name=${EX_NAME[$i]} src=${EX_SRC[$i]}
  rm -f "$out/$name".ok_*
  for variant in orig sched; do
    parallel_limit "$cores"
    (host_build "$bin" "$out" "$name" "$src" "$variant" && touch "$out/$name.ok_$variant") &
  done
  parallel_limit "$cores"
  (cd "$root" && "$bin/coconet" --dump=ir "$src" -- "${BENCH_MPI_CFLAGS[@]}" >"$out/$name.ir" 2>&1 &&
     touch "$out/$name.ok_ir") &
done
wait

mib() { awk -v b="$1" 'BEGIN {printf "%.2f", b / 1048576}'; }
table=$out/table.md
{
  echo "| example | size | np | as written ms | scheduled ms | time ratio | comm MiB/rank written -> scheduled | pointwise-kernel MiB/rank written -> scheduled (ratio) | checksums |"
  echo "|---|---|---|---|---|---|---|---|---|"
} >"$table"
failed=0
for i in "${!EX_NAME[@]}"; do
  name=${EX_NAME[$i]} tol=${EX_TOL[$i]} sizes=${EX_SIZES[$i]}
  read -r -a args <<<"${EX_BENCH[$i]}"
  if [ ! -e "$out/$name.ok_orig" ] || [ ! -e "$out/$name.ok_sched" ] || [ ! -e "$out/$name.ok_ir" ]; then
    echo "host.sh: $name: build failed (logs in $out/${name}_*.log, $out/$name.ir)"
    echo "| $name | ${args[*]} | - | - | - | - | - | - | build failed |" >>"$table"
    failed=$((failed + 1))
    continue
  fi
  for np in "${nps[@]}"; do
    : >"$out/$name.np$np.times"
    sums=() status=ok
    for r in $(seq "$rounds"); do
      for variant in orig sched; do
        log=$out/${name}_${variant}_np${np}_r$r.out
        if ! host_run "$log" "$np" "$out/${name}_$variant" "${args[@]}"; then
          echo "host.sh: mpirun -np $np ${name}_$variant ${args[*]} failed:"; tail -n 10 "$log" | sed 's/^/  /'
          status=failed
          break 2
        fi
        step_times "$log" | sed "s/^/$variant /" >>"$out/$name.np$np.times"
        sums+=("$(checksum "$log")")
      done
    done
    if [ "$status" != ok ]; then
      echo "| $name | ${args[*]} | $np | - | - | - | - | - | run failed |" >>"$table"
      failed=$((failed + 1))
      continue
    fi
    read -r to ts ratio _ <<<"$(python3 "$root/bench/examples.py" stats <"$out/$name.np$np.times")"
    rel=$(rel_diff "${sums[0]}" "${sums[1]}")
    agree="differ ($rel)"
    within "$rel" "$tol" && agree=$([ "$rel" = 0 ] && echo equal || echo "agree ($rel)")
    [ "${agree%% *}" = differ ] && failed=$((failed + 1))
    declare -A tr=()
    while IFS='=' read -r k v; do tr[$k]=$v; done \
      < <(python3 "$root/bench/examples.py" traffic "$out/$name.ir" "$sizes" "${EX_BENCH[$i]}" "$np")
    memratio=$(awk -v a="${tr[mem_orig]}" -v b="${tr[mem_sched]}" 'BEGIN {if (a > 0) printf "%.3f", b / a; else printf "-"}')
    printf '%-11s np=%d  as written %9.1f ms  scheduled %9.1f ms  ratio %5sx  comm/rank %7s -> %7s MiB  pointwise/rank %7s -> %7s MiB (%s)  %s\n' \
      "$name" "$np" "$to" "$ts" "$ratio" "$(mib "${tr[comm_orig]}")" "$(mib "${tr[comm_sched]}")" \
      "$(mib "${tr[mem_orig]}")" "$(mib "${tr[mem_sched]}")" "$memratio" "$agree"
    echo "| $name | ${args[*]} | $np | $to | $ts | ${ratio}x | $(mib "${tr[comm_orig]}") -> $(mib "${tr[comm_sched]}") | $(mib "${tr[mem_orig]}") -> $(mib "${tr[mem_sched]}") ($memratio) | $agree |" >>"$table"
    unset tr
  done
done
elapsed=$(echo "$(date +%s.%N) - $start" | bc -l)
cat >>"$table" <<EOF

Median step time (ms) over $rounds alternating rounds of each variant, the programs' own
\`time_ms=\` lines with each run's first step dropped; ratio = as written / scheduled
(above 1: the schedule is faster). Bytes are per rank and step, computed from the
schedule (\`bench/examples.py traffic\` on \`coconet --dump=ir\`), not measured:
collectives as ring algorithms (AllReduce 2(N-1)/N of the buffer, ReduceScatter and
AllGather (N-1)/N each), pointwise kernels as one read or write of each tensor element
they touch on this rank's elements. GEMMs are not counted (the schedule leaves their work
unchanged). The N ranks share this machine's $cores cores (oversubscribed) and their
collectives are MPI over shared memory, where an AllReduce has every rank gather and
combine all N contributions (runtime/host/README.md) while a ReduceScatter combines
only its slice: the ratios are the host backend's, not a GPU's.
Took $(printf '%.0f' "$elapsed") s.
EOF
echo
cat "$table"
results_section "Host backend: scheduled vs as written (bench/host.sh)" "$table"
[ "$failed" -eq 0 ]
