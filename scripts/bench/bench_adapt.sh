#!/usr/bin/env bash
# Adapting to another outlet: for each family, a bundle trained on THUCNews (BEFORE/<family>)
# is adapted to the unlabelled feed (`newscls adapt`, timed), and both bundles are evaluated
# with the same command on the cross-domain sample and on test. Prints one row per family:
#   family  sample-before  sample-after  gain  test-before  test-after  adapt-seconds
# then the cascade fasttext -> bert of the bundles before and of the adapted ones (as
# `adapt` of a cascade would build it, without adapting its members a second time).
# The sample is measured here, never tuned on (its SOURCE.md): run it once per finished
# configuration. Settings are chosen with scripts/bench/adapt_signals.py (dev and label-free
# signals only).
#
# Usage: scripts/bench/bench_adapt.sh
#   env (required): DATA (the folder of the full THUCNews data: train/dev/test.txt, class.txt),
#        CROSS (the cross-domain sample: labelled headlines of another outlet,
#        toutiao_sample.txt, in the format of test.txt),
#        FEED (the unlabelled feed: titles of another outlet, one a line, toutiao_feed.txt),
#        BEFORE (bundles to adapt, one folder per family);
#   env (optional): NEWSCLS_BIN,
#        AFTER (optional: bundles adapted already, one folder per family, with the adapt time
#        their manifest records: measured, not adapted again),
#        WORK (where adapted bundles and evaluations go), THREADS (default 2),
#        FAMILIES (default "tfidf-rf fasttext bert"), ADAPT_ARGS (extra `adapt` options)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
NEWSCLS_BIN=${NEWSCLS_BIN:-$root/build/apps/newscls/newscls}
: "${DATA:?set DATA to the folder of the full THUCNews data (train/dev/test.txt, class.txt)}"
: "${CROSS:?set CROSS to the cross-domain sample, labelled headlines of another outlet, in the format of test.txt (toutiao_sample.txt)}"
: "${FEED:?set FEED to the unlabelled feed, titles of another outlet, one a line (toutiao_feed.txt)}"
BEFORE=${BEFORE:?set BEFORE to a folder holding a trained bundle per family}
WORK=${WORK:-/tmp/newscls-bench-adapt}
THREADS=${THREADS:-2}
FAMILIES=${FAMILIES:-tfidf-rf fasttext bert}
ADAPT_ARGS=${ADAPT_ARGS:-}
[[ -x $NEWSCLS_BIN ]] || { echo "no newscls binary at $NEWSCLS_BIN (set NEWSCLS_BIN)" >&2; exit 1; }
source "$root/scripts/bench/fresh_dir.sh"
fresh_dir "$WORK"

# accuracy BUNDLE INPUT NAME: the bundle's accuracy on a labelled file, as `newscls eval` reports it.
accuracy() {
  "$NEWSCLS_BIN" --log-level warn eval --model-dir "$1" --data "$DATA" --input "$2" --threads "$THREADS" \
    --out "$WORK/eval/$3/metrics.json" >/dev/null
  python3 -c "import json,sys; print('%.4f' % json.load(open(sys.argv[1]))['accuracy'])" "$WORK/eval/$3/metrics.json"
}

echo "# $(git -C "$root" rev-parse --short HEAD) $(nproc) cores; feed $(wc -l <"$FEED") lines; adapt $ADAPT_ARGS"
printf '%-9s %8s %8s %7s %8s %8s %9s\n' family sample→ →sample gain test→ →test adapt_s
for family in $FAMILIES; do
  before=$BEFORE/$family
  [[ -f $before/manifest.json ]] || { echo "# $family: no bundle in $BEFORE"; continue; }
  if [[ -n ${AFTER:-} ]]; then
    ln -s "$(cd "$AFTER/$family" && pwd)" "$WORK/$family"
    seconds=$(python3 -c "import json,sys; print('%.0f' % json.load(open(sys.argv[1]))['training']['adaptation']['adapt_seconds'])" \
      "$WORK/$family/manifest.json")
  else
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$NEWSCLS_BIN" --log-level warn adapt --model-dir "$before" --unlabeled "$FEED" --out "$WORK/$family" \
      --data "$DATA" --threads "$THREADS" $ADAPT_ARGS >/dev/null
    seconds=$(python3 -c "import sys,time; print('%.0f' % (time.time() - float(sys.argv[1])))" "$start")
  fi
  s0=$(accuracy "$before" "$CROSS" "$family-sample-before")
  s1=$(accuracy "$WORK/$family" "$CROSS" "$family-sample-after")
  t0=$(accuracy "$before" "$DATA/test.txt" "$family-test-before")
  t1=$(accuracy "$WORK/$family" "$DATA/test.txt" "$family-test-after")
  gain=$(python3 -c "import sys; print('%+.1f' % (100 * (float(sys.argv[2]) - float(sys.argv[1]))))" "$s0" "$s1")
  printf '%-9s %8s %8s %7s %8s %8s %9s\n' "$family" "$s0" "$s1" "$gain" "$t0" "$t1" "$seconds"
done

if [[ -f $WORK/fasttext/manifest.json && -f $WORK/bert/manifest.json ]]; then
  "$NEWSCLS_BIN" --log-level warn train --model cascade --data "$DATA" --out "$WORK/cascade-before" \
    --set "members=$BEFORE/fasttext,$BEFORE/bert" --threads "$THREADS" >/dev/null
  "$NEWSCLS_BIN" --log-level warn train --model cascade --data "$DATA" --out "$WORK/cascade" \
    --set "members=$WORK/fasttext,$WORK/bert" --threads "$THREADS" >/dev/null
  s0=$(accuracy "$WORK/cascade-before" "$CROSS" cascade-sample-before)
  s1=$(accuracy "$WORK/cascade" "$CROSS" cascade-sample-after)
  t0=$(accuracy "$WORK/cascade-before" "$DATA/test.txt" cascade-test-before)
  t1=$(accuracy "$WORK/cascade" "$DATA/test.txt" cascade-test-after)
  gain=$(python3 -c "import sys; print('%+.1f' % (100 * (float(sys.argv[2]) - float(sys.argv[1]))))" "$s0" "$s1")
  printf '%-9s %8s %8s %7s %8s %8s %9s\n' cascade "$s0" "$s1" "$gain" "$t0" "$t1" -
fi
