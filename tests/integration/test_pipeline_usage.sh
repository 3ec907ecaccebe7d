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
# An empty stage name was dropped ("a,,b" ran a,b) or took the next argument as a stage.
refused "--stages 'tfidf-rf,,fasttext': a stage name is empty" --stages tfidf-rf,,fasttext
refused "--stages ',': a stage name is empty" --stages , --seed 1
refused "--stages '': a stage name is empty" --stages ""
refused "--stages: 'fastext' is not a stage (stages: tfidf-rf, fasttext, bert, llm, cascade)" --stages fastext
refused "stage cascade reads tfidf-rf" --stages cascade,tfidf-rf,fasttext --set cascade.members=tfidf-rf,fasttext
refused "stage tfidf-rf: config key 'n_trees'" --stages fasttext,tfidf-rf --set tfidf-rf.n_trees=-3
refused "stage tfidf-rf (not in --stages): config key 'nosuch'" --stages fasttext --set tfidf-rf.nosuch=1
refused "stage tfidf-rf (not in --stages): config key 'calibrate'" --stages fasttext --set tfidf-rf.calibrate=maybe
# What bert's training refuses in its own architecture, before the stages ahead of it run.
refused "stage bert: config key 'freeze_layers': 9 exceeds layers" --stages fasttext,bert --set bert.freeze_layers=9
refused "stage bert: config key 'tokenizer'" --stages fasttext,bert --set bert.tokenizer=wordpiece
# A cascade fits no temperature of its own: calibrate= would do nothing.
refused "stage cascade: config key 'calibrate': a cascade answers" --stages fasttext,cascade --set cascade.calibrate=false
refused "stage cascade (not in --stages): config key 'calibrate'" --stages fasttext --set cascade.calibrate=true
refused "--attention-titles" --stages fasttext --attention-titles -1
# --config-dir: a file named after no stage would be ignored; bad JSON or an unknown key is the
# request's fault, for a stage not in --stages too.
mkdir -p "$dir/cfg" && echo '{"dim": 20}' >"$dir/cfg/fastext.json"
refused "$dir/cfg/fastext.json names no stage" --stages fasttext --config-dir "$dir/cfg"
rm "$dir/cfg/fastext.json" && printf '{"dim": 20,\n' >"$dir/cfg/fasttext.json"
refused "stage fasttext: $dir/cfg/fasttext.json: not valid JSON" --stages fasttext --config-dir "$dir/cfg"
rm "$dir/cfg/fasttext.json" && echo '[1, 2]' >"$dir/cfg/tfidf-rf.json"
refused "stage tfidf-rf (not in --stages)" --stages fasttext --config-dir "$dir/cfg"
rm "$dir/cfg/tfidf-rf.json"
# A missing data folder is said once, before any stage (each stage failed on it).
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" pipeline --data "$dir/nodata" --out "$dir/run" --stages tfidf-rf,fasttext
assert_eq 1 "$(grep -c "$dir/nodata: no such data folder" "$dir/err")" "lines naming the missing data folder"
[[ ! -e "$dir/run" ]] || fail "the run folder was made for missing data"
# So is a bad line of dev.txt: each stage failed on it in turn, the report listing it three times.
mkdir -p "$dir/baddev" && cp "$data"/*.txt "$dir/baddev/" && sed -i '2s/\t[0-9]*$/\t12/' "$dir/baddev/dev.txt"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" pipeline --data "$dir/baddev" --out "$dir/run" --stages tfidf-rf,fasttext
assert_eq 1 "$(grep -c 'dev.txt:2: label 12' "$dir/err")" "lines naming the bad dev line"
[[ ! -e "$dir/run" ]] || fail "the run folder was made for bad data"
# --resume without --out resumed nothing: a new runs/<timestamp>, every stage trained again.
mkdir -p "$dir/cwd" && (cd "$dir/cwd" && expect_exit 2 "$dir/err" "$NEWSCLS_BIN" pipeline --data "$data" --stages fasttext --resume)
assert_contains "$dir/err" "--resume: name the run folder to continue with --out"
[[ ! -e "$dir/cwd/runs" ]] || fail "pipeline --resume without --out made a run folder"
refused "stage bert: config key 'positions'" --stages fasttext,bert --set bert.positions=10
# A stage folder holding the user's files is refused before the stages before it train.
mkdir -p "$dir/run2/fasttext" && echo '{}' >"$dir/run2/fasttext/manifest.json" && echo note >"$dir/run2/fasttext/NOTES.md"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/run2" --stages tfidf-rf,fasttext
assert_contains "$dir/err" "NOTES.md"
[[ ! -e "$dir/run2/tfidf-rf" ]] || fail "tfidf-rf trained before the refusal"
# Under --resume a kept stage replaces nothing: a file the user put in it does not stop the run.
"$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/run3" --stages fasttext --compress none >/dev/null 2>&1 || fail "pipeline run3"
echo note >"$dir/run3/fasttext/NOTES.md"
"$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/run3" --stages fasttext --compress none --resume >/dev/null 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "--resume over a kept stage holding a user's file"; }
assert_eq resumed "$(json_get "$dir/run3/pipeline.json" 'j["stages"][0]["status"]')" "the kept stage"

mkdir -p "$dir/bundle" && echo '{}' >"$dir/bundle/manifest.json"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/bundle" --stages tfidf-rf
assert_contains "$dir/err" "pipeline --out $dir/bundle is a model bundle"
[[ ! -e "$dir/bundle/tfidf-rf" ]] || fail "a stage ran inside a bundle"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/a,b" --stages tfidf-rf,fasttext,cascade \
  --set cascade.members=tfidf-rf,fasttext
assert_contains "$dir/err" "member folder '$dir/a,b/tfidf-rf' holds a comma"
[[ ! -e "$dir/a,b" ]] || fail "the run folder was made before refusing a comma"
echo "test_pipeline_usage: ok"
