#!/usr/bin/env bash
# What the pipeline cannot carry out as asked is a usage error (exit 2) before any stage runs,
# and leaves no run folder: an unknown --compress method, a --config-dir that is no folder, a
# stage listed twice, a cascade listed before a member it reads, a --set value outside the
# range its family accepts, a --set key its family does not know (for a stage not in --stages
# too), a run folder that is a model bundle, a run path with a comma when the cascade lists the
# run's stages (commas separate its members).
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
data="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"

refused() {  # MESSAGE PIPELINE-ARGS...
  local want=$1
  shift
  expect_exit 2 "$dir/err" "$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/run" "$@"
  assert_contains "$dir/err" "$want"
  [[ ! -e "$dir/run" ]] || fail "the run folder was made before refusing: $*"
}

refused "--compress quantise" --stages tfidf-rf --compress quantise
refused "--config-dir $dir/missing" --stages tfidf-rf --config-dir "$dir/missing"
refused "stage fasttext is listed twice" --stages fasttext,fasttext
refused "stage cascade reads tfidf-rf" --stages cascade,tfidf-rf,fasttext --set cascade.members=tfidf-rf,fasttext
refused "stage tfidf-rf: config key 'n_trees'" --stages fasttext,tfidf-rf --set tfidf-rf.n_trees=-3
refused "stage tfidf-rf (not in --stages): config key 'nosuch'" --stages fasttext --set tfidf-rf.nosuch=1
refused "stage tfidf-rf (not in --stages): config key 'calibrate'" --stages fasttext --set tfidf-rf.calibrate=maybe

mkdir -p "$dir/bundle" && echo '{}' >"$dir/bundle/manifest.json"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/bundle" --stages tfidf-rf
assert_contains "$dir/err" "pipeline --out $dir/bundle is a model bundle"
[[ ! -e "$dir/bundle/tfidf-rf" ]] || fail "a stage ran inside a bundle"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/a,b" --stages tfidf-rf,fasttext,cascade \
  --set cascade.members=tfidf-rf,fasttext
assert_contains "$dir/err" "member folder '$dir/a,b/tfidf-rf' holds a comma"
[[ ! -e "$dir/a,b" ]] || fail "the run folder was made before refusing a comma"
echo "test_pipeline_usage: ok"
