#!/usr/bin/env bash
# llm client against scripted faults, through the real binary: chatty, JSON-ish and blank
# replies, 429 and 503 with Retry-After (the retry arrives no sooner, by the server's clock),
# a 400 for one title once others were answered (that title unknown, the run goes on),
# 500/502/503, a reply slower than the timeout, malformed
# JSON, a dropped connection, retries running out. Asserts exact counts of requests,
# retries, unknowns and cache hits, that every title is predicted exactly once, and that a
# rerun asks only for the titles that never got an answer (failed, refused, or an empty reply).
source "$(dirname "$0")/lib.sh"
source "$NEWSCLS_SOURCE_DIR/tests/llm_server/lib.sh"

dir=$(scratch)
llm_slice "$dir/data" 4              # 40 test titles, 4 per class
mapfile -t titles < <(cut -f1 "$dir/data/test.txt")
assert_eq 40 "$(printf '%s\n' "${titles[@]}" | sort -u | wc -l)" "distinct titles"

broken="一条每次都得到坏回复的新标题"  # not in the data: only the last predict asks it
# Title index -> scripted behaviour (a list: one action per attempt, the last repeats).
python3 - "$dir/script.json" "$broken" "${titles[@]}" <<'PY'
import json, sys
path, broken, titles = sys.argv[1], sys.argv[2], sys.argv[3:]
script = {
    0: "chatty", 1: "chatty_en", 2: "json", 3: "correct_en",
    4: [{"status": 429, "retry_after": "1"}, "correct"],
    5: ["500", "correct"],
    6: ["503", "503", "correct"],
    7: [{"slow": 3}, "correct"],
    8: ["malformed", "correct"],
    9: ["drop", "correct"],
    10: "blank", 11: "null_content", 12: {"content": "我不确定"},
    13: "wrong",
    14: "502",                     # always fails: retries run out
    15: ["504", "correct"],
    16: [{"status": 503, "retry_after": "1"}, "correct"],
    17: {"status": 400},           # refused for good once others were answered: that title only
}
actions = {titles[i]: action for i, action in script.items()}
actions[broken] = "malformed"
json.dump(actions, open(path, "w"), ensure_ascii=False)
PY
start_llm_server "$dir" --truth "$dir/data/test.txt" --classes "$dir/data/class.txt" --script "$dir/script.json"
common=(--set "base_url=$LLM_URL" --set "cache_path=$dir/cache.sqlite" --set concurrency=6
        --set timeout_s=1 --set max_retries=2 --set backoff_base_s=0.05 --set backoff_max_s=0.2)

"$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/model" "${common[@]}" \
  >"$dir/train.out" 2>"$dir/train.err" || { cat "$dir/train.err"; fail "train"; }
m="$dir/model/metrics.json"

# Retries: 429, 500, 503 x2, slow, malformed, drop, 504, 503 = 9, plus 2 for the 502 title.
assert_eq 11 "$(run_stat "$m" retries)" "retries"
assert_eq 51 "$(run_stat "$m" requests_sent)" "requests sent"
assert_eq 51 "$(server_stat "j['requests']")" "requests the server saw"
assert_eq 51 "$(server_stat "sum(j['attempts'].values())")" "attempts the server saw"
assert_eq 40 "$(server_stat "len(j['attempts'])")" "titles the server saw"
attempts_of() {  # title: how often the server was asked for it
  server_stat "j['attempts'][sys.argv[1]]" "$1"
}
for i in 4 5 7 8 9 15 16; do
  assert_eq 2 "$(attempts_of "${titles[$i]}")" "attempts of title $i"
done
assert_eq 3 "$(attempts_of "${titles[6]}")" "attempts of the twice-503 title"
assert_eq 3 "$(attempts_of "${titles[14]}")" "attempts of the always-502 title (max_retries=2)"
assert_eq 1 "$(attempts_of "${titles[0]}")" "attempts of a chatty title"
assert_eq 1 "$(attempts_of "${titles[17]}")" "attempts of the refused title (a 400 is not retried)"
assert_contains "$dir/train.err" "the server refused the title '${titles[17]}' (HTTP 400: scripted failure)"
assert_contains "$dir/train.err" "giving up on the title '${titles[14]}': HTTP 502 after 3 attempt(s)"
# retry_gap TITLE: seconds from the server's first reply to that title to the second attempt.
retry_gap() {
  server_stat "(lambda t: t[1]['arrived'] - t[0]['replied'])(j['timeline'][sys.argv[1]])" "$1"
}
# Retry-After: 1 (on a 429 and on a 503) was honoured, though backoff alone is at most 0.2 s.
for i in 4 16; do
  gap=$(retry_gap "${titles[$i]}")
  python3 -c "import sys; sys.exit(0 if $gap >= 1.0 - 0.05 else 1)" ||
    fail "title $i retried $gap s after a Retry-After: 1 reply"
done
# A Retry-After holds back every request, not only the one it answered: nothing arrives while it
# runs (after the 0.1 s a request already on its way may take).
arrivals_during_pause=$(server_stat "(lambda r: sum(1 for t in j['timeline'].values() for a in t if r + 0.1 < a['arrived'] < r + 0.95))(j['timeline'][sys.argv[1]][0]['replied'])" "${titles[4]}")
assert_eq 0 "$arrivals_during_pause" "requests arriving within a Retry-After: 1"

assert_eq 3 "$(run_stat "$m" unknown_replies)" "unknown replies (blank, null, unsure)"
# A refusal is the server's answer (asking again cannot help): counted apart from failed titles.
assert_eq 1 "$(run_stat "$m" failed_titles)" "titles whose retries ran out"
assert_eq 1 "$(run_stat "$m" refused_titles)" "titles the server refused"
assert_eq 5 "$(json_get "$m" "j['unknown']")" "unknown predictions in the metrics"
assert_eq 34 "$(json_get "$m" "round(j['accuracy'] * 40)")" "correct predictions (40 - 5 unknown - 1 wrong)"
assert_eq 40 "$(json_get "$m" "j['count']")" "titles evaluated"
assert_eq 5 "$(json_get "$m" "sum(row[-1] for row in j['confusion']['matrix'])")" "unknown column"
assert_eq 11 "$(json_get "$m" "len(j['confusion']['columns'])")" "confusion columns incl. unknown"
# 38 answered requests (the 502 and 400 titles never were): tokens count answers, not attempts.
assert_eq 3800 "$(run_stat "$m" prompt_tokens)" "prompt tokens"
assert_eq 38 "$(run_stat "$m" "latency_ms']['count")" "latencies recorded"
# predictions.tsv: every title exactly once.
assert_eq 40 "$(tail -n +2 "$dir/model/predictions.tsv" | wc -l)" "prediction rows"
assert_eq 40 "$(tail -n +2 "$dir/model/predictions.tsv" | cut -f1 | sort -u | wc -l)" "distinct prediction rows"
assert_eq 5 "$(tail -n +2 "$dir/model/predictions.tsv" | awk -F'\t' '$3 == "unknown"' | wc -l)" "unknown rows"
# The blank and null replies are not kept: a rerun asks for them again.
assert_eq 36 "$(cache_rows "$dir/cache.sqlite")" "cached replies"

# Rerun: 36 answers come from the cache; the two failed titles and the two empty replies are
# asked again.
reset_llm_server
"$NEWSCLS_BIN" eval --model-dir "$dir/model" --data "$dir/data" --out "$dir/eval/metrics.json" \
  >/dev/null 2>"$dir/eval.err" || { cat "$dir/eval.err"; fail "eval"; }
e="$dir/eval/metrics.json"
assert_eq 36 "$(run_stat "$e" cache_hits)" "cache hits on rerun"
assert_eq 6 "$(run_stat "$e" requests_sent)" "requests on rerun (the 502 title 3 times, the refused one once, the two empty ones)"
assert_eq 6 "$(server_stat "j['requests']")" "server requests on rerun"
assert_eq 1 "$(attempts_of "${titles[10]}")" "the blank reply's title asked again"
assert_eq 3 "$(run_stat "$e" unknown_replies)" "the cached unsure reply and the two empty ones again"
assert_eq 5 "$(json_get "$e" "j['unknown']")" "unknown predictions on rerun"

# A title whose every reply is malformed is given up as such, not as if HTTP 200 had failed.
echo "$broken" >"$dir/broken.txt"
expect_exit 1 "$dir/broken.err" "$NEWSCLS_BIN" predict --model-dir "$dir/model" --input "$dir/broken.txt" --output "$dir/broken.jsonl"
assert_contains "$dir/broken.err" "giving up on the title '$broken': a malformed reply (reply is not a JSON object) after 3 attempt(s)"
assert_not_contains "$dir/broken.err" "HTTP 200"
echo "ok"
