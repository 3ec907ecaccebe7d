#!/usr/bin/env bash
# Bundles written by an earlier build (tests/fixtures/bundles_v1, made by its make.sh: one per
# kind of payload) load, and info, predict and eval print byte for byte what that build printed.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
fixtures=$NEWSCLS_SOURCE_DIR/tests/fixtures/bundles_v1
cd "$fixtures"  # record.sh reads bundles/, titles.txt and data/ from here
failed=()
for bundle in bundles/*/; do
  name=$(basename "$bundle")
  ./record.sh "$NEWSCLS_BIN" "$name" "$dir" 2>"$dir/$name.err" || { cat "$dir/$name.err" >&2; failed+=("$name"); continue; }
  for expected in expected/"$name".*; do
    diff -u "$expected" "$dir/$(basename "$expected")" >&2 || failed+=("$name ($(basename "$expected"))")
  done
done
((${#failed[@]} == 0)) || fail "bundles of bundles_v1 that changed: ${failed[*]}"
echo "bundle compat: ok ($(ls -d bundles/*/ | wc -l) bundles)"
