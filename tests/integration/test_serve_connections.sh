#!/usr/bin/env bash
# newscls serve's connection handling, over raw sockets: pipelined requests are answered in
# order (a stray empty line between them skipped); a request never leaks into the next one
# (an unread body, the rest of a request httplib refused itself: the connection closes); a
# head or body that never ends, trickles or goes silent is cut off with its status, logged
# and counted as such; "Expect: 100-continue" is refused before the body is invited.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"
source "$(dirname "$0")/serve_lib.sh"
dir=$(scratch)
# shellcheck disable=SC2046
train_tiny fasttext "$dir/news" $(tiny_settings fasttext)
start_server "$dir/server.log" --model-dir "$dir/news" --max-body-bytes 4096 --read-timeout 1 --body-timeout 2 --threads 1
port=${base#http://127.0.0.1:}

# Each case sends bytes on one connection, reads until the server closes (or 60 s pass), and
# checks the statuses of the responses, in order.
python3 - "$port" <<'PY' || fail "connection handling"
import re, socket, sys, time
port = int(sys.argv[1])

def exchange(*parts, answered=False):
    """answered: each part after the first is sent once the head of an answer has come back."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(60)
    data = b""
    try:
        for i, part in enumerate(parts):
            while i and answered and b"\r\n\r\n" not in data and (chunk := s.recv(65536)):
                data += chunk
            s.sendall(part)
        while chunk := s.recv(65536):
            data += chunk
    except (BrokenPipeError, ConnectionResetError, socket.timeout):
        pass
    return re.findall(rb"HTTP/1\.1 (\d{3}) ", data), data

body = '{"titles": ["足球联赛 主队获胜"]}'.encode()
post = b"POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
get = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
inner = b"HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n"  # smuggled: must never be answered or logged
last = b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"

# Pipelined, with the CRLF some clients send after a POST body: three answers, in order.
statuses, data = exchange(get + post + b"\r\n" + last)
assert statuses == [b"200"] * 3 and b'"results"' in data and b'"models"' in data, data

# A body holding a request, left unread (a refusal; a GET's body), sent with its head or after
# the answer: the answer, then the connection closes; the inner request never runs.
for head, first in ((b"POST /nope HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(inner), b"404"),
                    (b"POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Length: 99999\r\n\r\n", b"413"),
                    (b"GET /v1/models HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(inner), b"200")):
    for parts in ((head + inner,), (head, inner)):
        statuses, data = exchange(*parts, answered=True)
        assert statuses == [first], (head, statuses)
# An answer after which the connection closes says so (httplib 0.11 adds "Connection: close"
# only when the client asked): a GET's unread body, and httplib's own 416 and 400.
for request, first in ((b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab", b"200"),
                       (b"GET /healthz HTTP/1.1\r\nHost: x\r\nRange: bytes=zz\r\n\r\n", b"416"),
                       (b"GET /healthz HTTP/1.1\r\nX-Long: " + b"c" * 9000 + b"\r\n\r\n", b"400")):
    statuses, data = exchange(request)
    assert statuses == [first] and b"\r\nConnection: close\r\n" in data, data[:300]
# A request httplib refuses itself (414: a target over 8 KiB; 400: a header line over 8 KiB)
# leaves the rest of it unknown: nothing after it is read as a request.
long_target = b"POST /v1/classify?" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(inner)
long_header = b"POST /v1/classify HTTP/1.1\r\nX-Long: " + b"b" * 9000 + b"\r\nContent-Length: %d\r\n\r\n" % len(inner)
for head, first in ((long_target, b"414"), (long_header, b"400")):
    statuses, _ = exchange(head + inner)
    assert statuses == [first], (first, statuses)
# Empty lines past the few skipped: one 400, then closed (not one answer per byte).
statuses, _ = exchange(b"\n" * 2000)
assert statuses == [b"400"], statuses[:5]

# A body whose end is in doubt (two lengths; a length and a coding; a coding list httplib does
# not read) is refused and the connection closed: the second half, a request, never runs (it
# was answered, smuggled past the first Content-Length).
for head, first in ((b"POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nContent-Length: %d\r\n\r\n"
                     % (len(body), len(body) + len(inner)), b"400"),
                    (b"POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n"
                     % len(body), b"400"),
                    (b"POST /v1/classify HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", b"501")):
    statuses, data = exchange(head + body + inner)
    assert statuses == [first] and b"\r\nConnection: close\r\n" in data, (first, statuses, data[:300])
# "chunked" in another case is still chunked.
chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
statuses, data = exchange(b"POST /v1/classify HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\nConnection: close\r\n\r\n" + chunked)
assert statuses == [b"200"] and b'"results"' in data, data[:300]

# "Expect: 100-continue" with a body over the limit: 413 at once, no "100 Continue".
statuses, _ = exchange(b"POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Length: 99999\r\nExpect: 100-continue\r\n\r\n")
assert statuses == [b"413"], statuses

# A head trickled a line at a time, each within --read-timeout (1 s), must arrive whole within
# it; a body within --body-timeout (2 s) of its head, and with no silence of a read timeout:
# 408 and closed, not a worker held for as long as the client likes.
def slow(start_bytes, piece, within, reason):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(0.05)
    s.sendall(start_bytes)
    start, data = time.time(), b""
    while time.time() - start < within + 30:  # a client that keeps trickling, unless cut off
        try:
            if piece:
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
    assert time.time() - start < within + 10, (reason, time.time() - start)  # cut off, with room for a busy machine
    assert data.startswith(b"HTTP/1.1 408") and reason in data, data

slow(b"GET /healthz HTTP/1.1\r\nHost: x\r\n", b"X-Slow: 1\r\n", 1, b"headers did not arrive")
slow(b"GET /healthz HTTP/1.1\r\nHost: x\r\n", b"", 1, b"headers did not arrive")
trickled = b"POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
slow(trickled, b" ", 2, b"request body did not arrive within 2 s")
slow(trickled + b'{"titles"', b"", 1, b"nothing arrived for 1 s")

# A head, or a chunk-size line, that never ends is cut off (431 for the head, 413 for the
# body) long before the server has buffered what the client sends.
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
        pass  # the reset of what the server did not read may still overtake the answer
PY

# Meanwhile the server answers others at once.
post_json 200 "$dir/after.json" '{"titles": ["足球联赛 主队获胜"]}'
assert_contains "$dir/after.json" '"results"'

# The refusals are logged and counted with the status they got and the client's address
# (httplib reports a head cut off among its headers as a 400 from nowhere, and one cut off in
# its request line not at all).
call 200 "$dir/metrics.txt" GET /metrics
assert_contains "$dir/server.log" "431 to 127.0.0.1"
assert_contains "$dir/server.log" '127.0.0.1 "GET /" 431'
assert_contains "$dir/server.log" '127.0.0.1 "(request line cut off)" 431'
assert_contains "$dir/server.log" 'error=header_too_large'
assert_contains "$dir/server.log" '"GET /healthz" 408'
assert_contains "$dir/server.log" '"POST /v1/classify" 408'
assert_eq 2 "$(awk '/^newscls_http_requests_total.*status="431"/ {n += $2} END {print n}' "$dir/metrics.txt")" "431s counted"
assert_eq 4 "$(awk '/^newscls_http_requests_total.*status="408"/ {n += $2} END {print n}' "$dir/metrics.txt")" "408s counted"
if grep -q '"HEAD /healthz"' "$dir/server.log"; then fail "a request smuggled in a body was answered"; fi
stop_server TERM
echo "test_serve_connections: ok"
