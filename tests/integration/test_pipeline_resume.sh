#!/usr/bin/env bash
# --resume reuses nothing of an older training: a stage retrained because its config changed
# starts over instead of continuing the old <stage>.work checkpoint (so a wider bert trains),
# an interrupted stage resumed with another config starts over too (`train --resume` refuses,
# naming the change), and a cascade whose member failed in this run is skipped, naming the member, instead of being
# built from the member's older bundle. A tiny bert on the tiny fixture keeps it to seconds.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
data="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
tiny=(--set bert.layers=1 --set bert.hidden=16 --set bert.heads=2 --set bert.ff=32 --set bert.max_len=16
      --set bert.bigram_buckets=64 --set bert.vocab_min_count=1 --set bert.pretrain_epochs=0 --set bert.max_steps=2)
run() {
  "$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/run" --stages tfidf-rf,bert,cascade --threads 1 --compress none \
    --set tfidf-rf.n_trees=5 --set cascade.members=tfidf-rf,bert "${tiny[@]}" "$@"
}
stage() {  # STAGE FIELD: the field of the stage's row in pipeline.json
  json_get "$dir/run/pipeline.json" "[s['$2'] for s in j['stages'] if s['stage'] == '$1'][0]"
}

run >/dev/null 2>"$dir/err1" || { cat "$dir/err1" >&2; fail "first run"; }
[[ -d "$dir/run/bert.work/bert_checkpoint" ]] || fail "no bert checkpoint left to resume from"

run --resume --set bert.hidden=32 >/dev/null 2>"$dir/err2" || { cat "$dir/err2" >&2; fail "resume with a wider bert"; }
if grep -q "resuming fine-tuning" "$dir/err2"; then fail "bert continued the checkpoint of its older config"; fi
assert_eq 32 "$(json_get "$dir/run/bert/manifest.json" 'j["config"]["hidden"]')" "bert retrained with the new width"

# A vocab_min_count no character reaches fails only once bert reads the titles.
expect_exit 1 "$dir/err3" run --resume --set bert.hidden=32 --set bert.vocab_min_count=1000000
assert_eq failed "$(stage bert status)" "bert"
assert_eq skipped "$(stage cascade status)" "cascade"
assert_eq "it reads bert, which failed in this run" "$(stage cascade reason)" "cascade's reason"
# Interrupted (a work folder, no bundle yet): resumed with the same settings it continues the
# checkpoint; with another learning rate it starts over; `train --resume` refuses instead.
run --set bert.lr=1e-4 >/dev/null 2>"$dir/err4" || { cat "$dir/err4" >&2; fail "fresh run"; }
rm -r "$dir/run/bert"
run --resume --set bert.lr=1e-4 >/dev/null 2>"$dir/err5" || { cat "$dir/err5" >&2; fail "resume"; }
assert_contains "$dir/err5" "resuming fine-tuning"
rm -r "$dir/run/bert"
run --resume --set bert.lr=2e-4 >/dev/null 2>"$dir/err6" || { cat "$dir/err6" >&2; fail "resume, another lr"; }
assert_contains "$dir/err6" "was started with other settings (lr 0.0001 -> 0.0002): starting over"
if grep -q "resuming fine-tuning" "$dir/err6"; then fail "bert continued a checkpoint of another learning rate"; fi
bare=("${tiny[@]/#bert./}")
expect_exit 2 "$dir/err7" "$NEWSCLS_BIN" train --model bert --data "$data" --out "$dir/run/bert" --threads 1 --resume \
  "${bare[@]}" --set lr=3e-4
assert_contains "$dir/err7" "holds a training started with other settings (lr 0.0002 -> 0.0003)"
cp -r "$data" "$dir/data2"
printf '一个新加的训练标题\t0\n' >>"$dir/data2/train.txt"
expect_exit 2 "$dir/err7b" "$NEWSCLS_BIN" train --model bert --data "$dir/data2" --out "$dir/run/bert" --threads 1 --resume \
  "${bare[@]}" --set lr=2e-4
assert_contains "$dir/err7b" "other settings (data: other content, sha256 "
# Keys that change how it runs, not what it learns, may differ on resume.
"$NEWSCLS_BIN" train --model bert --data "$data" --out "$dir/run/bert" --threads 1 --resume "${bare[@]}" \
  --set lr=2e-4 --set max_threads=2 --set predict_batch_size=7 >/dev/null 2>"$dir/err8" \
  || { cat "$dir/err8" >&2; fail "resume with other threads and prediction batches"; }
assert_contains "$dir/err8" "resuming fine-tuning"
# Resumed: a run folder named by another path (the cascade compared its members as typed) and a
# fasttext whose autotune stored the values it chose (compared with the asked ones, every
# --resume searched again and retrained the cascade).
run2() {  # RUN_FOLDER ARGS...
  "$NEWSCLS_BIN" pipeline --data "$data" --out "$1" --stages fasttext,tfidf-rf,cascade --threads 1 --compress none \
    --set tfidf-rf.n_trees=5 --set fasttext.autotune=true --set fasttext.autotune_seconds=1 --set fasttext.epochs=1 --set fasttext.lr=0.000001 \
    --set cascade.members=fasttext,tfidf-rf "${@:2}"
}
(cd "$dir" && run2 rel >/dev/null 2>"$dir/err9") || { cat "$dir/err9" >&2; fail "run into a relative folder"; }
# (a base config this poor loses to autotune's first draw: the stored config is another)
[[ "$(json_get "$dir/rel/fasttext/manifest.json" 'j["config"]["lr"]')" != 1e-06 ]] || fail "autotune kept the asked config"
(cd "$dir" && run2 "$dir/./rel" --resume >/dev/null 2>"$dir/err10") || { cat "$dir/err10" >&2; fail "resume by another path"; }
for s in fasttext tfidf-rf cascade; do
  assert_eq resumed "$(json_get "$dir/rel/pipeline.json" "[x['status'] for x in j['stages'] if x['stage'] == '$s'][0]")" "$s"
done
echo "test_pipeline_resume: ok"
