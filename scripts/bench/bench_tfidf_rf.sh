#!/usr/bin/env bash
# Stage 1 benchmark: newscls tfidf-rf against scikit-learn's RandomForestClassifier
# (100 trees, n_jobs=2) over jieba-word TF-IDF, side by side in one run on the same data.
# Prints accuracy, macro-F1, training wall time (vectorise + fit), peak RSS for each, the
# training speed ratio, and newscls predict throughput (titles/s through the real binary).
#
#   scripts/bench/bench_tfidf_rf.sh                  # full run (~5 min on 2 cores)
#   NEWSCLS_BIN=build/apps/newscls/newscls TREES=100 THREADS=2 scripts/bench/bench_tfidf_rf.sh
#   SKIP_PEER=1 scripts/bench/bench_tfidf_rf.sh      # newscls only
#
# Needs: a built newscls; apt-get install -y python3-sklearn python3-jieba (for /usr/bin/python3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${NEWSCLS_BIN:-$ROOT/build/apps/newscls/newscls}"
DATA="${NEWSCLS_DATA:-$ROOT/../shared/data/thucnews}"
TREES="${TREES:-100}"
THREADS="${THREADS:-2}"
PREDICT_REPEAT="${PREDICT_REPEAT:-10}"
WORK="${WORK:-$(mktemp -d /tmp/bench_tfidf_rf.XXXXXX)}"
EXTRA_SET=("$@")  # extra --set key=value arguments for newscls train

[[ -x "$BIN" ]] || { echo "error: newscls binary not found at $BIN (set NEWSCLS_BIN)" >&2; exit 1; }
[[ -f "$DATA/train.txt" ]] || { echo "error: no data at $DATA (set NEWSCLS_DATA)" >&2; exit 1; }
mkdir -p "$WORK"

peak_mb() { awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$1"; }
wall_s() { awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; ++i) s = s * 60 + p[i]; printf "%.2f", s}' "$1"; }
json_get() { python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d = d[k]
print(d)' "$1" "$2"; }

echo "== newscls tfidf-rf: train ($TREES trees, $THREADS threads) on $DATA"
set_args=(--set "n_trees=$TREES")
for s in "${EXTRA_SET[@]}"; do set_args+=(--set "$s"); done
/usr/bin/time -v "$BIN" train --model tfidf-rf --data "$DATA" --out "$WORK/model" --threads "$THREADS" \
  --seed 1 "${set_args[@]}" > "$WORK/train.out" 2> "$WORK/train.time"
M="$WORK/model/metrics.json"
ours_acc=$(json_get "$M" accuracy)
ours_f1=$(json_get "$M" macro_f1)
ours_train=$(json_get "$M" training.train_seconds)
ours_vec=$(json_get "$M" training.vectorise_seconds)
ours_fit=$(json_get "$M" training.fit_seconds)
ours_rss=$(peak_mb "$WORK/train.time")

echo "== newscls predict: test titles x $PREDICT_REPEAT, jsonl to a file"
: > "$WORK/predict_in.txt"
for _ in $(seq "$PREDICT_REPEAT"); do cat "$DATA/test.txt" >> "$WORK/predict_in.txt"; done
n_predict=$(wc -l < "$WORK/predict_in.txt")
/usr/bin/time -v "$BIN" predict --model-dir "$WORK/model" --input "$WORK/predict_in.txt" \
  --output "$WORK/predict_out.jsonl" --threads "$THREADS" 2> "$WORK/predict.time"
predict_wall=$(wall_s "$WORK/predict.time")
predict_rss=$(peak_mb "$WORK/predict.time")
n_out=$(wc -l < "$WORK/predict_out.jsonl")
[[ "$n_out" == "$n_predict" ]] || { echo "error: predict wrote $n_out lines for $n_predict titles" >&2; exit 1; }
predict_rate=$(python3 -c "print(round($n_predict / max($predict_wall, 1e-9)))")

printf '\n%-34s %10s %10s %12s %12s\n' "run" "accuracy" "macro-F1" "train s" "peak RSS MB"
printf '%-34s %10.4f %10.4f %12.2f %12s\n' "newscls tfidf-rf ($TREES trees)" "$ours_acc" "$ours_f1" "$ours_train" "$ours_rss"
echo "  (vectorise $ours_vec s + fit $ours_fit s)"

if [[ -z "${SKIP_PEER:-}" ]]; then
  echo "== peer: scikit-learn RandomForestClassifier(n_estimators=$TREES, n_jobs=$THREADS) over jieba TF-IDF"
  /usr/bin/time -v /usr/bin/python3 "$ROOT/scripts/bench/peer_sklearn_rf.py" --data "$DATA" \
    --trees "$TREES" --jobs "$THREADS" > "$WORK/peer.json" 2> "$WORK/peer.time"
  peer_acc=$(json_get "$WORK/peer.json" accuracy)
  peer_f1=$(json_get "$WORK/peer.json" macro_f1)
  peer_train=$(json_get "$WORK/peer.json" train_seconds)
  peer_rss=$(peak_mb "$WORK/peer.time")
  printf '%-34s %10.4f %10.4f %12.2f %12s\n' "sklearn RF + jieba TF-IDF" "$peer_acc" "$peer_f1" "$peer_train" "$peer_rss"
  echo "training speed ratio (sklearn / newscls): $(python3 -c "print(round($peer_train / $ours_train, 2))")x"
fi
echo "newscls predict: $n_predict titles in $predict_wall s = $predict_rate titles/s (peak RSS $predict_rss MB)"
echo "outputs kept in $WORK"
