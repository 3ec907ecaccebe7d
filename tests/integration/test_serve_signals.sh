#!/usr/bin/env bash
# newscls serve and its signals: SIGHUP with a broken bundle keeps the old model serving
# (and says why), SIGHUP with a good new bundle swaps it in, SIGTERM lets a request in
# flight finish and exits 0, a second SIGTERM during that drain stops at once (exit 130),
# SIGINT exits 0.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"
source "$(dirname "$0")/serve_lib.sh"
dir=$(scratch)
tiny="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
# shellcheck disable=SC2046
train_tiny fasttext "$dir/old" $(tiny_settings fasttext) --seed 1
# shellcheck disable=SC2046
train_tiny fasttext "$dir/new" $(tiny_settings fasttext) --seed 2 --set dim=8
cut -f1 "$tiny/test.txt" >"$dir/titles.txt"
for b in old new; do
  "$NEWSCLS_BIN" predict --model-dir "$dir/$b" --input "$dir/titles.txt" --output "$dir/$b.jsonl" --top-k 3
done
cmp -s "$dir/old.jsonl" "$dir/new.jsonl" && fail "the two bundles predict alike; the reload test could not tell them apart"
body=$(python3 -c "import json,sys; print(json.dumps({'titles': open(sys.argv[1],encoding='utf-8').read().splitlines()}, ensure_ascii=False))" "$dir/titles.txt")

cp -r "$dir/old" "$dir/model"
start_server "$dir/server.log" --model-dir "$dir/model"
post_json 200 "$dir/before.json" "$body"
same_as_predict "$dir/old.jsonl" model "$dir/before.json"

# --- SIGHUP with a broken bundle: an error naming the payload, the old model still serves ---
printf 'garbage' >"$dir/model/fasttext.bin"
kill -HUP "$server_pid"
wait_for_log "reload failed" "$dir/server.log"
grep "reload failed" "$dir/server.log" | grep -qF "fasttext.bin" || fail "the reload error does not name the broken payload"
post_json 200 "$dir/after_broken.json" "$body"
same_as_predict "$dir/old.jsonl" model "$dir/after_broken.json"

# --- SIGHUP with a good new bundle: swapped in ---
rm -rf "$dir/model" && cp -r "$dir/new" "$dir/model"
kill -HUP "$server_pid"
wait_for_log "reloaded 1 model" "$dir/server.log"
post_json 200 "$dir/after_good.json" "$body"
same_as_predict "$dir/new.jsonl" model "$dir/after_good.json"
call 200 "$dir/metrics.txt" GET /metrics
assert_contains "$dir/metrics.txt" 'newscls_reloads_total{result="ok"} 1'
assert_contains "$dir/metrics.txt" 'newscls_reloads_total{result="failed"} 1'
stop_server TERM

# --- SIGTERM drains: a request waiting 5 s for its batch (the time this test has to see it
# queued) still gets its answer ---
start_server "$dir/drain.log" --model-dir "$dir/model" --max-batch 1000 --max-wait-ms 5000
post_json 200 "$dir/in_flight.json" "$body" &
client=$!
wait_until 60 "the request to wait in the queue before SIGTERM" queue_depth_is model 1
stop_server TERM
wait "$client" || fail "the request in flight failed during the drain"
same_as_predict "$dir/new.jsonl" model "$dir/in_flight.json"
assert_contains "$dir/drain.log" "stopped"
if curl -s -o /dev/null "$base/healthz"; then fail "the server still answers after SIGTERM"; fi

# --- a second SIGTERM during the drain stops at once: exit 130, the request in flight dropped
# (the drain alone would have answered it once its batch had waited 10 s) ---
start_server "$dir/cut.log" --model-dir "$dir/model" --max-batch 1000 --max-wait-ms 10000
curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "$body" \
  "$base/v1/classify" >"$dir/cut.status" &
client=$!
wait_until 60 "the request to wait in the queue before SIGTERM" queue_depth_is model 1
kill -TERM "$server_pid"
wait_for_log "stopping: answering the requests in flight" "$dir/cut.log"
second=$SECONDS
kill -TERM "$server_pid"
rc=0
wait "$server_pid" || rc=$?
server_pid=""
assert_eq 130 "$rc" "exit status after a second SIGTERM during the drain"
(( SECONDS - second < 5 )) || fail "the second SIGTERM took $((SECONDS - second)) s to stop the server"
assert_contains "$dir/cut.log" "second signal: stopping now"
wait "$client" || true
[[ $(cat "$dir/cut.status") != 200 ]] || fail "the request in flight was answered: the drain ran to its end"

start_server "$dir/int.log" --model-dir "$dir/model"
stop_server INT
echo "test_serve_signals: ok"
