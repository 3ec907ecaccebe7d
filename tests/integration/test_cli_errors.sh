#!/usr/bin/env bash
# Usage errors exit 2; bad data exits 1 with one "error:" line naming path:line.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)

expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train --model no-such-family
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" predict --model-dir "$dir" --format xml
expect_exit 0 "$dir/err" "$NEWSCLS_BIN" --help
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" --log-level warn trian --model fasttext
assert_contains "$dir/err" "'trian' is no newscls subcommand"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" predict --model-dir "$dir" --output ""
assert_contains "$dir/err" "--output: an empty path"

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

# class.txt: ids are line numbers, so a blank line among the names is an error, not skipped;
# a tab in a name would break the TSV outputs.
printf 'x\t1\n' >"$dir/data/train.txt"
cp "$dir/data/class.txt" "$dir/class.good"
printf 'a\n\nb\nc\n' >"$dir/data/class.txt"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/data" --out "$dir/model"
assert_contains "$dir/err" "class.txt:2: blank line among the class names"
printf 'a\nb\tc\nd\n\n' >"$dir/data/class.txt"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/data" --out "$dir/model"
assert_contains "$dir/err" "class.txt:2: class name holds a tab"
cp "$dir/class.good" "$dir/data/class.txt"

expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/missing"
assert_contains "$dir/err" "no class.txt found"

expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --set no_such_key=1
assert_contains "$dir/err" "config key 'no_such_key': unknown key"

expect_exit 1 "$dir/err" "$NEWSCLS_BIN" info --model-dir "$dir"
assert_contains "$dir/err" "not a newscls bundle"
# An --out that is not a bundle is refused before any training (it was refused after).
mkdir -p "$dir/notes" && echo keep >"$dir/notes/notes.txt"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model fasttext --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --out "$dir/notes"
assert_contains "$dir/err" "$dir/notes: exists and is not a newscls bundle"
assert_not_contains "$dir/err" "trained in"
assert_eq keep "$(cat "$dir/notes/notes.txt")" "the folder's file"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model fasttext --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --out "$dir/notes/notes.txt/m"
assert_contains "$dir/err" "$dir/notes/notes.txt is not a directory"
assert_not_contains "$dir/err" "trained in"
# A "_" key documents a config file; on the command line it is an unknown key, not ignored.
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --set _n_trees=1
assert_contains "$dir/err" "config key '_n_trees': unknown key"

# Options a family would ignore are refused.
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train --model fasttext --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --out "$dir/x" --init "$dir"
assert_contains "$dir/err" "--init"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train --model fasttext --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --out "$dir/x" --resume
assert_contains "$dir/err" "--resume: family 'fasttext' keeps no checkpoints"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --out "$dir/x" --device cuda
assert_contains "$dir/err" "CPU only"

# A family without attention is refused before eval or attention writes anything.
tiny="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
"$NEWSCLS_BIN" train --model fasttext --data "$tiny" --out "$dir/ft" --threads 1 --set epochs=2 >/dev/null 2>&1 || fail "fasttext on tiny"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" eval --model-dir "$dir/ft" --data "$tiny" --dump-attention 2 --out "$dir/att/metrics.json"
assert_contains "$dir/err" "no attention weights"
[[ ! -e "$dir/att" ]] || fail "a refused eval wrote $dir/att"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" eval --model-dir "$dir/ft" --data "$tiny" --dump-attention -3
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" attention --model-dir "$dir/ft" --input "$tiny/test.txt" --out "$dir/attn"
[[ ! -e "$dir/attn" ]] || fail "a refused attention made $dir/attn"

# Numbers out of range are usage errors, not wrapped (--seed -1 was 2^64-1) or ignored
# (--min-score nan turned abstention off).
for args in "predict --model-dir $dir/ft --min-score nan" "eval --model-dir $dir/ft --data $tiny --min-score nan" \
            "predict --model-dir $dir/ft --min-score 1.5" "train --model fasttext --data $tiny --out $dir/s --seed -1" \
            "train --model fasttext --data $tiny --out $dir/s --seed 18446744073709551616"; do
  # shellcheck disable=SC2086
  expect_exit 2 "$dir/err" "$NEWSCLS_BIN" $args </dev/null
done
[[ ! -e "$dir/s" ]] || fail "a refused --seed trained"

# A manifest listing a label twice is refused.
cp -r "$dir/ft" "$dir/ft2"
python3 - "$dir/ft2/manifest.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["labels"][1] = j["labels"][0]
json.dump(j, open(sys.argv[1], "w"))
PY
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" info --model-dir "$dir/ft2"
assert_contains "$dir/err" "is empty or listed twice"

# info checks a bundle's calibration as predict would.
python3 - "$dir/ft/manifest.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["training"]["calibration"] = {"temperature": 1e308, "floor": 1e-6}
json.dump(j, open(sys.argv[1], "w"))
PY
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" info --model-dir "$dir/ft"
assert_contains "$dir/err" "training.calibration needs a temperature in (0, 100]"
echo "test_cli_errors: ok"
