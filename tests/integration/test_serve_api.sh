#!/usr/bin/env bash
# newscls serve on a free loopback port with a tiny fasttext bundle: every endpoint, the
# results equal `newscls predict` byte for byte (one request, requests split over several
# batches, and concurrent single-title requests gathered into one batch), every error code,
# the limits, a full queue (503), a stalled client, the access log and /metrics.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"
source "$(dirname "$0")/serve_lib.sh"
dir=$(scratch)
tiny="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
# shellcheck disable=SC2046
train_tiny fasttext "$dir/news" $(tiny_settings fasttext)
cut -f1 "$tiny/test.txt" >"$dir/titles.txt"
"$NEWSCLS_BIN" predict --model-dir "$dir/news" --input "$dir/titles.txt" --output "$dir/predict.jsonl" --top-k 2
titles_json=$(python3 -c "import json,sys; print(json.dumps(open(sys.argv[1],encoding='utf-8').read().splitlines(), ensure_ascii=False))" "$dir/titles.txt")

start_server "$dir/server.log" --model-dir "$dir/news/" --max-batch 4 --max-wait-ms 300 \
  --max-titles 50 --max-body-bytes 4096 --read-timeout 1 --body-timeout 2 --threads 1

# --- endpoints ---
call 200 "$dir/health.json" GET /healthz
assert_eq "ok news" "$(json_get "$dir/health.json" "j['status'] + ' ' + ' '.join(j['models'])")" "/healthz"
call 200 "$dir/models.json" GET /v1/models
assert_eq "news fasttext" "$(json_get "$dir/models.json" "j['models'][0]['name'] + ' ' + j['models'][0]['family']")" "/v1/models"
assert_eq "$(paste -sd, "$tiny/class.txt")" "$(json_get "$dir/models.json" "','.join(j['models'][0]['labels'])")" "labels"
assert_eq "$(json_get "$dir/news/manifest.json" "j['training']['test_accuracy']")" \
  "$(json_get "$dir/models.json" "j['models'][0]['metrics']['test_accuracy']")" "test accuracy from the manifest"

# --- one request of 9 titles (3 batches of at most 4): the bytes predict writes ---
post_json 200 "$dir/all.json" "{\"titles\": $titles_json, \"top_k\": 2}"
same_as_predict "$dir/predict.jsonl" news "$dir/all.json"
post_json 200 "$dir/named.json" "{\"titles\": $titles_json, \"top_k\": 2, \"model\": \"news\"}"
same_as_predict "$dir/predict.jsonl" news "$dir/named.json"

# --- a blank title is abstained, not guessed, beside an answered one ---
post_json 200 "$dir/blank.json" '{"titles": [" ", "足球联赛 主队获胜"]}'
assert_eq "(None, True, [], False)" \
  "$(json_get "$dir/blank.json" "tuple(j['results'][0][k] for k in ('label', 'abstained', 'top_k')) + ('abstained' in j['results'][1],)")" \
  "blank title in a request"

# --- 9 concurrent one-title requests, gathered by the micro-batcher ---
batches_before=$(curl -s "$base/metrics" | sed -n 's/^newscls_batch_size_count{model="news"} //p')
python3 -c "import json,sys
for i, t in enumerate(open(sys.argv[1], encoding='utf-8').read().splitlines(), 1):
    open(f'{sys.argv[2]}/one.{i}.body', 'w', encoding='utf-8').write(json.dumps({'titles': [t], 'top_k': 2}, ensure_ascii=False))
" "$dir/titles.txt" "$dir"
for i in $(seq 9); do
  curl -s -o "$dir/one.$i.json" -H 'Content-Type: application/json' --data-binary "@$dir/one.$i.body" "$base/v1/classify" &
done
wait $(jobs -p | grep -v "^$server_pid$")
same_as_predict "$dir/predict.jsonl" news "$dir"/one.{1..9}.json
batches_after=$(curl -s "$base/metrics" | sed -n 's/^newscls_batch_size_count{model="news"} //p')
(( batches_after - batches_before < 9 )) || fail "9 concurrent requests ran in $((batches_after - batches_before)) batches: none gathered"

# --- errors: JSON bodies with the right status and code ---
expect_error 400 malformed_json POST /v1/classify --data-binary '{"titles": ['
printf '{"titles": ["\xff\xfe"]}' >"$dir/bad_utf8.json"
expect_error 400 invalid_utf8 POST /v1/classify --data-binary "@$dir/bad_utf8.json"
expect_error 400 wrong_type POST /v1/classify --data-binary '{"titles": "one title"}'
expect_error 400 wrong_type POST /v1/classify --data-binary '{"titles": [1, 2]}'
expect_error 400 wrong_type POST /v1/classify --data-binary '{"titles": ["a"], "top_k": "3"}'
expect_error 400 wrong_type POST /v1/classify --data-binary '[["a"]]'
expect_error 400 empty_titles POST /v1/classify --data-binary '{"titles": []}'
expect_error 400 missing_titles POST /v1/classify --data-binary '{"top_k": 1}'
expect_error 400 unknown_key POST /v1/classify --data-binary '{"titles": ["a"], "title": "b"}'
expect_error 400 empty_body POST /v1/classify -H 'Content-Length: 0'
python3 -c "print('[' * 3000)" >"$dir/deep.json"
expect_error 400 too_deep POST /v1/classify --data-binary "@$dir/deep.json"
expect_error 404 unknown_model POST /v1/classify --data-binary '{"titles": ["a"], "model": "nope"}'
expect_error 404 not_found GET /v2/everything
expect_error 405 method_not_allowed GET /v1/classify
expect_error 405 method_not_allowed POST /healthz --data-binary '{}'
expect_error 405 method_not_allowed DELETE /v1/models
python3 -c "import json; print(json.dumps({'titles': ['x' * 100] * 50}))" >"$dir/big.json"
expect_error 413 body_too_large POST /v1/classify --data-binary "@$dir/big.json"
expect_error 413 body_too_large POST /v1/classify -H 'Transfer-Encoding: chunked' --data-binary "@$dir/big.json"
python3 -c "import json; print(json.dumps({'titles': ['x'] * 51}))" >"$dir/many.json"
expect_error 413 too_many_titles POST /v1/classify --data-binary "@$dir/many.json"
expect_error 411 length_required POST /v1/classify
expect_error 415 unsupported_media_type POST /v1/classify -F 'titles=a'

# --- an unread body is never taken for a request: a body holding a request (refused, or sent
# with a GET), on one connection, gets its answer and then 400s, never a routed answer ---
python3 - "${base#http://127.0.0.1:}" <<'PY' || fail "request smuggled in a refused body"
import re, socket, sys
inner = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
for head, first in ((b"POST /nope HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(inner), b"404"),
                    (b"POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Length: 99999\r\n\r\n", b"413"),
                    (b"GET /v1/models HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(inner), b"200")):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.settimeout(5)
    s.sendall(head)
    data = s.recv(65536)  # the refusal, sent before the body
    s.sendall(inner)      # the "body": a request of its own
    try:
        while len(re.findall(rb"HTTP/1\.1 ", data)) < 2 or not data.endswith(b"}"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", data)
    assert statuses[0] == first and statuses[1:] == [b"400"], statuses
    assert b"connection_tainted" in data, data
PY
# --- pipelining: requests sent together on one connection are each answered, in order ---
python3 - "${base#http://127.0.0.1:}" <<'PY' || fail "a pipelined request was lost"
import re, socket, sys
body = '{"titles": ["足球联赛 主队获胜"]}'.encode()
post = b"POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(5)
s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" + post + b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
assert re.findall(rb"HTTP/1\.1 (\d{3}) ", data) == [b"200"] * 3, data
assert b'"results"' in data and b'"models"' in data, data
PY
# Range is ignored on POST: the whole classify answer comes back.
curl -s -o "$dir/range.json" -w '%{http_code}' -H 'Range: bytes=0-20' -H 'Content-Type: application/json' \
  --data-binary '{"titles": ["足球联赛 主队获胜"]}' "$base/v1/classify" >"$dir/range.code"
assert_eq 200 "$(cat "$dir/range.code")" "Range on POST"
assert_eq 1 "$(json_get "$dir/range.json" "len(j['results'])")" "whole answer despite Range"

# --- a request head, or a chunk-size line, that never ends is cut off: the server stops
# reading (431 for the head, 413 for the body) long before it has buffered what the client sends ---
python3 - "${base#http://127.0.0.1:}" <<'PY' || fail "an endless line was buffered"
import socket, sys
port = int(sys.argv[1])
chunked = b"POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
for start, fill, answer in ((b"GET /", b"a", b"431"), (b"GET / HTTP/1.1\r\nX-Long: ", b"b", b"431"), (chunked, b"0", b"413")):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(10)
    s.sendall(start)
    sent = 0
    try:
        while sent < 64 << 20:  # 64 MB; before the guard httplib buffered all of it
            s.sendall(fill * (1 << 20))
            sent += 1 << 20
    except (BrokenPipeError, ConnectionResetError):
        pass
    assert sent < 16 << 20, (start, sent)
    try:
        assert s.recv(4096).startswith(b"HTTP/1.1 " + answer), start
    except ConnectionResetError:
        pass  # the reset of unread bytes may overtake the answer
PY
assert_contains "$dir/server.log" "431 to 127.0.0.1"
call 200 "$dir/health2.json" GET /healthz

# --- a head trickled in a line at a time, each within --read-timeout (1 s here), must still
# arrive whole within it, and a body within --body-timeout (2 s here) of its head: 408 and
# closed, not a worker held for as long as the client likes (a byte of the body's declared 100
# every 0.4 s would take 40 s) ---
python3 - "${base#http://127.0.0.1:}" <<'PY' || fail "a trickled request held the connection"
import socket, sys, time

def trickle(start_bytes, piece, within, reason):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.settimeout(0.05)
    s.sendall(start_bytes)
    start, data = time.time(), b""
    while time.time() - start < within + 5:
        try:
            s.sendall(piece)
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        except socket.timeout:
            pass
        except (BrokenPipeError, ConnectionResetError):
            break
        time.sleep(0.4)
    assert time.time() - start < within + 2, (reason, time.time() - start)
    assert data.startswith(b"HTTP/1.1 408"), data[:80]
    assert reason in data, data

trickle(b"GET /healthz HTTP/1.1\r\nHost: x\r\n", b"X-Slow: 1\r\n", 1, b"headers did not arrive")
trickle(b"POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n",
        b" ", 2, b"request body did not arrive within 2 s")
PY

# --- a stalled client is dropped after --read-timeout and holds up nobody meanwhile ---
python3 - "${base#http://127.0.0.1:}" <<'PY' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"titles\"")
start = time.time()
s.settimeout(10)
data = s.recv(4096)  # the server gives up on the body: closes, or answers 400 and closes
while data:
    data = s.recv(4096)
assert time.time() - start < 5, time.time() - start
PY
stalled=$!
sleep 0.2
post_json 200 "$dir/meanwhile.json" '{"titles": ["足球联赛 主队获胜"]}'
wait "$stalled" || fail "the stalled connection was not closed within 5 s"

# --- access log: one line per request, counts but never titles; /metrics ---
assert_contains "$dir/server.log" '"POST /v1/classify" 200'
assert_contains "$dir/server.log" 'model=news titles=9'
assert_contains "$dir/server.log" '"GET /v1/classify" 405'
if grep -qF "$(head -n 1 "$dir/titles.txt")" "$dir/server.log"; then fail "a title reached the access log"; fi
call 200 "$dir/metrics.txt" GET /metrics
assert_contains "$dir/metrics.txt" 'newscls_http_requests_total{path="/v1/classify",status="200"}'
assert_contains "$dir/metrics.txt" 'newscls_http_requests_total{path="/v1/classify",status="413"} 5'
assert_contains "$dir/metrics.txt" 'newscls_http_request_duration_seconds_bucket{path="/v1/classify",le="+Inf"}'
assert_contains "$dir/metrics.txt" 'newscls_titles_total{model="news"}'
assert_contains "$dir/metrics.txt" 'newscls_queue_depth{model="news"} 0'
# The refusals above are logged and counted as the 431 and 408 they got, with the address
# (httplib reports a head cut off among its headers as a 400 from nowhere, and one cut off in
# its request line not at all).
assert_contains "$dir/server.log" '127.0.0.1 "GET /" 431'
assert_contains "$dir/server.log" '127.0.0.1 "(request line cut off)" 431'
assert_contains "$dir/server.log" 'error=header_too_large'
assert_contains "$dir/server.log" '"GET /healthz" 408'
assert_contains "$dir/server.log" '"POST /v1/classify" 408'
assert_eq 2 "$(awk '/^newscls_http_requests_total.*status="431"/ {n += $2} END {print n}' "$dir/metrics.txt")" "431s counted"
stop_server TERM

# --- a full queue answers 503 at once: the first request waits 1.5 s for its batch ---
start_server "$dir/queue.log" --model-dir "$dir/news" --queue 1 --max-batch 1000 --max-wait-ms 1500
post_json 200 "$dir/first.json" '{"titles": ["湖人队主场击败勇士队"]}' &
first=$!
sleep 0.5
expect_error 503 overloaded POST /v1/classify --data-binary '{"titles": ["网球公开赛决赛"]}'
wait "$first" || fail "the queued request failed"
assert_contains "$dir/first.json" '"results"'
stop_server TERM
echo "test_serve_api: ok"
