# shellcheck shell=bash disable=SC2034
# bench/lib.sh: shell helpers shared by mk/demo.sh and bench/host.sh (sourced, not run).
#
#   load_examples [gpu]            fills EX_NAME EX_SRC EX_TOL EX_SIZES EX_DEMO EX_BENCH EX_GPU
#                                  (gpu: only the examples that run on one GPU)
#                                  (arrays, one entry per line of bench/examples.conf)
#   host_build BIN OUTDIR NAME SRC VARIANT
#                                  coconet-cc --target=host: OUTDIR/NAME_VARIANT (orig: as written,
#                                  --schedule=none; sched: the pragma's schedule; fused: built with
#                                  -DCOCONET_EXAMPLE_FUSE, the example's fuse variant); skipped when
#                                  the binary is newer than its inputs; log in OUTDIR/NAME_VARIANT.log
#   coconet_info BIN OUTDIR NAME SRC MODEL
#                                  one coconet run: --dump=ir, --explain (with --model=MODEL) and
#                                  --emit-dot: OUTDIR/NAME.ir, NAME.explain, NAME.dot; then --diff:
#                                  OUTDIR/NAME.diff
#   parallel_limit N               waits until fewer than N background jobs run
#   host_run OUT NP PROGRAM ARGS...
#                                  runs PROGRAM under mpirun -np NP (HOST_MPIRUN, HOST_RUN_ENV from
#                                  runtime/host/host.mk, or their defaults); output in OUT; status
#   step_times FILE [SKIP]         the time_ms= values of a run, the first SKIP (default 1) dropped
#                                  when more than SKIP are there (warm-up)
#   checksum FILE                  the checksum= value of a run
#   rel_diff A B                   |A - B| / max(|A|, |B|) (0 when equal), or "nan"
#   dot_pictures DOT OUTDIR NAME   renders each graph of DOT with `dot -Tpng`: OUTDIR/NAME.png (one
#                                  region) or OUTDIR/NAME.REGION.png; prints the files written
#   seconds COMMAND...             the median wall time of $runs runs of COMMAND (output discarded)

bench_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
read -r -a BENCH_MPI_CFLAGS <<<"$(mpicxx --showme:compile)"
read -r -a BENCH_MPIRUN <<<"${HOST_MPIRUN:-mpirun --oversubscribe $([ "$(id -u)" = 0 ] && echo --allow-run-as-root)}"
read -r -a BENCH_RUN_ENV <<<"${HOST_RUN_ENV:-env OMPI_MCA_mpi_yield_when_idle=1}"

load_examples() {
  EX_NAME=() EX_SRC=() EX_TOL=() EX_SIZES=() EX_DEMO=() EX_BENCH=() EX_GPU=()
  local name src tol sizes demo bench gpu
  while IFS=$'\t' read -r name src tol sizes demo bench gpu; do
    EX_NAME+=("$name") EX_SRC+=("$src") EX_TOL+=("$tol") EX_SIZES+=("$sizes")
    EX_DEMO+=("$demo") EX_BENCH+=("$bench") EX_GPU+=("$gpu")
  done < <(python3 "$bench_root/bench/examples.py" list "$@")
  [ "${#EX_NAME[@]}" -gt 0 ]
}

# newer_than OUT INPUTS...: true when OUT exists and is newer than every input
newer_than() {
  local out=$1 f; shift
  [ -e "$out" ] || return 1
  for f in "$@"; do [ "$f" -nt "$out" ] && return 1; done
  return 0
}

host_build() {
  local bin=$1 outdir=$2 name=$3 src=$4 variant=$5
  local out=$outdir/${name}_$variant flags=()
  [ "$variant" = orig ] && flags=(--coconet-flags=--schedule=none)
  [ "$variant" = fused ] && flags=(-DCOCONET_EXAMPLE_FUSE)
  local inputs=("$bench_root/$src" "$bin/coconet" "$bin/coconet-cc"
                "$bench_root/runtime/include/coconet.h" "$bench_root/runtime/include/coconet_fused.h")
  local lib
  lib=$(dirname "$bin")/lib/libcoconet_host.a
  [ -e "$lib" ] && inputs+=("$lib")
  inputs+=("$bench_root"/runtime/host/include/*.h)
  if newer_than "$out" "${inputs[@]}"; then
    echo "(up to date)" >"$out.log"
    return 0
  fi
  "$bin/coconet-cc" --target=host "${flags[@]}" "${BENCH_MPI_CFLAGS[@]}" "$bench_root/$src" -o "$out" \
    >"$out.log" 2>&1
}

coconet_info() {
  local bin=$1 outdir=$2 name=$3 src=$4 model=$5
  (cd "$bench_root" && "$bin/coconet" --dump=ir --explain --model="$model" --emit-dot="$outdir/$name.dot" "$src" \
    -- "${BENCH_MPI_CFLAGS[@]}") >"$outdir/$name.info" 2>&1 || return 1
  sed -n '/^explain /,$p' "$outdir/$name.info" >"$outdir/$name.explain"
  sed '/^explain /,$d' "$outdir/$name.info" >"$outdir/$name.ir"
  (cd "$bench_root" && "$bin/coconet" --diff "$src" -- "${BENCH_MPI_CFLAGS[@]}") >"$outdir/$name.diff" 2>&1
}

parallel_limit() {
  while [ "$(jobs -rp | wc -l)" -ge "$1" ]; do wait -n 2>/dev/null || true; done
}

host_run() {
  local out=$1 np=$2; shift 2
  "${BENCH_RUN_ENV[@]}" "${BENCH_MPIRUN[@]}" -np "$np" "$@" >"$out" 2>&1
}

step_times() {
  local skip=${2:-1}
  sed -n 's/.*time_ms=\([0-9.eE+-]*\).*/\1/p' "$1" | awk -v skip="$skip" '{t[NR] = $1}
    END {first = NR > skip ? skip + 1 : 1; for (i = first; i <= NR; i++) print t[i]}'
}

checksum() { sed -n 's/.* checksum=\([^ ]*\).*/\1/p' "$1" | tail -n 1; }

rel_diff() {
  python3 -c 'import sys
try:
    a, b = float(sys.argv[1]), float(sys.argv[2])
    print(0 if a == b else "%.1e" % (abs(a - b) / max(abs(a), abs(b))))
except ValueError:
    print("nan")' "$1" "$2"
}

# within REL TOL: true when REL (from rel_diff) is at most TOL
within() { python3 -c 'import sys, math; r = float(sys.argv[1]); sys.exit(0 if not math.isnan(r) and r <= float(sys.argv[2]) else 1)' "$1" "$2"; }

dot_pictures() {
  local dotfile=$1 outdir=$2 name=$3
  local n
  n=$(grep -c '^digraph' "$dotfile" || true)
  if [ "$n" -le 1 ]; then
    dot -Tpng "$dotfile" -o "$outdir/$name.png" && echo "$outdir/$name.png"
    return
  fi
  awk -v dir="$outdir" -v name="$name" '/^digraph/ {g = $2; gsub(/"/, "", g); f = dir "/" name "." g ".dot"}
    f {print > f} /^}/ {close(f); print f; f = ""}' "$dotfile" |
    while read -r one; do
      dot -Tpng "$one" -o "${one%.dot}.png" && echo "${one%.dot}.png"
    done
}

# results_section TITLE BODYFILE: appends "## TITLE" with the date and the machine, then
# BODYFILE, to $BENCH_RESULTS (default bench/RESULTS.md; empty: print only)
results_section() {
  local file=${BENCH_RESULTS-$bench_root/bench/RESULTS.md}
  [ -n "$file" ] || return 0
  [ -e "$file" ] || printf '# Benchmark results\n\nEach section is one run of a bench/ script, appended by it (newest last).\n' >"$file"
  {
    printf '\n## %s, %s\n\n' "$1" "$(date -u '+%Y-%m-%d %H:%M UTC')"
    printf 'Machine: `%s`, %s cores, load average %s at the start.\n\n' "$(uname -a)" "$(nproc)" \
      "${BENCH_LOAD:-$(cut -d' ' -f1-3 /proc/loadavg)}"
    cat "$2"
  } >>"$file"
  echo "results appended to $file"
}

# seconds COMMAND...: the median wall time of $runs runs (the caller sets runs).
seconds() {
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
  done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
