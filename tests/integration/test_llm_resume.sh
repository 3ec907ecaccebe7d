#!/usr/bin/env bash
# llm runs are safe to kill: every answer is in the SQLite cache as soon as it arrives, so a
# run killed with SIGKILL (or stopped with SIGINT, exit 130) resumes without asking again
# for any answered title; only the requests in flight at a SIGKILL are repeated (SIGINT waits
# for them).
source "$(dirname "$0")/lib.sh"
source "$NEWSCLS_SOURCE_DIR/tests/llm_server/lib.sh"

dir=$(scratch)
llm_slice "$dir/data" 20             # 200 test titles
n=$(wc -l <"$dir/data/test.txt")
assert_eq "$n" "$(cut -f1 "$dir/data/test.txt" | sort -u | wc -l)" "distinct titles"
# 20 answers a second: a run lasts long enough to be stopped midway, even when each look at the
# cache (a python3 start) takes a second on busy cores.
start_llm_server "$dir" --truth "$dir/data/test.txt" --classes "$dir/data/class.txt" --latency-ms 200
cache="$dir/cache.sqlite"
common=(--set "base_url=$LLM_URL" --set "cache_path=$cache" --set concurrency=4)

cached_rows() { [[ -e "$cache" ]] && cache_rows "$cache" 2>/dev/null || echo 0; }

# wait_for_rows PID N: until the cache holds N answers; fails if the run ended first.
wait_for_rows() {
  wait_until 120 "$2 answers in the cache" rows_or_gone "$@"
  ! gone "$1" || fail "the run ended before it could be interrupted"
}
rows_or_gone() { (( $(cached_rows) >= $2 )) || gone "$1"; }
# The server has replied to every request it received (its counters are final).
server_idle() { [[ $(server_stat "j['requests'] == sum(j['statuses'].values())") == True ]]; }

# 1. SIGKILL mid-run.
"$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/model" "${common[@]}" \
  >/dev/null 2>"$dir/run1.err" &
pid=$!
wait_for_rows "$pid" 40
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
wait_until 60 "the server to finish the killed run's requests" server_idle
cached=$(cached_rows)
sent1=$(server_stat "j['requests']")
(( cached >= 40 && cached < n )) || fail "cached $cached of $n"
(( sent1 - cached >= 0 && sent1 - cached <= 4 )) || fail "sent $sent1 for $cached answers with 4 in flight"
[[ ! -e "$dir/model" ]] || fail "a killed run left a bundle"

# 2. SIGINT mid-run: exit 130, answers kept.
"$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/model" "${common[@]}" \
  >/dev/null 2>"$dir/run2.err" &
pid=$!
wait_for_rows "$pid" $((cached + 20))
kill -INT "$pid"
set +e
wait "$pid"
code=$?
set -e
assert_eq 130 "$code" "exit code after SIGINT"
assert_contains "$dir/run2.err" "interrupted"
wait_until 60 "the server to finish the interrupted run's requests" server_idle
cached2=$(cached_rows)
sent2=$(server_stat "j['requests']")
(( cached2 > cached && cached2 < n )) || fail "cached $cached2 of $n after SIGINT"
# SIGINT waits for the requests in flight: every request of run 2 left an answer.
assert_eq $((sent2 - sent1)) $((cached2 - cached)) "answers kept of the requests sent by the interrupted run"

# 3. Resume: exactly the unanswered titles are asked; no answered title is asked twice.
"$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/model" "${common[@]}" \
  >/dev/null 2>"$dir/run3.err" || { cat "$dir/run3.err"; fail "resume"; }
m="$dir/model/metrics.json"
assert_eq "$cached2" "$(run_stat "$m" cache_hits)" "cache hits on resume"
assert_eq $((n - cached2)) "$(run_stat "$m" requests_sent)" "requests on resume"
assert_eq "$n" "$(cached_rows)" "cached answers after resume"
assert_eq 1.0 "$(json_get "$m" "j['accuracy']")" "accuracy"
assert_eq "$n" "$(server_stat "len(j['attempts'])")" "titles asked"
# Every request beyond one per title was in flight when a run was stopped (its answer lost).
wasted=$((sent2 - cached2))
assert_eq $((n + wasted)) "$(server_stat "j['requests']")" "requests over all runs"
(( wasted <= 4 )) || fail "$wasted answers lost with 4 in flight at the SIGKILL"
echo "ok"
