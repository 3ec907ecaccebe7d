#!/usr/bin/env python3
"""A scriptable OpenAI-compatible chat-completions server on 127.0.0.1, for tests and benchmarks.

It answers POST /chat/completions (and /v1/chat/completions) over real HTTP/1.1 with keep-alive.
The title is the last message's content. What it does with a request depends on the title and
on how many times that title was asked before (the attempt, counted from 1):

  1. a script entry for the title (--script FILE, a JSON object title -> action or list of
     actions; attempt n uses item n-1, the last item repeats); the key "*" is the default;
  2. else, on a first attempt, an injected fault for a deterministic --fault-rate share of
     titles: 429 with Retry-After (--fault-retry-after) or 503, alternating by title hash;
  3. else --default-action (default "correct").

Actions: "correct" (the Chinese class name, from --truth TSV files and --classes),
"correct_en", "chatty", "chatty_en", "json", "wrong", "blank", "null_content", "malformed"
(200 with a broken JSON body), "drop" (close the connection in the middle of a reply),
"drop_early" (close it before any byte of a reply; on a reused keep-alive connection
libcurl itself resends such a request once, unseen by the client's retry count),
"401", "400", "402", "422", "429", "500", "502", "503", "504",
{"status": 429, "retry_after": "1"}, {"content": "literal text"}, {"slow": 2.0} (sleep
before answering correctly), {"slow": 2.0, "then": "json"}.

Every reply waits --latency-ms first. --require-key K answers 401 unless the request carries
"Authorization: Bearer K". --strict answers 400 with an OpenAI-style error body
({"error": {"message": ..., "type": "invalid_request_error", "param": FIELD, "code": null}})
to a request whose body has a top-level field outside OpenAI's chat-completions set (as
OpenAI does for DeepSeek's "thinking"). Usage is reported DeepSeek style (prompt_cache_hit_tokens) or
OpenAI style (--usage openai: prompt_tokens_details.cached_tokens), with fixed token counts.

GET /stats returns counters: requests, per-title attempts, faults injected, statuses sent,
the most requests in flight at once, requests in JSON mode, requests with a "thinking" field,
message counts per request, the body fields seen (field -> count), and per title a timeline
of its attempts ({"arrived": t, "replied": t, "status": s}, t in seconds on the server's
monotonic clock; "replied" is when the last byte of the reply was written). POST /reset
zeroes them. The port is printed as
"PORT <n>" on stdout and written to --port-file.
"""
import argparse
import hashlib
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Top-level request fields OpenAI's chat completions accept.
OPENAI_FIELDS = {
    "model", "messages", "temperature", "top_p", "n", "stream", "stream_options", "stop",
    "max_tokens", "max_completion_tokens", "presence_penalty", "frequency_penalty", "logit_bias",
    "logprobs", "top_logprobs", "user", "seed", "response_format", "tools", "tool_choice",
    "parallel_tool_calls", "functions", "function_call", "service_tier", "store", "metadata",
    "modalities", "audio", "prediction", "reasoning_effort", "web_search_options", "verbosity",
    "prompt_cache_key", "safety_identifier",
}

ZH = {"finance": "财经", "realty": "房产", "stocks": "股票", "education": "教育",
      "science": "科技", "society": "社会", "politics": "时政", "sports": "体育",
      "game": "游戏", "entertainment": "娱乐"}


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.truth = {}
        self.classes = []
        if args.classes:
            with open(args.classes, encoding="utf-8") as f:
                self.classes = [line.strip() for line in f if line.strip()]
        for path in args.truth or []:
            with open(path, encoding="utf-8") as f:
                for line in f:
                    title, _, label = line.rstrip("\n").rpartition("\t")
                    if title and label.isdigit():
                        self.truth.setdefault(title, self.classes[int(label)])
        self.script = {}
        if args.script:
            with open(args.script, encoding="utf-8") as f:
                self.script = json.load(f)
        self.reset()

    def reset(self):
        with self.lock:
            self.requests = 0
            self.attempts = {}
            self.faults = 0
            self.statuses = {}
            self.in_flight = 0
            self.max_in_flight = 0
            self.json_mode_requests = 0
            self.thinking_requests = 0
            self.message_counts = {}
            self.fields = {}
            self.timeline = {}

    def begin(self, title, request):
        arrived = time.monotonic()
        with self.lock:
            self.requests += 1
            if (request.get("response_format") or {}).get("type") == "json_object":
                self.json_mode_requests += 1
            if "thinking" in request:
                self.thinking_requests += 1
            for field in request:
                self.fields[field] = self.fields.get(field, 0) + 1
            count = str(len(request["messages"]))
            self.message_counts[count] = self.message_counts.get(count, 0) + 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            n = self.attempts.get(title, 0) + 1
            self.attempts[title] = n
            entry = {"arrived": arrived, "replied": None, "status": None}
            self.timeline.setdefault(title, []).append(entry)
            return n, entry

    def end(self, status, entry):
        replied = time.monotonic()
        with self.lock:
            self.in_flight -= 1
            self.statuses[str(status)] = self.statuses.get(str(status), 0) + 1
            entry["replied"] = replied
            entry["status"] = status

    def snapshot(self):
        with self.lock:
            return {"requests": self.requests, "attempts": dict(self.attempts),
                    "faults": self.faults, "statuses": dict(self.statuses),
                    "max_in_flight": self.max_in_flight,
                    "json_mode_requests": self.json_mode_requests,
                    "thinking_requests": self.thinking_requests,
                    "message_counts": dict(self.message_counts),
                    "fields": dict(self.fields),
                    "timeline": {t: [dict(e) for e in entries] for t, entries in self.timeline.items()}}

    def action_for(self, title, attempt):
        entry = self.script.get(title, self.script.get("*"))
        if entry is not None:
            if isinstance(entry, list):
                return entry[min(attempt, len(entry)) - 1]
            return entry
        rate = self.args.fault_rate
        if attempt == 1 and rate > 0:
            digest = hashlib.sha256(f"{self.args.fault_seed}:{title}".encode()).digest()
            if int.from_bytes(digest[:8], "big") / 2.0**64 < rate:
                with self.lock:
                    self.faults += 1
                if digest[8] % 2 == 0:
                    return {"status": 429, "retry_after": self.args.fault_retry_after}
                return {"status": 503}
        return self.args.default_action


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-llm/1"
    # Headers and body go out in separate writes; with Nagle on, the body would wait for the
    # client's delayed ACK (~40 ms) on every keep-alive reply.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def send_json(self, status, payload, headers=None):
        body = payload if isinstance(payload, bytes) else json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/stats":
            self.send_json(200, self.server.state.snapshot())
        else:
            self.send_json(404, {"error": {"message": "no such path"}})

    def do_POST(self):
        state = self.server.state
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        if self.path == "/reset":
            state.reset()
            self.send_json(200, {"ok": True})
            return
        if self.path not in ("/chat/completions", "/v1/chat/completions"):
            self.send_json(404, {"error": {"message": "no such path " + self.path}})
            return
        try:
            request = json.loads(raw)
            title = request["messages"][-1]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            self.send_json(400, {"error": {"message": "bad request body"}})
            return
        attempt, entry = state.begin(title, request)
        status = 0
        try:
            status = self.respond(state, request, title, attempt)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            status = "client gone"  # the client timed out first: expected for "slow"
            self.close_connection = True
        finally:
            state.end(status, entry)

    def respond(self, state, request, title, attempt):
        args = state.args
        if args.latency_ms > 0:
            time.sleep(args.latency_ms / 1000.0)
        if args.require_key is not None and \
                self.headers.get("Authorization", "") != "Bearer " + args.require_key:
            self.send_json(401, {"error": {"message": "Authentication Fails, your api key is invalid"}})
            return 401
        if args.strict:
            unknown = sorted(set(request) - OPENAI_FIELDS)
            if unknown:
                self.send_json(400, {"error": {
                    "message": f"Unrecognized request argument supplied: {unknown[0]}",
                    "type": "invalid_request_error", "param": unknown[0], "code": None}})
                return 400
        action = state.action_for(title, attempt)
        if isinstance(action, str) and action.isdigit():
            action = {"status": int(action)}
        if isinstance(action, dict) and "slow" in action:
            time.sleep(float(action["slow"]))
            action = action.get("then", "correct")
        if action == "drop":  # a reply cut off mid-body
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b'{"choices": [')
            self.wfile.flush()
            self.close_connection = True
            return "drop"
        if action == "drop_early":  # closed before any byte of a reply
            self.close_connection = True
            return "drop_early"
        if action == "malformed":
            self.send_json(200, b'{"choices": [{"message": {"content": "')
            return 200
        if isinstance(action, dict) and "status" in action:
            headers = {}
            if action.get("retry_after") is not None:
                headers["Retry-After"] = str(action["retry_after"])
            self.send_json(int(action["status"]), {"error": {"message": "scripted failure"}}, headers)
            return int(action["status"])
        content = self.content_for(state, title, action)
        self.send_json(200, self.completion(request, content))
        return 200

    def content_for(self, state, title, action):
        en = state.truth.get(title)
        if isinstance(action, dict) and "content" in action:
            return action["content"]
        if action in ("blank", "null_content"):
            return "" if action == "blank" else None
        if en is None:
            return "我不确定。"
        zh = ZH.get(en, en)
        if action == "correct":
            return zh
        if action == "correct_en":
            return en
        if action == "chatty":
            return f"好的，这条新闻标题属于「{zh}」类。"
        if action == "chatty_en":
            return f"Sure! The category of this headline is: {en.capitalize()}."
        if action == "json":
            return json.dumps({"label": en})
        if action == "wrong":
            others = [c for c in state.classes if c != en]
            return ZH.get(others[0], others[0])
        raise ValueError("unknown action " + repr(action))

    def completion(self, request, content):
        args = self.server.state.args
        usage = {"prompt_tokens": args.prompt_tokens, "completion_tokens": args.completion_tokens,
                 "total_tokens": args.prompt_tokens + args.completion_tokens}
        if args.usage == "openai":
            usage["prompt_tokens_details"] = {"cached_tokens": args.cached_tokens}
        else:
            usage["prompt_cache_hit_tokens"] = args.cached_tokens
            usage["prompt_cache_miss_tokens"] = args.prompt_tokens - args.cached_tokens
        return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                "model": request.get("model", ""),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": usage}


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--truth", action="append", help="title<TAB>label_id file (repeatable)")
    parser.add_argument("--classes", help="class.txt")
    parser.add_argument("--script")
    parser.add_argument("--default-action", default="correct")
    parser.add_argument("--latency-ms", type=float, default=0)
    parser.add_argument("--fault-rate", type=float, default=0)
    parser.add_argument("--fault-seed", default="1")
    parser.add_argument("--fault-retry-after", default="1")
    parser.add_argument("--require-key")
    parser.add_argument("--strict", action="store_true",
                        help="400 for a body field outside OpenAI's chat-completions set")
    parser.add_argument("--usage", choices=["deepseek", "openai"], default="deepseek")
    parser.add_argument("--prompt-tokens", type=int, default=100)
    parser.add_argument("--completion-tokens", type=int, default=2)
    parser.add_argument("--cached-tokens", type=int, default=64)
    args = parser.parse_args()
    server = Server(("127.0.0.1", args.port), Handler)
    server.state = State(args)
    port = server.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, args.port_file)
    print(f"PORT {port}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
