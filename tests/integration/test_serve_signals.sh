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

# wait_for_log TEXT [LOG]: the server log (LOG, else server.log) gains a line with TEXT within 30 s.
wait_for_log() {
  local i log=${2:-$dir/server.log}
  for i in $(seq 300); do grep -qF -- "$1" "$log" && return 0; sleep 0.1; done
  cat "$log" >&2
  fail "the server never logged '$1'"
}

# --- SIGHUP with a broken bundle: an error naming the payload, the old model still serves ---
printf 'garbage' >"$dir/model/fasttext.bin"
kill -HUP "$server_pid"
wait_for_log "reload failed"
grep "reload failed" "$dir/server.log" | grep -qF "fasttext.bin" || fail "the reload error does not name the broken payload"
post_json 200 "$dir/after_broken.json" "$body"
same_as_predict "$dir/old.jsonl" model "$dir/after_broken.json"

# --- SIGHUP with a good new bundle: swapped in ---
rm -rf "$dir/model" && cp -r "$dir/new" "$dir/model"
kill -HUP "$server_pid"
wait_for_log "reloaded 1 model"
post_json 200 "$dir/after_good.json" "$body"
same_as_predict "$dir/new.jsonl" model "$dir/after_good.json"
call 200 "$dir/metrics.txt" GET /metrics
assert_contains "$dir/metrics.txt" 'newscls_reloads_total{result="ok"} 1'
assert_contains "$dir/metrics.txt" 'newscls_reloads_total{result="failed"} 1'
stop_server TERM

# --- SIGTERM drains: a request waiting 1.5 s for its batch still gets its answer ---
start_server "$dir/drain.log" --model-dir "$dir/model" --max-batch 1000 --max-wait-ms 1500
post_json 200 "$dir/in_flight.json" "$body" &
client=$!
sleep 0.4
stop_server TERM
wait "$client" || fail "the request in flight failed during the drain"
same_as_predict "$dir/new.jsonl" model "$dir/in_flight.json"
assert_contains "$dir/drain.log" "stopped"
if curl -s -o /dev/null "$base/healthz"; then fail "the server still answers after SIGTERM"; fi

# --- a second SIGTERM during the drain stops at once: exit 130, the request in flight dropped ---
start_server "$dir/cut.log" --model-dir "$dir/model" --max-batch 1000 --max-wait-ms 10000
curl -s -o /dev/null -H 'Content-Type: application/json' --data-binary "$body" "$base/v1/classify" &
client=$!
sleep 0.4
kill -TERM "$server_pid"
wait_for_log "stopping: answering the requests in flight" "$dir/cut.log"
second=$SECONDS
kill -TERM "$server_pid"
rc=0
wait "$server_pid" || rc=$?
server_pid=""
assert_eq 130 "$rc" "exit status after a second SIGTERM during the drain"
(( SECONDS - second <= 2 )) || fail "the second SIGTERM took $((SECONDS - second)) s to stop the server"
assert_contains "$dir/cut.log" "second signal: stopping now"
wait "$client" || true

start_server "$dir/int.log" --model-dir "$dir/model"
stop_server INT
echo "test_serve_signals: ok"
