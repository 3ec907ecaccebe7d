#!/usr/bin/env bash
# What answering one title costs, loading included: `echo 央行宣布降准 | newscls predict
# --model-dir BUNDLE`, the whole process, page cache warm (one untimed run first). For each
# argument: median wall time and median peak RSS of RUNS runs, payload bytes, and the time as
# a ratio to the first argument of the same family. Runs are interleaved (round r runs every
# argument once), so that all arguments see the same machine load; compare builds by these
# ratios only.
#
#   scripts/bench/bench_load.sh [BIN=]BUNDLE...
#   RUNS=5 NEWSCLS_BIN=build/apps/newscls/newscls scripts/bench/bench_load.sh runs/fasttext runs/tfidf-rf
#   # before/after a change: the old build on bundles in its format, the new one on the same
#   # models saved by the new build
#   scripts/bench/bench_load.sh /tmp/old/newscls=/tmp/ft-old /tmp/ft-new /tmp/old/newscls=/tmp/rf-old /tmp/rf-new
#
# BUNDLE: a bundle folder, predicted with NEWSCLS_BIN (default build/apps/newscls/newscls), or
# with BIN when given as BIN=BUNDLE (an older build, or a script that runs one). The first row,
# `predict --help` with NEWSCLS_BIN, is the start-up no model can avoid.
set -euo pipefail
(($# >= 1)) || { echo "usage: $0 [BIN=]BUNDLE... (env RUNS, NEWSCLS_BIN)" >&2; exit 2; }
runs=${RUNS:-5}
default_bin=${NEWSCLS_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/apps/newscls/newscls}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo 央行宣布降准 >"$work/title.txt"

bins=("$default_bin") bundles=("") labels=("start-up only (predict --help)")
for arg in "$@"; do
  if [[ $arg == *=* ]]; then bins+=("${arg%%=*}") bundles+=("${arg#*=}"); else bins+=("$default_bin") bundles+=("$arg"); fi
  [[ -f ${bundles[-1]}/manifest.json ]] || { echo "$0: not a bundle: ${bundles[-1]}" >&2; exit 2; }
  labels+=("${bundles[-1]} ($(basename "$(dirname "${bins[-1]}")")/$(basename "${bins[-1]}"))")
done

# one_run I: appends "seconds peak_kb" of argument I's run to $work/I.txt
one_run() {
  local i=$1 start end
  local -a cmd=("${bins[$i]}" --log-level warn predict)
  if [[ -n ${bundles[$i]} ]]; then cmd+=(--model-dir "${bundles[$i]}"); else cmd+=(--help); fi
  start=$EPOCHREALTIME
  /usr/bin/time -f "%M" -o "$work/rss" "${cmd[@]}" <"$work/title.txt" >"$work/out" 2>"$work/err" ||
    { cat "$work/err" >&2; echo "$0: failed: ${cmd[*]}" >&2; exit 1; }
  end=$EPOCHREALTIME
  echo "$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.4f", e - s }') $(tail -1 "$work/rss")" >>"$work/$i.txt"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

bundle_facts() {  # BUNDLE: "family payload_bytes" (the checksummed payloads the manifest lists)
  [[ -n $1 ]] || { echo "- 0"; return; }
  python3 -c 'import json, os, sys; d = sys.argv[1]; m = json.load(open(d + "/manifest.json"))
print(m["family"], sum(os.path.getsize(os.path.join(d, p)) for p in m["payloads"]))' "$1"
}

for i in "${!bins[@]}"; do one_run "$i"; : >"$work/$i.txt"; done  # warm the page cache
for _ in $(seq "$runs"); do
  for i in "${!bins[@]}"; do one_run "$i"; done
done

echo "median of $runs interleaved runs of one title; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-58s %9s %9s %10s %9s\n' "bundle (binary)" "wall s" "peak MB" "payload MB" "vs first"
declare -A first  # family -> wall time of its first argument
for i in "${!bins[@]}"; do
  s=$(cut -d' ' -f1 "$work/$i.txt" | median)
  kb=$(cut -d' ' -f2 "$work/$i.txt" | median)
  read -r family bytes < <(bundle_facts "${bundles[$i]}")
  ratio=""
  if [[ $family != - ]]; then
    first[$family]=${first[$family]:-$s}
    ratio=$(awk -v a="$s" -v b="${first[$family]}" 'BEGIN { printf "%.2fx", a / b }')
  fi
  awk -v l="${labels[$i]}" -v s="$s" -v kb="$kb" -v p="$bytes" -v r="$ratio" \
    'BEGIN { printf "%-58s %9.3f %9.1f %10.1f %9s\n", l, s, kb / 1024, p / 1e6, r }'
done
