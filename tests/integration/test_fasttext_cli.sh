#!/usr/bin/env bash
# fasttext through the real binary on a slice of the real data: train, eval, predict (jsonl,
# tsv, stdin), a quantised bundle, autotune, and info.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
make_slice "$dir/data" 3000 50

# One thread: Hogwild training on several is not repeatable, and the quantised bundle below is
# compared with this one.
"$NEWSCLS_BIN" train --model fasttext --data "$dir/data" --out "$dir/model" --threads 1 --seed 3 \
  --set epochs=5 >"$dir/train.out"
m="$dir/model/manifest.json"
assert_eq fasttext "$(json_get "$m" "j['family']")" "family"
assert_eq True "$(json_get "$m" "j['training']['fit']['rows'] > 1000")" "embedding rows"
assert_eq True "$(json_get "$m" "0.6 < j['training']['test_accuracy'] <= 1")" "test accuracy of a 3000-title model"
assert_eq 5 "$(json_get "$m" "j['config']['epochs']")" "--set reaches the config"
train_acc=$(json_get "$dir/model/metrics.json" "j['accuracy']")

# eval on the same split gives the accuracy train reported: the bundle predicts like the model.
"$NEWSCLS_BIN" eval --model-dir "$dir/model" --data "$dir/data" --split test --out "$dir/eval/metrics.json" >/dev/null
assert_eq "$train_acc" "$(json_get "$dir/eval/metrics.json" "j['accuracy']")" "eval accuracy after reload"

cut -f1 "$dir/data/test.txt" >"$dir/titles.txt"
n=$(wc -l <"$dir/titles.txt")
"$NEWSCLS_BIN" predict --model-dir "$dir/model" --input "$dir/titles.txt" --output "$dir/pred.jsonl" --top-k 3
assert_eq "$n" "$(wc -l <"$dir/pred.jsonl")" "one prediction per title"
python3 - "$dir/pred.jsonl" "$dir/data/test.txt" "$dir/data/class.txt" <<'PY'
import json, sys
preds = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
truth = [l.rstrip("\n").split("\t") for l in open(sys.argv[2], encoding="utf-8")]
classes = open(sys.argv[3], encoding="utf-8").read().split("\n")
correct = 0
for p, (title, label) in zip(preds, truth):
    assert p["title"] == title, (p["title"], title)
    assert p["label"] in classes and len(p["top_k"]) == 3, p
    assert p["top_k"][0]["label"] == p["label"] and 0 < p["score"] <= 1, p
    correct += p["label"] == classes[int(label)]
acc = correct / len(preds)
assert acc > 0.6, acc
PY

# tsv from stdin agrees with the jsonl labels.
"$NEWSCLS_BIN" predict --model-dir "$dir/model" --input - --format tsv <"$dir/titles.txt" >"$dir/pred.tsv"
assert_eq "$(python3 -c "import json,sys; print('\n'.join(json.loads(l)['label'] for l in open(sys.argv[1])))" "$dir/pred.jsonl")" \
  "$(cut -f2 "$dir/pred.tsv")" "tsv labels match jsonl labels"

# Quantised: a much smaller payload that loses at most two points on this slice. The same
# one-thread training as above, so the difference is the quantisation's alone.
"$NEWSCLS_BIN" train --model fasttext --data "$dir/data" --out "$dir/small" --threads 1 --seed 3 \
  --set epochs=5 --set quantize=true --set quantize_keep_rows=5000 >/dev/null
full_bytes=$(stat -c %s "$dir/model/fasttext.bin")
small_bytes=$(stat -c %s "$dir/small/fasttext.bin")
(( small_bytes * 3 < full_bytes )) || fail "quantised payload $small_bytes bytes is not a third of $full_bytes"
assert_eq True "$(json_get "$dir/small/manifest.json" "$train_acc - j['training']['test_accuracy'] < 0.02")" \
  "quantised accuracy"

# Autotune with a tiny budget records its trials and the chosen values in the manifest.
"$NEWSCLS_BIN" train --model fasttext --data "$dir/data" --out "$dir/tuned" --threads 2 \
  --set autotune=true --set autotune_seconds=2 --set epochs=3 >/dev/null
assert_eq True "$(json_get "$dir/tuned/manifest.json" "len(j['training']['autotune']['trials']) >= 1")" "autotune trials"
assert_eq True "$(json_get "$dir/tuned/manifest.json" "j['training']['chosen'] == j['config']")" "chosen values"

# --threads wins over the config key threads (bundles written before carry it): a key that
# disagrees is ignored with a warning, in training and when the bundle predicts.
"$NEWSCLS_BIN" train --model fasttext --data "$dir/data" --out "$dir/keyed" --threads 1 --set threads=3 \
  --set epochs=1 >/dev/null 2>"$dir/keyed.err"
assert_contains "$dir/keyed.err" "config key threads=3 is ignored: --threads sets the threads (1 here)"
assert_eq 1 "$(json_get "$dir/keyed/manifest.json" "j['training']['threads']")" "threads used with --set threads=3 --threads 1"
assert_eq 3 "$(json_get "$dir/keyed/manifest.json" "j['config']['threads']")" "the config key kept in the manifest"
echo "央行宣布下调存款准备金率" | "$NEWSCLS_BIN" predict --model-dir "$dir/keyed" --threads 3 >/dev/null 2>"$dir/agree.err"
assert_not_contains "$dir/agree.err" "is ignored"
echo "央行宣布下调存款准备金率" | "$NEWSCLS_BIN" predict --model-dir "$dir/keyed" --threads 2 >/dev/null 2>"$dir/differ.err"
assert_contains "$dir/differ.err" "config key threads=3 is ignored: --threads sets the threads (2 here)"

"$NEWSCLS_BIN" info --model-dir "$dir/model" >"$dir/info.out"
assert_contains "$dir/info.out" "fasttext"
echo "test_fasttext_cli: ok (accuracy $train_acc on $n titles)"
