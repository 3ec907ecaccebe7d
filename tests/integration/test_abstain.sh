#!/usr/bin/env bash
# Calibration and abstention through the real binary: train fits a temperature on dev and
# stores it; metrics.json has ECE/NLL/Brier and the figures; --set calibrate=false skips it;
# predict --min-score abstains (JSONL label null, TSV empty label); eval --min-score reports
# coverage; eval --uncalibrated reads the bundle as before.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
make_slice "$dir/data" 3000 40

"$NEWSCLS_BIN" train --model fasttext --data "$dir/data" --out "$dir/model" --threads 1 --set epochs=3 >/dev/null 2>"$dir/train.err" ||
  { cat "$dir/train.err"; fail "train"; }
m="$dir/model/manifest.json"
assert_eq True "$(json_get "$m" "j['training']['calibration']['temperature'] > 0")" "temperature stored"
assert_eq True "$(json_get "$m" "j['training']['calibration']['dev_nll_after'] <= j['training']['calibration']['dev_nll_before'] + 1e-9")" "NLL on dev not worse"
assert_eq True "$(json_get "$dir/model/metrics.json" "0 <= j['ece'] <= 1 and j['nll'] > 0 and 0 <= j['brier'] <= 2")" "metrics.json figures"
assert_eq 15 "$(json_get "$dir/model/metrics.json" "len(j['reliability'])")" "15 reliability bins"
for f in reliability.svg risk_coverage.svg; do
  grep -q "<svg" "$dir/model/$f" || fail "$f missing"
done

# calibrate=false: no calibration facts; a bad value is refused.
"$NEWSCLS_BIN" train --model fasttext --data "$dir/data" --out "$dir/raw" --threads 1 --set epochs=3 --set calibrate=false >/dev/null 2>&1 ||
  fail "train with calibrate=false"
assert_eq False "$(json_get "$dir/raw/manifest.json" "'calibration' in j['training']")" "calibrate=false stores nothing"
expect_exit 1 "$dir/bad.err" "$NEWSCLS_BIN" train --model fasttext --data "$dir/data" --out "$dir/bad" --set calibrate=maybe
assert_contains "$dir/bad.err" "calibrate"

# eval --uncalibrated gives the raw model's figures: the same as the calibrate=false bundle
# (same seed, one thread: the same training), and the same accuracy as calibrated (the top class is kept).
"$NEWSCLS_BIN" eval --model-dir "$dir/model" --data "$dir/data" --uncalibrated --out "$dir/unc/metrics.json" >/dev/null
"$NEWSCLS_BIN" eval --model-dir "$dir/raw" --data "$dir/data" --out "$dir/raw_eval/metrics.json" >/dev/null
assert_eq "$(json_get "$dir/raw_eval/metrics.json" "round(j['ece'], 6)")" "$(json_get "$dir/unc/metrics.json" "round(j['ece'], 6)")" "uncalibrated ECE"
assert_eq "$(json_get "$dir/model/metrics.json" "j['accuracy']")" "$(json_get "$dir/unc/metrics.json" "j['accuracy']")" "accuracy kept"
# Its figures say so: the two reliability diagrams of a before/after comparison looked alike.
assert_contains "$dir/unc/reliability.svg" "on test.txt (uncalibrated)"
assert_not_contains "$dir/model/reliability.svg" "(uncalibrated)"

# eval --fit-calibration stores a temperature in a bundle trained without one; its own figures are
# the model's before the fit (calibrated false), later evals read it (calibrated true). Dev only.
expect_exit 2 "$dir/fit_test.err" "$NEWSCLS_BIN" eval --model-dir "$dir/raw" --data "$dir/data" --fit-calibration
"$NEWSCLS_BIN" eval --model-dir "$dir/raw" --data "$dir/data" --split dev --fit-calibration --out "$dir/fit/metrics.json" >/dev/null
assert_eq False "$(json_get "$dir/fit/metrics.json" "j['calibrated']")" "figures of the fit's run are uncalibrated"
assert_eq True "$(json_get "$dir/raw/manifest.json" "j['training']['calibration']['temperature'] > 0")" "temperature stored by the fit"
"$NEWSCLS_BIN" eval --model-dir "$dir/raw" --data "$dir/data" --split dev --out "$dir/fitted/metrics.json" >/dev/null
assert_eq True "$(json_get "$dir/fitted/metrics.json" "j['calibrated'] and j['nll'] <= $(json_get "$dir/fit/metrics.json" "j['nll']") + 1e-9")" "calibrated after the fit"

# eval --min-score: coverage and accuracy on the answered titles.
"$NEWSCLS_BIN" eval --model-dir "$dir/model" --data "$dir/data" --min-score 0.9 --out "$dir/ab/metrics.json" >"$dir/ab.out"
assert_contains "$dir/ab.out" "coverage"
python3 - "$dir/ab/metrics.json" "$dir/ab/predictions.tsv" <<'PY' || fail "abstention figures"
import json, sys
j = json.load(open(sys.argv[1]))
a = j["abstention"]
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[2], encoding="utf-8")][1:]
answered = [r for r in rows if float(r[3]) >= 0.9]
assert a["answered"] == len(answered), (a, len(answered))
assert abs(a["coverage"] - len(answered) / len(rows)) < 1e-9
acc = sum(r[1] == r[2] for r in answered) / max(1, len(answered))
assert abs(a["accuracy_answered"] - acc) < 1e-9, (a, acc)
assert 0 < a["coverage"] < 1, a
PY

# predict --min-score: abstains below it, answers above it.
cut -f1 "$dir/data/test.txt" >"$dir/titles.txt"
"$NEWSCLS_BIN" predict --model-dir "$dir/model" --input "$dir/titles.txt" --output "$dir/p.jsonl" --min-score 0.9 2>"$dir/p.err"
assert_not_contains "$dir/p.err" "above every score"
"$NEWSCLS_BIN" predict --model-dir "$dir/model" --input "$dir/titles.txt" --output "$dir/p.tsv" --format tsv --min-score 0.9
python3 - "$dir/p.jsonl" "$dir/p.tsv" <<'PY' || fail "predict --min-score"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
tsv = [l.rstrip("\n").split("\t") for l in open(sys.argv[2], encoding="utf-8")]
assert len(lines) == len(tsv)
abst = [p for p in lines if p["abstained"]]
assert abst and len(abst) < len(lines), len(abst)
for p, t in zip(lines, tsv):
    if p["abstained"]:
        assert p["label"] is None and p["label_id"] == -1 and p["score"] < 0.9, p
        assert t[1] == "", t
    else:
        assert p["label"] is not None and p["score"] >= 0.9, p
        assert t[1] == p["label"], (t, p)
PY
# A minimum no score reaches (calibrated scores stop short of 1) abstains on everything: said.
above=$(python3 -c "import json,sys; print((1 + max(json.loads(l)['score'] for l in open(sys.argv[1]))) / 2)" "$dir/p.jsonl")
"$NEWSCLS_BIN" predict --model-dir "$dir/model" --input "$dir/titles.txt" --output "$dir/none.jsonl" --min-score "$above" 2>"$dir/none.err"
assert_contains "$dir/none.err" "is above every score of the 400 title(s)"
"$NEWSCLS_BIN" eval --model-dir "$dir/model" --data "$dir/data" --min-score "$above" --out "$dir/none/metrics.json" >/dev/null 2>"$dir/none_eval.err"
assert_contains "$dir/none_eval.err" "is above every score"
# A blank line is abstained whatever the minimum score; the titles around it are answered.
{ head -n 1 "$dir/titles.txt"; printf '\n \t \n'; } >"$dir/blank.txt"
"$NEWSCLS_BIN" predict --model-dir "$dir/model" --input "$dir/blank.txt" --output "$dir/blank.jsonl"
assert_eq "[False, True, True]" \
  "$(python3 -c "import json,sys; print([json.loads(l).get('abstained', False) and json.loads(l)['label'] is None for l in open(sys.argv[1])])" "$dir/blank.jsonl")" \
  "blank lines abstained"
# A bundle without calibration facts (made before they existed) predicts as the raw model;
# a malformed calibration is refused, naming the manifest.
cp -r "$dir/model" "$dir/old"
python3 - "$dir/old/manifest.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); del j["training"]["calibration"]; json.dump(j, open(sys.argv[1], "w"))
PY
"$NEWSCLS_BIN" eval --model-dir "$dir/old" --data "$dir/data" --out "$dir/old_eval/metrics.json" >/dev/null
assert_eq "$(json_get "$dir/unc/metrics.json" "round(j['nll'], 6)")" "$(json_get "$dir/old_eval/metrics.json" "round(j['nll'], 6)")" "old bundle = uncalibrated"
python3 - "$dir/old/manifest.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["training"]["calibration"] = {"temperature": -1, "floor": 0.001}; json.dump(j, open(sys.argv[1], "w"))
PY
expect_exit 1 "$dir/malformed.err" "$NEWSCLS_BIN" predict --model-dir "$dir/old" --input "$dir/titles.txt" --output "$dir/x.jsonl"
assert_contains "$dir/malformed.err" "manifest.json"
assert_contains "$dir/malformed.err" "training.calibration"
echo "test_abstain: ok"
