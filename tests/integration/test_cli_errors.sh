#!/usr/bin/env bash
# Usage errors exit 2; bad data exits 1 with one "error:" line naming path:line.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)

expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train --model no-such-family
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" predict --model-dir "$dir" --format xml
expect_exit 0 "$dir/err" "$NEWSCLS_BIN" --help

mkdir -p "$dir/data"
cp "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny/"*.txt "$dir/data/"
printf 'good title\t1\nline without a tab\n' >"$dir/data/train.txt"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/data" --out "$dir/model"
assert_eq 1 "$(grep -c '^error:' "$dir/err")" "error lines"
assert_contains "$dir/err" "error: $dir/data/train.txt:2: no tab between title and label"
[[ ! -e "$dir/model" ]] || fail "a failed run left $dir/model"

printf 'x\t1\ny\t12\n' >"$dir/data/train.txt"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/data" --out "$dir/model"
assert_contains "$dir/err" "train.txt:2: label 12 out of range 0..2"

expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/missing"
assert_contains "$dir/err" "no class.txt found"

expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --set no_such_key=1
assert_contains "$dir/err" "config key 'no_such_key': unknown key"

expect_exit 1 "$dir/err" "$NEWSCLS_BIN" info --model-dir "$dir"
assert_contains "$dir/err" "not a newscls bundle"
echo "test_cli_errors: ok"
