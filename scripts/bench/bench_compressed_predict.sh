#!/usr/bin/env bash
# `newscls predict` titles/s of several bundles on the same titles, side by side in one run:
# the bundles alternate within each round (so load drifts hit them alike), start-up included,
# median of ROUNDS. Prints each bundle's median seconds, titles/s and speed against the first.
#
#   ROUNDS=5 TITLES=/path/to/thucnews/test.txt THREADS=1 \
#     scripts/bench/bench_compressed_predict.sh runs/bert runs/bert-int8 runs/bert-pruned
#
# Env: TITLES (required: the titles to predict, e.g. the full THUCNews test.txt), NEWSCLS_BIN,
# ROUNDS (5), THREADS (1).
# A bundle given as DIR@BINARY runs with that newscls binary (e.g. one built from an older
# commit), so two builds can be compared on the same bundles in one run.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)  # for the defaults; paths given are the caller's
bin=${NEWSCLS_BIN:-$root/build/apps/newscls/newscls}
: "${TITLES:?set TITLES to the file of titles to predict, e.g. the full THUCNews test.txt}"
titles=$TITLES
rounds=${ROUNDS:-5}
threads=${THREADS:-1}
[ $# -ge 2 ] || { echo "usage: $0 BASELINE_BUNDLE BUNDLE..." >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a whole number of at least 1, got '$rounds'" >&2; exit 2; }
n=$(wc -l < "$titles")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "titles: $titles ($n), rounds: $rounds, threads: $threads, load: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r < rounds; r++)); do
  for i in $(seq 1 $#); do
    dir=${!i%@*}
    run_bin=$bin
    [[ ${!i} == *@* ]] && run_bin=${!i#*@}
    start=$(date +%s.%N)
    "$run_bin" --log-level warn predict --model-dir "$dir" --input "$titles" --output "$work/out.jsonl" --threads "$threads"
    echo "$(echo "$(date +%s.%N) - $start" | bc)" >> "$work/t$i"
  done
done
median() { sort -g "$1" | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
base=$(median "$work/t1")
for i in $(seq 1 $#); do
  m=$(median "$work/t$i")
  printf '%-60s median %7.3f s  %8.0f titles/s  %5.2fx\n' "${!i}" "$m" "$(echo "$n / $m" | bc -l)" \
    "$(echo "$base / $m" | bc -l)"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
