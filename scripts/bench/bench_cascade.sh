#!/usr/bin/env bash
# Abstention and the fasttext -> bert cascade (issue 17), side by side in one run:
#  1. fasttext abstention, the default bundle against ensemble=5 (ENSEMBLE_BUNDLE, or trained
#     here): the threshold answering 90% of dev (calibrated top score), applied once to test.
#  2. cascades fasttext -> bert, thresholds chosen on dev: the first design (combine=last,
#     slack=0), the new defaults (combine=product, slack=0.005) with each fasttext, and the new
#     rule with a 5% budget (last_share=0.05); test and the cross-domain sample once each.
#  3. `newscls predict` on the 10,000 test titles: bert and each cascade, REPEAT rounds
#     interleaved; the median wall and CPU (user + sys) seconds of each, start-up included.
#     PARTS=speed skips 1-2 (the cascades must exist in WORK from an earlier run).
# Needs calibrated copies: the bundles of RUNS are copied and fitted on dev here.
# Usage: scripts/bench/bench_cascade.sh   env: NEWSCLS_BIN DATA CROSS RUNS WORK THREADS REPEAT ENSEMBLE_BUNDLE
set -euo pipefail
BENCH_WORK=/tmp/newscls-bench-cascade
source "$(dirname "$0")/issue17_env.sh"
REPEAT=${REPEAT:-3}
PARTS=${PARTS:-all}
for f in fasttext bert; do [[ -f $RUNS/$f/manifest.json ]] || { echo "no $f bundle in $RUNS" >&2; exit 1; }; done
nc() { "$NEWSCLS_BIN" --log-level warn "$@"; }

if [[ $PARTS != speed ]]; then
fresh_dir "$WORK"
for f in fasttext bert; do
  cp -r "$RUNS/$f" "$WORK/$f"
  ev "$f" dev-fit --split dev --fit-calibration >/dev/null
done
if [[ -n ${ENSEMBLE_BUNDLE:-} ]]; then
  cp -r "$ENSEMBLE_BUNDLE" "$WORK/fasttext-e5"
else
  /usr/bin/time -f "fasttext ensemble=5 train: %e s wall, %U s user" \
    "$NEWSCLS_BIN" --log-level warn train --model fasttext --data "$DATA" --out "$WORK/fasttext-e5" --threads 1 --set ensemble=5 >/dev/null
fi

echo "## fasttext abstention at 90% of dev answered"
for f in fasttext fasttext-e5; do
  dev=$(ev "$f" dev --split dev)
  s=$(python3 -c "
import sys
scores = sorted(float(l.split('\t')[3]) for l in list(open(sys.argv[1], encoding='utf-8'))[1:])
print('%.6f' % scores[len(scores) // 10])" "$(dirname "$dev")/predictions.tsv")
  ab=$(ev "$f" abstain --split test --min-score "$s")
  echo "$f: dev accuracy $(get "$dev" "'%.4f' % j['accuracy']"), min score $s;" \
    "$(get "$ab" "'test coverage %.4f, accuracy on answered %.4f, all titles %.4f' % (j['abstention']['coverage'], j['abstention']['accuracy_answered'], j['accuracy'])")"
done

echo
echo "## cascades fasttext -> bert (thresholds chosen on dev)"
echo "| cascade | first | settings | threshold | dev acc | dev bert share | test acc | test bert share | cross acc | cross bert share |"
echo "|---|---|---|---|---|---|---|---|---|---|"
cascades=()
train_cascade() {  # name first-member settings...
  local name=$1 first=$2
  shift 2
  local sets=()
  for s in "$@"; do sets+=(--set "$s"); done
  nc train --model cascade --data "$DATA" --out "$WORK/$name" --threads "$THREADS" --set "members=$WORK/$first,$WORK/bert" \
    "${sets[@]}" >/dev/null
  local t x
  t=$(ev "$name" test --split test)
  x=$(ev "$name" cross --input "$CROSS")
  echo "| $name | $first | $* | $(get "$WORK/$name/manifest.json" "'%.4f' % j['training']['thresholds'][0]") |" \
    "$(get "$WORK/$name/manifest.json" "'%.4f | %.3f' % (j['training']['dev_accuracy'], j['training']['dev_shares'][1])") |" \
    "$(get "$t" "'%.4f | %.3f' % (j['accuracy'], j['stages'][1]['share'])") | $(get "$x" "'%.4f | %.3f' % (j['accuracy'], j['stages'][1]['share'])") |"
  cascades+=("$name")
}
train_cascade before fasttext combine=last slack=0
train_cascade product fasttext
train_cascade product-e5 fasttext-e5
train_cascade product-e5-5pct fasttext-e5 last_share=0.05
for f in fasttext fasttext-e5 bert; do
  t=$(ev "$f" test --split test)
  x=$(ev "$f" cross --input "$CROSS")
  echo "| ($f alone) | | | | | | $(get "$t" "'%.4f' % j['accuracy']") | | $(get "$x" "'%.4f' % j['accuracy']") | |"
done
else
  cascades=(before product product-e5 product-e5-5pct)
  rm -f "$WORK/times.txt"
fi

echo
echo "## newscls predict, 10,000 test titles, median of $REPEAT interleaved rounds (load: $(cut -d' ' -f1-3 /proc/loadavg))"
cut -f1 "$DATA/test.txt" >"$WORK/titles.txt"
for r in $(seq "$REPEAT"); do
  for b in bert "${cascades[@]}"; do
    /usr/bin/time -o "$WORK/time.txt" -f "%e %U %S" \
      "$NEWSCLS_BIN" --log-level warn predict --model-dir "$WORK/$b" --input "$WORK/titles.txt" --output "$WORK/$b.jsonl" --threads "$THREADS"
    echo "$b $(cat "$WORK/time.txt")" >>"$WORK/times.txt"
  done
done
python3 - "$WORK/times.txt" <<'PY'
import statistics, sys
wall, cpu = {}, {}
for line in open(sys.argv[1]):
    name, e, u, s = line.split()
    wall.setdefault(name, []).append(float(e))
    cpu.setdefault(name, []).append(float(u) + float(s))
bw, bc = statistics.median(wall["bert"]), statistics.median(cpu["bert"])
for name in wall:
    w, c = statistics.median(wall[name]), statistics.median(cpu[name])
    print(f"{name}: wall {w:.2f} s ({10000 / w:.0f} titles/s, bert / this {bw / w:.2f}x), CPU {c:.2f} s (bert / this {bc / c:.2f}x);"
          f" walls {' '.join(f'{t:.2f}' for t in wall[name])}")
PY
echo "(load after: $(cut -d' ' -f1-3 /proc/loadavg))"
