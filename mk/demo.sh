#!/usr/bin/env bash
# demo.sh BUILD: what `make demo` shows, for each example of bench/examples.conf:
#   - what coconet will do (--explain, with the cost model set to this run's rank count
#     and to the GPU sizes of bench/examples.conf, the bench sizes where there are none:
#     the sizes a GPU run would use, where the schedule is meant to pay) and whether the
#     cost model predicts it to pay there, and how much of the file it rewrites (the size
#     of --diff); the host runs use the demo's smaller sizes, to stay short;
#   - the example built twice for the CPU host backend with coconet-cc --target=host,
#     as written (--schedule=none) and scheduled, both run under mpirun -np 4 in
#     alternating rounds, their checksums compared and their step times (the programs'
#     own time_ms= lines, first step of each run dropped, median) put side by side;
#   - an example with a fuse variant (its source tests COCONET_EXAMPLE_FUSE) built a third
#     time with it (fused kernels on symmetric memory) and run once: its checksum must
#     agree with the scheduled build's (the NCCL path) and the one as written (within the
#     example's tolerance);
#   - the dataflow of each region before and after scheduling (--emit-dot, rendered by
#     Graphviz's dot) in BUILD/demo/NAME.png.
# It ends with a summary table, also written to BUILD/demo/summary.txt (format below),
# and exits 1 if any example fails to build or run or its results disagree.
#
# summary.txt: a header line, then one line per example with these whitespace-separated
# fields (none contains a space), then a line "demo: N examples, N agree, N disagree":
#   example schedule diff predicted orig_ms sched_ms ratio agree rel_diff
#   schedule   the pragma's clauses, joined with ',' (split,reorder,shard(m,v),scratch(g));
#              several regions are separated by ';'
#   diff       lines added/removed by --diff (+45/-3)
#   predicted  --explain's predicted speedup for np ranks on GPUs at the GPU sizes (cost model,
#              summed over the regions; 1.35x)
#   orig_ms, sched_ms, ratio   median step time as written, scheduled, and their ratio (x)
#   agree      yes or no (no also when a build or run failed; rel_diff says which)
#   rel_diff   relative difference of the checksums (0 = equal), or build/run on failure
# Environment: DEMO_NP (4), DEMO_ROUNDS (2), HOST_MPIRUN and HOST_RUN_ENV (from
# runtime/host/host.mk when run by make).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
bin=$build/bin
out=$build/demo
np=${DEMO_NP:-4}
rounds=${DEMO_ROUNDS:-2}
cores=$(nproc)
# shellcheck source=../bench/lib.sh
source "$root/bench/lib.sh"
mkdir -p "$out"
start=$(date +%s.%N)
load_examples || { echo "demo: no examples in bench/examples.conf" >&2; exit 1; }
n=${#EX_NAME[@]}

printf '\n== coconet demo: %d examples, host backend, mpirun -np %d, %d cores ==\n' "$n" "$np" "$cores"
printf 'building (coconet-cc --target=host, as written and scheduled) and analyzing ...\n'
for i in "${!EX_NAME[@]}"; do
  name=${EX_NAME[$i]} src=${EX_SRC[$i]}
  at=${EX_GPU[$i]}
  [ "$at" = - ] && at=${EX_BENCH[$i]}
  python3 "$root/bench/examples.py" model "${EX_SIZES[$i]}" "$at" "$np" >"$out/$name.model"
  rm -f "$out/$name".{info,explain,ir,diff,dot,ok_*}
  variants=(orig sched)
  grep -q COCONET_EXAMPLE_FUSE "$root/$src" && variants+=(fused)
  for variant in "${variants[@]}"; do
    parallel_limit "$cores"
    (host_build "$bin" "$out" "$name" "$src" "$variant" && touch "$out/$name.ok_$variant") &
  done
  parallel_limit "$cores"
  (coconet_info "$bin" "$out" "$name" "$src" "$out/$name.model" && touch "$out/$name.ok_info") &
done
wait
printf 'built and analyzed in %.0f s\n' "$(echo "$(date +%s.%N) - $start" | bc -l)"

rows=()
agree_n=0 disagree_n=0
for i in "${!EX_NAME[@]}"; do
  name=${EX_NAME[$i]} src=${EX_SRC[$i]} tol=${EX_TOL[$i]}
  read -r -a args <<<"${EX_DEMO[$i]}"
  printf '\n-- %s (%s) --\n' "$name" "$src"
  schedule=- diffsize=- predicted=-
  if [ -e "$out/$name.ok_info" ]; then
    schedule=$(sed -n 's/^  clauses: //p' "$out/$name.ir" | sed 's/, /,/g; s/ /,/g' | paste -sd';' -)
    # the explanation, each distinct line once (chunked schedules repeat them per chunk)
    awk '{c[$0]++; if (c[$0] == 1) o[++n] = $0} END {for (i = 1; i <= n; i++)
      print o[i] (c[o[i]] > 1 ? "  (x" c[o[i]] ")" : "")}' "$out/$name.explain"
    added=$(grep -c '^+[^+]' "$out/$name.diff" || true)
    removed=$(grep -c '^-[^-]' "$out/$name.diff" || true)
    diffsize="+$added/-$removed"
    echo "diff: $added lines added, $removed removed, in $(grep -c '^@@' "$out/$name.diff" || true) hunks" \
         "(coconet --diff $src)"
    read -r _ _ p <<<"$(python3 "$root/bench/examples.py" predicted "$out/$name.explain")"
    predicted=${p}x
    each=$(sed -n 's/^  predicted: .*(\([0-9.]*\)x)$/\1x/p' "$out/$name.explain" | paste -sd' ' -)
    at=${EX_GPU[$i]}
    [ "$at" = - ] && at=${EX_BENCH[$i]}
    pays=$(sed -n 's/^  predicted: .*(\([0-9.]*\)x)$/\1/p' "$out/$name.explain" |
           awk '{n++; if ($1 > 1) p++} END {print (n && p == n) ? "pays" : p ? "pays for some regions" : "does not pay"}')
    echo "predicted on $np GPUs at the GPU sizes ($at; the host runs below use ${EX_DEMO[$i]}):" \
         "${each:-none}: the schedule $pays there, in the cost model"
    [ "$pays" = pays ] || echo "  (the cost model predicts no gain for it: --explain says why; schedule(auto)" \
                               "keeps such a region as written)"
    pictures=$(dot_pictures "$out/$name.dot" "$out" "$name" | paste -sd' ' -)
    echo "dataflow before/after: ${pictures:-none (dot failed)}"
  else
    echo "demo: coconet failed on $src:"; sed 's/^/  /' "$out/$name.info" 2>/dev/null | head -20
  fi

  status=ok
  for variant in orig sched; do
    if [ ! -e "$out/$name.ok_$variant" ]; then
      echo "demo: building the $variant variant failed:"; tail -n 20 "$out/${name}_$variant.log" | sed 's/^/  /'
      status=build
    fi
  done
  : >"$out/$name.times"
  sums=()
  if [ "$status" = ok ]; then
    for r in $(seq "$rounds"); do
      for variant in orig sched; do
        log=$out/${name}_${variant}_np${np}_r$r.out
        if ! host_run "$log" "$np" "$out/${name}_$variant" "${args[@]}"; then
          echo "demo: mpirun -np $np ${name}_$variant ${args[*]} failed:"; tail -n 15 "$log" | sed 's/^/  /'
          status=run
          break 2
        fi
        step_times "$log" | sed "s/^/$variant /" >>"$out/$name.times"
        sums+=("$variant:$(checksum "$log")")
      done
    done
  fi
  orig_ms=- sched_ms=- ratio=- rel=$status agree=no
  if [ "$status" = ok ]; then
    read -r orig_ms sched_ms ratio _ <<<"$(python3 "$root/bench/examples.py" stats <"$out/$name.times")"
    ratio=${ratio}x
    a=${sums[0]#orig:} b=${sums[1]#sched:}
    rel=$(rel_diff "$a" "$b")
    # every round must give the same checksum as the first (runs are deterministic)
    for s in "${sums[@]}"; do
      v=${s#*:}
      if [ "$s" != "${s#orig:}" ] && [ "$v" != "$a" ]; then rel=nan; fi
      if [ "$s" != "${s#sched:}" ] && [ "$v" != "$b" ]; then rel=nan; fi
    done
    within "$rel" "$tol" && agree=yes
    echo "np=$np, $rounds rounds: checksum as written $a, scheduled $b (relative difference $rel," \
         "tolerance $tol): $([ $agree = yes ] && echo agree || echo DISAGREE)"
    echo "median step time: as written $orig_ms ms, scheduled $sched_ms ms: $ratio"
  fi
  if [ "$agree" = yes ] && grep -q COCONET_EXAMPLE_FUSE "$root/$src"; then
    log=$out/${name}_fused_np${np}.out
    if [ ! -e "$out/$name.ok_fused" ]; then
      echo "demo: building the fused variant failed:"; tail -n 20 "$out/${name}_fused.log" | sed 's/^/  /'
      agree=no rel=build
    elif ! COCONET_DEBUG=INFO host_run "$log" "$np" "$out/${name}_fused" "${args[@]}"; then
      echo "demo: mpirun -np $np ${name}_fused ${args[*]} failed:"; tail -n 15 "$log" | sed 's/^/  /'
      agree=no rel=run
    else
      c=$(checksum "$log")
      path=$(sed -n 's/^coconet\[rank 0\] INFO region [^:]*: //p' "$log" | head -n 1)
      fused_rel=$(rel_diff "$a" "$c") nccl_rel=$(rel_diff "$b" "$c")
      if within "$nccl_rel" "$tol" && within "$fused_rel" "$tol" && [ "${path#fused kernel}" != "$path" ]; then
        echo "fused variant (-DCOCONET_EXAMPLE_FUSE): $path; checksum $c: relative difference" \
             "$nccl_rel to the NCCL path, $fused_rel to as written (tolerance $tol): agree"
      else
        echo "fused variant: checksum $c (NCCL path $b, as written $a), path: ${path:-none}: DISAGREE"
        agree=no rel=fused
      fi
    fi
  fi
  if [ "$agree" = yes ]; then agree_n=$((agree_n + 1)); else disagree_n=$((disagree_n + 1)); fi
  rows+=("$name ${schedule:--} $diffsize $predicted $orig_ms $sched_ms $ratio $agree $rel")
done

elapsed=$(echo "$(date +%s.%N) - $start" | bc -l)
{
  echo "example schedule diff predicted orig_ms sched_ms ratio agree rel_diff"
  printf '%s\n' "${rows[@]}"
  echo "demo: $n examples, $agree_n agree, $disagree_n disagree"
} >"$out/summary.txt"
printf '\n== summary: host backend, mpirun -np %d on %d cores, median step time (ms) ==\n' "$np" "$cores"
sed '$d' "$out/summary.txt" | awk '{for (i = 1; i <= NF; i++) {c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i)}
  if (NF > nf) nf = NF} END {for (r = 1; r <= NR; r++) {line = ""
  for (i = 1; i <= nf; i++) line = line sprintf(i < nf ? "%-" w[i] + 2 "s" : "%s", c[r, i]); print line}}'
tail -n 1 "$out/summary.txt"
cat <<EOF
predicted: coconet --explain's cost model for $np GPUs (H200 NVLink node) at the GPU sizes of
  bench/examples.conf (where the schedules are meant to pay; the host runs use smaller ones);
ratio: measured on this machine's CPUs (as written / scheduled), not a GPU figure.
Files: $out/ (summary.txt, NAME.explain, NAME.diff, NAME.dot, NAME.png, run logs)
EOF
printf 'demo took %.0f s\n' "$elapsed"
[ "$disagree_n" -eq 0 ]
