#!/usr/bin/env bash
# A stage that fails makes `newscls pipeline` exit 1 after the other stages ran, and the run
# folder records which stage failed; a skipped stage (llm without a key) is no failure.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
data="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"

# A cascade of bundles that do not exist fails only once it trains.
NEWSCLS_LLM_API_KEY= DEEPSEEK_API_KEY= expect_exit 1 "$dir/err1" \
  "$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/run" --stages cascade,tfidf-rf,llm \
  --set cascade.members="$dir/none-a,$dir/none-b" --set tfidf-rf.n_trees=5
assert_eq failed "$(json_get "$dir/run/pipeline.json" 'j["stages"][0]["status"]')" "cascade status"
assert_contains "$dir/run/pipeline.json" "none-a"
assert_eq done "$(json_get "$dir/run/pipeline.json" 'j["stages"][1]["status"]')" "tfidf-rf still ran"
assert_eq skipped "$(json_get "$dir/run/pipeline.json" 'j["stages"][2]["status"]')" "llm status"
assert_contains "$dir/err1" "a stage failed"

NEWSCLS_LLM_API_KEY= DEEPSEEK_API_KEY= expect_exit 0 "$dir/err2" \
  "$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/run2" --stages tfidf-rf,llm --set tfidf-rf.n_trees=5
assert_eq skipped "$(json_get "$dir/run2/pipeline.json" 'j["stages"][1]["status"]')" "llm skipped"
# A mistyped setting is a usage error before any stage runs.
expect_exit 2 "$dir/err3" "$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/run3" --stages tfidf-rf,fasttext \
  --set tfidf-rf.n_trees=5 --set fasttext.bogus=1
assert_contains "$dir/err3" "stage fasttext: config key 'bogus'"
[[ ! -e "$dir/run3" ]] || fail "the run folder was made before the mistyped setting was refused"
# A failed stage's compression stage is listed as skipped, naming why (it was left out).
expect_exit 1 "$dir/err4" "$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/run4" --stages bert --compress quantize \
  --set bert.layers=1 --set bert.vocab_min_count=1000000
assert_eq "bert-quantize skipped" "$(json_get "$dir/run4/pipeline.json" 'j["stages"][1]["stage"] + " " + j["stages"][1]["status"]')" \
  "the compression stage of a failed bert"
assert_contains "$dir/run4/pipeline.json" "it reads bert, which failed in this run"
assert_contains "$dir/err4" "see above and $dir/run4/pipeline.json"
echo "test_pipeline_failure: ok"
