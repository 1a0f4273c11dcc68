#!/bin/bash
# tests/layout/run.sh: the translator's layout check (check.py) passes on the
# tree, and reports each kind of fault planted in a copy of it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/tests/layout/check.py" "$root"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
# plant NAME EXPECTED-MESSAGE: copy the tree, let the caller's edit run, check the report.
plant() {
  local name=$1 expect=$2
  local out
  if out=$("$root/tests/layout/check.py" "$scratch/$name" 2>&1); then
    echo "FAIL: $name: the check passed"; status=1
  elif ! grep -qF -- "$expect" <<<"$out"; then
    echo "FAIL: $name: expected '$expect' in:"; echo "$out"; status=1
  else
    echo "ok: $name"
  fi
}
copy() { mkdir -p "$scratch/$1" && cp -r "$root/translator" "$scratch/$1/"; }

copy later-include
sed -i '0,/#include "front\/front.h"/s//#include "codegen\/codegen.h"/' "$scratch/later-include/translator/front/places.c"
plant later-include 'includes "codegen/codegen.h": codegen/ runs after front/'

copy other-impl
sed -i 's|#include "codegen/codegen_impl.h"|#include "codegen/codegen_impl.h"\n#include "analyze/analyze_impl.h"|' \
  "$scratch/other-impl/translator/codegen/host.c"
plant other-impl 'the own header of another folder'

copy unmapped
printf '// stray.c\n' > "$scratch/unmapped/translator/ir/stray.c"
plant unmapped 'translator/ir/stray.c: is named neither in translator/translator.h'

copy stale-map
rm "$scratch/stale-map/translator/output/diff.c"
plant stale-map 'names diff.c under output/, which has no such file'

copy order
sed -i 's/^TRANSLATOR_STAGES := common front ir/TRANSLATOR_STAGES := common ir front/' \
  "$scratch/order/translator/translator.mk"
plant order 'translator.mk builds common ir front'
exit $status
