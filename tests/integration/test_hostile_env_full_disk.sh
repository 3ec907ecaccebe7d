#!/usr/bin/env bash
# A full disk (a 64 KiB tmpfs, so root with permission to mount): predict, train and eval
# each exit 1 with one error line naming the file; no partial file appears under a final
# name, no temporary file is left, and what was there before is kept byte for byte.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"
hostile_env_setup
full="$dir/full"
mount_tmpfs "$full" size=64k || skip "mounting a tmpfs needs root and CAP_SYS_ADMIN"

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
echo "test_hostile_env_full_disk: ok (4 runs refused, earlier results intact)"
