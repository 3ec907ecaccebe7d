#!/usr/bin/env bash
# Provider differences, against the fake server in strict mode (it answers 400 with an
# OpenAI-style error to any body field outside OpenAI's chat-completions set, as OpenAI
# does): thinking "auto" (the default) sends DeepSeek's "thinking" field to no other host,
# so the run works; thinking forced on is refused there with the server's message shown.
# And the API key does not go over plain http:// to a host that is not loopback.
source "$(dirname "$0")/lib.sh"
source "$NEWSCLS_SOURCE_DIR/tests/llm_server/lib.sh"

dir=$(scratch)
llm_slice "$dir/data" 2              # 20 test titles
n=$(wc -l <"$dir/data/test.txt")
start_llm_server "$dir" --truth "$dir/data/test.txt" --classes "$dir/data/class.txt" --strict
common=(--set "base_url=$LLM_URL/v1" --set cache_path=off --set concurrency=4)
unset NEWSCLS_LLM_API_KEY DEEPSEEK_API_KEY

# 1. Default settings against a strict server: every title answered, no thinking field.
"$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/auto" "${common[@]}" \
  >/dev/null 2>"$dir/auto.err" || { cat "$dir/auto.err"; fail "default thinking against a strict server"; }
assert_eq "$n" "$(server_stat "j['requests']")" "requests"
assert_eq 0 "$(server_stat "j['thinking_requests']")" "requests with a thinking field"
assert_eq "['max_tokens', 'messages', 'model', 'stream', 'temperature']" "$(server_stat "sorted(j['fields'])")" \
  "body fields sent"
assert_eq "{'200': $n}" "$(server_stat "j['statuses']")" "statuses"
assert_eq 1.0 "$(json_get "$dir/auto/metrics.json" "j['accuracy']")" "accuracy"
assert_eq auto "$(json_get "$dir/auto/manifest.json" "j['config']['thinking']")" "thinking in the bundle"

# 2. The strict server does refuse the field: thinking forced on stops the run after one
#    request, with the server's reason.
reset_llm_server
expect_exit 1 "$dir/forced.err" "$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/forced" \
  "${common[@]}" --set concurrency=1 --set thinking=disabled
assert_contains "$dir/forced.err" "HTTP 400"
assert_contains "$dir/forced.err" "Unrecognized request argument supplied: thinking"
assert_eq 1 "$(server_stat "j['requests']")" "requests before stopping"
[[ ! -e "$dir/forced" ]] || fail "a bundle was written after a 400"

# 3. A lenient server sees the forced field in every request.
stop_llm_server
start_llm_server "$dir" --truth "$dir/data/test.txt" --classes "$dir/data/class.txt"
"$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/enabled" --set "base_url=$LLM_URL" \
  --set cache_path=off --set thinking=enabled >/dev/null 2>"$dir/enabled.err" || { cat "$dir/enabled.err"; fail "thinking=enabled"; }
assert_eq "$n" "$(server_stat "j['thinking_requests']")" "requests with thinking=enabled"

# 4. Plain http to a host that is not loopback: a config error naming base_url and
#    allow_insecure_http, before any request (10.255.255.1 is never contacted).
NEWSCLS_LLM_API_KEY=sk-test-never-sent expect_exit 1 "$dir/insecure.err" \
  "$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/insecure" \
  --set base_url=http://10.255.255.1:9/v1 --set cache_path=off --set timeout_s=1 --set max_retries=0
assert_contains "$dir/insecure.err" "base_url"
assert_contains "$dir/insecure.err" "allow_insecure_http=true"
[[ ! -e "$dir/insecure" ]] || fail "a bundle was written"
echo "ok"
