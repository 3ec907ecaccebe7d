#!/usr/bin/env bash
# A full disk (a 256 KiB tmpfs, so root with permission to mount): predict, train and eval
# each exit 1 with one error line naming the file; no partial file appears under a final
# name, no temporary file is left, and what was there before is kept byte for byte (an
# evaluation's files as a set). A read-only one refuses train before the work.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"
hostile_env_setup
full="$dir/full"
mount_tmpfs "$full" size=256k || skip "mounting a tmpfs needs root and CAP_SYS_ADMIN"

# Results of earlier runs in the small disk, then fill it up.
printf 'earlier result\n' >"$full/out.jsonl"
cp -r "$bundle" "$full/model"
"$NEWSCLS_BIN" eval --model-dir "$bundle" --input "$tiny/dev.txt" --out "$full/e/metrics.json" >/dev/null 2>"$HOSTILE_ERR" ||
  { cat "$HOSTILE_ERR" >&2; fail "the earlier eval"; }
sha_before=$(cd "$full" && find out.jsonl model e -type f -exec sha256sum {} + | sort)
head -c 1M /dev/zero >"$full/filler" 2>/dev/null || true

expect_error_naming "$full/out.jsonl" "$NEWSCLS_BIN" predict --model-dir "$bundle" --input "$dir/titles.txt" --output "$full/out.jsonl"
assert_contains "$HOSTILE_ERR" "No space left on device"
expect_error_naming "$full/new.jsonl" "$NEWSCLS_BIN" predict --model-dir "$bundle" --input "$dir/titles.txt" --output "$full/new.jsonl"
[[ ! -e "$full/new.jsonl" ]] || fail "a failed predict left $full/new.jsonl"
expect_error_naming "$full/model" "$NEWSCLS_BIN" train --model tfidf-rf --data "$tiny" --out "$full/model" --set n_trees=2 --set min_df=1
expect_error_naming "$full/" "$NEWSCLS_BIN" eval --model-dir "$bundle" --input "$tiny/test.txt" --out "$full/metrics.json"
[[ ! -e "$full/metrics.json" ]] || fail "a failed eval left $full/metrics.json"
# Over an earlier evaluation: its files are kept as a set (a new predictions.tsv stood beside
# the old metrics.json).
expect_exit 1 "$HOSTILE_ERR" "$NEWSCLS_BIN" eval --model-dir "$bundle" --input "$tiny/test.txt" --out "$full/e/metrics.json"
# --fit-calibration whose evaluation cannot be written leaves the bundle's manifest as it was
# (the manifest was rewritten first).
train_tiny tfidf-rf "$dir/fitme" --set n_trees=3 --set min_df=1 --set calibrate=false
manifest_before=$(sha256sum <"$dir/fitme/manifest.json")
expect_exit 1 "$HOSTILE_ERR" "$NEWSCLS_BIN" eval --model-dir "$dir/fitme" --data "$tiny" --split dev --fit-calibration \
  --out "$full/fit/metrics.json"
assert_eq "$manifest_before" "$(sha256sum <"$dir/fitme/manifest.json")" "the manifest after a failed --fit-calibration"
no_temp_files "$full"
sha_after=$(cd "$full" && find out.jsonl model e -type f -exec sha256sum {} + | sort)
assert_eq "$sha_before" "$sha_after" "earlier results on the full disk"
rm -f "$full/filler"
"$NEWSCLS_BIN" --log-level warn predict --model-dir "$full/model" --input "$tiny/test.txt" --output "$dir/again.jsonl"
check_jsonl "$dir/again.jsonl" 9 sports finance game
# A read-only file system: train says so before training (it trained, evaluated, then failed).
mount_tmpfs "$dir/ro" size=64k,ro || fail "mounting a read-only tmpfs"
expect_error_naming "$dir/ro/model" "$NEWSCLS_BIN" train --model tfidf-rf --data "$tiny" --out "$dir/ro/model" --set n_trees=2 --set min_df=1
assert_contains "$HOSTILE_ERR" "cannot be written: Read-only file system"
assert_not_contains "$HOSTILE_ERR" "trained in"
echo "test_hostile_env_full_disk: ok (7 runs refused, earlier results intact)"
