#!/usr/bin/env bash
# host-checks.sh [BUILD]: what the host backend's collective checks cost
# (runtime/host/src/checks.cc: every group's calls compared across the ranks
# before data moves). AllReduces of 4 KiB and 4 MiB at np = 2, with
# COCONET_HOST_CHECK=1 and =0 alternating over ROUNDS (default 15) rounds in
# one run; prints the median and the fastest time per call of each and their
# ratios (on a shared machine the fastest round is the least disturbed), and
# appends the table to bench/RESULTS.md (BENCH_RESULTS= to skip).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
rounds=${ROUNDS:-15}
# shellcheck source=lib.sh
source "$root/bench/lib.sh"
BENCH_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
export BENCH_LOAD
out=$build/bench/host-checks
mkdir -p "$out"
prog=$out/collectives
"$build/bin/coconet-cc" --target=host -O2 "$root/bench/host/collectives.cu" -o "$prog" "${BENCH_MPI_CFLAGS[@]}" \
  >"$out/build.log" 2>&1 || { echo "host-checks.sh: build failed, see $out/build.log" >&2; exit 1; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
fastest() { sort -n | head -1; }
table=$out/table.md
{
  echo "| AllReduce | np | checks on (us/call, median) | checks off (median) | on / off | on (fastest) | off (fastest) | on / off |"
  echo "|---|---|---|---|---|---|---|---|"
} >"$table"
for spec in "1024 20000 4 KiB" "1048576 40 4 MiB"; do
  read -r count iters label <<<"$spec"
  on=() off=()
  for _ in $(seq "$rounds"); do
    for c in 1 0; do
      t=$(COCONET_HOST_CHECK=$c "${BENCH_RUN_ENV[@]}" "${BENCH_MPIRUN[@]}" -np 2 "$prog" "$count" "$iters" 2>/dev/null |
          sed -n 's/^us_per_call=//p')
      if [ $c = 1 ]; then on+=("$t"); else off+=("$t"); fi
    done
  done
  m_on=$(printf '%s\n' "${on[@]}" | median) m_off=$(printf '%s\n' "${off[@]}" | median)
  f_on=$(printf '%s\n' "${on[@]}" | fastest) f_off=$(printf '%s\n' "${off[@]}" | fastest)
  printf '| %s | 2 | %s | %s | %.2fx | %s | %s | %.2fx |\n' "$label" "$m_on" "$m_off" "$(echo "$m_on / $m_off" | bc -l)" \
    "$f_on" "$f_off" "$(echo "$f_on / $f_off" | bc -l)" >>"$table"
done
cat "$table"
results_section "Host backend: collective checks on vs off ($rounds alternating rounds, medians and fastest)" "$table"
