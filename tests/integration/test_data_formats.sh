#!/usr/bin/env bash
# Labelled files instead of a data folder (docs/DATA_FORMATS.md): train --train on a CSV with
# the class list from its label names (in the manifest and `info`), no dev file (a recorded
# split), no test file (figures said to be dev's); eval --input in another format with names;
# pipeline --train; a bad record exits 1 naming file:line; conflicting options exit 2.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
names=(sports finance game)
{
  echo "category,title"
  while IFS=$'\t' read -r title id; do printf '%s,"%s"\n' "${names[$id]}" "${title//\"/\"\"}"; done \
    <"$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny/train.txt"
} >"$dir/train.csv"
while IFS=$'\t' read -r title id; do
  python3 -c 'import json,sys; print(json.dumps({"text": sys.argv[1], "label": sys.argv[2]}, ensure_ascii=False))' \
    "$title" "${names[$id]}"
done <"$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny/test.txt" >"$dir/test.jsonl"

"$NEWSCLS_BIN" train --model fasttext --train "$dir/train.csv" --text-column title --label-column category \
  --out "$dir/ft" --set epochs=2 --threads 1 >"$dir/out" 2>"$dir/err" || { cat "$dir/err" >&2; fail "train --train CSV"; }
assert_contains "$dir/out" "fasttext on dev (bundle $dir/ft)"
assert_contains "$dir/err" "no test file: the test figures are those of the dev set"
"$NEWSCLS_BIN" info --model-dir "$dir/ft" >"$dir/info.json"
assert_eq "['finance', 'game', 'sports']" "$(json_get "$dir/info.json" "j['labels']")" "labels from the CSV's names"
assert_eq "3 0.1 1" "$(json_get "$dir/info.json" \
  "j['training']['data_files']['dev_split']['titles'], j['training']['data_files']['dev_split']['fraction'], j['training']['data_files']['dev_split']['seed']" | tr -d '(),')" \
  "dev split recorded"
assert_eq dev "$(json_get "$dir/ft/metrics.json" "j['split']")" "metrics.json split"

"$NEWSCLS_BIN" eval --model-dir "$dir/ft" --input "$dir/test.jsonl" --out "$dir/e/metrics.json" >"$dir/out" 2>"$dir/err" \
  || { cat "$dir/err" >&2; fail "eval --input JSONL with class names"; }
assert_eq "9 input" "$(json_get "$dir/e/metrics.json" "j['count'], j['split']" | tr -d "(),'")" "titles evaluated"

# pipeline --train: no compression stage by default, the report says whose figures, --resume keeps the stage.
run_pipeline() {
  "$NEWSCLS_BIN" pipeline --train "$dir/train.csv" --text-column title --label-column category --stages fasttext \
    --out "$dir/run" --set fasttext.epochs=2 --threads 1 "$@" >"$dir/out" 2>"$dir/err" \
    || { cat "$dir/err" >&2; fail "pipeline --train $*"; }
}
run_pipeline
assert_contains "$dir/run/report.md" "Metrics are on the dev split: no --test file was given"
assert_not_contains "$dir/out" "quantize"
run_pipeline --resume
assert_contains "$dir/out" "fasttext   resumed"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" pipeline --train "$dir/train.csv" --compress quantize --out "$dir/run2"
assert_contains "$dir/err" "with --train, give --compress none"

printf 'category,title\nsports,"a"\nfinance,b,extra\n' >"$dir/bad.csv"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model fasttext --train "$dir/bad.csv" --text-column title \
  --label-column category --out "$dir/bad"
assert_contains "$dir/err" "error: $dir/bad.csv:3: 3 fields where the header has 2"
[[ ! -e "$dir/bad" ]] || fail "a refused run left $dir/bad"

expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train --model fasttext --dev "$dir/test.jsonl"
assert_contains "$dir/err" "--dev requires --train"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train --model fasttext --train "$dir/train.csv" --data "$dir"
assert_contains "$dir/err" "--data excludes --train"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" eval --model-dir "$dir/ft" --format csv
assert_contains "$dir/err" "--format requires --input"
echo "test_data_formats: ok"
