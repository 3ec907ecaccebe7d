#!/usr/bin/env bash
# The pipeline on a small slice of the real data, all four stages, the LLM stage pointed at
# the loopback test server, and the default cascade of the run's fasttext and bert; the report
# must list every stage with its metrics.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
make_slice "$dir/data" 3000 50

python3 "$NEWSCLS_SOURCE_DIR/tests/llm_server/fake_llm_server.py" --port-file "$dir/port" \
  --classes "$dir/data/class.txt" --truth "$dir/data/test.txt" >"$dir/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
wait_for_file "$dir/port"  # the fake LLM server listens
port=$(cat "$dir/port")

settings=(--set tfidf-rf.n_trees=10
  --set fasttext.epochs=2
  --set bert.layers=1 --set bert.hidden=32 --set bert.heads=2 --set bert.ff=64 --set bert.max_steps=20
  --set bert.pretrain_epochs=0
  --set llm.base_url="http://127.0.0.1:$port" --set llm.limit=100 --set llm.cache_path="$dir/llm-cache.sqlite")
NEWSCLS_LLM_API_KEY= DEEPSEEK_API_KEY= "$NEWSCLS_BIN" pipeline --data "$dir/data" --out "$dir/run" --threads 2 \
  "${settings[@]}" >"$dir/out.txt" 2>"$dir/err.txt" || { cat "$dir/err.txt" >&2; fail "pipeline failed"; }

for stage in tfidf-rf fasttext bert llm cascade; do
  assert_contains "$dir/out.txt" "$stage"
  [[ -f "$dir/run/$stage/metrics.json" ]] || fail "no metrics for $stage"
  grep -q "| $stage | done | [01]\.[0-9]\{4\} |" "$dir/run/report.md" || { cat "$dir/run/report.md"; fail "report row for $stage"; }
done
assert_contains "$dir/run/report.html" "<svg"
assert_contains "$dir/run/report.html" "Per-class F1"
assert_contains "$dir/run/report.html" "Attention heatmaps"
assert_eq 100 "$(json_get "$dir/run/llm/metrics.json" 'j["count"]')" "llm titles evaluated"
# bert's default compression ran as a stage of its own, and the report tabulates it.
[[ -f "$dir/run/bert-quantize/compression.json" ]] || fail "no compression stage after bert"
assert_eq done "$(json_get "$dir/run/pipeline.json" '[s["status"] for s in j["stages"] if s["stage"]=="bert-quantize"][0]')" "compression stage"
assert_contains "$dir/run/report.html" "<h2>Compression</h2>"
assert_eq "fasttext bert" "$(json_get "$dir/run/cascade/cascade.json" '" ".join(m["family"] for m in j["members"])')" "cascade members"
# The cascade's bundle column counts its member copies: at least fasttext's and bert's together.
python3 - "$dir/run/report.md" <<'PY' || fail "cascade bundle size in the report"
import sys
rows = {c[1].strip(): c for c in (l.split("|") for l in open(sys.argv[1], encoding="utf-8")) if len(c) > 9}
size = lambda stage: float(rows[stage][8].split()[0]) * (1024 if rows[stage][8].split()[1] == "MB" else 1)
sys.exit(0 if size("cascade") >= size("fasttext") + size("bert") - 0.2 else 1)
PY
grep -q "| bert-quantize | quantize | .* -> " "$dir/run/report.md" || { cat "$dir/run/report.md"; fail "compression row"; }

# --resume with the same settings finds every stage complete and runs nothing again.
"$NEWSCLS_BIN" pipeline --data "$dir/data" --out "$dir/run" --resume "${settings[@]}" >"$dir/out2.txt" 2>/dev/null
assert_eq 6 "$(grep -c resumed "$dir/out2.txt")" "stages resumed (and the compression stage)"
# A changed setting retrains its stage and the cascade that reads it; the rest resume.
"$NEWSCLS_BIN" pipeline --data "$dir/data" --out "$dir/run" --resume "${settings[@]}" --set fasttext.epochs=3 \
  >"$dir/out2b.txt" 2>"$dir/err2b.txt" || { cat "$dir/err2b.txt" >&2; fail "resume with a changed setting"; }
assert_eq "tfidf-rf bert bert-quantize llm" "$(json_get "$dir/run/pipeline.json" '" ".join(s["stage"] for s in j["stages"] if s["status"] == "resumed")')" "stages resumed"
assert_contains "$dir/err2b.txt" "stage fasttext: not resumed: its config differs"
assert_contains "$dir/err2b.txt" "stage cascade: not resumed: it reads fasttext, trained again in this run"
assert_eq 3 "$(json_get "$dir/run/fasttext/manifest.json" 'j["config"]["epochs"]')" "fasttext retrained with the new setting"

# Without a key or base_url the LLM stage is skipped with the reason.
NEWSCLS_LLM_API_KEY= DEEPSEEK_API_KEY= "$NEWSCLS_BIN" pipeline --data "$dir/data" --out "$dir/run2" \
  --stages tfidf-rf,llm --set tfidf-rf.n_trees=5 >"$dir/out3.txt" 2>/dev/null
assert_contains "$dir/out3.txt" "skipped  no API key"
echo "test_pipeline_slow: ok"
