# Shared by the issue-17 benches (bench_calibration.sh, bench_cascade.sh): the env defaults
# and the eval helpers. Source it after setting WORK's default in BENCH_WORK.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NEWSCLS_BIN=${NEWSCLS_BIN:-$root/build/apps/newscls/newscls}
DATA=${DATA:-$root/../shared/data/thucnews}
CROSS=${CROSS:-$root/../shared/data/crossdomain/toutiao_sample.txt}
RUNS=${RUNS:-/work/runs-shared}
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
