#!/usr/bin/env bash
# llm family through the real binary against the fake chat server: train writes a
# weightless bundle, eval/predict work on it, metrics are exact (requests, tokens, cost),
# a rerun is served wholly from the cache, limit samples by class (in eval too, saying so),
# concurrency is bounded, few-shot and JSON mode change the requests and the cache key, rpm
# spaces requests.
source "$(dirname "$0")/lib.sh"
source "$NEWSCLS_SOURCE_DIR/tests/llm_server/lib.sh"

dir=$(scratch)
llm_slice "$dir/data" 4              # 40 test titles, 4 per class
n=$(wc -l <"$dir/data/test.txt")
assert_eq 40 "$n" "test titles"
start_llm_server "$dir" --truth "$dir/data/test.txt" --truth "$dir/data/dev.txt" \
  --classes "$dir/data/class.txt" --latency-ms 20
cache="$dir/cache.sqlite"
common=(--set "base_url=$LLM_URL" --set "cache_path=$cache" --set concurrency=8)

# 1. train: every title asked once, all correct, tokens and cost exact.
"$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/zero" "${common[@]}" \
  >"$dir/train.out" 2>"$dir/train.err" || { cat "$dir/train.err"; fail "train"; }
m="$dir/zero/metrics.json"
assert_eq 40 "$(server_stat "j['requests']")" "server requests"
assert_eq 40 "$(server_stat "len(j['attempts'])")" "distinct titles asked"
assert_eq 1 "$(server_stat "max(j['attempts'].values())")" "attempts per title"
assert_eq 40 "$(run_stat "$m" requests_sent)" "requests_sent"
assert_eq 0 "$(run_stat "$m" retries)" "retries"
assert_eq 0 "$(run_stat "$m" cache_hits)" "cache hits"
assert_eq 0 "$(run_stat "$m" unknown_replies)" "unknown replies"
assert_eq 4000 "$(run_stat "$m" prompt_tokens)" "prompt tokens"
assert_eq 80 "$(run_stat "$m" completion_tokens)" "completion tokens"
assert_eq 2560 "$(run_stat "$m" cached_tokens)" "cached tokens"
assert_eq True "$(json_get "$m" "abs(j['run_stats']['cost_usd'] - (1440*0.28 + 2560*0.028 + 80*0.42)/1e6) < 1e-12")" "cost"
assert_eq True "$(json_get "$m" "20 <= j['run_stats']['latency_ms']['p50'] <= j['run_stats']['latency_ms']['p95'] <= j['run_stats']['latency_ms']['p99']")" "latency percentiles"
assert_eq 1.0 "$(json_get "$m" "j['accuracy']")" "accuracy"
assert_eq 40 "$(json_get "$m" "j['count']")" "titles evaluated"
# What the run cost is printed, not only stored (it was in metrics.json alone).
assert_contains "$dir/train.out" "requests sent (LLM calls) 40   cache_hits 0   retries 0   unknown_replies 0   cost 0.0005 USD"
max_in_flight=$(server_stat "j['max_in_flight']")
(( max_in_flight <= 8 && max_in_flight >= 2 )) || fail "max in flight $max_in_flight, want 2..8"
# The bundle holds no weights: the prompt, not the key.
assert_contains "$dir/zero/prompt.json" "newscls-llm-prompt-v1"
assert_contains "$dir/zero/prompt.json" '"zh": "体育"'
assert_eq "0" "$(json_get "$dir/zero/prompt.json" "len(j['few_shot'])")" "few-shot examples"

# 1b. calibrate=true asks dev too; the test metrics count the test titles' requests alone
# (they counted dev's as well).
"$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/calibrated" --set "base_url=$LLM_URL" \
  --set "cache_path=$dir/cache-cal.sqlite" --set calibrate=true >/dev/null 2>"$dir/train-cal.err" || { cat "$dir/train-cal.err"; fail "train calibrate=true"; }
assert_eq 40 "$(run_stat "$dir/calibrated/metrics.json" requests_sent)" "requests_sent of the test evaluation"

# 2. eval on the bundle: zero requests, all from the cache, same metrics.
reset_llm_server
"$NEWSCLS_BIN" eval --model-dir "$dir/zero" --data "$dir/data" --out "$dir/eval/metrics.json" \
  >"$dir/eval.out" 2>"$dir/eval.err" || { cat "$dir/eval.err"; fail "eval"; }
assert_eq 0 "$(server_stat "j['requests']")" "requests on rerun"
assert_eq 0 "$(run_stat "$dir/eval/metrics.json" requests_sent)" "requests_sent on rerun"
assert_eq 40 "$(run_stat "$dir/eval/metrics.json" cache_hits)" "cache hits on rerun"
assert_contains "$dir/eval.out" "requests sent (LLM calls) 0   cache_hits 40"
assert_eq 0 "$(run_stat "$dir/eval/metrics.json" prompt_tokens)" "tokens on rerun"
assert_eq 1.0 "$(json_get "$dir/eval/metrics.json" "j['accuracy']")" "accuracy on rerun"

# 3. predict: cached titles cost nothing, new ones (dev) are asked once; one line per title.
cut -f1 "$dir/data/test.txt" >"$dir/in.txt"
head -n 5 "$dir/data/dev.txt" | cut -f1 >>"$dir/in.txt"
"$NEWSCLS_BIN" predict --model-dir "$dir/zero" --input "$dir/in.txt" --output "$dir/pred.jsonl" \
  2>"$dir/predict.err" || { cat "$dir/predict.err"; fail "predict"; }
assert_eq 45 "$(wc -l <"$dir/pred.jsonl")" "prediction lines"
assert_eq 5 "$(server_stat "j['requests']")" "requests for new titles"
# ... and says what it sent and spent, as train and eval do (it said nothing).
assert_contains "$dir/predict.err" "requests sent (LLM calls) 5   cache_hits 40"
first_label=$(python3 -c "import sys; names=open(sys.argv[1]).read().split(); print(names[int(open(sys.argv[2]).readline().split('\t')[1])])" \
  "$dir/data/class.txt" "$dir/data/test.txt")
assert_eq "$first_label" "$(head -n 1 "$dir/pred.jsonl" | python3 -c "import json,sys; print(json.load(sys.stdin)['label'])")" \
  "first prediction"

# 4. limit: a seeded class-stratified sample, asked once per title.
reset_llm_server
"$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/limited" "${common[@]}" \
  --set limit=20 --set cache_path=off --seed 3 >/dev/null 2>"$dir/limit.err" || { cat "$dir/limit.err"; fail "limit"; }
assert_eq 20 "$(server_stat "j['requests']")" "requests with limit=20"
assert_eq 20 "$(json_get "$dir/limited/metrics.json" "j['count']")" "titles with limit=20"
assert_eq "[2, 2, 2, 2, 2, 2, 2, 2, 2, 2]" \
  "$(json_get "$dir/limited/metrics.json" "[c['support'] for c in j['per_class'].values()]")" "per-class sample"
# train's test figures are of a sample too, and say so (they did not).
assert_contains "$dir/limit.err" "test: evaluating a sample of 20 of 40 titles (the bundle's limit)"
assert_eq 40 "$(json_get "$dir/limited/metrics.json" "j['sampled_from']")" "train's sampled_from"
# eval of a file samples it too, and says so.
"$NEWSCLS_BIN" eval --model-dir "$dir/limited" --input "$dir/data/test.txt" --out "$dir/limited_eval/metrics.json" \
  >/dev/null 2>"$dir/limit_eval.err" || { cat "$dir/limit_eval.err"; fail "eval with limit"; }
assert_contains "$dir/limit_eval.err" "eval: evaluating a sample of 20 of 40 titles (the bundle's limit)"
assert_eq 20 "$(json_get "$dir/limited_eval/metrics.json" "j['count']")" "titles evaluated with limit=20"
assert_eq 40 "$(json_get "$dir/limited_eval/metrics.json" "j['sampled_from']")" "sampled_from"

# 5. few-shot: K examples per class in the bundle and in every request; new cache keys.
reset_llm_server
"$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/few" "${common[@]}" --set few_shot=2 \
  --seed 5 >/dev/null 2>"$dir/few.err" || { cat "$dir/few.err"; fail "few-shot"; }
assert_eq 20 "$(json_get "$dir/few/prompt.json" "len(j['few_shot'])")" "few-shot examples"
assert_eq "{'42': 40}" "$(server_stat "j['message_counts']")" "messages per request"
assert_eq 40 "$(run_stat "$dir/few/metrics.json" requests_sent)" "few-shot is not served from the zero-shot cache"

# 6. rpm: 10 requests at 600 per minute take at least 0.9 s.
"$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/rpm" "${common[@]}" --set rpm=600 \
  --set limit=10 --set cache_path=off >/dev/null 2>"$dir/rpm.err" || { cat "$dir/rpm.err"; fail "rpm"; }
assert_eq True "$(json_get "$dir/rpm/metrics.json" "j['wall_seconds'] >= 0.85")" "rpm limit respected"

# 7. JSON mode: response_format sent, {"label": ...} parsed; OpenAI-style usage read.
stop_llm_server
start_llm_server "$dir" --truth "$dir/data/test.txt" --classes "$dir/data/class.txt" \
  --default-action json --usage openai --cached-tokens 10
common=(--set "base_url=$LLM_URL" --set "cache_path=$cache" --set concurrency=8)
"$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/json" "${common[@]}" --set json_mode=true \
  >/dev/null 2>"$dir/json.err" || { cat "$dir/json.err"; fail "json mode"; }
assert_eq 40 "$(server_stat "j['json_mode_requests']")" "JSON mode requests"
assert_eq 1.0 "$(json_get "$dir/json/metrics.json" "j['accuracy']")" "JSON mode accuracy"
assert_eq 400 "$(run_stat "$dir/json/metrics.json" cached_tokens)" "OpenAI cached tokens"
# A relative cache_path is stored as the file it named at training: used from another folder,
# the bundle made an empty cache there and asked every title again.
(cd "$dir" && "$NEWSCLS_BIN" train --model llm --data data --out rel --set "base_url=$LLM_URL" --set cache_path=rel.sqlite \
  --set limit=10 >/dev/null 2>"$dir/rel.err") || { cat "$dir/rel.err"; fail "relative cache_path"; }
assert_eq "$(cd "$dir" && pwd -P)/rel.sqlite" "$(json_get "$dir/rel/manifest.json" "j['config']['cache_path']")" "the stored cache path"
echo "ok"
