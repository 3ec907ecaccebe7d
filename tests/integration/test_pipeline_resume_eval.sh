#!/usr/bin/env bash
# pipeline --resume keeps a stage only while its metrics.json is training's: on this run's test
# split, calibrated as the manifest is. An `eval` into the bundle since (the default --out) on
# dev, on another file or --uncalibrated has the stage trained again, the log saying why,
# instead of the report showing those figures as test figures.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
data="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
run() {
  "$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/run" --stages fasttext --threads 1 --compress none \
    --set fasttext.epochs=1 "$@" >/dev/null
}
status() {
  json_get "$dir/run/pipeline.json" "[s['status'] for s in j['stages'] if s['stage'] == 'fasttext'][0]"
}

run 2>"$dir/err" || { cat "$dir/err" >&2; fail "first run"; }
run --resume 2>"$dir/err" || { cat "$dir/err" >&2; fail "resume"; }
assert_eq resumed "$(status)" "a complete stage"

retrained_after() {  # WHY EVAL-ARGS...: after this eval into the bundle, --resume trains again
  local why=$1
  shift
  "$NEWSCLS_BIN" eval --model-dir "$dir/run/fasttext" --data "$data" "$@" >/dev/null 2>"$dir/err" \
    || { cat "$dir/err" >&2; fail "eval $*"; }
  run --resume 2>"$dir/err" || { cat "$dir/err" >&2; fail "resume after eval $*"; }
  assert_eq done "$(status)" "the stage after eval $*"
  assert_contains "$dir/err" "stage fasttext: not resumed: its metrics.json is $why"
  assert_eq test "$(json_get "$dir/run/fasttext/metrics.json" "j['split']")" "metrics.json's split after eval $*"
}
retrained_after "not of this run's test split" --split dev
retrained_after "not of this run's test split" --input "$data/dev.txt"
retrained_after "not calibrated as its manifest is" --uncalibrated
# The test split, calibrated: the same figures as training's; the stage is kept.
"$NEWSCLS_BIN" eval --model-dir "$dir/run/fasttext" --data "$data" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "eval"; }
run --resume 2>"$dir/err" || { cat "$dir/err" >&2; fail "resume after eval on test"; }
assert_eq resumed "$(status)" "after eval on test"
# The same data reached by another spelling (relative when trained, absolute on resume) is
# this run's test split: resumed (a review found it retrained).
mkdir -p "$dir/copy" && cp -r "$data" "$dir/copy/tiny"
(cd "$dir/copy" && "$NEWSCLS_BIN" pipeline --data tiny --out "$dir/run2" --stages fasttext --threads 1 --compress none \
  --set fasttext.epochs=1 >/dev/null 2>"$dir/err") || { cat "$dir/err" >&2; fail "run from a relative --data"; }
"$NEWSCLS_BIN" pipeline --data "$dir/copy/tiny" --out "$dir/run2" --stages fasttext --threads 1 --compress none \
  --set fasttext.epochs=1 --resume >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "resume with an absolute --data"; }
assert_eq resumed "$(json_get "$dir/run2/pipeline.json" "[s['status'] for s in j['stages'] if s['stage'] == 'fasttext'][0]")" \
  "a stage trained on a relative --data, resumed with an absolute one"
echo "test_pipeline_resume_eval: ok"
