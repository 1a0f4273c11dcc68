#!/usr/bin/env bash
# lowering-check.sh ORIGINAL.cu LOWERED.cu: checks that LOWERED differs from
# ORIGINAL only as the translator's host lowering allows (leading // comment
# lines aside): each <<<>>> launch became one coconet_host_launch(...) and
# each extern __shared__ declaration one coconet_host_dynamic_shared() line.
original=$1 lowered=$2
strip() { sed '1,/^[^/]/{/^\/\//d}' "$1"; }
diff_out=$(diff <(strip "$original") <(strip "$lowered"))
removed=$(grep -c '^< ' <<<"$diff_out")
added=$(grep -c '^> ' <<<"$diff_out")
bad_removed=$(grep '^< ' <<<"$diff_out" | grep -v -e '<<<.*>>>' -e 'extern __shared__')
bad_added=$(grep '^> ' <<<"$diff_out" | grep -v -e 'coconet_host_launch(COCONET_HOST_\(SIMPLE\|SYNC\), ' \
                                                -e '= (.*) *coconet_host_dynamic_shared();')
if [ -n "$bad_removed$bad_added" ] || [ "$removed" != "$added" ] || [ "$removed" = 0 ]; then
  echo "lowering-check: $lowered is not a launch/shared-memory lowering of $original:" >&2
  echo "$diff_out" >&2
  exit 1
fi
echo "lowering-check: $lowered = $original with $removed line(s) lowered"
