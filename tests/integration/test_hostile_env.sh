#!/usr/bin/env bash
# Environment faults: a read-only output directory (a read-only tmpfs as root, else
# permission bits; as root without mount, permission bits with root's override dropped) and a
# missing model directory. Each run exits 1 with one error line naming the file and leaves
# nothing behind. The full disk is test_hostile_env_full_disk.sh.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"
hostile_env_setup
faults=0

# --- read-only output directory ---
ro="$dir/ro"
runner=()
if mount_tmpfs "$ro" ro,size=64k; then
  how="read-only tmpfs"
else
  mkdir -p "$ro" && chmod 555 "$ro"
  how="chmod 555"
  if [[ $(id -u) == 0 ]]; then
    # Root writes through permission bits by CAP_DAC_OVERRIDE; run newscls without it.
    setpriv --bounding-set -dac_override,-dac_read_search true 2>/dev/null ||
      skip "as root, neither a tmpfs mount nor dropping CAP_DAC_OVERRIDE is permitted"
    runner=(setpriv --bounding-set -dac_override,-dac_read_search --)
    how="chmod 555, run without CAP_DAC_OVERRIDE"
  fi
fi
expect_error_naming "$ro/out.jsonl" "${runner[@]}" "$NEWSCLS_BIN" predict --model-dir "$bundle" --input "$dir/titles.txt" --output "$ro/out.jsonl"
expect_error_naming "$ro/model" "${runner[@]}" "$NEWSCLS_BIN" train --model tfidf-rf --data "$tiny" --out "$ro/model" --set n_trees=2 --set min_df=1
expect_error_naming "$ro/" "${runner[@]}" "$NEWSCLS_BIN" eval --model-dir "$bundle" --input "$tiny/test.txt" --out "$ro/metrics.json"
[[ -z $(ls -A "$ro") ]] || fail "files appeared in the read-only directory"
faults=$((faults + 3))
echo "test_hostile_env: read-only directory ($how): 3 runs refused"

# --- missing directories ---
expect_error_naming "$dir/gone" "$NEWSCLS_BIN" predict --model-dir "$dir/gone" --input "$dir/titles.txt" --output "$dir/out.jsonl"
expect_error_naming "$dir/gone" "$NEWSCLS_BIN" info --model-dir "$dir/gone"
expect_error_naming "$dir/no-data" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/no-data" --out "$dir/m2"
[[ ! -e "$dir/out.jsonl" && ! -e "$dir/m2" ]] || fail "a failed run left output"
faults=$((faults + 3))
echo "test_hostile_env: ok ($faults faults injected, each refused with one error line naming the file)"
