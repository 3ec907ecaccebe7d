#!/usr/bin/env bash
# serve with an llm bundle whose endpoint goes down after answering: a request whose titles
# all fail is an error (500 prediction_failed), not 200 with "unknown" (the client would take
# it for an answer; it was so once the server had answered this process before); predict says
# the same. Titles already answered still come from the cache. /metrics counts the LLM's
# requests, cache hits and failed titles.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/serve_lib.sh"
source "$NEWSCLS_SOURCE_DIR/tests/llm_server/lib.sh"
dir=$(scratch)
llm_slice "$dir/data" 500
start_llm_server "$dir" --truth "$dir/data/test.txt" --truth "$dir/data/dev.txt" --truth "$dir/data/train.txt" \
  --classes "$dir/data/class.txt"
"$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/llm" --set "base_url=$LLM_URL" \
  --set "cache_path=$dir/cache.sqlite" --set max_retries=1 --set timeout_s=2 >/dev/null 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "llm training"; }
start_server "$dir/serve.log" --model-dir "$dir/llm"
first=$(sed -n 1p "$dir/data/train.txt" | cut -f1)  # not asked by train: this process asks it
post_json 200 "$dir/ok.json" "{\"titles\":[\"$first\"]}"
assert_eq True "$(json_get "$dir/ok.json" 'j["results"][0]["label_id"] >= 0')" "an answer while the endpoint is up"
stop_llm_server
post_json 500 "$dir/down.json" '{"titles":["一个从未问过的新标题"]}'
assert_contains "$dir/down.json" "prediction_failed"
post_json 200 "$dir/cached.json" "{\"titles\":[\"$first\"]}"  # from the response cache
assert_eq True "$(json_get "$dir/cached.json" 'j["results"][0]["label_id"] >= 0')" "a cached answer during the outage"
call 200 "$dir/metrics.txt" GET /metrics
python3 - "$dir/metrics.txt" <<'PY' || { cat "$dir/metrics.txt" >&2; fail "/metrics: LLM counters"; }
import sys
values = {}
for line in open(sys.argv[1]):
    if line.startswith("newscls_llm_") and '{model="llm"}' in line:
        name, value = line.split('{model="llm"} ')
        values[name] = float(value)
# the first title: 1 request; the new one during the outage: 2 (max_retries 1), failed
assert values["newscls_llm_requests_total"] == 3, values
assert values["newscls_llm_failed_titles_total"] == 1, values
assert values["newscls_llm_cache_hits_total"] == 1, values
assert values["newscls_llm_cost_usd_total"] > 0, values
PY
stop_server TERM
echo "一个从未问过的新标题" >"$dir/new.txt"
expect_exit 1 "$dir/predict.err" "$NEWSCLS_BIN" predict --model-dir "$dir/llm" --input "$dir/new.txt" --output "$dir/p.jsonl"
assert_contains "$dir/predict.err" "no answer from $LLM_URL"
echo "test_serve_llm_outage: ok"
