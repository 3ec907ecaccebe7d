#!/usr/bin/env bash
# llm runs are safe to kill: every answer is in the SQLite cache as soon as it arrives, so a
# run killed with SIGKILL (or stopped with SIGINT, exit 130) resumes without asking again
# for any answered title; only the requests in flight at a SIGKILL are repeated (SIGINT waits
# for them).
source "$(dirname "$0")/lib.sh"
source "$NEWSCLS_SOURCE_DIR/tests/llm_server/lib.sh"

dir=$(scratch)
llm_slice "$dir/data" 50             # 200 test titles
n=$(wc -l <"$dir/data/test.txt")
assert_eq "$n" "$(cut -f1 "$dir/data/test.txt" | sort -u | wc -l)" "distinct titles"
start_llm_server "$dir" --truth "$dir/data/test.txt" --classes "$dir/data/class.txt" --latency-ms 50
cache="$dir/cache.sqlite"
common=(--set "base_url=$LLM_URL" --set "cache_path=$cache" --set concurrency=4)

cached_rows() { [[ -e "$cache" ]] && cache_rows "$cache" 2>/dev/null || echo 0; }

# wait_for_rows PID N: until the cache holds N answers (or the run ended).
wait_for_rows() {
  local i
  for i in $(seq 600); do
    (( $(cached_rows) >= $2 )) && return 0
    kill -0 "$1" 2>/dev/null || fail "the run ended before it could be interrupted"
    sleep 0.05
  done
  fail "no progress"
}

# 1. SIGKILL mid-run.
"$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/model" "${common[@]}" \
  >/dev/null 2>"$dir/run1.err" &
pid=$!
wait_for_rows "$pid" 40
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
sleep 0.3                            # let the server finish the orphaned requests
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
sleep 0.3
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
