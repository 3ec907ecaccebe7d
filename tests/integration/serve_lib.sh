# Helpers for the test_serve_*.sh scripts (sourced after lib.sh): a newscls serve process
# on a free loopback port, and curl calls that check the status and the error code.

server_pid=""
stop_leftover_server() { [[ -z $server_pid ]] || kill -KILL "$server_pid" 2>/dev/null || true; }
trap stop_leftover_server EXIT

# start_server LOG ARGS...: starts `newscls serve --port 0 ARGS...` (stderr to LOG), sets
# $server_pid and $base, and waits until /healthz answers 200.
start_server() {
  local log=$1
  shift
  : >"$log"  # exists before the first read below (the background job's redirection may come later)
  "$NEWSCLS_BIN" serve --port 0 "$@" 2>"$log" &
  server_pid=$!
  poll_until "$POLL_DEADLINE_S" server_up "$log" || { cat "$log" >&2; fail "newscls serve did not become healthy"; }
}
# server_up LOG: the server has logged its port and answers /healthz (sets $base).
server_up() {
  local port
  ! gone "$server_pid" || { cat "$1" >&2; fail "newscls serve exited while starting"; }
  port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' "$1" | head -n 1)
  [[ -n $port ]] && curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && base="http://127.0.0.1:$port"
}

# queue_depth_is MODEL N: /metrics says N requests for MODEL are waiting for their batch.
queue_depth_is() {
  local metrics
  metrics=$(curl -fs "$base/metrics") && grep -qxF "newscls_queue_depth{model=\"$1\"} $2" <<<"$metrics"
}

# stop_server SIGNAL: sends SIGNAL, waits, and fails unless the server exits 0.
stop_server() {
  local rc=0
  kill -"$1" "$server_pid"
  wait "$server_pid" || rc=$?
  server_pid=""
  [[ $rc == 0 ]] || fail "newscls serve exited $rc after SIG$1, expected 0"
}

# call WANT_STATUS OUT METHOD PATH [curl args...]: one request; its body goes to OUT.
call() {
  local want=$1 out=$2 method=$3 path=$4 got
  shift 4
  got=$(curl -s -o "$out" -w '%{http_code}' -X "$method" "$@" "$base$path") || true
  [[ "$got" == "$want" ]] || { cat "$out" >&2 2>/dev/null; fail "$method $path: status $got, expected $want"; }
}

# expect_error STATUS CODE METHOD PATH [curl args...]: a JSON error with that status and code.
expect_error() {
  local status=$1 code=$2 out="$dir/error.json"
  shift 2
  call "$status" "$out" "$@"
  python3 -c "import json,sys; e=json.load(open(sys.argv[1]))['error']; assert e['code'] == sys.argv[2] and e['message'], e" \
    "$out" "$code" || fail "$1 $2: expected a JSON error with code $code"
}

# post_json WANT OUT JSON [extra curl args...]: POST /v1/classify.
post_json() {
  local want=$1 out=$2 body=$3
  shift 3
  call "$want" "$out" POST /v1/classify -H 'Content-Type: application/json' --data-binary "$body" "$@"
}

# same_as_predict PREDICT_JSONL MODEL RESPONSE...: each response is, byte for byte, the
# `newscls predict` lines (all of them for one response, else line i for response i) with
# the title field taken out, wrapped as {"model","results"}.
same_as_predict() {
  python3 - "$@" <<'PY'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
model, responses = sys.argv[2], sys.argv[3:]
def result(line):
    assert line.startswith('{"title":'), line
    _, end = json.JSONDecoder().raw_decode(line, 9)
    return "{" + line[end + 1:]
def body(results):
    return '{"model":' + json.dumps(model, ensure_ascii=False) + ',"results":[' + ",".join(results) + "]}"
wants = [body(map(result, lines))] if len(responses) == 1 else [body([result(l)]) for l in lines]
assert len(wants) == len(responses), (len(wants), len(responses))
for path, want in zip(responses, wants):
    got = open(path, encoding="utf-8").read()
    assert got == want, f"{path} served:\n{got}\npredict:\n{want}"
PY
}
