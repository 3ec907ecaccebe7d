#!/usr/bin/env bash
# LLM client throughput and cache benchmark against the loopback fake chat server.
#
# The server answers every request after 50 ms and fails a deterministic 10% of first
# attempts with 429 (Retry-After: 1) or 503. Run 1 (`newscls train --model llm`, which
# classifies all test titles) must reach >= 500 titles/s with 64 requests in flight, lose
# or duplicate no title, and retry every injected fault. Run 2 (`newscls eval` on the
# bundle) must be served wholly from the cache in <= 2 s. Also prints the server's CPU use
# and most requests in flight, to show it is not the bottleneck. The throughput bar assumes
# THUCNews's 10,000 test titles: on a few hundred, the injected Retry-After waits dominate.
#
#   scripts/bench/bench_llm.sh [BUILD_DIR] [DATA_DIR]
#   DATA_DIR (or NEWSCLS_DATA when it is not given; one of them required): the folder of the
#   full THUCNews data (test.txt, class.txt)
#   env: CONCURRENCY (64) LATENCY_MS (50) FAULT_RATE (0.1)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
data=${2:-${NEWSCLS_DATA:-}}
[[ -n $data ]] || { echo "$(basename "$0"): give DATA_DIR (second argument) or set NEWSCLS_DATA to the folder of the full THUCNews data (train/dev/test.txt, class.txt)" >&2; exit 2; }
bin=${NEWSCLS_BIN:-$build/apps/newscls/newscls}
concurrency=${CONCURRENCY:-64}
latency_ms=${LATENCY_MS:-50}
fault_rate=${FAULT_RATE:-0.1}
work=$(mktemp -d /tmp/newscls-bench-llm.XXXXXX)
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

python3 "$root/tests/llm_server/fake_llm_server.py" --port-file "$work/port" \
  --truth "$data/test.txt" --classes "$data/class.txt" \
  --latency-ms "$latency_ms" --fault-rate "$fault_rate" --fault-retry-after 1 >/dev/null 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 200); do [[ -s "$work/port" ]] && break; sleep 0.05; done
url="http://127.0.0.1:$(cat "$work/port")"

stats() { python3 -c "import sys,urllib.request as u; sys.stdout.write(u.urlopen(sys.argv[1] + '/stats').read().decode())" "$url" >"$work/stats.json"; }
cpu_seconds() {  # utime + stime of a process, in seconds
  awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"
}
now() { date +%s.%N; }

server_cpu0=$(cpu_seconds "$server_pid")
t0=$(now)
"$bin" train --model llm --data "$data" --out "$work/model" --set "base_url=$url" \
  --set "concurrency=$concurrency" --set "cache_path=$work/cache.sqlite" >/dev/null 2>"$work/run1.err" ||
  { cat "$work/run1.err"; exit 1; }
t1=$(now)
server_cpu1=$(cpu_seconds "$server_pid")
stats
cp "$work/stats.json" "$work/stats1.json"
python3 -c "import sys,urllib.request as u; u.urlopen(u.Request(sys.argv[1] + '/reset', data=b''))" "$url"

ts=$(now)
"$bin" --help >/dev/null                # process start-up alone, for scale
t2=$(now)
"$bin" eval --model-dir "$work/model" --data "$data" --out "$work/eval/metrics.json" >/dev/null 2>"$work/run2.err" ||
  { cat "$work/run2.err"; exit 1; }
t3=$(now)
stats

python3 - "$work" "$t0" "$t1" "$t2" "$t3" "$server_cpu0" "$server_cpu1" "$concurrency" "$latency_ms" "$ts" \
  "$(wc -l <"$data/test.txt")" <<'PY'
import json, sys
work, t0, t1, t2, t3, c0, c1, conc, lat, ts, titles = sys.argv[1:]
t0, t1, t2, t3, c0, c1, ts = map(float, (t0, t1, t2, t3, c0, c1, ts))
m1 = json.load(open(f"{work}/model/metrics.json"))
m2 = json.load(open(f"{work}/eval/metrics.json"))
s1 = json.load(open(f"{work}/stats1.json"))
s2 = json.load(open(f"{work}/stats.json"))
r1, r2 = m1["run_stats"], m2["run_stats"]
rows = [l.split("\t") for l in open(f"{work}/model/predictions.tsv", encoding="utf-8").read().splitlines()[1:]]
lines = [int(r[0]) for r in rows]  # the titles' lines in test.txt
n = m1["count"]
faulted = sum(1 for v in s1["attempts"].values() if v > 1)
checks = {
    "all titles classified": n == int(titles) and len(lines) == n,
    "no title lost or duplicated": sorted(lines) == list(range(1, n + 1)),
    "every injected fault retried": s1["faults"] == r1["retries"] == faulted and r1["failed_titles"] == 0,
    "requests = titles + retries": r1["requests_sent"] == s1["requests"] == len(s1["attempts"]) + r1["retries"],
    ">= 500 titles/s": m1["titles_per_second"] >= 500,
    "rerun sends nothing": s2["requests"] == 0 and r2["requests_sent"] == 0 and r2["cache_hits"] == n,
    "rerun <= 2 s": t3 - t2 <= 2.0,
}
ideal = int(conc) / (float(lat) / 1000.0) if float(lat) > 0 else float("inf")
print(f"llm bench: {n} test titles, {conc} in flight, server latency {lat} ms, "
      f"{s1['faults']} injected faults ({s1['statuses'].get('429', 0)} x 429 Retry-After 1, "
      f"{s1['statuses'].get('503', 0)} x 503)")
print(f"run 1 (train: classify test)  eval {m1['wall_seconds']:.2f} s = {m1['titles_per_second']:.0f} titles/s "
      f"(ideal {ideal:.0f}/s at {conc} x {lat} ms); process {t1 - t0:.2f} s")
print(f"  requests {r1['requests_sent']}  retries {r1['retries']}  failed {r1['failed_titles']}  "
      f"unknown {r1['unknown_replies']}  accuracy {m1['accuracy']:.4f}  "
      f"latency p50/p95/p99 {r1['latency_ms']['p50']:.1f}/{r1['latency_ms']['p95']:.1f}/{r1['latency_ms']['p99']:.1f} ms")
print(f"  server: most in flight {s1['max_in_flight']}, CPU {c1 - c0:.2f} s over {t1 - t0:.2f} s wall "
      f"({(c1 - c0) / (t1 - t0) * 100:.0f}% of one core)")
print(f"run 2 (eval from cache)  process {t3 - t2:.2f} s, eval {m2['wall_seconds']:.3f} s, "
      f"requests {r2['requests_sent']}, cache hits {r2['cache_hits']}; "
      f"`newscls --help` alone takes {t2 - ts:.2f} s")
for name, ok in checks.items():
    print(f"  [{'PASS' if ok else 'FAIL'}] {name}")
sys.exit(0 if all(checks.values()) else 1)
PY
