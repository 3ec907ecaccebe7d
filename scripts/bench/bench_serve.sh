#!/usr/bin/env bash
# `newscls serve` under load (issue 15), all parts in one run so ratios share the machine:
#   fasttext  16 clients x 32 titles per request for DURATION s: titles/s, errors, p50/p99
#   bert      32 clients x 1 title, micro-batching (defaults) vs --max-batch 1: titles/s,
#             p50/p99 and the ratio
#   hostile   HOSTILE malformed or hostile requests (serve_hostile.py): the right 4xx or a
#             closed connection each, the server up, RSS within 10%, a normal answer after
# The load generator (serve_loadgen.cpp, C++ on cpp-httplib) runs on the same machine and
# takes its share of the cores: figures are for server and clients together.
#
# Usage: scripts/bench/bench_serve.sh [fasttext|bert|hostile]...   (default: all three)
# env: NEWSCLS_BIN, FASTTEXT (bundle), BERT (bundle), DATA, WORK, DURATION (s), HOSTILE, THREADS
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
NEWSCLS_BIN=${NEWSCLS_BIN:-$root/build/apps/newscls/newscls}
FASTTEXT=${FASTTEXT:-/work/runs-shared/fasttext}
BERT=${BERT:-/work/runs-shared/bert}
DATA=${DATA:-$root/../shared/data/thucnews}
WORK=${WORK:-/tmp/newscls-bench-serve}
DURATION=${DURATION:-10}
HOSTILE=${HOSTILE:-10000}
THREADS=${THREADS:-0}
parts=("$@")
((${#parts[@]})) || parts=(fasttext bert hostile)

[[ -x $NEWSCLS_BIN ]] || { echo "no newscls binary at $NEWSCLS_BIN (set NEWSCLS_BIN)" >&2; exit 1; }
mkdir -p "$WORK"
cut -f1 "$DATA/test.txt" >"$WORK/titles.txt"
loadgen="$WORK/serve_loadgen"
# shellcheck disable=SC2046
g++ -O2 -std=c++17 -o "$loadgen" "$root/scripts/bench/serve_loadgen.cpp" $(pkg-config --cflags --libs cpp-httplib) -pthread

server_pid=""
NEWSCLS_BIN_ENV=()
trap '[[ -z $server_pid ]] || kill -TERM "$server_pid" 2>/dev/null || true' EXIT

# serve LOG ARGS...: starts the server on a free port, sets $server_pid and $port.
serve() {
  local log=$1
  shift
  env "${NEWSCLS_BIN_ENV[@]}" "$NEWSCLS_BIN" serve --port 0 --threads "$THREADS" "$@" 2>"$log" &
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

# load NAME CLIENTS PER_REQUEST: one load generator run, its JSON line to stdout and WORK/NAME.json.
load() {
  echo "== $1: $2 clients x $3 titles per request, ${DURATION}s" >&2
  "$loadgen" --port "$port" --titles "$WORK/titles.txt" --clients "$2" --per-request "$3" \
    --seconds "$DURATION" --warmup 2 | tee "$WORK/$1.json"
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
      # Each pair once with OpenBLAS's default threads and once with one: on a busy machine
      # its threads wait for each other in every batched GEMM (single titles stay below its
      # threading threshold).
      for blas in default 1; do
        NEWSCLS_BIN_ENV=()
        [[ $blas == default ]] || NEWSCLS_BIN_ENV=(OPENBLAS_NUM_THREADS="$blas")
        serve "$WORK/bert_batched.log" --model-dir "$BERT"
        load "bert_batched_blas_$blas" 32 1
        batches
        unserve
        serve "$WORK/bert_single.log" --model-dir "$BERT" --max-batch 1
        load "bert_single_blas_$blas" 32 1
        batches
        unserve
        NEWSCLS_BIN_ENV=()
        python3 -c "import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); print(f'OpenBLAS threads $blas: micro-batching / --max-batch 1 = {a[\"titles_per_s\"]/b[\"titles_per_s\"]:.2f}x')" \
          "$WORK/bert_batched_blas_$blas.json" "$WORK/bert_single_blas_$blas.json"
      done ;;
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
