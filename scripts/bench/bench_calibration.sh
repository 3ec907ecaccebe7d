#!/usr/bin/env bash
# Calibration, abstention and the fasttext -> bert cascade, measured on copies of trained
# default bundles (RUNS/<family>, e.g. those of scripts/run_pipeline.sh):
#  1. ECE/NLL/Brier on test before (eval --uncalibrated) and after calibration, the temperature
#     fitted on dev (eval --split dev --fit-calibration, the same fit train does); the same on
#     the cross-domain sample (measured there only: nothing is chosen on it).
#  2. fasttext abstention: the score threshold that keeps 90% of the dev titles, applied once
#     to test: coverage and accuracy on the answered titles.
#  3. When a bert bundle exists: the fasttext -> bert cascade (thresholds chosen on dev) on test
#     and on the cross-domain sample, and `newscls predict` titles/s of bert and of the cascade
#     on the test titles.
#  4. fasttext -> llm with at most 15% of dev titles reaching the LLM, the LLM being the loopback
#     test server (tests/llm_server/fake_llm_server.py, which answers from the true labels: a
#     stand-in for a strong LLM, so its accuracy says how well the routing works, not the LLM).
# Everything is chosen on dev; test and the cross-domain sample are evaluated once.
#
# Usage: scripts/bench/bench_calibration.sh
#   env: NEWSCLS_BIN, DATA, CROSS, RUNS, WORK, THREADS,
#        PARTS (default "calibration abstention cascade llm": which parts to run)
set -euo pipefail

BENCH_WORK=/tmp/newscls-bench-calibration
source "$(dirname "$0")/issue17_env.sh"
PARTS=${PARTS:-calibration abstention cascade llm}
part() { [[ " $PARTS " == *" $1 "* ]]; }
families=()
for family in tfidf-rf fasttext bert; do
  if [[ -f $RUNS/$family/manifest.json ]]; then families+=("$family"); else echo "# $family: no bundle in $RUNS, skipped"; fi
done
(( ${#families[@]} > 0 )) || { echo "no tfidf-rf, fasttext or bert bundle in $RUNS (set RUNS)" >&2; exit 1; }
fresh_dir "$WORK"

if part calibration; then
echo "## calibration (test and cross-domain, before -> after; T fitted on dev)"
echo "| family | T | test acc | test ECE | test NLL | test Brier | cross acc | cross ECE | cross NLL |"
echo "|---|---|---|---|---|---|---|---|---|"
for family in "${families[@]}"; do
  mkdir -p "$WORK/$family"
  cp -r "$RUNS/$family"/. "$WORK/$family/"
  raw=$(ev "$family" test-raw --split test --uncalibrated)
  raw_x=$(ev "$family" cross-raw --input "$CROSS" --uncalibrated)
  ev "$family" dev-fit --split dev --fit-calibration >/dev/null
  cal=$(ev "$family" test --split test)
  cal_x=$(ev "$family" cross --input "$CROSS")
  t=$(get "$WORK/$family/manifest.json" "'%.3f' % j['training']['calibration']['temperature']")
  f4() { get "$1" "'%.4f' % j['$2']"; }
  echo "| $family | $t | $(f4 "$cal" accuracy) | $(f4 "$raw" ece) -> $(f4 "$cal" ece) | $(f4 "$raw" nll) -> $(f4 "$cal" nll) |" \
    "$(f4 "$raw" brier) -> $(f4 "$cal" brier) | $(f4 "$cal_x" accuracy) | $(f4 "$raw_x" ece) -> $(f4 "$cal_x" ece) |" \
    "$(f4 "$raw_x" nll) -> $(f4 "$cal_x" nll) |"
done
else  # later parts still need the calibrated copies
  for family in "${families[@]}"; do
    mkdir -p "$WORK/$family"
    cp -r "$RUNS/$family"/. "$WORK/$family/"
    ev "$family" dev-fit --split dev --fit-calibration >/dev/null
  done
fi

if part abstention && [[ -f $WORK/fasttext/manifest.json ]]; then
  dev=$(ev fasttext dev --split dev)
  # The 10% quantile of calibrated dev top scores: the threshold that answers 90% of dev.
  s=$(python3 -c "
import sys
scores = sorted(float(l.split('\t')[3]) for l in list(open(sys.argv[1], encoding='utf-8'))[1:])
print('%.6f' % scores[len(scores) // 10])" "$(dirname "$dev")/predictions.tsv")
  ab=$(ev fasttext abstain --split test --min-score "$s")
  echo
  echo "## fasttext abstention: min score $s (90% of dev answered)"
  get "$ab" "'test coverage %.4f, accuracy on answered %.4f (%d of %d answered); all titles %.4f' % (j['abstention']['coverage'], j['abstention']['accuracy_answered'], j['abstention']['answered'], j['abstention']['count'], j['accuracy'])"
  xab=$(ev fasttext cross-abstain --input "$CROSS" --min-score "$s")
  get "$xab" "'cross-domain coverage %.4f, accuracy on answered %.4f; all titles %.4f' % (j['abstention']['coverage'], j['abstention']['accuracy_answered'], j['accuracy'])"
fi

if part cascade && [[ -f $WORK/bert/manifest.json && -f $WORK/fasttext/manifest.json ]]; then
  "$NEWSCLS_BIN" --log-level warn train --model cascade --data "$DATA" --out "$WORK/cascade" --threads "$THREADS" \
    --set "members=$WORK/fasttext,$WORK/bert" >/dev/null
  c=$(ev cascade test --split test)
  cx=$(ev cascade cross --input "$CROSS")
  echo
  echo "## cascade fasttext -> bert (threshold $(get "$WORK/cascade/manifest.json" "j['training']['thresholds']"), chosen on dev)"
  get "$c" "'test accuracy %.4f, ECE %.4f; shares %s' % (j['accuracy'], j['ece'], [(s['name'], round(s['share'], 4)) for s in j['stages']])"
  get "$cx" "'cross-domain accuracy %.4f, ECE %.4f; shares %s' % (j['accuracy'], j['ece'], [(s['name'], round(s['share'], 4)) for s in j['stages']])"
  cut -f1 "$DATA/test.txt" >"$WORK/titles.txt"
  n=$(wc -l <"$WORK/titles.txt")
  for bundle in bert cascade; do
    start=$(date +%s.%N)
    "$NEWSCLS_BIN" --log-level warn predict --model-dir "$WORK/$bundle" --input "$WORK/titles.txt" \
      --output "$WORK/$bundle.jsonl" --threads "$THREADS"
    end=$(date +%s.%N)
    python3 -c "import sys; print('predict %s: %d titles in %.1f s = %.0f titles/s' % (sys.argv[1], int(sys.argv[2]), float(sys.argv[4]) - float(sys.argv[3]), int(sys.argv[2]) / (float(sys.argv[4]) - float(sys.argv[3]))))" \
      "$bundle" "$n" "$start" "$end"
  done
fi

if part llm && [[ -f $WORK/fasttext/manifest.json ]]; then
  python3 "$root/tests/llm_server/fake_llm_server.py" --port-file "$WORK/port" --classes "$DATA/class.txt" \
    --truth "$DATA/dev.txt" --truth "$DATA/test.txt" >"$WORK/server.log" 2>&1 &
  server=$!
  trap 'kill $server 2>/dev/null || true' EXIT
  for _ in $(seq 100); do [[ -s $WORK/port ]] && break; sleep 0.1; done
  export NEWSCLS_LLM_API_KEY=loopback
  "$NEWSCLS_BIN" --log-level warn train --model llm --data "$DATA" --out "$WORK/llm" --set "base_url=http://127.0.0.1:$(cat "$WORK/port")" \
    --set cache_path=off --set concurrency=16 >/dev/null
  "$NEWSCLS_BIN" --log-level warn train --model cascade --data "$DATA" --out "$WORK/cascade-llm" --threads "$THREADS" \
    --set "members=$WORK/fasttext,$WORK/llm" --set last_share=0.15 >/dev/null
  l=$(ev cascade-llm test --split test)
  echo
  echo "## cascade fasttext -> llm (loopback server), last_share 0.15 (threshold $(get "$WORK/cascade-llm/manifest.json" "j['training']['thresholds']"), chosen on dev)"
  get "$l" "'test accuracy %.4f; shares %s; LLM requests %d' % (j['accuracy'], [(s['name'], round(s['share'], 4)) for s in j['stages']], j['run_stats']['requests_sent'])"
  get "$WORK/eval/fasttext-test/metrics.json" "'fasttext alone (calibrated bundle): test accuracy %.4f' % j['accuracy']" 2>/dev/null || true
fi
