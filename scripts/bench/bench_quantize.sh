#!/usr/bin/env bash
# int8 quantisation of a bert bundle (issue 14): `newscls compress --method quantize`, then
# compression.json's figures (parameters, bundle MB, dev/test accuracy and macro-F1, predict
# titles/s measured in-process on the same dev titles, alternated), and the real `newscls
# predict` binary timed on both bundles, alternated, ROUNDS rounds, on the same titles.
#
#   NEWSCLS_DATA=/path/to/thucnews MODEL=/path/to/bert scripts/bench/bench_quantize.sh
#   NEWSCLS_DATA=... MODEL=... OUT=/tmp/q8 SETTINGS="engine=qnnpack" scripts/bench/bench_quantize.sh
#   DEV_ONLY=1 ...   # prints dev figures only (choosing settings); the test split is still
#                    # evaluated by compress but not shown
# Env: NEWSCLS_DATA (required: the folder of the full THUCNews data, train/dev/test.txt and class.txt),
# MODEL (required: the trained bert bundle to quantise), NEWSCLS_BIN, OUT (default a temporary folder), SETTINGS (space-separated
# key=value), THREADS (default 1), ROUNDS (default 3), SPEED_TITLES (default 0 = all dev).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${NEWSCLS_BIN:-$root/build/apps/newscls/newscls}
: "${NEWSCLS_DATA:?set NEWSCLS_DATA to the folder of the full THUCNews data (train/dev/test.txt, class.txt)}"
: "${MODEL:?set MODEL to the trained bert bundle to quantise (its folder)}"
data=$NEWSCLS_DATA
model=$MODEL
threads=${THREADS:-1}
rounds=${ROUNDS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=${OUT:-$work/int8}
sets=()
for s in ${SETTINGS:-}; do sets+=(--set "$s"); done

echo "# int8 quantisation of $model, settings: ${SETTINGS:-defaults}, threads $threads"
echo "# $(date -u +%FT%TZ) $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load $(cut -d' ' -f1-3 /proc/loadavg)"
# compress replaces a bundle at OUT and refuses anything else (the source bundle too).
start=$(date +%s.%N)
"$bin" --log-level warn compress --model-dir "$model" --method quantize --out "$out" --data "$data" \
  --threads "$threads" --speed-titles "${SPEED_TITLES:-0}" "${sets[@]}" >/dev/null
echo "compress + measurements: $(python3 -c "print(round($(date +%s.%N)-$start,1))") s"
python3 - "$out/compression.json" "${DEV_ONLY:-0}" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); dev_only = sys.argv[2] == "1"
b, a = c["before"], c["after"]
splits = ["dev"] if dev_only else ["dev", "test"]
print("settings:", json.dumps(c["settings"]), " agreement:", json.dumps(c["facts"].get("agreement", {})))
print("%-22s %14s %14s" % ("", "f32", "int8"))
print("%-22s %14d %14d" % ("parameters", b.get("parameters", 0), a.get("parameters", 0)))
print("%-22s %14.2f %14.2f   smaller x%.2f (bar >= 2.5)" % ("bundle MB", b["bundle_mb"], a["bundle_mb"], c["size_ratio"]))
for s in splits:
    for m in ("accuracy", "macro_f1"):
        print("%-22s %14.4f %14.4f   diff %+.2f points" % (s + " " + m, b[s][m], a[s][m], 100 * (a[s][m] - b[s][m])))
print("%-22s %14.0f %14.0f   x%.2f (in-process, %d titles, best of %d, bar >= 1.6)" % (
    "predict titles/s", b["predict_titles_per_s"], a["predict_titles_per_s"], c["speed"]["speedup"],
    c["speed"]["titles"], c["speed"]["rounds"]))
PY

# The real binary, start-up and model load included, on the same dev titles.
cut -f1 "$data/dev.txt" >"$work/titles.txt"
n=$(wc -l <"$work/titles.txt")
declare -A best
for r in $(seq "$rounds"); do
  for side in f32 int8; do
    dir=$model; [[ $side == int8 ]] && dir=$out
    s=$(date +%s.%N)
    "$bin" --log-level warn predict --model-dir "$dir" --input "$work/titles.txt" --output "$work/$side.jsonl" --threads "$threads"
    t=$(python3 -c "print($(date +%s.%N)-$s)")
    printf 'predict binary round %d %-4s %6.2f s  %7.0f titles/s\n' "$r" "$side" "$t" "$(python3 -c "print($n/$t)")"
    if [[ -z "${best[$side]:-}" ]] || python3 -c "import sys;sys.exit(0 if $t<${best[$side]} else 1)"; then best[$side]=$t; fi
  done
done
python3 -c "print('predict binary, best of $rounds: f32 %.0f, int8 %.0f titles/s, x%.2f (bar >= 1.6)' % ($n/${best[f32]}, $n/${best[int8]}, ${best[f32]}/${best[int8]}))"
python3 - "$work/f32.jsonl" "$work/int8.jsonl" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]; b = [json.loads(l) for l in open(sys.argv[2])]
same = sum(x.get("label") == y.get("label") for x, y in zip(a, b))
print("same label from both bundles: %d of %d titles" % (same, len(a)))
PY
