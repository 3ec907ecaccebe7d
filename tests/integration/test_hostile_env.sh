#!/usr/bin/env bash
# Environment faults: a read-only output directory and a full disk (small tmpfs mounts; as
# root a read-only mount, since permission bits do not stop root), and a missing model
# directory. Each run exits 1 with one error line naming the file; no partial file appears
# under a final name, and what was there before is kept byte for byte.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"
hostile_setup
tiny="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
for i in $(seq 400); do cut -f1 "$tiny/train.txt"; done >"$dir/titles.txt"  # 12000 titles, > 64 KiB of output
faults=0
mounts=()
cleanup() { for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || true; done; }
trap cleanup EXIT

# mount_tmpfs DIR OPTIONS: true when mounted (needs root and permission to mount).
mount_tmpfs() {
  mkdir -p "$1"
  if [[ $(id -u) == 0 ]] && mount -t tmpfs -o "$2" tmpfs "$1" 2>/dev/null; then
    mounts+=("$1")
    return 0
  fi
  return 1
}

no_temp_files() {  # DIR: no *.tmp.* left by a failed run
  if find "$1" -name '*.tmp.*' | grep -q .; then find "$1" -name '*.tmp.*' >&2; fail "temporary files left in $1"; fi
}

# --- read-only output directory ---
ro="$dir/ro"
if mount_tmpfs "$ro" ro,size=64k; then
  how="read-only tmpfs"
elif [[ $(id -u) != 0 ]]; then
  mkdir -p "$ro" && chmod 555 "$ro"
  how="chmod 555"
else
  how=""
  echo "test_hostile_env: SKIPPED read-only directory (root, and mount is not permitted here)"
fi
if [[ -n $how ]]; then
  expect_error_naming "$ro/out.jsonl" "$NEWSCLS_BIN" predict --model-dir "$bundle" --input "$dir/titles.txt" --output "$ro/out.jsonl"
  expect_error_naming "$ro/model" "$NEWSCLS_BIN" train --model tfidf-rf --data "$tiny" --out "$ro/model" --set n_trees=2 --set min_df=1
  expect_error_naming "$ro/" "$NEWSCLS_BIN" eval --model-dir "$bundle" --input "$tiny/test.txt" --out "$ro/metrics.json"
  [[ -z $(ls -A "$ro") ]] || fail "files appeared in the read-only directory"
  faults=$((faults + 3))
  echo "test_hostile_env: read-only directory ($how): 3 runs refused"
fi

# --- full disk ---
full="$dir/full"
if mount_tmpfs "$full" size=64k; then
  # Results of earlier runs in the small disk, then fill it up.
  printf 'earlier result\n' >"$full/out.jsonl"
  cp -r "$bundle" "$full/model"
  sha_before=$(cd "$full" && find out.jsonl model -type f -exec sha256sum {} + | sort)
  head -c 1M /dev/zero >"$full/filler" 2>/dev/null || true

  expect_error_naming "$full/out.jsonl" "$NEWSCLS_BIN" predict --model-dir "$bundle" --input "$dir/titles.txt" --output "$full/out.jsonl"
  assert_contains "$HOSTILE_ERR" "No space left on device"
  expect_error_naming "$full/new.jsonl" "$NEWSCLS_BIN" predict --model-dir "$bundle" --input "$dir/titles.txt" --output "$full/new.jsonl"
  [[ ! -e "$full/new.jsonl" ]] || fail "a failed predict left $full/new.jsonl"
  expect_error_naming "$full/model" "$NEWSCLS_BIN" train --model tfidf-rf --data "$tiny" --out "$full/model" --set n_trees=2 --set min_df=1
  expect_error_naming "$full/" "$NEWSCLS_BIN" eval --model-dir "$bundle" --input "$tiny/test.txt" --out "$full/metrics.json"
  [[ ! -e "$full/metrics.json" ]] || fail "a failed eval left $full/metrics.json"
  no_temp_files "$full"
  sha_after=$(cd "$full" && find out.jsonl model -type f -exec sha256sum {} + | sort)
  assert_eq "$sha_before" "$sha_after" "earlier results on the full disk"
  rm -f "$full/filler"
  "$NEWSCLS_BIN" --log-level warn predict --model-dir "$full/model" --input "$tiny/test.txt" --output "$dir/again.jsonl"
  check_jsonl "$dir/again.jsonl" 9 sports finance game
  faults=$((faults + 4))
  echo "test_hostile_env: full disk (64 KiB tmpfs): 4 runs refused, earlier results intact"
else
  echo "test_hostile_env: SKIPPED full disk (mounting a tmpfs needs root and CAP_SYS_ADMIN)"
fi

# --- missing directories ---
expect_error_naming "$dir/gone" "$NEWSCLS_BIN" predict --model-dir "$dir/gone" --input "$dir/titles.txt" --output "$dir/out.jsonl"
expect_error_naming "$dir/gone" "$NEWSCLS_BIN" info --model-dir "$dir/gone"
expect_error_naming "$dir/no-data" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/no-data" --out "$dir/m2"
[[ ! -e "$dir/out.jsonl" && ! -e "$dir/m2" ]] || fail "a failed run left output"
faults=$((faults + 3))
echo "test_hostile_env: ok ($faults faults injected, each refused with one error line naming the file; results lost: 0)"
