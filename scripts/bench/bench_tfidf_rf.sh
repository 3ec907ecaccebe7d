#!/usr/bin/env bash
# Stage 1 benchmark: newscls tfidf-rf against scikit-learn's RandomForestClassifier, side by
# side in one run on the same data, the same tree count and the same threads. Two peers
# (peer_sklearn_rf.py): "jieba", the course's classic (jieba-word TF-IDF, sklearn's default
# forest), and "char", sklearn's forest on the features and settings that were newscls's
# defaults until 56dd0ff (character 1-2-gram TF-IDF, min_df 2, 50k features, sublinear tf, L2
# rows, min_samples_leaf 3, sqrt features per split): the ratio is of the forest code alone
# only when newscls runs at those settings too, i.e. with the arguments
# max_features=50000 max_features_per_split=sqrt l2_normalize=true.
# Prints dev and test accuracy, macro-F1, training wall and CPU time (vectorise + fit), peak
# RSS for each, the training speed ratios, and newscls predict throughput (titles/s through
# the real binary).
#
#   NEWSCLS_DATA=/path/to/thucnews scripts/bench/bench_tfidf_rf.sh     # full run (newscls, then both peers)
#   NEWSCLS_DATA=... NEWSCLS_BIN=build/apps/newscls/newscls TREES=100 THREADS=2 PEERS="char jieba" scripts/bench/bench_tfidf_rf.sh
#   NEWSCLS_DATA=... SKIP_PEER=1 scripts/bench/bench_tfidf_rf.sh     # newscls only
#
# Env: NEWSCLS_DATA (required: the folder of the full THUCNews data, train/dev/test.txt and class.txt), NEWSCLS_BIN,
# TREES, THREADS, PREDICT_REPEAT, PEERS, WORK, SKIP_PEER.
# Needs: a built newscls; apt-get install -y python3-sklearn python3-jieba (for /usr/bin/python3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${NEWSCLS_BIN:-$ROOT/build/apps/newscls/newscls}"
: "${NEWSCLS_DATA:?set NEWSCLS_DATA to the folder of the full THUCNews data (train/dev/test.txt, class.txt)}"
DATA=$NEWSCLS_DATA
TREES="${TREES:-100}"
THREADS="${THREADS:-2}"
PREDICT_REPEAT="${PREDICT_REPEAT:-10}"
PEERS="${PEERS:-char jieba}"
WORK="${WORK:-$(mktemp -d /tmp/bench_tfidf_rf.XXXXXX)}"
EXTRA_SET=("$@")  # extra --set key=value arguments for newscls train

[[ -x "$BIN" ]] || { echo "error: newscls binary not found at $BIN (set NEWSCLS_BIN)" >&2; exit 1; }
[[ -f "$DATA/train.txt" ]] || { echo "error: no data at $DATA (set NEWSCLS_DATA)" >&2; exit 1; }
mkdir -p "$WORK"

peak_mb() { awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$1"; }
wall_s() { awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; ++i) s = s * 60 + p[i]; printf "%.2f", s}' "$1"; }
cpu_s() { awk -F': ' '/User time|System time/ {s += $2} END {printf "%.1f", s}' "$1"; }
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
ours_cpu=$(cpu_s "$WORK/train.time")
mkdir -p "$WORK/dev"
"$BIN" --log-level warn eval --model-dir "$WORK/model" --data "$DATA" --split dev --out "$WORK/dev/metrics.json" \
  --threads "$THREADS" > /dev/null
ours_dev=$(json_get "$WORK/dev/metrics.json" accuracy)

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

echo "# $(date -u +%FT%TZ) commit $(git -C "$ROOT" rev-parse --short HEAD), $(nproc) cores, load average $(cut -d ' ' -f1-3 /proc/loadavg)"
row_fmt='%-30s %8s %8s %8s %10s %10s %8s\n'
printf "\n$row_fmt" "run ($TREES trees, $THREADS threads)" dev_acc test_acc test_f1 "train s" "train CPU s" "RSS MB"
printf "$row_fmt" "newscls tfidf-rf" "$(printf %.4f "$ours_dev")" "$(printf %.4f "$ours_acc")" "$(printf %.4f "$ours_f1")" \
  "$(printf %.2f "$ours_train")" "$ours_cpu" "$ours_rss"
echo "  (newscls: vectorise $ours_vec s + fit $ours_fit s)"

if [[ -z "${SKIP_PEER:-}" ]]; then
  for peer in $PEERS; do
    /usr/bin/time -v /usr/bin/python3 "$ROOT/scripts/bench/peer_sklearn_rf.py" --data "$DATA" --features "$peer" \
      --trees "$TREES" --jobs "$THREADS" > "$WORK/peer_$peer.json" 2> "$WORK/peer_$peer.time"
    P="$WORK/peer_$peer.json"
    peer_train=$(json_get "$P" train_seconds)
    printf "$row_fmt" "sklearn RF, $peer features" "$(printf %.4f "$(json_get "$P" dev_accuracy)")" \
      "$(printf %.4f "$(json_get "$P" test_accuracy)")" "$(printf %.4f "$(json_get "$P" test_macro_f1)")" \
      "$(printf %.2f "$peer_train")" "$(cpu_s "$WORK/peer_$peer.time")" "$(peak_mb "$WORK/peer_$peer.time")"
    echo "  ($peer: vectorise $(printf %.1f "$(json_get "$P" vectorise_seconds)") s + fit $(printf %.1f "$(json_get "$P" fit_seconds)") s, $(json_get "$P" n_features) features; training speed ratio sklearn/newscls: wall $(python3 -c "print(round($peer_train / $ours_train, 2))")x, CPU $(python3 -c "print(round($(cpu_s "$WORK/peer_$peer.time") / $ours_cpu, 2))")x)"
  done
fi
echo "newscls predict: $n_predict titles in $predict_wall s = $predict_rate titles/s (peak RSS $predict_rss MB)"
echo "outputs kept in $WORK"
