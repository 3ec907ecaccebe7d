#!/usr/bin/env bash
# A fatal reply (402, out of balance) stops an llm run, but the requests already in flight
# are paid for: the run waits for them, caches their answers and only then fails, so a rerun
# does not pay for them again. SIGINT does the same for the requests in flight (a second
# SIGINT abandons them).
source "$(dirname "$0")/lib.sh"
source "$NEWSCLS_SOURCE_DIR/tests/llm_server/lib.sh"

dir=$(scratch)
llm_slice "$dir/data" 2              # 20 test titles
mapfile -t titles < <(cut -f1 "$dir/data/test.txt")
python3 - "$dir/script.json" "${titles[3]}" <<'PY'
import json, sys
json.dump({"*": {"slow": 2}, sys.argv[2]: "402"}, open(sys.argv[1], "w"), ensure_ascii=False)
PY
start_llm_server "$dir" --truth "$dir/data/test.txt" --classes "$dir/data/class.txt" --script "$dir/script.json"
common=(--set "base_url=$LLM_URL" --set "cache_path=$dir/cache.sqlite" --set concurrency=6)

# Titles 0-5 go out together; title 3's 402 comes back at once, the other five 2 s later.
expect_exit 1 "$dir/run.err" "$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/model" "${common[@]}"
assert_contains "$dir/run.err" "HTTP 402"
assert_contains "$dir/run.err" "waiting for the 5 request(s) in flight"
assert_eq 6 "$(server_stat "j['requests']")" "requests: nothing new starts after the 402"
assert_eq 5 "$(cache_rows "$dir/cache.sqlite")" "answers in flight at the stop, kept"
[[ ! -e "$dir/model" ]] || fail "a bundle was written after a fatal error"

# SIGINT during that wait ends it at once (exit 130; the replies take 60 s), but still says why
# the run had stopped.
python3 - "$dir/script5.json" "${titles[3]}" <<'PY'
import json, sys
json.dump({"*": {"slow": 60}, sys.argv[2]: "402"}, open(sys.argv[1], "w"), ensure_ascii=False)
PY
stop_llm_server
start_llm_server "$dir" --truth "$dir/data/test.txt" --classes "$dir/data/class.txt" --script "$dir/script5.json"
common=(--set "base_url=$LLM_URL" --set "cache_path=$dir/cache5.sqlite" --set concurrency=6)
"$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/model" "${common[@]}" 2>"$dir/int.err" &
pid=$!
wait_for_log "waiting for the 5 request" "$dir/int.err" 50  # within the replies' 60 s
kill -INT "$pid"
set +e
wait "$pid"
code=$?
set -e
assert_eq 130 "$code" "exit code after SIGINT during the wait"
assert_contains "$dir/int.err" "the run had stopped on"
assert_contains "$dir/int.err" "HTTP 402"

# interrupt_run SCRIPT CACHE: starts a run against a server answering as SCRIPT says, sends
# SIGINT once all six requests are out (each answered only after the script's delay, so no
# seventh starts before the signal), and leaves the run's pid in $pid.
interrupt_run() {
  stop_llm_server
  start_llm_server "$dir" --truth "$dir/data/test.txt" --classes "$dir/data/class.txt" --script "$1"
  "$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/model" --set "base_url=$LLM_URL" \
    --set "cache_path=$2" --set concurrency=6 2>"$dir/sigint.err" &
  pid=$!
  wait_until 60 "the run's six requests to reach the server" six_sent
  kill -INT "$pid"
}
six_sent() { (($(server_stat "j['requests']") >= 6)); }
wait_exit() { set +e; wait "$pid"; code=$?; set -e; }  # the run's exit status in $code
echo '{"*": {"slow": 5}}' >"$dir/slow.json"  # long enough for the poll above on loaded cores
interrupt_run "$dir/slow.json" "$dir/cache_int.sqlite"
wait_exit
assert_eq 130 "$code" "exit code after SIGINT"
assert_contains "$dir/sigint.err" "interrupted (again to abandon them); waiting for the 6 request(s) in flight"
assert_eq 6 "$(cache_rows "$dir/cache_int.sqlite")" "answers in flight at SIGINT, kept"
assert_eq 6 "$(server_stat "j['requests']")" "requests: nothing new starts after SIGINT"

echo '{"*": {"slow": 60}}' >"$dir/slower.json"
interrupt_run "$dir/slower.json" "$dir/cache_int2.sqlite"
wait_for_log "waiting for the 6 request(s) in flight" "$dir/sigint.err" 50  # within the replies' 60 s
kill -0 "$pid" 2>/dev/null || fail "one SIGINT abandoned the requests in flight"
kill -INT "$pid"
start=$SECONDS
wait_exit
assert_eq 130 "$code" "exit code after a second SIGINT"
(( SECONDS - start < 30 )) || fail "the second SIGINT did not end the wait (the replies take 60 s)"
echo "ok"
