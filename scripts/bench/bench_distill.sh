#!/usr/bin/env bash
# Distillation of the default bert (issue 14): a small student distilled from it, the same
# student architecture trained on hard labels alone (alpha=0, attention_weight=0; same epochs
# and seed), and the student distilled from the ensemble tfidf-rf + fasttext + bert. Each run
# is `newscls compress --method distill`; the script prints compression.json's figures
# (dev/test accuracy and macro-F1, predict titles/s of teacher and student measured side by
# side in one process, parameters, MB) and, for the ensemble, each teacher's test accuracy.
#
#   NEWSCLS_DATA=/path/to/thucnews RUNS_SHARED=/path/to/runs scripts/bench/bench_distill.sh   # all three runs
#   NEWSCLS_DATA=... RUNS_SHARED=... RUNS="distilled hard" STUDENT="layers=1" scripts/bench/bench_distill.sh
# Env: NEWSCLS_DATA (required: the folder of the full THUCNews data, train/dev/test.txt and class.txt),
# RUNS_SHARED (required: the teachers' folder, holding bert/, and tfidf-rf/ and fasttext/ for the
# ensemble run), NEWSCLS_BIN (default build/apps/newscls/newscls), OUT (where bundles go; default a temporary folder, removed),
# RUNS (subset of "distilled attention hard ensemble"; attention = distilled plus attention_weight=1), STUDENT (space-separated --set key=value of the
# student, shared by all runs; default: the method's defaults, a one-layer student of the
# teacher's widths from the teacher's layers, 6 epochs), DISTILL (settings of the distilled runs
# only), LOG_LEVEL (warn), SPEED_TITLES (predict speed on the first N dev titles; 0 = all),
# QUANTIZE (1: also `compress --method quantize` each student into NAME-int8 and print it).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${NEWSCLS_BIN:-$root/build/apps/newscls/newscls}
: "${NEWSCLS_DATA:?set NEWSCLS_DATA to the folder of the full THUCNews data (train/dev/test.txt, class.txt)}"
: "${RUNS_SHARED:?set RUNS_SHARED to the folder of the teacher bundles: bert/ (and tfidf-rf/, fasttext/ for the ensemble run)}"
data=$NEWSCLS_DATA
teachers=$RUNS_SHARED
runs=${RUNS:-"distilled hard ensemble"}
student=${STUDENT:-"layers=1"}
distill=${DISTILL:-"temperature=1 alpha=0.5 attention_weight=0"}
if [[ -n "${OUT:-}" ]]; then out=$OUT; mkdir -p "$out"; else out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; fi

sets() { for kv in "$@"; do printf -- '--set %s ' "$kv"; done; }

compress() {  # name, then extra arguments
  local name=$1; shift
  echo "## $name: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  # shellcheck disable=SC2046
  nice -n 10 "$bin" --log-level "${LOG_LEVEL:-warn}" compress --model-dir "$teachers/bert" --method distill --out "$out/$name" \
    --data "$data" --threads 1 --seed 1 --speed-titles "${SPEED_TITLES:-0}" $(sets $student) "$@"
  jq -r --arg n "$name" '
    "\($n): settings \(.settings | tojson)",
    "  teacher  dev acc \(.before.dev.accuracy)  test acc \(.before.test.accuracy)  test F1 \(.before.test.macro_f1)  params \(.before.parameters)  MB \(.before.bundle_mb)  predict \(.before.predict_titles_per_s | floor) titles/s",
    "  student  dev acc \(.after.dev.accuracy)  test acc \(.after.test.accuracy)  test F1 \(.after.test.macro_f1)  params \(.after.parameters)  MB \(.after.bundle_mb)  predict \(.after.predict_titles_per_s | floor) titles/s",
    "  speed-up \(.speed.speedup)  test accuracy change \(.after.test.accuracy - .before.test.accuracy)  train \(.facts.train_titles_per_s | floor) titles/s, \(.compress_seconds | floor) s, epochs run \(.facts.epochs_run)  teachers train acc \(.facts.teachers_train_accuracy // "n/a")",
    "  dev macro-F1 by epoch \([.facts.history[] | .dev_macro_f1] | tojson)"' "$out/$name/compression.json"
  [[ "${QUANTIZE:-0}" == 1 ]] || return 0
  nice -n 10 "$bin" --log-level "${LOG_LEVEL:-warn}" compress --model-dir "$out/$name" --method quantize \
    --out "$out/$name-int8" --data "$data" --threads 1 --speed-titles "${SPEED_TITLES:-0}"
  jq -r --arg n "$name-int8" '"\($n): dev acc \(.after.dev.accuracy)  test acc \(.after.test.accuracy)  MB \(.after.bundle_mb)  speed-up over the student \(.speed.speedup)"' \
    "$out/$name-int8/compression.json"
}

for run in $runs; do
  case $run in
    distilled) compress distilled $(sets $distill) ;;
    attention) compress attention $(sets $distill) --set attention_weight=1 ;;
    hard) compress hard --set alpha=0 --set attention_weight=0 ;;
    ensemble)
      compress ensemble $(sets $distill) --teacher "$teachers/tfidf-rf" --teacher "$teachers/fasttext" --teacher "$teachers/bert"
      for t in tfidf-rf fasttext bert; do
        echo "  teacher $t test acc $(jq .accuracy "$teachers/$t/metrics.json")"
      done ;;
    *) echo "unknown run $run" >&2; exit 2 ;;
  esac
done
