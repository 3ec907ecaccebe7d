#!/usr/bin/env bash
# predict_batch of the bert plugin at batch sizes 1 and 32 (the two modes of `newscls serve`
# with 32 one-title clients), without HTTP: ms per title, titles/s, and how much cheaper a
# title is in a batch of 32. Given several plugins (e.g. one built before a change and one
# after), their processes alternate REPEATS times in one run, so each pair shares the machine.
#
# Usage: BERT=/path/to/bert DATA=/path/to/thucnews scripts/bench/bench_bert_forward.sh [LABEL=PLUGIN.so[@THREADS]]...
#        (default: now=build/src/bert/libnewscls_bert.so)
# env (required): BERT (a trained bert bundle), DATA (the folder of the full THUCNews data: train/dev/test.txt, class.txt);
# env (optional): WORK, BATCHES (1,32), ROUNDS (per process), ROUND_SECONDS,
#      REPEATS (processes per plugin), THREADS (set_threads; default: the cores, as serve
#      --threads 0), OPENBLAS_NUM_THREADS (default 1, as serve sets it)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
: "${BERT:?set BERT to a trained bert bundle (its folder)}"
: "${DATA:?set DATA to the folder of the full THUCNews data (train/dev/test.txt, class.txt)}"
WORK=${WORK:-/tmp/newscls-bench-bert-forward}
BATCHES=${BATCHES:-1,32}
ROUNDS=${ROUNDS:-5}
SECONDS_PER_ROUND=${ROUND_SECONDS:-1}
REPEATS=${REPEATS:-3}
THREADS=${THREADS:-$(nproc)}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
plugins=("$@")
((${#plugins[@]})) || plugins=("now=$root/build/src/bert/libnewscls_bert.so")

mkdir -p "$WORK"
cut -f1 "$DATA/test.txt" >"$WORK/titles.txt"
bench="$WORK/bert_forward"
# shellcheck disable=SC2046
g++ -O2 -std=c++17 -o "$bench" "$root/scripts/bench/bert_forward.cpp" "$root/src/workflow/plugin_loader.cpp" \
  -I"$root/include" -I"$root/src" -L"$root/build/src/core" -Wl,-rpath,"$root/build/src/core" -lnewscls_core \
  $(pkg-config --cflags --libs spdlog) -ldl -pthread

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; threads $THREADS, OpenBLAS threads $OPENBLAS_NUM_THREADS" >&2
: >"$WORK/results.jsonl"
for ((r = 1; r <= REPEATS; ++r)); do
  for entry in "${plugins[@]}"; do
    label=${entry%%=*}
    plugin=${entry#*=}
    threads=$THREADS
    [[ $plugin != *@* ]] || { threads=${plugin##*@}; plugin=${plugin%@*}; }
    "$bench" --plugin "$plugin" --family bert --bundle "$BERT" --titles "$WORK/titles.txt" --label "$label" \
      --batches "$BATCHES" --rounds "$ROUNDS" --seconds "$SECONDS_PER_ROUND" --threads "$threads" | tee -a "$WORK/results.jsonl"
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 - "$WORK/results.jsonl" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
labels = list(dict.fromkeys(r["label"] for r in rows))
sizes = sorted({r["batch"] for r in rows})
def med(key, l, b):
    return statistics.median(r[key] for r in rows if r["label"] == l and r["batch"] == b)
lo, hi = sizes[0], sizes[-1]
for key, what in (("ms_per_title", "wall"), ("cpu_ms_per_title", "process CPU")):
    print(f"{what} ms per title (median over processes):")
    for l in labels:
        cells = "  ".join(f"batch {b}: {med(key, l, b):.3f}" for b in sizes)
        print(f"  {l:>8}  {cells}   a title in a batch of {hi} costs {med(key, l, lo) / med(key, l, hi):.2f}x less than alone")
    for l in labels[1:]:
        cells = "  ".join(f"batch {b}: {med(key, labels[0], b) / med(key, l, b):.2f}x" for b in sizes)
        print(f"  {l} vs {labels[0]}, speed-up: {cells}")
EOF
