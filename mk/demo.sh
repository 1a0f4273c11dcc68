#!/usr/bin/env bash
# demo.sh BUILD: what `make demo` shows a newcomer, for each example: the regions
# coconet finds and how it classifies their statements, the schedule each asks
# for, and that everything outside the regions is left alone.
set -euo pipefail
build=$1
coconet=$build/bin/coconet
read -r -a mpi <<<"$(mpicxx --showme:compile)"
mkdir -p "$build/demo"
printf '\n== coconet demo ==\n'
summary=()
for src in examples/adam/adam.cu examples/megatron/row_linear.cu; do
  name=$(basename "$src" .cu)
  printf '\n-- %s --\n' "$src"
  "$coconet" --check "$src" -- "${mpi[@]}"
  "$coconet" --dump=json "$src" -- "${mpi[@]}" >"$build/demo/$name.json"
  schedule=$(python3 - "$build/demo/$name.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["regions"]:
    clauses = " ".join(c["name"] + ("(" + ", ".join(
        (a["key"] + "=" if a["key"] else "") + a["text"] for a in c["args"]) + ")" if c["args"] else "")
        for c in r["pragma"]["clauses"] if c["name"] != "name")
    print(f'{r["name"]}: {clauses}')
PY
)
  echo "schedule asked for: $schedule"
  "$coconet" --schedule=none "$src" -o "$build/demo/$name.cu" -- "${mpi[@]}"
  if cmp -s "$src" "$build/demo/$name.cu"; then same=yes; else same=NO; fi
  summary+=("$(printf '%-14s %-44s %s' "$name" "$schedule" "$same")")
done
printf '\n%-14s %-44s %s\n' example "region: schedule" "--schedule=none unchanged"
printf '%s\n' "${summary[@]}"
printf '\nJSON descriptions: %s/demo/*.json\n' "$build"
