# Helpers for the llm integration tests: start the fake chat server and read its counters.
# Source after tests/integration/lib.sh.

# start_llm_server DIR [server args...]: starts it in the background, sets LLM_PORT and
# LLM_URL, and stops it when the test exits.
start_llm_server() {
  local dir=$1
  shift
  rm -f "$dir/port"
  python3 "$NEWSCLS_SOURCE_DIR/tests/llm_server/fake_llm_server.py" --port-file "$dir/port" "$@" \
    >"$dir/server.out" 2>"$dir/server.err" &
  LLM_SERVER_PID=$!
  # serve_lib.sh's trap too, which this one replaces: a failed serve test leaves no server behind
  trap 'kill "$LLM_SERVER_PID" 2>/dev/null || true; ! declare -F stop_leftover_server >/dev/null || stop_leftover_server' EXIT
  wait_until 60 "the fake LLM server to write its port to $dir/port" port_or_gone "$dir/port" "$LLM_SERVER_PID"
  [[ -s "$dir/port" ]] || { cat "$dir/server.err" >&2; fail "fake server died"; }
  LLM_PORT=$(cat "$dir/port")
  LLM_URL="http://127.0.0.1:$LLM_PORT"
}

port_or_gone() { [[ -s $1 ]] || gone "$2"; }  # PORT_FILE PID: written, or its writer is gone

stop_llm_server() {
  kill "$LLM_SERVER_PID" 2>/dev/null || true
  wait "$LLM_SERVER_PID" 2>/dev/null || true
}

# Only python3 is needed (no curl or sqlite3 command-line tools).
# server_stat EXPR [ARG...]: a Python expression over j, the server's /stats JSON (and
# sys.argv[1:] = ARGs).
server_stat() {
  local expr=$1
  shift
  python3 -c "import json,sys,urllib.request as u; j=json.load(u.urlopen(sys.argv[1] + '/stats')); sys.argv = sys.argv[1:]; print($expr)" \
    "$LLM_URL" "$@"
}

# cascade_members DIR: a cascade's members trained on DIR/data, DIR/src/ft (fasttext) and
# DIR/src/llm (the server at LLM_URL, no response cache, so every call reaches it; one retry, so
# a server stopped on purpose costs half a second).
cascade_members() {
  local dir=$1
  "$NEWSCLS_BIN" train --model fasttext --data "$dir/data" --out "$dir/src/ft" --threads 1 --set epochs=3 >/dev/null 2>&1 ||
    fail "fasttext member"
  "$NEWSCLS_BIN" train --model llm --data "$dir/data" --out "$dir/src/llm" --set "base_url=$LLM_URL" --set cache_path=off \
    --set concurrency=4 --set max_retries=1 >/dev/null 2>"$dir/llm.err" || { cat "$dir/llm.err"; fail "llm member"; }
}

reset_llm_server() {
  python3 -c "import sys,urllib.request as u; u.urlopen(u.Request(sys.argv[1] + '/reset', data=b''))" "$LLM_URL"
}

# cache_rows FILE: answers in an llm response cache.
cache_rows() {
  python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from responses').fetchone()[0])" "$1"
}

# run_stat FILE KEY: a key of metrics.json's run_stats.
run_stat() {
  json_get "$1" "j['run_stats']['$2']"
}

# llm_slice DIR K: class.txt, 2,000 train titles and K dev and K test titles of each class of the demo set.
llm_slice() {
  local out=$1 k=$2 src
  src=$(demo_data_dir)
  mkdir -p "$out"
  cp "$src/class.txt" "$out/class.txt"
  head -n 2000 "$src/train.txt" >"$out/train.txt"
  first_per_class "$k" "$src/dev.txt" >"$out/dev.txt"
  first_per_class "$k" "$src/test.txt" >"$out/test.txt"
}
