#!/usr/bin/env bash
# run.sh COCONET: the no-harm test. Every .cu/.cuh file of the repository that
# carries no coconet directive, and every file in tests/noharm/inputs/ (which
# only mention '#pragma coconet' in comments and strings), must come back byte
# for byte, with exit status 0, through -o, stdout and -i.
set -u
coconet=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() {
  local f=$1
  if "$coconet" "$f" -o "$tmp/out" && cmp -s "$f" "$tmp/out" &&
     "$coconet" "$f" | cmp -s "$f" - &&
     cp "$f" "$tmp/inplace" && "$coconet" -i "$tmp/inplace" && cmp -s "$f" "$tmp/inplace"; then
    pass=$((pass + 1))
  else
    echo "no-harm: FAIL $f" >&2
    fail=$((fail + 1))
  fi
}
# The inputs also go through libclang: with a region appended, --schedule=none
# must still give the file back unchanged (the parse of cub, cooperative
# groups, bf16 and NCCL code succeeds and rewrites nothing).
parse_check() {
  local f=$1
  { cat "$f"; printf 'void coconet_noharm_probe() {\n#pragma coconet region\n  { }\n}\n'; } >"$tmp/probe.cu"
  if "$coconet" --schedule=none "$tmp/probe.cu" -o "$tmp/probe.out" -- -I"$(dirname "$f")" && cmp -s "$tmp/probe.cu" "$tmp/probe.out"; then
    pass=$((pass + 1))
  else
    echo "no-harm: FAIL (through libclang) $f" >&2
    fail=$((fail + 1))
  fi
}
for f in "$root"/tests/noharm/inputs/*.cu; do parse_check "$f"; done
while IFS= read -r f; do
  case "$f" in tests/noharm/inputs/*) check "$f"; continue ;; esac
  grep -Eq '^[[:space:]]*#[[:space:]]*pragma([[:space:]]|/\*.*\*/)+coconet|_Pragma' "$f" || check "$f"
done < <(cd "$root" && git ls-files --cached --others --exclude-standard '*.cu' '*.cuh')
echo "no-harm: $pass files unchanged, $fail changed or failed"
[ "$fail" -eq 0 ] && [ "$pass" -ge 3 ]
