#!/usr/bin/env bash
# serve with an llm bundle whose endpoint goes down after answering: a request whose titles
# all fail is an error (500 prediction_failed), not 200 with "unknown" (the client would take
# it for an answer; it was so once the server had answered this process before); predict says
# the same. Judged per request: a lone failing title is 500 even when another client's answered
# title shares its micro-batch (it was 200 "unknown" then); among answered titles of its own
# request it reads "unknown" with "failed": true, in predict too. Titles already answered
# still come from the cache. /metrics counts the LLM's requests, cache hits and failed titles.
# A request split over micro-batches by --max-batch is judged whole, as one batch would be.
# An endpoint that left 25 titles in a row unanswered is asked nothing for backoff_max_s: a
# request then fails at once (it waited out every title's retries); after the pause one title,
# asked once, finds it still down; /metrics shows the pause as a gauge, which a reload ends. An answered title
# before the failing ones in one call does not hide them. Refusals (a 400 for one title) are answers, not an outage: 30
# in one batch were stopped after 25 as if the endpoint were down.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/serve_lib.sh"
source "$NEWSCLS_SOURCE_DIR/tests/llm_server/lib.sh"
dir=$(scratch)
llm_slice "$dir/data" 2
failing="一个端点总是失败的标题"
python3 - "$dir/script.json" "$failing" <<'PY'
import json, sys
script = {sys.argv[2]: "500", **{"被拒绝的标题%d" % i: "400" for i in range(30)},
          **{"总是失败的标题%d" % i: "500" for i in range(60)}}
json.dump(script, open(sys.argv[1], "w"), ensure_ascii=False)
PY
start_llm_server "$dir" --truth "$dir/data/test.txt" --truth "$dir/data/dev.txt" --truth "$dir/data/train.txt" \
  --classes "$dir/data/class.txt" --script "$dir/script.json"
"$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/llm" --set "base_url=$LLM_URL" \
  --set "cache_path=$dir/cache.sqlite" --set max_retries=1 --set timeout_s=2 --set backoff_max_s=5 >/dev/null 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "llm training"; }
for i in 1 2 3 4 5 6; do  # train titles: not asked by train, so serve asks them
  title[i]=$(sed -n "${i}p" "$dir/data/train.txt" | cut -f1)
done
# At --max-batch 1 the failing title is a call of its own, with no answer at all: it was an
# outage that failed the whole request (500), though its other title was answered.
start_server "$dir/serve1.log" --model-dir "$dir/llm" --max-batch 1
post_json 200 "$dir/split.json" "{\"titles\":[\"${title[5]}\",\"$failing\"]}"
assert_eq "True unknown True" \
  "$(json_get "$dir/split.json" '*[j["results"][0]["label_id"] >= 0, j["results"][1]["label"], j["results"][1]["failed"]]')" \
  "a request split by --max-batch 1: its answered title and its failed one"
post_json 500 "$dir/split_alone.json" "{\"titles\":[\"$failing\"]}"
assert_contains "$dir/split_alone.json" "prediction_failed"
stop_server TERM
# An answered title first in a call does not hide the titles in a row that fail after it (the
# row was counted per call, and a reply anywhere in it reset the count): the endpoint is paused,
# and the next request sends nothing.
start_server "$dir/serve_row.log" --model-dir "$dir/llm"
python3 - "${title[6]}" >"$dir/row.json" <<'PY'
import json, sys
print(json.dumps({"titles": [sys.argv[1]] + ["总是失败的标题%d" % i for i in range(60)]}, ensure_ascii=False))
PY
call 200 "$dir/row_out.json" POST /v1/classify -H 'Content-Type: application/json' --data-binary "@$dir/row.json"
assert_eq "True 60" "$(json_get "$dir/row_out.json" '*[j["results"][0]["label_id"] >= 0, sum(bool(r.get("failed")) for r in j["results"])]')" \
  "the answered title and 60 failed ones"
assert_contains "$dir/serve_row.log" "titles in a row got no answer from $LLM_URL"
call 200 "$dir/row_before.txt" GET /metrics
post_json 500 "$dir/row_paused.json" "{\"titles\":[\"$failing\"]}"
call 200 "$dir/row_after.txt" GET /metrics
sent() { sed -n 's/^newscls_llm_requests_total{model="llm"} //p' "$1"; }
assert_eq "$(sent "$dir/row_before.txt")" "$(sent "$dir/row_after.txt")" "requests sent while paused"
assert_contains "$dir/row_after.txt" 'newscls_llm_endpoint_paused{model="llm"} 1'
kill -HUP "$server_pid"  # the models loaded again are not paused (the gauge kept saying so)
wait_for_log "reloaded 1 model" "$dir/serve_row.log"
call 200 "$dir/row_reloaded.txt" GET /metrics
assert_contains "$dir/row_reloaded.txt" 'newscls_llm_endpoint_paused{model="llm"} 0'
stop_server TERM
start_server "$dir/serve.log" --model-dir "$dir/llm" --max-wait-ms 500
first=${title[1]}
post_json 200 "$dir/ok.json" "{\"titles\":[\"$first\"]}"
assert_eq True "$(json_get "$dir/ok.json" 'j["results"][0]["label_id"] >= 0')" "an answer while the endpoint is up"
python3 -c 'import json; print(json.dumps({"titles": ["被拒绝的标题%d" % i for i in range(30)]}, ensure_ascii=False))' >"$dir/refused.json"
call 200 "$dir/refused_out.json" POST /v1/classify -H 'Content-Type: application/json' --data-binary "@$dir/refused.json"
assert_eq "30 0" "$(json_get "$dir/refused_out.json" '*[sum(r["label"] == "unknown" for r in j["results"]), sum(bool(r.get("failed")) for r in j["results"])]')" \
  "30 refused titles: unknown, none failed"

post_json 500 "$dir/alone.json" "{\"titles\":[\"$failing\"]}"
assert_contains "$dir/alone.json" "prediction_failed"
# Two clients at once, gathered into one micro-batch (max-wait 500 ms): only the failing one fails.
post_json 500 "$dir/shared_fail.json" "{\"titles\":[\"$failing\"]}" &
failing_client=$!
post_json 200 "$dir/shared_ok.json" "{\"titles\":[\"${title[2]}\"]}"
wait "$failing_client" || fail "a lone failing title that shared its micro-batch was not answered 500"
assert_eq True "$(json_get "$dir/shared_ok.json" 'j["results"][0]["label_id"] >= 0')" "the other client's answer"
call 200 "$dir/batches.txt" GET /metrics
one=$(sed -n 's/^newscls_batch_size_bucket{model="llm",le="1"} //p' "$dir/batches.txt")
two=$(sed -n 's/^newscls_batch_size_bucket{model="llm",le="2"} //p' "$dir/batches.txt")
[[ -n $one && $two == $((one + 1)) ]] ||
  { grep newscls_batch_size "$dir/batches.txt" >&2; fail "the two clients' titles did not share a batch"; }
# A cached answer is an answer too: its client is not failed for a batch-mate's failing title
# (the batch, with no reply received, was an outage: 500 for both), nor is its own request.
post_json 500 "$dir/shared_fail2.json" "{\"titles\":[\"$failing\"]}" &
failing_client=$!
post_json 200 "$dir/shared_cached.json" "{\"titles\":[\"$first\"]}"
wait "$failing_client" || fail "a lone failing title beside a cached one was not answered 500"
call 200 "$dir/batches2.txt" GET /metrics
one=$(sed -n 's/^newscls_batch_size_bucket{model="llm",le="1"} //p' "$dir/batches2.txt")
two=$(sed -n 's/^newscls_batch_size_bucket{model="llm",le="2"} //p' "$dir/batches2.txt")
[[ $two == $((one + 2)) ]] || { grep newscls_batch_size "$dir/batches2.txt" >&2; fail "the cached and failing titles did not share a batch"; }
post_json 200 "$dir/cached_mixed.json" "{\"titles\":[\"$first\",\"$failing\"]}"
assert_eq "True True" "$(json_get "$dir/cached_mixed.json" '*[j["results"][0]["label_id"] >= 0, j["results"][1]["failed"]]')" \
  "a cached title and a failing one in one request"
post_json 200 "$dir/mixed.json" "{\"titles\":[\"$failing\",\"${title[3]}\"]}"
assert_eq "unknown True None True" \
  "$(json_get "$dir/mixed.json" '*[j["results"][0]["label"], j["results"][0].get("failed"), j["results"][1].get("failed"), j["results"][1]["label_id"] >= 0]')" \
  "a failed title among answered ones of its request"
printf '%s\n%s\n' "$failing" "${title[4]}" >"$dir/mixed.txt"
"$NEWSCLS_BIN" predict --model-dir "$dir/llm" --input "$dir/mixed.txt" --output "$dir/mixed.jsonl" 2>"$dir/mixed.err" ||
  { cat "$dir/mixed.err" >&2; fail "predict with one failing title"; }
python3 - "$dir/mixed.jsonl" <<'PY' || { cat "$dir/mixed.jsonl" >&2; fail "predict marks the failed title alone"; }
import json, sys
r = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
assert r[0]["label"] == "unknown" and r[0]["failed"] is True, r[0]
assert "failed" not in r[1] and r[1]["label_id"] >= 0, r[1]
PY
# Asked again, as the warning says: the answered title now comes from the cache, and the title
# that fails again is marked again (it was "no answer from ...", exit 1, nothing written).
"$NEWSCLS_BIN" predict --model-dir "$dir/llm" --input "$dir/mixed.txt" --output "$dir/again.jsonl" 2>"$dir/again.err" ||
  { cat "$dir/again.err" >&2; fail "predict again with the failing title"; }
assert_eq 1 "$(grep -c '"failed":true' "$dir/again.jsonl")" "the failing title marked on the rerun"
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
# 1 request for each answered title (3) and refused one (30), 2 (max_retries 1) for each failed
# one: the failing title five times, the new one during the outage once
assert values["newscls_llm_requests_total"] == 45, values
assert values["newscls_llm_refused_titles_total"] == 30, values
assert values["newscls_llm_failed_titles_total"] == 6, values
assert values["newscls_llm_cache_hits_total"] == 3, values
assert values["newscls_llm_cost_usd_total"] > 0, values
assert values["newscls_llm_endpoint_paused"] == 0, values  # not yet 25 titles in a row unanswered
PY
python3 -c 'import json; print(json.dumps({"titles": ["停机期间的新标题%d" % i for i in range(30)]}, ensure_ascii=False))' >"$dir/thirty.json"
call 500 "$dir/down30.json" POST /v1/classify -H 'Content-Type: application/json' --data-binary "@$dir/thirty.json"
assert_contains "$dir/serve.log" "titles in a row got no answer from $LLM_URL"
call 200 "$dir/before.txt" GET /metrics
assert_contains "$dir/before.txt" 'newscls_llm_endpoint_paused{model="llm"} 1'
post_json 500 "$dir/paused.json" '{"titles":["暂停期间的另一个新标题"]}'
call 200 "$dir/after.txt" GET /metrics
llm_counter() { sed -n "s/^newscls_llm_$1_total{model=\"llm\"} //p" "$2"; }
[[ $(llm_counter requests "$dir/before.txt") == $(llm_counter requests "$dir/after.txt") ]] ||
  { cat "$dir/after.txt" >&2; fail "a request while the endpoint was paused was sent"; }
assert_eq "$(($(llm_counter failed_titles "$dir/before.txt") + 1))" "$(llm_counter failed_titles "$dir/after.txt")" \
  "the title asked during the pause counted failed"
# The pause (backoff_max_s, 5 s) is over: one title is sent, once.
unpaused() { call 200 "$dir/pausing.txt" GET /metrics && grep -qxF 'newscls_llm_endpoint_paused{model="llm"} 0' "$dir/pausing.txt"; }
wait_until 60 "the endpoint's pause to end" unpaused
post_json 500 "$dir/probe.json" '{"titles":["暂停之后的新标题一","暂停之后的新标题二","暂停之后的新标题三"]}'
call 200 "$dir/probed.txt" GET /metrics
assert_eq "$(($(llm_counter requests "$dir/after.txt") + 1))" "$(llm_counter requests "$dir/probed.txt")" \
  "after the pause, one request tells the endpoint is still down"
assert_contains "$dir/serve.log" "still gives no answer"
assert_contains "$dir/probed.txt" 'newscls_llm_endpoint_paused{model="llm"} 1'
stop_server TERM
echo "一个从未问过的新标题" >"$dir/new.txt"
expect_exit 1 "$dir/predict.err" "$NEWSCLS_BIN" predict --model-dir "$dir/llm" --input "$dir/new.txt" --output "$dir/p.jsonl"
assert_contains "$dir/predict.err" "no answer from $LLM_URL"
echo "test_serve_llm_outage: ok"
