#!/usr/bin/env python3
"""How much of an endless request line `newscls serve` takes in: one connection sends
"GET /" and then MB megabytes with no newline; prints how many were sent before the server
closed the connection, its first reply bytes, and the server's RSS before and after.

  newscls serve --model-dir runs/fasttext --port 18181 &
  scripts/bench/serve_endless_line.py --port 18181 --pid $! --mb 400
"""
import argparse
import socket
import time


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--mb", type=int, default=400)
    args = ap.parse_args()
    before = rss_kb(args.pid)
    s = socket.create_connection(("127.0.0.1", args.port))
    s.sendall(b"GET /")
    sent, chunk = 0, b"a" * (1 << 20)
    try:
        while sent < args.mb:
            s.sendall(chunk)
            sent += 1
    except OSError as e:
        print(f"send stopped: {e}")
    peak = rss_kb(args.pid)
    s.settimeout(2)
    try:
        reply = s.recv(200)
    except OSError as e:
        reply = repr(e).encode()
    s.close()
    time.sleep(1)
    print(f"sent {sent} MB of {args.mb}; reply {reply[:60]!r}")
    print(f"server RSS: before {before / 1024:.0f} MB, after sending {peak / 1024:.0f} MB, "
          f"1 s after closing {rss_kb(args.pid) / 1024:.0f} MB")


if __name__ == "__main__":
    main()
