# payload_corruption_suite FAMILY: trains a tiny bundle of FAMILY, then feeds `predict`
# every payload truncated (to 0 bytes, 7 bytes, half, all but one byte) and with a byte
# flipped (in the magic, the version and at spread offsets), with the manifest's checksums
# rewritten to match, so the family's own reader must catch it or still answer correctly;
# plus two corruptions with the checksums left alone, which the checksum check must catch. Every run exits 0 with well-formed predictions for every title, or 1 with
# one error line naming the payload. Prints the number of corrupt bundles tried.
# Sourced by test_hostile_payload_<family>.sh after lib.sh and hostile_lib.sh.

payload_corruption_suite() {
  local family=$1 dir bundle titles labels tried=0 answered=0 refused=0
  dir=$(scratch_named "hostile_payload_$family")
  HOSTILE_ERR="$dir/err"
  bundle="$dir/bundle"
  # shellcheck disable=SC2046
  train_tiny "$family" "$bundle" $(tiny_settings "$family")
  titles="$dir/titles.txt"
  cut -f1 "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny/test.txt" >"$titles"
  printf '\n   \n\xef\xbf\xbd\xef\xbf\xbd\n' >>"$titles"
  mapfile -t labels < <(json_get "$bundle/manifest.json" "'\n'.join(j['labels'])")
  local n_titles
  n_titles=$(wc -l <"$titles")

  run_corrupt() {  # copy payload how: corrupts a copy of the bundle, runs predict on it
    local payload=$1 how=$2 fix=$3 copy="$dir/copy"
    rm -rf "$copy" && cp -r "$bundle" "$copy"
    eval "$how \"$copy/$payload\""
    [[ $fix == rehash ]] && rehash "$copy"
    tried=$((tried + 1))
    set +e
    "$NEWSCLS_BIN" --log-level warn predict --model-dir "$copy" --input "$titles" --output "$dir/out.jsonl" \
      >/dev/null 2>"$HOSTILE_ERR"
    local rc=$?
    set -e
    case $rc in
      0)
        [[ $fix == rehash ]] || fail "$payload ($how) passed the checksum check"
        check_jsonl "$dir/out.jsonl" "$n_titles" "${labels[@]}" || fail "$payload ($how): malformed predictions"
        answered=$((answered + 1)) ;;
      1)
        expect_one_error "$HOSTILE_ERR" "$copy/$payload"
        [[ $fix == rehash ]] || assert_contains "$HOSTILE_ERR" "checksum mismatch"
        refused=$((refused + 1)) ;;
      *) cat "$HOSTILE_ERR" >&2; fail "$payload ($how, $fix): exit code $rc" ;;
    esac
    rm -f "$dir/out.jsonl"
  }

  "$NEWSCLS_BIN" --log-level warn predict --model-dir "$bundle" --input "$titles" --output "$dir/out.jsonl"
  check_jsonl "$dir/out.jsonl" "$n_titles" "${labels[@]}"

  local payload size
  for payload in $(json_get "$bundle/manifest.json" "' '.join(sorted(j['payloads']))"); do
    size=$(stat -c %s "$bundle/$payload")
    # The checksum check is the same for every payload: two probes suffice.
    run_corrupt "$payload" "truncate -s $((size / 2))" keep
    run_corrupt "$payload" "flip_byte_at $((size / 2))" keep
    # The family's reader: cut in the header, mid-file and by one byte; flips in the magic,
    # the version, and early, middle and late data.
    for keep in 0 7 $((size / 2)) $((size - 1)); do
      run_corrupt "$payload" "truncate -s $keep" rehash
    done
    for offset in 0 5 $((size * 13 / 100)) $((size / 2)) $((size * 89 / 100)); do
      run_corrupt "$payload" "flip_byte_at $offset" rehash
    done
  done
  echo "test_hostile_payload_$family: ok ($tried corrupt bundles: $refused refused with an error naming the payload, $answered answered with well-formed predictions)"
}

flip_byte_at() { flip_byte "$2" "$1"; }
