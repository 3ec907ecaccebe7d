#!/usr/bin/env bash
# The llm response cache keys on the whole request as sent: an identical rerun asks nothing,
# while a rerun at another temperature asks every title again (the server's request count
# shows it), and is then itself served from the cache. (That every other body option takes
# part in the key is unit-tested: LlmResponseCache.KeyCoversTheWholeRequest.)
source "$(dirname "$0")/lib.sh"
source "$NEWSCLS_SOURCE_DIR/tests/llm_server/lib.sh"

dir=$(scratch)
llm_slice "$dir/data" 2              # 20 test titles
n=$(wc -l <"$dir/data/test.txt")
assert_eq 20 "$n" "test titles"
start_llm_server "$dir" --truth "$dir/data/test.txt" --classes "$dir/data/class.txt"
common=(--set "base_url=$LLM_URL" --set "cache_path=$dir/cache.sqlite" --set concurrency=4)

# requests_for NAME [--set k=v]...: trains once into NAME with these settings; prints the
# requests the server saw.
requests_for() {
  local name=$1
  shift
  reset_llm_server
  "$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/$name" "${common[@]}" "$@" \
    >/dev/null 2>"$dir/$name.err" || { cat "$dir/$name.err" >&2; fail "train $name"; }
  assert_eq "$(server_stat "j['requests']")" "$(run_stat "$dir/$name/metrics.json" requests_sent)" \
    "requests_sent against the server's count ($name)"
  server_stat "j['requests']"
}

assert_eq "$n" "$(requests_for first)" "first run"
assert_eq 0 "$(requests_for same)" "identical rerun"
assert_eq "$n" "$(requests_for warm --set temperature=0.7)" "rerun with another temperature"
assert_eq 0 "$(requests_for warm_again --set temperature=0.7)" "that rerun again"
assert_eq $((2 * n)) "$(cache_rows "$dir/cache.sqlite")" "one cached answer per title and temperature"
echo "ok"
