# Sourced by the issue-17 benches (bench_calibration.sh, bench_cascade.sh): their env and the
# eval helpers. Source it after setting WORK's default in BENCH_WORK.
# Required env: DATA (the folder of the full THUCNews data: train/dev/test.txt, class.txt),
# CROSS (the cross-domain sample: labelled headlines of another outlet,
#        toutiao_sample.txt, in the format of test.txt),
# RUNS (trained bundles, one folder per family: tfidf-rf/, fasttext/, bert/, e.g. a run of
# scripts/run_pipeline.sh). Optional: NEWSCLS_BIN, WORK, THREADS (2).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NEWSCLS_BIN=${NEWSCLS_BIN:-$root/build/apps/newscls/newscls}
: "${DATA:?set DATA to the folder of the full THUCNews data (train/dev/test.txt, class.txt)}"
: "${CROSS:?set CROSS to the cross-domain sample, labelled headlines of another outlet, in the format of test.txt (toutiao_sample.txt)}"
: "${RUNS:?set RUNS to a folder holding trained bundles, one per family (tfidf-rf/, fasttext/, bert/)}"
WORK=${WORK:-$BENCH_WORK}
THREADS=${THREADS:-2}
[[ -x $NEWSCLS_BIN ]] || { echo "no newscls binary at $NEWSCLS_BIN (set NEWSCLS_BIN)" >&2; exit 1; }
source "$root/scripts/bench/fresh_dir.sh"

ev() {  # bundle out-name eval-args...: metrics.json path on stdout
  local bundle=$1 name=$2
  shift 2
  "$NEWSCLS_BIN" --log-level warn eval --model-dir "$WORK/$bundle" --data "$DATA" --threads "$THREADS" \
    --out "$WORK/eval/$bundle-$name/metrics.json" "$@" >/dev/null
  echo "$WORK/eval/$bundle-$name/metrics.json"
}
get() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
