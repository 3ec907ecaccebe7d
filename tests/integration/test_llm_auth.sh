#!/usr/bin/env bash
# llm API keys: read from NEWSCLS_LLM_API_KEY (or DEEPSEEK_API_KEY, or api_key_env), sent as
# a bearer token, never written anywhere; a rejected key (401) stops the run at once with a
# message naming the variable; a missing key for a remote endpoint is an error naming it.
source "$(dirname "$0")/lib.sh"
source "$NEWSCLS_SOURCE_DIR/tests/llm_server/lib.sh"

dir=$(scratch)
llm_slice "$dir/data" 2              # 20 test titles
secret="sk-test-CORRECT-4711"
start_llm_server "$dir" --truth "$dir/data/test.txt" --classes "$dir/data/class.txt" --require-key "$secret"
common=(--set "base_url=$LLM_URL" --set "cache_path=$dir/cache.sqlite" --set concurrency=1)
unset NEWSCLS_LLM_API_KEY DEEPSEEK_API_KEY

# 1. A wrong key: exit 1 after one request, the message names the variable, no bundle.
NEWSCLS_LLM_API_KEY="sk-test-WRONG-0815" expect_exit 1 "$dir/wrong.err" \
  "$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/wrong" "${common[@]}"
assert_contains "$dir/wrong.err" "HTTP 401"
assert_contains "$dir/wrong.err" "set NEWSCLS_LLM_API_KEY"
grep -q "sk-test-WRONG-0815" "$dir/wrong.err" && fail "the key was printed"
assert_eq 1 "$(server_stat "j['requests']")" "requests before stopping"
[[ ! -e "$dir/wrong" ]] || fail "a bundle was written after a 401"

# 2. No key at all on loopback: a dummy key is sent, rejected here, and the message names
#    both variables the key may come from.
expect_exit 1 "$dir/none.err" "$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/none" "${common[@]}"
assert_contains "$dir/none.err" "NEWSCLS_LLM_API_KEY (or DEEPSEEK_API_KEY)"

# 3. The right key through the fallback variable: works; the key is nowhere on disk or in logs.
reset_llm_server
DEEPSEEK_API_KEY="$secret" "$NEWSCLS_BIN" --log-level debug train --model llm --data "$dir/data" \
  --out "$dir/model" "${common[@]}" >"$dir/ok.out" 2>"$dir/ok.err" || { cat "$dir/ok.err"; fail "train with key"; }
assert_eq 20 "$(server_stat "j['requests']")" "requests with a valid key"
assert_eq 1.0 "$(json_get "$dir/model/metrics.json" "j['accuracy']")" "accuracy"
if grep -rqaF "$secret" "$dir/model" "$dir/ok.out" "$dir/ok.err" "$dir"/cache.sqlite*; then
  fail "the API key was written to disk or logged"
fi

# 3b. A proxy in the environment is not used for a loopback server: the key went to it in clear,
#     and the run failed naming the server as the one it could not reach.
reset_llm_server
DEEPSEEK_API_KEY="$secret" http_proxy=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 ALL_PROXY=http://127.0.0.1:9 \
  env -u no_proxy -u NO_PROXY "$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/proxied" --set "base_url=$LLM_URL" \
  --set cache_path=off --set max_retries=0 >/dev/null 2>"$dir/proxy.err" || { cat "$dir/proxy.err"; fail "train with a proxy set"; }
assert_eq 20 "$(server_stat "j['requests']")" "requests straight to the loopback server"
# 3c. A key with a line break (read from a CRLF file) is named as such, not sent as a broken header;
#     a base_url with a stray space is named as such, not as "not loopback".
NEWSCLS_LLM_API_KEY="$secret"$'\r' expect_exit 1 "$dir/crkey.err" \
  "$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/crkey" --set "base_url=$LLM_URL" --set cache_path=off
assert_contains "$dir/crkey.err" "NEWSCLS_LLM_API_KEY holds a line break"
grep -qaF "$secret" "$dir/crkey.err" && fail "the key was printed"
expect_exit 1 "$dir/space.err" "$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/space" \
  --set "base_url=$LLM_URL " --set cache_path=off
assert_contains "$dir/space.err" "holds a space or a control character"
assert_eq NEWSCLS_LLM_API_KEY "$(json_get "$dir/model/manifest.json" "j['config']['api_key_env']")" "key variable in the bundle"

# 4. A custom variable is named in the error; the key in NEWSCLS_LLM_API_KEY is not used.
NEWSCLS_LLM_API_KEY="$secret" expect_exit 1 "$dir/custom.err" \
  "$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/custom" "${common[@]}" \
  --set api_key_env=MY_LLM_KEY --set cache_path=off
assert_contains "$dir/custom.err" "MY_LLM_KEY"

# 5. A remote endpoint without any key: a clear error naming the variable, no request.
expect_exit 1 "$dir/remote.err" "$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/remote" \
  --set base_url=https://llm.invalid --set "cache_path=$dir/remote.sqlite"
assert_contains "$dir/remote.err" "NEWSCLS_LLM_API_KEY (or DEEPSEEK_API_KEY)"
assert_contains "$dir/remote.err" "api_key_env"
# ... and no response cache made on the way (the refusal came after the file was created).
[[ ! -e $dir/remote.sqlite ]] || fail "a keyless run refused for its key created $dir/remote.sqlite"

# 6. Other client errors stop the run too, with advice (402: balance).
stop_llm_server
echo '{"*": "402"}' >"$dir/402.json"
start_llm_server "$dir" --script "$dir/402.json"
expect_exit 1 "$dir/402.err" "$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/x402" \
  --set "base_url=$LLM_URL" --set cache_path=off --set concurrency=1
assert_contains "$dir/402.err" "HTTP 402"
assert_contains "$dir/402.err" "balance"
assert_eq 1 "$(server_stat "j['requests']")" "requests before stopping on 402"
# 7. https to a plain-HTTP port: a TLS failure stops the run (no retries) and says so.
expect_exit 1 "$dir/tls.err" "$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/tls" \
  --set "base_url=https://127.0.0.1:$LLM_PORT" --set cache_path=off --set concurrency=1
assert_contains "$dir/tls.err" "TLS failure"
# A server that never answers (nothing listening on the port) fails the run, naming it,
# rather than scoring every title "unknown" and writing a bundle.
port=$(python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
NEWSCLS_LLM_API_KEY="$secret" expect_exit 1 "$dir/down.err" "$NEWSCLS_BIN" train --model llm --data "$dir/data" \
  --out "$dir/down" --set "base_url=http://127.0.0.1:$port" --set cache_path=off --set max_retries=0
assert_contains "$dir/down.err" "no answer from http://127.0.0.1:$port"
[[ ! -e "$dir/down" ]] || fail "a bundle was written with no answer"
echo "ok"
