#!/usr/bin/env bash
# ctest-labels: bert-training
# bert through the real binary with a tiny config: pretrain, train --init, train with its
# own pretraining, eval --dump-attention, attention, predict, and a corrupt bundle.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
make_slice "$dir/data" 400 10
tiny=(--threads 1 --set layers=1 --set hidden=32 --set heads=2 --set ff=64 --set max_len=32
      --set batch_size=16 --set predict_batch_size=64)

"$NEWSCLS_BIN" pretrain --model bert --data "$dir/data" --out "$dir/encoder" "${tiny[@]}" \
  --set pretrain_epochs=1 --set pretrain_max_steps=10 >"$dir/pretrain.out"
assert_eq bert-encoder "$(json_get "$dir/encoder/manifest.json" "j['family']")" "encoder family"
assert_eq 10 "$(json_get "$dir/encoder/manifest.json" "j['training']['pretrain_steps']")" "pretrain steps"
# compress names what an encoder is for (it said "lists no payload 'weights.bin'").
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" compress --model-dir "$dir/encoder" --method quantize --out "$dir/enc-int8" --data "$dir/data"
assert_contains "$dir/err" "bundle cannot classify, embed or show attention; train a classifier from it"

"$NEWSCLS_BIN" train --model bert --data "$dir/data" --out "$dir/model" --init "$dir/encoder" "${tiny[@]}" \
  --set epochs=1 --set max_steps=20 >"$dir/train.out"
assert_eq 20 "$(json_get "$dir/model/manifest.json" "j['training']['steps']")" "fine-tuning steps"
assert_eq True "$(json_get "$dir/model/manifest.json" "j['training']['train_titles_per_s'] > 0")" "titles/s"
assert_eq "$dir/encoder" "$(json_get "$dir/model/manifest.json" "j['training']['init_dir']")" "init dir"
# The encoder fixes the architecture: a width set otherwise is refused by name, not ignored.
expect_exit 1 "$dir/init.err" "$NEWSCLS_BIN" train --model bert --data "$dir/data" --out "$dir/wider" --init "$dir/encoder" \
  "${tiny[@]}" --set hidden=64 --set epochs=1 --set max_steps=2
assert_contains "$dir/init.err" "config key 'hidden': is 64 but --init $dir/encoder has 32"
[[ ! -e "$dir/wider" ]] || fail "a refused --init trained"
# pretrain --out naming a trained classifier (a typo) is refused before the work; it was replaced.
manifest_before=$(sha256sum <"$dir/model/manifest.json")
expect_exit 2 "$dir/over.err" "$NEWSCLS_BIN" pretrain --model bert --data "$dir/data" --out "$dir/model" "${tiny[@]}" \
  --set pretrain_epochs=1 --set pretrain_max_steps=2
assert_contains "$dir/over.err" "pretrain --out $dir/model holds a 'bert' bundle, not an encoder"
assert_eq "$manifest_before" "$(sha256sum <"$dir/model/manifest.json")" "the classifier after a refused pretrain"

# Without --init, train pretrains first when pretrain_epochs > 0. A --resume with no
# checkpoint to continue (a mistyped --out) trains from the start, and says so.
"$NEWSCLS_BIN" train --model bert --data "$dir/data" --out "$dir/model2" "${tiny[@]}" --resume \
  --set pretrain_epochs=1 --set pretrain_max_steps=5 --set epochs=1 --set max_steps=5 >/dev/null 2>"$dir/model2.err"
assert_contains "$dir/model2.err" "--resume: $dir/model2.work holds no checkpoint to continue; training from the start"
assert_eq 5 "$(json_get "$dir/model2/manifest.json" "j['training']['pretrain_steps']")" "own pretraining"

"$NEWSCLS_BIN" eval --model-dir "$dir/model" --data "$dir/data" --out "$dir/eval/metrics.json" \
  --dump-attention 2 >/dev/null
for i in 0 1; do
  for ext in json npy html; do [[ -s "$dir/eval/attention/$i.$ext" ]] || fail "missing attention/$i.$ext"; done
done

head -n 3 "$dir/data/test.txt" | cut -f1 >"$dir/titles.txt"
{ cat "$dir/titles.txt"; printf '  \n'; } >"$dir/with_blank.txt"  # a blank title gets no class, as predict abstains
"$NEWSCLS_BIN" attention --model-dir "$dir/model" --input "$dir/with_blank.txt" --out "$dir/att" >/dev/null
python3 - "$dir/att" "$dir/with_blank.txt" <<'PY'
import json, struct, sys
out, titles = sys.argv[1], open(sys.argv[2], encoding="utf-8").read().splitlines()
for i, title in enumerate(titles):
    j = json.load(open(f"{out}/{i}.json", encoding="utf-8"))
    assert j["title"] == title, (j["title"], title)
    if title.strip():
        assert isinstance(j["label"], str) and j["label_id"] >= 0 and 0 < j["score"] <= 1, j["label"]
    else:
        assert j["label"] is None and j["label_id"] == -1 and j["score"] is None, j["label"]
    t = len(j["tokens"])
    assert j["tokens"][0] == "[CLS]" and j["tokens"][-1] == "[SEP]"
    w = j["weights"]
    assert len(w) == 1 and len(w[0]) == 2 and len(w[0][0]) == t and len(w[0][0][0]) == t
    for row in w[0][0]:
        assert abs(sum(row) - 1) < 1e-4, row
    raw = open(f"{out}/{i}.npy", "rb").read()
    assert raw[:8] == b"\x93NUMPY\x01\x00"
    hlen = struct.unpack("<H", raw[8:10])[0]
    header = raw[10:10 + hlen].decode("latin1")
    assert (10 + hlen) % 64 == 0 and f"'shape': (1, 2, {t}, {t})" in header, header
    values = struct.unpack(f"<{2 * t * t}f", raw[10 + hlen:])
    assert abs(values[0] - w[0][0][0][0]) < 1e-6
    try:
        import numpy
        assert numpy.load(f"{out}/{i}.npy").shape == (1, 2, t, t)
    except ImportError:
        pass
    html = open(f"{out}/{i}.html", encoding="utf-8").read()
    assert "[CLS]" in html and "layer 1" in html and "head 2" in html
PY
# The class and score shown are predict's, calibration included (they were the raw softmax's).
"$NEWSCLS_BIN" predict --model-dir "$dir/model" --input "$dir/with_blank.txt" --output "$dir/att_predict.jsonl"
python3 - "$dir/att" "$dir/att_predict.jsonl" "$dir/model/manifest.json" <<'PY'
import json, sys
out, predicted, manifest = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
assert manifest["training"].get("calibration"), "the fixture must be calibrated for this check to mean anything"
for i, line in enumerate(open(predicted, encoding="utf-8")):
    p, j = json.loads(line), json.load(open(f"{out}/{i}.json", encoding="utf-8"))
    assert j["label"] == p["label"], (i, j["label"], p["label"])
    if p["label"] is not None:  # a blank title: no class on either side
        assert abs(j["score"] - p["score"]) < 1e-5, (i, j["score"], p["score"])
PY
# Dumped again for fewer titles, the folder holds the new dumps alone; files the earlier dump
# did not write stay, numbered or not.
touch "$dir/att/notes.txt" "$dir/att/7.json"
"$NEWSCLS_BIN" attention --model-dir "$dir/model" --input "$dir/titles.txt" --limit 1 --out "$dir/att" >/dev/null
assert_eq "0.html 0.json 0.npy 7.json dumps.json notes.txt" "$(LC_ALL=C ls "$dir/att" | tr '\n' ' ' | sed 's/ $//')" \
  "files after a shorter dump"

# Into the bundle itself: refused (its dumps beside the payloads made retraining it refuse).
for out in "$dir/model" "$dir/model/sub"; do
  expect_exit 2 "$dir/err" "$NEWSCLS_BIN" attention --model-dir "$dir/model" --input "$dir/titles.txt" --out "$out"
  assert_contains "$dir/err" "attention --out $out lies in the model bundle"
done
"$NEWSCLS_BIN" attention --model-dir "$dir/model" --input "$dir/titles.txt" --limit 1 --out "$dir/model/attention" >/dev/null ||
  fail "attention into the bundle's attention/"

# SIGINT stops a long attention dump (exit 130) into that folder: the earlier dump is left as
# it was (the new one replaced its files one by one, and dumps.json still counted 1).
for _ in $(seq 1000); do cat "$dir/titles.txt"; done >"$dir/many.txt"
cp "$dir/att/0.json" "$dir/att0.before"
rm "$dir/att/7.json"  # the user's: a dump of 3,000 titles is refused over it
"$NEWSCLS_BIN" attention --model-dir "$dir/model" --input "$dir/many.txt" --out "$dir/att" >/dev/null 2>"$dir/int.err" &
pid=$!
dumping() { compgen -G "$dir/att/.dumping.*/20.json" >/dev/null || gone "$pid"; }
wait_until 120 "the attention dump to reach its 20th title" dumping
kill -INT "$pid" 2>/dev/null || true  # a run that ended first fails below
set +e; wait "$pid"; rc=$?; set -e
assert_eq 130 "$rc" "attention's exit code after SIGINT"
assert_eq "0.html 0.json 0.npy dumps.json notes.txt" "$(LC_ALL=C ls -A "$dir/att" | tr '\n' ' ' | sed 's/ $//')" \
  "files after an interrupted dump"
cmp -s "$dir/att/0.json" "$dir/att0.before" || fail "an interrupted dump replaced the earlier 0.json"
assert_eq 1 "$(json_get "$dir/att/dumps.json" 'j["titles"]')" "dumps.json after an interrupted dump"

"$NEWSCLS_BIN" predict --model-dir "$dir/model" --input "$dir/titles.txt" --output "$dir/pred.jsonl"
assert_eq 3 "$(wc -l <"$dir/pred.jsonl")" "predictions"
# --output naming the --input file is refused: the answers would replace the titles.
cp "$dir/titles.txt" "$dir/same.txt"
for cmd in predict embed; do
  expect_exit 2 "$dir/err" "$NEWSCLS_BIN" $cmd --model-dir "$dir/model" --input "$dir/same.txt" --output "$dir/./same.txt"
  assert_contains "$dir/err" "is the --input file"
  cmp -s "$dir/titles.txt" "$dir/same.txt" || fail "$cmd replaced its input"
  # Nor may it replace a file of a bundle (the one it reads, or another): it would no longer load.
  for file in "$dir/model/weights.bin" "$dir/model/./manifest.json" "$dir/model2/vocab.bin"; do
    expect_exit 2 "$dir/err" "$NEWSCLS_BIN" $cmd --model-dir "$dir/model" --input "$dir/titles.txt" --output "$file"
    assert_contains "$dir/err" "is a file of a model bundle"
  done
done
"$NEWSCLS_BIN" info --model-dir "$dir/model" >/dev/null && "$NEWSCLS_BIN" info --model-dir "$dir/model2" >/dev/null ||
  fail "a refused --output touched a bundle"
# pretrain's encoder is for --init: the commands that need a model say how to make one.
for cmd in predict embed; do
  expect_exit 1 "$dir/err" "$NEWSCLS_BIN" $cmd --model-dir "$dir/encoder" --input "$dir/titles.txt"
  assert_contains "$dir/err" "train a classifier from it: newscls train --model bert --init $dir/encoder"
done
# info loads an encoder bundle as --init would: a manifest that contradicts its weights fails.
cp -r "$dir/encoder" "$dir/encoder2"
python3 - "$dir/encoder2/manifest.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["config"]["hidden"] = 64
json.dump(j, open(sys.argv[1], "w"))
PY
"$NEWSCLS_BIN" info --model-dir "$dir/encoder" >/dev/null || fail "info on the encoder"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" info --model-dir "$dir/encoder2"
assert_contains "$dir/err" "$dir/encoder2"

cp -r "$dir/model" "$dir/broken"
head -c 100 "$dir/model/weights.bin" >"$dir/broken/weights.bin"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" predict --model-dir "$dir/broken" --input "$dir/titles.txt"
assert_contains "$dir/err" "error:"
echo "bert cli: ok"
