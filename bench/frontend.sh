#!/usr/bin/env bash
# frontend.sh: the translator front end's speed, measured side by side in one run.
#   1. `coconet --check` against `clang -fsyntax-only` with the same flags, on the
#      examples of bench/examples.conf and on a generated CUDA file of 6,000 lines
#      (target: <= 1.2x);
#   2. pass-through of a pragma-free file against that parse (target: <= 5%).
# Each figure is the median of RUNS runs (default 5). Usage: bench/frontend.sh [BUILD]
# Appends the table to bench/RESULTS.md (BENCH_RESULTS= to print only).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
coconet=$build/bin/coconet
runs=${RUNS:-5}
llvm=${LLVM_PREFIX:-/usr/lib/llvm-16}
cuda=${CUDA_HOME:-/usr/local/cuda}
BENCH_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)  # read by results_section (lib.sh)
export BENCH_LOAD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The same flags and prelude the front end uses (translator/front/frontend.c).
touch "$tmp/texture_fetch_functions.h"
cat >"$tmp/prelude.h" <<'PRELUDE'
#undef __CUDACC__
#define __CUDACC__ 1
#define COCONET_DEV_ __attribute__((device))
template <typename T> COCONET_DEV_ T __ldca(const T *);
template <typename T> COCONET_DEV_ T __ldcg(const T *);
template <typename T> COCONET_DEV_ T __ldcs(const T *);
template <typename T> COCONET_DEV_ T __ldlu(const T *);
template <typename T> COCONET_DEV_ T __ldcv(const T *);
template <typename T> COCONET_DEV_ void __stwb(T *, T);
template <typename T> COCONET_DEV_ void __stcg(T *, T);
template <typename T> COCONET_DEV_ void __stcs(T *, T);
template <typename T> COCONET_DEV_ void __stwt(T *, T);
#undef COCONET_DEV_
#define COCONET_MINMAX_(T, U, R) \
  static inline __attribute__((host)) R min(T a, U b) { return a < b ? a : b; } \
  static inline __attribute__((host)) R max(T a, U b) { return a > b ? a : b; }
COCONET_MINMAX_(int, int, int)
COCONET_MINMAX_(unsigned int, unsigned int, unsigned int)
COCONET_MINMAX_(int, unsigned int, unsigned int)
COCONET_MINMAX_(unsigned int, int, unsigned int)
COCONET_MINMAX_(long, long, long)
COCONET_MINMAX_(unsigned long, unsigned long, unsigned long)
COCONET_MINMAX_(long, unsigned long, unsigned long)
COCONET_MINMAX_(unsigned long, long, unsigned long)
COCONET_MINMAX_(long long, long long, long long)
COCONET_MINMAX_(unsigned long long, unsigned long long, unsigned long long)
COCONET_MINMAX_(long long, unsigned long long, unsigned long long)
COCONET_MINMAX_(unsigned long long, long long, unsigned long long)
COCONET_MINMAX_(float, float, float)
COCONET_MINMAX_(double, double, double)
COCONET_MINMAX_(float, double, double)
COCONET_MINMAX_(double, float, double)
#undef COCONET_MINMAX_
PRELUDE
flags=(-x cuda -std=c++17 --cuda-host-only --cuda-path="$cuda" -isystem "$cuda/include/cccl"
       -isystem "$tmp" -Xclang -fcuda-allow-variadic-functions -Wno-unknown-cuda-version
       -Wno-unknown-pragmas -include "$tmp/prelude.h")
read -r -a mpi <<<"$(mpicxx --showme:compile)"

python3 "$root/bench/gen_large.py" 6000 "$tmp/large.cu"
grep -v 'pragma coconet' "$tmp/large.cu" >"$tmp/large_plain.cu"

# The examples of bench/examples.conf, then the generated file.
# shellcheck source=lib.sh
source "$root/bench/lib.sh"
load_examples
inputs=()
for src in "${EX_SRC[@]}"; do inputs+=("$root/$src"); done
inputs+=("$tmp/large.cu")
table=$tmp/table.md
echo "| input | lines | clang -fsyntax-only s | coconet --check s | ratio |" >"$table"
echo "|---|---|---|---|---|" >>"$table"
printf '%-28s %8s %10s %10s %7s\n' input lines clang_s coconet_s ratio
for f in "${inputs[@]}"; do
  c=$(seconds "$llvm/bin/clang" -fsyntax-only "${flags[@]}" "${mpi[@]}" "$f")
  k=$(seconds "$coconet" --check "$f" -- "${mpi[@]}")
  r=$(echo "$k / $c" | bc -l)
  printf '%-28s %8d %10.3f %10.3f %6.2fx\n' "$(basename "$f")" "$(wc -l <"$f")" "$c" "$k" "$r"
  printf '| %s | %d | %.3f | %.3f | %.2fx |\n' "$(basename "$f")" "$(wc -l <"$f")" "$c" "$k" "$r" >>"$table"
done
parse=$(seconds "$coconet" --check "$tmp/large.cu")
pass=$(seconds "$coconet" "$tmp/large_plain.cu" -o "$tmp/out.cu")
line=$(printf 'pass-through of a %d-line pragma-free file: %.4f s = %.2f%% of its parse (%.3f s)' \
  "$(wc -l <"$tmp/large_plain.cu")" "$pass" "$(echo "100 * $pass / $parse" | bc -l)" "$parse")
echo "$line"
printf '\n%s.\n\nMedian of %d runs each; targets: ratio <= 1.2x, pass-through <= 5%%.\n' "$line" "$runs" >>"$table"
results_section "Translator front end (bench/frontend.sh)" "$table"
