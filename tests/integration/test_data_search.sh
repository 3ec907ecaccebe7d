#!/usr/bin/env bash
# Where newscls finds its data when none is named: data/thucnews, else the committed demo set
# data/demo (said once on stderr), else an error naming both; --data and $NEWSCLS_DATA come
# first. On the demo set the pipeline says so in its report, with the settings it used for the
# set's size, and a stage without its API key (llm) is shown skipped while the run exits 0.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
unset NEWSCLS_DATA NEWSCLS_LLM_API_KEY DEEPSEEK_API_KEY
tiny="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
ft=(--model fasttext --threads 1 --set epochs=1)

# Nothing here: an error naming every place looked in.
mkdir -p "$dir/bare" && cd "$dir/bare"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train "${ft[@]}" --out m
assert_contains "$dir/err" "looked in: data/thucnews, data/demo"
assert_contains "$dir/err" "data/README.md"

# The demo set alone: used, and said once.
mkdir -p "$dir/clone/data" && cd "$dir/clone"
cp -r "$(demo_data_dir)" data/demo
"$NEWSCLS_BIN" train "${ft[@]}" --out m >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "train on the demo set"; }
assert_eq 1 "$(grep -c 'using the demo set data/demo' "$dir/err")" "times the demo set is announced"
assert_contains "$dir/err" "data data/demo: train 3000 dev 500 test 1000 titles"

# data/thucnews wins over the demo set, and $NEWSCLS_DATA over both, without a word of the demo.
cp -r "$tiny" data/thucnews
"$NEWSCLS_BIN" train "${ft[@]}" --out m2 >/dev/null 2>"$dir/err"
assert_contains "$dir/err" "data data/thucnews:"
assert_not_contains "$dir/err" "demo set"
rm -r data/thucnews
NEWSCLS_DATA="$tiny" "$NEWSCLS_BIN" train "${ft[@]}" --out m3 >/dev/null 2>"$dir/err"
assert_contains "$dir/err" "data $tiny:"
assert_not_contains "$dir/err" "demo set"

# The pipeline on the demo set: its report names the set and the settings for its size; the llm
# stage has no key, so it is skipped with its reason (report and stderr) and the run exits 0.
"$NEWSCLS_BIN" pipeline --stages fasttext,llm --out run --threads 1 --compress none >/dev/null 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "pipeline on the demo set"; }
assert_eq 1 "$(grep -c 'using the demo set data/demo' "$dir/err")" "times the pipeline announces the demo set"
assert_contains "$dir/err" "stage llm: skipped: "
for report in run/report.md run/report.html; do
  assert_contains "$report" "Data: data/demo, the demo set"
  assert_contains "$report" "bert."
  assert_contains "$report" "skipped: "
done
assert_eq skipped "$(json_get run/pipeline.json "[s['status'] for s in j['stages'] if s['stage'] == 'llm'][0]")" "llm's status"

# A data folder's settings file that is not a list of settings is refused, naming the file.
cp -r "$tiny" "$dir/own" && echo '{"settings": "bert.epochs=3"}' >"$dir/own/pipeline_settings.json"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" pipeline --data "$dir/own" --stages fasttext --out "$dir/own-run"
assert_contains "$dir/err" "$dir/own/pipeline_settings.json"
[[ ! -e "$dir/own-run" ]] || fail "a refused pipeline made its run folder"
echo "test_data_search: ok"
