#!/usr/bin/env python3
"""Hostile load for `newscls serve`: N malformed or hostile requests of many kinds, each on
its own connection, --clients at a time. Each must be answered with the expected 4xx (or the connection closed
by the server); the server must stay up, its resident memory (VmRSS of --pid) within 10%
of where it started (after a warm-up of normal requests), and a normal request must still
get the answer `newscls predict` gives (--expect, one predict jsonl line for --title).

  serve_hostile.py --port 8080 --pid 1234 --requests 10000 --title T --expect line.jsonl
Prints one JSON line with the counts by kind and status, and exits 1 if any check failed.
"""
import argparse
import gzip
import json
import socket
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

MAX_BODY = 1048576  # the server's default --max-body-bytes


def request(method, path, body=b"", headers=None, raw_body=None):
    head = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    hdrs = {"Content-Type": "application/json", "Content-Length": str(len(body))}
    hdrs.update(headers or {})
    head += [f"{k}: {v}" for k, v in hdrs.items() if v is not None]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + (raw_body if raw_body is not None else body)


def post(body, **kw):
    return request("POST", "/v1/classify", body, **kw)


def chunked(data, size=65536):
    out = b""
    for i in range(0, len(data), size):
        part = data[i:i + size]
        out += b"%x\r\n" % len(part) + part + b"\r\n"
    return out + b"0\r\n\r\n"


def kinds():
    """(name, request bytes, acceptable statuses); 0 stands for 'connection closed'."""
    big = json.dumps({"titles": ["新闻" * 200] * 1500}).encode()[:MAX_BODY + 4096]
    bomb = gzip.compress(b'{"titles": ["' + b"a" * (8 * MAX_BODY) + b'"]}')
    return [
        ("malformed_json", post(b'{"titles": ["a", '), {400}),
        ("not_json", post(b"\x00\x01binary"), {400}),
        ("invalid_utf8", post(b'{"titles": ["\xff\xfe\xc3"]}'), {400}),
        ("lone_surrogate", post(b'{"titles": ["\\ud800"]}'), {400}),
        ("wrong_type", post(b'{"titles": [1, {"a": 2}]}'), {400}),
        ("titles_not_list", post(b'{"titles": "x"}'), {400}),
        ("bad_top_k", post(b'{"titles": ["a"], "top_k": -5}'), {400}),
        ("empty_list", post(b'{"titles": []}'), {400}),
        ("deep_nesting", post(b"[" * 500000), {400}),
        ("deep_objects", post(b'{"a":' * 200000), {400}),
        ("too_many_titles", post(json.dumps({"titles": ["a"] * 2000}).encode()), {413}),
        ("body_too_large", post(big), {413, 0}),
        ("chunked_too_large", post(b"", headers={"Content-Length": None, "Transfer-Encoding": "chunked"},
                                   raw_body=chunked(big)), {413, 0}),
        ("gzip_bomb", post(b"", headers={"Content-Encoding": "gzip", "Content-Length": str(len(bomb))},
                           raw_body=bomb), {413, 0}),
        ("huge_content_length", post(b"", headers={"Content-Length": "99999999999999"}, raw_body=b"{}"), {413, 0}),
        ("no_length", post(b"", headers={"Content-Length": None}, raw_body=b'{"titles":["a"]}'), {411}),
        ("multipart", post(b"--x\r\n", headers={"Content-Type": "multipart/form-data; boundary=x"}), {415}),
        ("unknown_model", post(b'{"titles": ["a"], "model": "../../etc/passwd"}'), {404}),
        ("unknown_path", request("GET", "/" + "a/" * 2000), {404, 414}),
        ("wrong_method", request("PUT", "/v1/classify", b'{"titles": ["a"]}'), {405}),
        ("unknown_method", request("BREW", "/v1/classify"), {400, 405}),
        ("garbage_line", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64 + b"\r\n\r\n", {400, 0}),
        ("huge_header", b"GET /healthz HTTP/1.1\r\nX-A: " + b"a" * 20000 + b"\r\n\r\n", {400, 0}),
        ("truncated_body", post(b"", headers={"Content-Length": "100"}, raw_body=b'{"titles":'), {400, 0}),
    ]


def exchange(port, payload, timeout):
    """Sends payload and reads one response. Returns (status, bytes); status 0 when the
    server closed the connection without an answer. No half-close: httplib answers nobody
    whose side of the connection is shut."""
    data = b""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(payload)
        except OSError:
            pass  # the server answered early and closed: read what it said
        try:
            while not complete(data):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError:  # reset or timed out: what arrived before counts
            pass
    if not data.startswith(b"HTTP/1.1 "):
        return 0, data
    return int(data[9:12]), data


def complete(data):
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return False


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def normal(port, title):
    body = json.dumps({"titles": [title], "top_k": 3}, ensure_ascii=False).encode()
    status, data = exchange(port, post(body), 30)
    return status, data.split(b"\r\n\r\n", 1)[-1].decode("utf-8", "replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--clients", type=int, default=16, help="connections at once")
    ap.add_argument("--title", required=True)
    ap.add_argument("--expect", required=True, help="file with the predict jsonl line for --title")
    a = ap.parse_args()
    for _ in range(200):  # warm-up: allocator pools and thread stacks as in normal service
        normal(a.port, a.title)
    rss_start = rss_kib(a.pid)
    table = kinds()
    counts, wrong = Counter(), []

    def one(i):
        name, payload, ok = table[i % len(table)]
        status, data = exchange(a.port, payload, 30)
        return name, status, status in ok, data[:300].decode("utf-8", "replace")

    start = time.time()
    with ThreadPoolExecutor(a.clients) as pool:
        for name, status, ok, data in pool.map(one, range(a.requests)):
            counts[f"{name}:{status}"] += 1
            if not ok and len(wrong) < 20:
                wrong.append((name, status, data))
    seconds = time.time() - start
    rss_end = rss_kib(a.pid)
    status, body = normal(a.port, a.title)
    line = open(a.expect, encoding="utf-8").read().strip()
    _, end = json.JSONDecoder().raw_decode(line, 9)
    want = "{" + line[end + 1:]
    got = json.loads(body)["results"][0] if status == 200 else None
    correct = status == 200 and got == json.loads(want)
    result = {"requests": a.requests, "seconds": round(seconds, 1), "wrong": len(wrong), "rss_start_kib": rss_start,
              "rss_end_kib": rss_end, "rss_change": round(rss_end / rss_start - 1, 4), "normal_after": correct,
              "counts": dict(sorted(counts.items()))}
    print(json.dumps(result, ensure_ascii=False))
    for w in wrong:
        print("unexpected:", w, file=sys.stderr)
    return 0 if not wrong and correct and abs(rss_end / rss_start - 1) <= 0.10 else 1


if __name__ == "__main__":
    sys.exit(main())
