#!/usr/bin/env bash
# `newscls serve` under load (issue 15), all parts in one run so ratios share the machine:
#   fasttext  16 clients x 32 titles per request for DURATION s: titles/s, errors, p50/p99
#   bert      32 clients x 1 title, micro-batching (defaults) vs --max-batch 1, alternating
#             PAIRS times: titles/s, p50/p99 and the ratio of the medians
#   hostile   HOSTILE malformed or hostile requests (serve_hostile.py): the right 4xx or a
#             closed connection each, the server up, RSS within 10%, a normal answer after
# The load generator (serve_loadgen.cpp, C++ on cpp-httplib) runs on the same machine and
# takes its share of the cores: figures are for server and clients together.
#
# Usage: scripts/bench/bench_serve.sh [fasttext|bert|hostile]...   (default: all three)
# env (required): DATA (the folder of the full THUCNews data: train/dev/test.txt, class.txt),
#      FASTTEXT (a trained fasttext bundle; for the fasttext and hostile parts),
#      BERT (a trained bert bundle; for the bert part);
# env (optional): NEWSCLS_BIN, WORK, DURATION (s), HOSTILE, THREADS,
#      PAIRS (bert: runs of each mode, alternating), BATCHED_ARGS (bert: more serve options
#      for the micro-batching runs, e.g. "--max-wait-ms 2")
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
NEWSCLS_BIN=${NEWSCLS_BIN:-$root/build/apps/newscls/newscls}
: "${DATA:?set DATA to the folder of the full THUCNews data (train/dev/test.txt, class.txt)}"
WORK=${WORK:-/tmp/newscls-bench-serve}
DURATION=${DURATION:-10}
HOSTILE=${HOSTILE:-10000}
THREADS=${THREADS:-0}
PAIRS=${PAIRS:-2}
BATCHED_ARGS=${BATCHED_ARGS:-}
parts=("$@")
((${#parts[@]})) || parts=(fasttext bert hostile)
for part in "${parts[@]}"; do
  case $part in
    fasttext | hostile) : "${FASTTEXT:?set FASTTEXT to a trained fasttext bundle (the fasttext and hostile parts serve it)}" ;;
    bert) : "${BERT:?set BERT to a trained bert bundle (the bert part serves it)}" ;;
  esac
done

[[ -x $NEWSCLS_BIN ]] || { echo "no newscls binary at $NEWSCLS_BIN (set NEWSCLS_BIN)" >&2; exit 1; }
mkdir -p "$WORK"
cut -f1 "$DATA/test.txt" >"$WORK/titles.txt"
loadgen="$WORK/serve_loadgen"
# shellcheck disable=SC2046
g++ -O2 -std=c++17 -o "$loadgen" "$root/scripts/bench/serve_loadgen.cpp" $(pkg-config --cflags --libs cpp-httplib) -pthread

server_pid=""
trap '[[ -z $server_pid ]] || kill -TERM "$server_pid" 2>/dev/null || true' EXIT

# serve LOG ARGS...: starts the server on a free port, sets $server_pid and $port.
serve() {
  local log=$1
  shift
  : >"$log"  # exists before the first read below
  "$NEWSCLS_BIN" serve --port 0 --threads "$THREADS" "$@" 2>"$log" &
  server_pid=$!
  for _ in $(seq 1200); do
    port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' "$log" | head -n 1)
    [[ -n $port ]] && curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && return 0
    kill -0 "$server_pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
  done
  echo "server did not start" >&2
  exit 1
}

unserve() {
  kill -TERM "$server_pid"
  wait "$server_pid"
  server_pid=""
}

server_cpu_s() {  # user + system CPU seconds of the server so far
  awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f\n", ($14 + $15) / hz}' "/proc/$server_pid/stat"
}

# load NAME CLIENTS PER_REQUEST: one load generator run, its JSON line to stdout and WORK/NAME.json,
# the server's CPU seconds during it (warm-up included) to WORK/NAME.cpu.
load() {
  echo "== $1: $2 clients x $3 titles per request, ${DURATION}s" >&2
  local cpu_before
  cpu_before=$(server_cpu_s)
  "$loadgen" --port "$port" --titles "$WORK/titles.txt" --clients "$2" --per-request "$3" \
    --seconds "$DURATION" --warmup 2 | tee "$WORK/$1.json"
  echo "$(server_cpu_s) - $cpu_before" | bc >"$WORK/$1.cpu"
}

batches() {  # mean titles per forward pass so far, from /metrics
  curl -s "http://127.0.0.1:$port/metrics" | awk '/^newscls_batch_size_sum/ {s=$2} /^newscls_batch_size_count/ {c=$2} END {printf "mean batch %.1f titles over %d batches\n", s/c, c}'
}

for part in "${parts[@]}"; do
  case $part in
    fasttext)
      serve "$WORK/fasttext.log" --model-dir "$FASTTEXT"
      load fasttext 16 32
      batches
      unserve ;;
    bert)
      # micro-batching (defaults) and --max-batch 1 alternate PAIRS times; the ratio of the
      # medians is the bar (>= 3x). The server runs OpenBLAS on one thread unless
      # OPENBLAS_NUM_THREADS is set in the environment.
      echo "== bert: load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores, --threads $THREADS ${BATCHED_ARGS:+(micro-batching: $BATCHED_ARGS)}" >&2
      for ((pair = 1; pair <= PAIRS; ++pair)); do
        # shellcheck disable=SC2086
        serve "$WORK/bert_batched.log" --model-dir "$BERT" $BATCHED_ARGS
        load "bert_batched_$pair" 32 1
        batches
        unserve
        serve "$WORK/bert_single.log" --model-dir "$BERT" --max-batch 1
        load "bert_single_$pair" 32 1
        batches
        unserve
      done
      echo "== bert: load average $(cut -d' ' -f1-3 /proc/loadavg) after" >&2
      python3 - "$WORK" "$PAIRS" <<'EOF'
import json, statistics, sys
work, pairs = sys.argv[1], int(sys.argv[2])
runs = {m: [json.load(open(f"{work}/bert_{m}_{p}.json")) for p in range(1, pairs + 1)] for m in ("batched", "single")}
for m in runs:  # server CPU ms per title (the warm-up's titles estimated at the same rate)
    for p, r in enumerate(runs[m], 1):
        r["cpu_ms"] = 1000 * float(open(f"{work}/bert_{m}_{p}.cpu").read()) / (r["titles_per_s"] * (r["seconds"] + 2))
med = {m: {k: statistics.median(r[k] for r in runs[m]) for k in ("titles_per_s", "p50_ms", "p99_ms", "cpu_ms")}
       for m in runs}
for m, name in (("batched", "micro-batching (defaults)"), ("single", "--max-batch 1")):
    each = ", ".join(f"{r['titles_per_s']:.0f}" for r in runs[m])
    print(f"bert {name:>26}: {med[m]['titles_per_s']:8.1f} titles/s  p50 {med[m]['p50_ms']:.1f} ms  "
          f"p99 {med[m]['p99_ms']:.1f} ms  server CPU {med[m]['cpu_ms']:.3f} ms/title  (medians of {pairs}: {each} titles/s)")
ratio = med["batched"]["titles_per_s"] / med["single"]["titles_per_s"]
print(f"bert RATIO micro-batching / --max-batch 1 = {ratio:.2f}x  (bar: >= 3x, {'met' if ratio >= 3 else 'NOT met'})")
EOF
      ;;
    hostile)
      # --read-timeout 1: truncated bodies are given up on after 1 s instead of 5
      serve "$WORK/hostile.log" --model-dir "$FASTTEXT" --read-timeout 1
      title=$(head -n 1 "$WORK/titles.txt")
      printf '%s\n' "$title" | "$NEWSCLS_BIN" predict --model-dir "$FASTTEXT" --top-k 3 >"$WORK/expect.jsonl"
      echo "== hostile: $HOSTILE requests" >&2
      python3 "$root/scripts/bench/serve_hostile.py" --port "$port" --pid "$server_pid" --requests "$HOSTILE" \
        --title "$title" --expect "$WORK/expect.jsonl" | tee "$WORK/hostile.json"
      kill -0 "$server_pid" || { echo "the server died" >&2; exit 1; }
      unserve ;;
    *) echo "unknown part $part (fasttext, bert, hostile)" >&2; exit 2 ;;
  esac
done
