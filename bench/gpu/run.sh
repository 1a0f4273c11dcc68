#!/usr/bin/env bash
# run.sh [DIR]: the GPU benchmark, on a machine with one NVIDIA GPU (one NCCL rank),
# from the folder bench/gpu/prepare.sh built (DIR, default build/gpu). Needs bash,
# awk and the GPU driver; no MPI, NCCL headers, nvcc or coconet there:
#   - Open MPI comes from DIR (lib/, openmpi/), started as a singleton (no mpirun); if
#     DIR/bin/mpiprobe fails with it, DIR/mpistub (a one-process MPI) takes its place;
#   - NCCL and cuBLAS are the machine's own (ldconfig, CUDA_HOME, /usr/local/cuda, or
#     a pip wheel's, e.g. PyTorch's); without a libnccl.so.2 it uses DIR/ncclstub, a
#     one-rank NCCL whose collectives are copies (the summary says which ran).
# For each example of the manifest, as written and scheduled, at np=1:
#   1. checksums at the demo's sizes against the host backend's at np=1 (from
#      prepare.sh; built with --fmad=false, so they should be equal or within float
#      rounding: relative difference at most max(tolerance, 1e-5));
#   2. at the GPU sizes, under ktrace.so (CUPTI): the GPU time of the region's pointwise
#      kernels (as written: the user's kernel; scheduled: the generated coconet_*
#      kernels), their bytes moved per step (from the schedule, prepare.sh) / time,
#      against the device's copy bandwidth (cudaMemcpy device to device, read + write);
# and, with a real NCCL >= 2.28, bench/gpu/fused.cu: a split reorder fuse region on the
# fused kernel against its NCCL path, the fused kernel's bytes / time against the copy
# bandwidth (the fused-kernel issue's goal: 85%), and a row-wise region (residual +
# RMSNorm) fused the same way, against its NCCL path.
# Prints everything; with OUT set, also writes $OUT/results.txt (a bench/RESULTS.md
# section) and the raw logs to $OUT/gpu-logs.txt.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-}
if [ -z "$dir" ]; then
  if [ -e "$here/manifest.txt" ]; then dir=$here; else dir=$here/../../build/gpu; fi
fi
dir=$(cd "$dir" && pwd) || exit 1
[ -e "$dir/manifest.txt" ] || { echo "run.sh: $dir/manifest.txt missing: run bench/gpu/prepare.sh first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
results=$tmp/results.txt
logs=$tmp/logs.txt
say() { printf '%s\n' "$*" | tee -a "$results"; }
start=$(date +%s)

# Libraries: a directory holding NAME, from the loader cache, the CUDA toolkit, or a pip
# wheel (PyTorch brings nvidia-nccl-cu13 and nvidia-cublas): one bounded search.
found=$tmp/found-libs.txt
timeout 40 find /opt /usr/local /usr/lib /root /home -xdev \( -name ncclstub -o -path "$dir" \) -prune -o \
  \( -name libnccl.so.2 -o -name libcublas.so.13 -o -name libcublasLt.so.13 \) -print 2>/dev/null >"$found"
find_lib() {
  local p d
  p=$(ldconfig -p 2>/dev/null | awk -v n="$1" '$1 == n {print $NF; exit}')
  [ -n "$p" ] && { dirname "$p"; return 0; }
  for d in "${CUDA_HOME:-/usr/local/cuda}/lib64" /usr/local/cuda/lib64 /usr/local/cuda/lib \
           /usr/local/cuda/targets/x86_64-linux/lib /usr/lib/x86_64-linux-gnu; do
    [ -e "$d/$1" ] && { echo "$d"; return 0; }
  done
  p=$(grep "/$1\$" "$found" | head -n 1)
  [ -n "$p" ] && { dirname "$p"; return 0; }
  return 1
}
nccl_dir=$(find_lib libnccl.so.2) && nccl="$nccl_dir/libnccl.so.2" || { nccl_dir=$dir/ncclstub; nccl="one-rank stub (no libnccl.so.2 on this machine)"; }
libpath=$dir/lib:$nccl_dir
for l in libcublas.so.13 libcublasLt.so.13; do
  d=$(find_lib "$l") && libpath=$libpath:$d
done
export LD_LIBRARY_PATH=$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Open MPI from DIR, as a singleton that starts no daemon, one process, as root too.
export OMPI_MCA_ess_singleton_isolated=1 OMPI_MCA_mca_base_component_path=$dir/openmpi
export OMPI_MCA_mca_base_component_show_load_errors=0 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPAL_PKGDATADIR=$dir/openmpi-help

# MPI: the carried Open MPI if it starts a singleton here, else the one-process stub.
mpi="carried Open MPI 4.1 (singleton, no mpirun)"
if ! timeout 30 "$dir/bin/mpiprobe" </dev/null >"$tmp/mpiprobe.out" 2>&1; then
  { echo "== mpiprobe with the carried Open MPI failed:"; cat "$tmp/mpiprobe.out"; } >>"$logs"
  export LD_LIBRARY_PATH=$dir/mpistub:$LD_LIBRARY_PATH
  mpi="one-process stub (the carried Open MPI failed: $(head -c 200 "$tmp/mpiprobe.out" | tr '\n' ' '))"
  timeout 30 "$dir/bin/mpiprobe" </dev/null >"$tmp/mpiprobe.out" 2>&1 || mpi="$mpi; the stub failed too: $(head -c 200 "$tmp/mpiprobe.out" | tr '\n' ' ')"
fi

gpu=$(timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1)
say "## GPU: one GPU, np=1 (bench/gpu/run.sh), $(date -u '+%Y-%m-%d %H:%M UTC')"
say ""
say "Machine: \`$(uname -a)\`, $(nproc) cores, GPU: ${gpu:-unknown (nvidia-smi failed)}."
say "NCCL: $nccl. MPI: $mpi. Binaries: coconet-cc for sm_90 with --fmad=false (bench/gpu/prepare.sh)."
{ echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"; ldd "$dir"/bin/*_sched 2>&1; } >>"$logs"

median() { sort -g | awk '{a[NR] = $1} END {if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2); else print "nan"}'; }
steps_of() { sed -n 's/.*time_ms=\([0-9.eE+-]*\).*/\1/p' "$1"; }
checksum_of() { sed -n 's/.* checksum=\([^ ]*\).*/\1/p' "$1" | tail -n 1; }
# run LOG PROGRAM ARGS...: one process (MPI singleton), 60 s at most, and nothing once
# the whole script has run for DEADLINE seconds (default 170: the script must fit a
# device call of a few minutes)
deadline=$((start + ${DEADLINE:-170}))
run() {
  local log=$1; shift
  local left=$((deadline - $(date +%s)))
  if [ "$left" -lt 5 ]; then
    echo "run.sh: out of time, skipped" >"$log"
    { echo "== $* (skipped: out of time)"; } >>"$logs"
    return 124
  fi
  [ "$left" -gt 60 ] && left=60
  timeout "$left" "$@" </dev/null >"$log" 2>&1
  local rc=$?
  { echo "== $* (exit $rc)"; cat "$log"; } >>"$logs"
  return $rc
}

run "$tmp/copybw.out" "$dir/bin/copybw"
copy=$(sed -n 's/.*best_gbps=\([0-9.]*\).*/\1/p' "$tmp/copybw.out")
say "Copy bandwidth (cudaMemcpy device to device, 1 GiB, best of 20, bytes read + written): ${copy:-failed} GB/s."
say ""
[ -n "$copy" ] || { cat "$tmp/copybw.out"; copy=0; }

# The fused kernel (bench/gpu/fused.cu) against its NCCL path, 64 Mi floats, np=1.
bad=0
if [ "$nccl_dir" = "$dir/ncclstub" ]; then
  say "Fused kernel: skipped (the one-rank NCCL stub has no device API; needs NCCL >= 2.28)."
elif run "$tmp/fused.out" "$dir/bin/fused" 67108864 20; then
  line=$(grep '^fused ' "$tmp/fused.out")
  g=$(sed -n 's/.*fused_gbps=\([0-9.]*\).*/\1/p' <<<"$line")
  say "Fused kernel (split reorder fuse, momentum SGD, np=1): $line;" \
      "$(awk -v g="${g:-0}" -v c="$copy" 'BEGIN {printf "%.0f%% of the copy bandwidth (goal: 85%%)", (c > 0 ? 100 * g / c : 0)}')."
  say "Fused row-wise kernel (AllReduce + residual + RMSNorm, split reorder fuse, np=1): $(grep '^fused_rows ' "$tmp/fused.out")."
else
  say "Fused kernel: bench/gpu/fused.cu failed: $(tail -n 3 "$tmp/fused.out" | paste -sd' ' -)"
  bad=$((bad + 1))
fi
say ""

check_rows=() time_rows=()
exec 3<"$dir/manifest.txt"
while IFS=$'\t' read -r -u 3 name tol check gpuargs ref_o ref_s kernels bytes_o bytes_s; do
  [[ $name == \#* ]] && continue
  read -r -a cargs <<<"$check"
  read -r -a targs <<<"$gpuargs"
  if ldd "$dir/bin/${name}_orig" 2>/dev/null | grep -q 'not found'; then
    say "$name: skipped, libraries not found: $(ldd "$dir/bin/${name}_orig" | awk '/not found/ {print $1}' | paste -sd' ' -)"
    bad=$((bad + 1))
    continue
  fi
  for v in orig sched; do
    ref=$ref_o
    [ "$v" = sched ] && ref=$ref_s
    if run "$tmp/${name}_$v.check" "$dir/bin/${name}_$v" "${cargs[@]}"; then
      sum=$(checksum_of "$tmp/${name}_$v.check")
      verdict=$(awk -v a="$sum" -v b="$ref" -v t="$tol" 'BEGIN {
        if (a == "" || b == "") {print "no-checksum"; exit}
        d = a - b; if (d < 0) d = -d; m = (a < 0 ? -a : a); mb = (b < 0 ? -b : b); if (mb > m) m = mb
        r = m > 0 ? d / m : 0; lim = t > 1e-5 ? t : 1e-5
        if (r == 0) print "equal"; else if (r <= lim) printf "agree(%.1e)\n", r; else printf "DIFFER(%.1e)\n", r}')
    else
      sum=failed verdict="FAILED(exit $?)"
      tail -n 5 "$tmp/${name}_$v.check"
    fi
    [[ $verdict == equal || $verdict == agree* ]] || bad=$((bad + 1))
    check_rows+=("| $name | $v | $check | $sum | $ref | $verdict |")
  done

  declare -A kt_ms=() kt_n=() st=()
  for v in orig sched; do
    kt=$tmp/${name}_$v.kt
    : >"$kt"
    if ! CUDA_INJECTION64_PATH=$dir/lib/ktrace.so KTRACE_OUT=$kt run "$tmp/${name}_$v.time" "$dir/bin/${name}_$v" "${targs[@]}"; then
      echo "$name $v: timing run failed:"; tail -n 5 "$tmp/${name}_$v.time"
      bad=$((bad + 1))
      continue
    fi
    cat "$kt" >>"$logs"
    nsteps=$(steps_of "$tmp/${name}_$v.time" | wc -l)
    st[$v]=$(steps_of "$tmp/${name}_$v.time" | tail -n +2 | median)
    # the region's kernels: the user's as written, the generated ones when scheduled
    read -r ns n <<<"$(awk -v v="$v" -v list=",$kernels," '{
        k = ""; l = 0; t = 0
        for (i = 2; i <= NF; i++) {split($i, kv, "="); if (kv[1] == "kernel") k = kv[2]; if (kv[1] == "launches") l = kv[2]; if (kv[1] == "total_ns") t = kv[2]}
        if ((v == "orig" && index(list, "," k ",")) || (v == "sched" && k ~ /^coconet_/)) {ns += t; n += l}
      } END {print ns + 0, n + 0}' "$kt")"
    kt_ms[$v]=$(awk -v ns="$ns" -v s="$nsteps" 'BEGIN {printf "%.4f", (s > 0 ? ns / s / 1e6 : 0)}')
    kt_n[$v]=$n
  done
  row="| $name | $gpuargs |"
  for v in orig sched; do
    b=$bytes_o
    [ "$v" = sched ] && b=$bytes_s
    ms=${kt_ms[$v]:-0}
    row="$row ${st[$v]:-nan} | $(awk -v b="$b" -v ms="$ms" -v c="$copy" -v n="${kt_n[$v]:-0}" 'BEGIN {
      if (ms <= 0) {printf "no kernel timed | - | -"; exit}
      g = b / (ms * 1e-3) / 1e9; printf "%.4f (%d launches) | %.0f | %.0f%%", ms, n, g, (c > 0 ? 100 * g / c : 0)}') |"
  done
  kr=$(awk -v a="${kt_ms[orig]:-0}" -v b="${kt_ms[sched]:-0}" 'BEGIN {print ((a > 0 && b > 0) ? sprintf("%.2fx", a / b) : "-")}')
  time_rows+=("$row $kr |")
  unset kt_ms kt_n st
done
exec 3<&-

say "Checksums at np=1 against the host backend's (same sizes, same rank count):"
say ""
say "| example | build | options | GPU checksum | host checksum | verdict |"
say "|---|---|---|---|---|---|"
for r in "${check_rows[@]}"; do say "$r"; done
say ""
say "Pointwise kernels of each region at np=1, GPU time per step (CUPTI; mean over all steps) and"
say "bandwidth = pointwise bytes per step from the schedule (bench/examples.py traffic: every"
say "element read or written once) / that time, against the copy bandwidth above:"
say ""
say "| example | options | as written: step ms | kernel ms/step | GB/s | of copy | scheduled: step ms | kernel ms/step | GB/s | of copy | kernel time as written / scheduled |"
say "|---|---|---|---|---|---|---|---|---|---|---|"
for r in "${time_rows[@]}"; do say "$r"; done
say ""
say "Step ms: median of the programs' own time_ms= lines, first step dropped (the whole step:"
say "backward or GEMM included). At np=1 the schedule's collectives move nothing; the kernel"
say "columns compare the user's kernel with the generated one on the same elements."
say "Took $(( $(date +%s) - start )) s; $bad problem(s)."
if [ -n "${OUT:-}" ]; then
  cp "$results" "$OUT/results.txt"
  cp "$logs" "$OUT/gpu-logs.txt"
fi
echo
echo "---- raw logs ----"
tail -c 6000 "$logs"
[ "$bad" -eq 0 ]
