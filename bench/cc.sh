#!/usr/bin/env bash
# cc.sh: coconet-cc against nvcc on the same file, side by side in one run.
# For each example of bench/examples.conf: `nvcc -c` of the file as written,
# `coconet-cc -c` of it (translation, then nvcc of the translated file) with
# the precompiled-header cache warm (a cache of its own, filled by a first run
# that is not counted) and with COCONET_CACHE=off (every parse from scratch),
# and the two parts of the former alone: `coconet -o` (translation) and `nvcc
# -c` of the translated file. Same flags (-O2 -std=c++17, sm_90, MPI's include
# flags). Target: coconet-cc <= 1.3x nvcc. Each figure is the median of RUNS
# runs (default 3). Usage: bench/cc.sh [BUILD]. Appends to bench/RESULTS.md
# (BENCH_RESULTS= to print only).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${RUNS:-3}
nvcc=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
BENCH_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)  # read by results_section (lib.sh)
export BENCH_LOAD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export COCONET_CACHE=$tmp/cache
read -r -a mpi <<<"$(mpicxx --showme:compile)"
flags=(-O2 -std=c++17 -gencode arch=compute_90,code=sm_90 -Xcompiler -Wno-unknown-pragmas "${mpi[@]}")

# shellcheck source=lib.sh
source "$root/bench/lib.sh"
load_examples
table=$tmp/table.md
echo "| example | nvcc s | coconet-cc s | ratio | no cache s | ratio | of which: coconet s | nvcc of the translation s |" >"$table"
echo "|---|---|---|---|---|---|---|---|" >>"$table"
printf '%-12s %8s %13s %7s %11s %7s %10s %12s\n' example nvcc_s coconet-cc_s ratio no_cache_s ratio coconet_s nvcc_tr_s
for i in "${!EX_NAME[@]}"; do
  src=$root/${EX_SRC[$i]}
  "$build/bin/coconet-cc" "${flags[@]}" -c "$src" -o "$tmp/b.o"  # fills the cache
  "$build/bin/coconet" "$src" -o "$tmp/t.cu" -- "${mpi[@]}"
  n=$(seconds "$nvcc" "${flags[@]}" -c "$src" -o "$tmp/a.o")
  c=$(seconds "$build/bin/coconet-cc" "${flags[@]}" -c "$src" -o "$tmp/b.o")
  o=$(seconds env COCONET_CACHE=off "$build/bin/coconet-cc" "${flags[@]}" -c "$src" -o "$tmp/b.o")
  t=$(seconds "$build/bin/coconet" "$src" -o "$tmp/t.cu" -- "${mpi[@]}")
  u=$(seconds "$nvcc" "${flags[@]}" -I "$root/runtime/include" -c "$tmp/t.cu" -o "$tmp/c.o")
  r=$(echo "$c / $n" | bc -l)
  ro=$(echo "$o / $n" | bc -l)
  printf '%-12s %8.2f %13.2f %6.2fx %11.2f %6.2fx %10.2f %12.2f\n' "${EX_NAME[$i]}" "$n" "$c" "$r" "$o" "$ro" "$t" "$u"
  printf '| %s | %.2f | %.2f | %.2fx | %.2f | %.2fx | %.2f | %.2f |\n' "${EX_NAME[$i]}" "$n" "$c" "$r" "$o" "$ro" "$t" "$u" \
    >>"$table"
done
printf '\nMedian of %d runs each; coconet-cc with the precompiled-header cache warm, then with COCONET_CACHE=off; target: coconet-cc <= 1.3x nvcc.\n' "$runs" >>"$table"
results_section "coconet-cc against nvcc (bench/cc.sh)" "$table"
