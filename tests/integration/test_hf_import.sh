#!/usr/bin/env bash
# ctest-labels: bert-training
# import-hf against transformers' own numbers (tests/fixtures/hf/golden.jsonl): an F32 classifier
# predicts softmax(golden logits) within 1e-4 and its layer-0 attention matches within 1e-5;
# an F16 pretraining checkpoint (gamma/beta names, no head) embeds within 1e-4, refuses to
# predict naming the fix, and fine-tunes with --init hf: with frozen tensors left bit-identical.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hf_lib.sh"
hf=$(hf_dir)
dir=$(scratch)
bin=$NEWSCLS_BIN
hf_titles "$hf/golden.jsonl" "$dir/titles.txt"
hf_folder bert-tiny-cls "$dir/hf-cls"
hf_folder bert-tiny-mlm "$dir/hf-mlm"

# The classifier: predictions and attention.
"$bin" import-hf --hf-dir "$dir/hf-cls" --out "$dir/cls" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "import of bert-tiny-cls"; }
# The old name of --hf-dir still works for a release, with a warning; both at once, or neither, is refused.
"$bin" import-hf --model-dir "$dir/hf-cls" --out "$dir/cls-old" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "import-hf --model-dir"; }
assert_contains "$dir/err" "import-hf --model-dir is now --hf-dir"
assert_eq "$(json_get "$dir/cls/manifest.json" 'j["payloads"]')" "$(json_get "$dir/cls-old/manifest.json" 'j["payloads"]')" \
  "--model-dir imports what --hf-dir does"
expect_exit 2 "$dir/err" "$bin" import-hf --hf-dir "$dir/hf-cls" --model-dir "$dir/hf-cls" --out "$dir/both"
expect_exit 2 "$dir/err" "$bin" import-hf --out "$dir/neither"
assert_contains "$dir/err" "--hf-dir is required"
"$bin" info --model-dir "$dir/cls" >"$dir/info.json" || fail "info on the imported classifier"
assert_eq "bert" "$(json_get "$dir/info.json" 'j["family"]')" "imported family"
"$bin" predict --model-dir "$dir/cls" --input "$dir/titles.txt" --output "$dir/pred.jsonl" --top-k 10 --threads 1 2>/dev/null ||
  fail "predict with the imported classifier"
python3 - "$hf/golden.jsonl" "$dir/pred.jsonl" "$hf/bert-tiny-cls/config.json" <<'PY' || fail "predictions differ from transformers"
import json, math, sys, unicodedata
golden = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
preds = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
names = json.load(open(sys.argv[3]))["id2label"]
def blank(t):  # nothing visible: white space, U+3000, U+00A0, control and format characters
    return all(c in " \t\r\n\f\v\u3000\u00a0\u0085" or unicodedata.category(c) in ("Cc", "Cf") for c in t)
assert len(preds) == len(golden), (len(preds), len(golden))
worst = 0.0
for i, (g, p) in enumerate(zip(golden, preds)):
    if blank(g["text"]):  # abstained, not guessed (the embeddings below cover it)
        assert p["label"] is None and p["abstained"] and p["top_k"] == [], (i, p)
        continue
    m = max(g["logits"]); e = [math.exp(x - m) for x in g["logits"]]; s = sum(e)
    want = {names[str(k)]: v / s for k, v in enumerate(e)}
    got = {t["label"]: t["score"] for t in p["top_k"]}
    assert set(got) == set(want), (i, got)
    worst = max(worst, max(abs(got[k] - want[k]) for k in want))
    best = max(want, key=want.get)
    assert p["label"] == best or abs(want[p["label"]] - want[best]) < 1e-6, (i, p["label"], best)
print("max |score - softmax(golden logits)| over %d titles: %.2e" % (len(golden), worst))
assert worst <= 1e-4, worst
PY
head -n 3 "$dir/titles.txt" >"$dir/three.txt"
"$bin" attention --model-dir "$dir/cls" --input "$dir/three.txt" --out "$dir/attn" >/dev/null 2>&1 || fail "attention"
python3 - "$hf/golden.jsonl" "$dir/attn" <<'PY' || fail "layer-0 attention differs from transformers"
import json, sys
golden = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")][:3]
worst = 0.0
for i, g in enumerate(golden):
    got = json.load(open("%s/%d.json" % (sys.argv[2], i)))["weights"][0]
    want = g["cls_layer0_attention"]
    assert len(got) == len(want) and len(got[0]) == len(want[0]), (i, len(got), len(got[0]))
    for gh, wh in zip(got, want):
        for gr, wr in zip(gh, wh):
            assert len(gr) == len(wr)
            worst = max(worst, max(abs(a - b) for a, b in zip(gr, wr)))
print("max |attention - golden| layer 0: %.2e" % worst)
assert worst <= 1e-5, worst
PY

# The pretraining checkpoint: an encoder bundle.
"$bin" import-hf --hf-dir "$dir/hf-mlm" --out "$dir/mlm" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "import of bert-tiny-mlm"; }
"$bin" info --model-dir "$dir/mlm" >/dev/null || fail "info on the encoder bundle"
"$bin" embed --model-dir "$dir/mlm" --input "$dir/titles.txt" --output "$dir/emb.jsonl" --threads 1 2>/dev/null || fail "embed"
python3 - "$hf/golden.jsonl" "$dir/emb.jsonl" <<'PY' || fail "embeddings differ from transformers"
import json, sys
golden = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
got = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
assert len(got) == len(golden)
worst = 0.0
for g, e in zip(golden, got):
    assert len(e["cls"]) == 64 and len(e["pooler"]) == 64
    worst = max(worst, max(abs(a - b) for a, b in zip(e["cls"], g["mlm_cls_hidden"])),
                max(abs(a - b) for a, b in zip(e["pooler"], g["mlm_pooler"])))
print("max |embed - golden| (cls, pooler): %.2e" % worst)
assert worst <= 1e-4, worst
PY
expect_exit 1 "$dir/err" "$bin" predict --model-dir "$dir/mlm" --input "$dir/three.txt"
assert_contains "$dir/err" "train --model bert --init hf:$dir/hf-mlm"
printf '%s\t0\n' "央行宣布下调存款准备金率" >"$dir/labelled.txt"
expect_exit 1 "$dir/err" "$bin" eval --model-dir "$dir/mlm" --input "$dir/labelled.txt"
assert_contains "$dir/err" "--init hf:"
: >"$dir/no_titles.txt"  # refused before any title: it "predicted" an empty file without a word
expect_exit 1 "$dir/err" "$bin" predict --model-dir "$dir/mlm" --input "$dir/no_titles.txt" --output "$dir/none.jsonl"
assert_contains "$dir/err" "--init hf:"
expect_exit 1 "$dir/err" "$bin" eval --model-dir "$dir/mlm" --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
assert_contains "$dir/err" "--init hf:"
for method in quantize prune distill; do
  expect_exit 1 "$dir/err" "$bin" compress --method "$method" --model-dir "$dir/mlm" --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" \
    --out "$dir/$method-mlm"
  assert_contains "$dir/err" "is an encoder without a classifier head (its labels are the checkpoint's placeholders); fine-tune it first: newscls train --model bert --init hf:$dir/hf-mlm"
done
# serve refuses it at start (it answered every request with 500).
expect_exit 1 "$dir/err" "$bin" serve --model-dir "$dir/mlm" --port 0
assert_contains "$dir/err" "is an encoder without a classifier head"
"$bin" attention --model-dir "$dir/mlm" --input "$dir/three.txt" --out "$dir/attn-mlm" >/dev/null 2>&1 || fail "attention on the encoder"
[[ -f "$dir/attn-mlm/2.npy" ]] || fail "no attention dump for the encoder"

# Fine-tuning from the checkpoint with the embeddings and layer 0 frozen.
data="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
"$bin" train --model bert --init "hf:$dir/hf-mlm" --data "$data" --out "$dir/tuned" --threads 1 \
  --set freeze_layers=1 --set epochs=2 >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "train --init hf:"; }
"$bin" eval --model-dir "$dir/tuned" --data "$data" --out "$dir/eval" >/dev/null 2>&1 || fail "eval of the fine-tuned bundle"
"$bin" predict --model-dir "$dir/tuned" --input "$dir/three.txt" --output "$dir/tuned.jsonl" 2>/dev/null || fail "predict"
assert_eq 3 "$(wc -l <"$dir/tuned.jsonl")" "predictions of the fine-tuned bundle"
python3 - "$dir/mlm/weights.bin" "$dir/tuned/weights.bin" <<'PY' || fail "freeze_layers"
import struct, sys
def tensors(path):
    b = open(path, "rb").read()
    assert b[:4] == b"NCBW", path
    pos = 8
    (n,) = struct.unpack_from("<Q", b, pos); pos += 8
    out = {}
    for _ in range(n):
        (k,) = struct.unpack_from("<Q", b, pos); pos += 8
        name = b[pos:pos + k].decode(); pos += k
        (nd,) = struct.unpack_from("<I", b, pos); pos += 4
        pos += 8 * nd
        (c,) = struct.unpack_from("<Q", b, pos); pos += 8
        out[name] = b[pos:pos + 4 * c]; pos += 4 * c
    return out
before, after = tensors(sys.argv[1]), tensors(sys.argv[2])
frozen = [n for n in before if not n.startswith("encoder.layers.") or n.startswith("encoder.layers.0.")]
frozen = [n for n in frozen if n.startswith("encoder.")]
trained = [n for n in before if n.startswith("encoder.layers.1.")]
assert frozen and trained
changed = [n for n in frozen if before[n] != after[n]]
assert not changed, "frozen tensors changed: %s" % changed
assert any(before[n] != after[n] for n in trained), "layer 1 did not train"
print("%d frozen tensors bit-identical, layer 1 trained" % len(frozen))
PY
# A key the checkpoint fixes is refused when given, even at its default value (it was dropped).
expect_exit 1 "$dir/err" "$bin" train --model bert --init "hf:$dir/hf-mlm" --data "$data" --out "$dir/refused" --threads 1 \
  --set hidden=256 --set epochs=1
assert_contains "$dir/err" "config key 'hidden': is 256 but --init hf:$dir/hf-mlm has 64"
expect_exit 1 "$dir/err" "$bin" train --model bert --init "hf:$dir/hf-mlm" --data "$data" --out "$dir/refused" --threads 1 \
  --set tokenizer=char --set epochs=1
assert_contains "$dir/err" "config key 'tokenizer': comes from the checkpoint"
[[ ! -e "$dir/refused" ]] || fail "a refused --init trained"
# A config file holding the defaults (configs/bert.json lists them all) gives no key.
"$bin" train --model bert --init "hf:$dir/hf-mlm" --config "$NEWSCLS_SOURCE_DIR/configs/bert.json" --data "$data" \
  --out "$dir/from-config" --threads 1 --set epochs=1 --set max_steps=2 >/dev/null 2>"$dir/err" \
  || { cat "$dir/err" >&2; fail "train --init hf: with configs/bert.json"; }
# embed works on an own bundle too (character vocabulary, own pooler).
"$bin" train --model bert --data "$data" --out "$dir/own" --threads 1 --set layers=1 --set hidden=16 --set heads=2 \
  --set ff=32 --set pretrain_epochs=0 --set epochs=1 --set bigram_buckets=0 >/dev/null 2>&1 || fail "own bundle"
"$bin" embed --model-dir "$dir/own" --input "$dir/three.txt" >"$dir/own.jsonl" 2>/dev/null || fail "embed on an own bundle"
python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 3 and all(len(r["cls"]) == 16 and len(r["pooler"]) == 16 for r in rows), rows
assert [r["index"] for r in rows] == [0, 1, 2]' "$dir/own.jsonl" || fail "own bundle embeddings"
echo "test_hf_import: ok"
