#!/usr/bin/env bash
# Data-parallel bert fine-tuning on this machine: N ranks x 1 thread on loopback (sparse
# gradients all-gathered, then all-reduced densely) against one process at several thread
# settings, all on the default model with the same global batch (64 = 2 x 32), so every run
# takes the same optimiser steps. Prints titles/s over the training steps, the share of rank
# 0's step time spent in the gradient exchange, the bytes each rank sends into it per step,
# and the compute time per step: the inputs of the projection in docs/BENCHMARKS.md.
#
#   NEWSCLS_DATA=/path/to/thucnews scripts/bench/bench_distributed.sh    # STEPS=150
# Env: NEWSCLS_DATA (required: the folder of the full THUCNews data, train/dev/test.txt and class.txt),
# NEWSCLS_BIN, STEPS, RANKS (2),
# SETTINGS (single-process "torch_threads:openblas_threads" pairs, default "1:1 2:1 2:2").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${NEWSCLS_BIN:-$root/build/apps/newscls/newscls}
: "${NEWSCLS_DATA:?set NEWSCLS_DATA to the folder of the full THUCNews data (train/dev/test.txt, class.txt)}"
data=$NEWSCLS_DATA
steps=${STEPS:-150}
ranks=${RANKS:-2}
settings=${SETTINGS:-"1:1 2:1 2:2"}
global_batch=64
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Full train split (the default vocabulary); tiny dev/test so evaluations stay out of the way.
mkdir -p "$work/data"
cp "$data/train.txt" "$data/class.txt" "$work/data/"
head -n 200 "$data/dev.txt" >"$work/data/dev.txt"
head -n 200 "$data/test.txt" >"$work/data/test.txt"
common=(train --model bert --data "$work/data" --set pretrain_epochs=0 --set epochs=1 --set "max_steps=$steps"
        --set calibrate=false)

report() {  # label bundle
  python3 - "$1" "$2/metrics.json" <<'PY'
import json, sys
label, path = sys.argv[1], sys.argv[2]
t = json.load(open(path))["training"]
d = t.get("distributed") or {}
steps, secs = t["steps"], t["train_step_seconds"]
reduce_s = d.get("reduce_seconds", 0.0)
print(f"{label:<34} {t['world_size']:>5} {steps:>5} {t['train_titles_per_s']:>9.1f} "
      f"{100 * d.get('reduce_share', 0.0):>8.1f}% {d.get('reduce_bytes_per_step', 0) / 1e6:>9.2f} "
      f"{1000 * (secs - reduce_s) / steps:>10.1f} {1000 * reduce_s / steps:>9.1f}")
PY
}

echo "# bert fine-tuning, default model, global batch $global_batch, $steps steps; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-34s %5s %5s %9s %9s %9s %10s %9s\n" run ranks steps titles/s reduce% MB/step compute_ms reduce_ms
for s in $settings; do
  t=${s%%:*} b=${s##*:}
  OPENBLAS_NUM_THREADS=$b "$bin" "${common[@]}" --threads "$t" --set "batch_size=$global_batch" \
    --out "$work/one-$t-$b" >/dev/null 2>"$work/one-$t-$b.err"
  report "1 process, $t thread(s), openblas $b" "$work/one-$t-$b"
done
for mode in gather dense; do
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  OPENBLAS_NUM_THREADS=1 NEWSCLS_SPARSE_REDUCE=$mode MASTER_PORT=$port NEWSCLS_BIN=$bin NEWSCLS_DIST_LOGS="$work/logs" \
    "$root/scripts/train_distributed.sh" "$ranks" "${common[@]}" --threads 1 \
    --set "batch_size=$((global_batch / ranks))" --out "$work/dist-$mode" >/dev/null 2>"$work/dist-$mode.err"
  report "$ranks ranks x 1 thread, sparse $mode" "$work/dist-$mode"
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
