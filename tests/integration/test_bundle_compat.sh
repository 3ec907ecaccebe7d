#!/usr/bin/env bash
# Bundles written by an earlier build (tests/fixtures/bundles_v1, made by its make.sh: one per
# kind of payload) load, and info, predict and eval print byte for byte what that build printed.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
fixtures=$NEWSCLS_SOURCE_DIR/tests/fixtures/bundles_v1
cd "$fixtures"  # record.sh reads bundles/, titles.txt and data/ from here
failed=()
# Byte for byte, or with a tolerance every number within it of the recorded one and the rest
# byte for byte: NEWSCLS_COMPAT_TOLERANCE for the sanitizer build (scripts/sanitizer_env.sh: -O1
# orders the int8 kernels' float sums otherwise than the Release build that recorded the
# fixtures did), and 1e-5 for bert's float bundles anywhere: OpenBLAS picks its kernel by CPU,
# and a Zen kernel sums in another order than the Skylake-X one that recorded them (a 1e-6
# difference in the sixth decimal).
same() {  # EXPECTED ACTUAL [TOLERANCE]
  diff -u "$1" "$2" >&2 && return 0
  local tolerance=${NEWSCLS_COMPAT_TOLERANCE:-${3:-}}
  [[ -n $tolerance ]] || return 1
  python3 - "$1" "$2" "$tolerance" <<'PY'
import re, sys
number = re.compile(r"\d+\.\d+(?:e-?\d+)?")
def parts(path):
    text = open(path, encoding="utf-8").read()
    return number.split(text), [float(x) for x in number.findall(text)]
(text_a, a), (text_b, b) = parts(sys.argv[1]), parts(sys.argv[2])
close = len(a) == len(b) and all(abs(x - y) <= float(sys.argv[3]) for x, y in zip(a, b))
sys.exit(0 if text_a == text_b and close else 1)
PY
}
for bundle in bundles/*/; do
  name=$(basename "$bundle")
  ./record.sh "$NEWSCLS_BIN" "$name" "$dir" 2>"$dir/$name.err" || { cat "$dir/$name.err" >&2; failed+=("$name"); continue; }
  tolerance=""
  [[ $name == bert* ]] && tolerance=1e-5
  for expected in expected/"$name".*; do
    same "$expected" "$dir/$(basename "$expected")" "$tolerance" || failed+=("$name ($(basename "$expected"))")
  done
done
((${#failed[@]} == 0)) || fail "bundles of bundles_v1 that changed: ${failed[*]}"
echo "bundle compat: ok ($(ls -d bundles/*/ | wc -l) bundles)"
