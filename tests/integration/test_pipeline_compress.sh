#!/usr/bin/env bash
# ctest-labels: bert-training
# A stage whose family offers the pipeline's compression method (quantize by default) is
# followed by a compression stage ("<stage>-<method>") that writes compression.json, and the report gets a compression
# table; --compress none leaves it out. A tiny bert on the tiny fixture keeps it to seconds.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
data="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
tiny=(--set bert.layers=1 --set bert.hidden=16 --set bert.heads=2 --set bert.ff=32 --set bert.max_len=16
      --set bert.bigram_buckets=64 --set bert.vocab_min_count=1 --set bert.pretrain_epochs=0 --set bert.max_steps=2)

"$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/run" --stages bert --threads 1 "${tiny[@]}" \
  >"$dir/out.txt" 2>"$dir/err.txt" || { cat "$dir/err.txt" >&2; fail "pipeline failed"; }
assert_eq "bert bert-quantize" "$(json_get "$dir/run/pipeline.json" '" ".join(s["stage"] for s in j["stages"])')" "stages"
assert_eq done "$(json_get "$dir/run/pipeline.json" 'j["stages"][1]["status"]')" "compression stage status"
assert_eq quantize "$(json_get "$dir/run/bert-quantize/compression.json" 'j["method"]')" "method"
[[ -f "$dir/run/bert-quantize/weights.int8.bin" ]] || fail "no int8 payload"
assert_contains "$dir/run/report.html" "<h2>Compression</h2>"
grep -q "| bert-quantize | quantize | .* -> .* |" "$dir/run/report.md" || { cat "$dir/run/report.md"; fail "compression row"; }
# An int8 bundle is no source for another compression: refused, naming what to use.
expect_exit 2 "$dir/err3.txt" "$NEWSCLS_BIN" compress --model-dir "$dir/run/bert-quantize" --method prune --data "$data" \
  --out "$dir/pruned" --threads 1
assert_contains "$dir/err3.txt" "holds int8 weights: compress the float bundle it was quantised from"
# --resume keeps the compression stage, unless an eval has since replaced its metrics.json.
resume() {
  "$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/run" --stages bert --threads 1 "${tiny[@]}" --resume \
    >/dev/null 2>"$dir/err4.txt" || { cat "$dir/err4.txt" >&2; fail "pipeline --resume"; }
  json_get "$dir/run/pipeline.json" 'j["stages"][1]["status"]'
}
assert_eq resumed "$(resume)" "the compression stage on resume"
"$NEWSCLS_BIN" eval --model-dir "$dir/run/bert-quantize" --data "$data" --split dev >/dev/null 2>&1 || fail "eval on dev"
assert_eq done "$(resume)" "the compression stage after an eval on dev"
assert_contains "$dir/err4.txt" "not resumed: its metrics.json is not of this run's test split"
assert_eq test "$(json_get "$dir/run/bert-quantize/metrics.json" 'j["split"]')" "metrics.json's split"

"$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/run2" --stages bert --threads 1 --compress none "${tiny[@]}" \
  >/dev/null 2>"$dir/err2.txt" || { cat "$dir/err2.txt" >&2; fail "pipeline --compress none failed"; }
assert_eq 1 "$(json_get "$dir/run2/pipeline.json" 'len(j["stages"])')" "stages without compression"
if grep -q "Compression" "$dir/run2/report.html"; then fail "compression table without a compression stage"; fi
echo "test_pipeline_compress: ok"
