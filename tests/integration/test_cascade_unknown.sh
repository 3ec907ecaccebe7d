#!/usr/bin/env bash
# A cascade whose last member (the LLM) replies with no class for the titles it is sent: each
# such title keeps the earlier member's answer and stage, in predict and in eval's per-stage
# table alike; the LLM is credited with no title it did not answer. The LLM member has no
# calibration, so the cascade is not called calibrated; an "unknown" is never counted answered.
# An LLM outage is no stop either with combine=product: the titles sent on keep the earlier
# member's answer and stage; nor for an LLM before the last member, which the titles reach; with
# combine=last an LLM last member's titles would read "unknown", so the run stops.
source "$(dirname "$0")/lib.sh"
source "$NEWSCLS_SOURCE_DIR/tests/llm_server/lib.sh"
dir=$(scratch)
make_slice "$dir/data" 3000 20      # 200 dev and 200 test titles
# Dev titles are answered rightly (so thresholds send some on); every test title gets 我不知道.
python3 - "$dir/script.json" "$dir/data/test.txt" <<'PY'
import json, sys
titles = [line.rstrip("\n").rpartition("\t")[0] for line in open(sys.argv[2], encoding="utf-8")]
json.dump({t: {"content": "我不知道"} for t in titles}, open(sys.argv[1], "w"), ensure_ascii=False)
PY
start_llm_server "$dir" --truth "$dir/data/dev.txt" --classes "$dir/data/class.txt" --script "$dir/script.json"
export NEWSCLS_LLM_API_KEY=unused

cascade_members "$dir"
"$NEWSCLS_BIN" train --model fasttext --data "$dir/data" --out "$dir/src/ft2" --threads 1 --seed 2 --set epochs=2 >/dev/null 2>&1 ||
  fail "a second fasttext bundle"
"$NEWSCLS_BIN" train --model cascade --data "$dir/data" --out "$dir/cascade" \
  --set "members=$dir/src/ft,$dir/src/llm" --set last_share=0.5 >/dev/null 2>"$dir/cascade.err" ||
  { cat "$dir/cascade.err"; fail "cascade train"; }

cut -f1 "$dir/data/test.txt" >"$dir/titles.txt"
"$NEWSCLS_BIN" predict --model-dir "$dir/cascade" --input "$dir/titles.txt" --output "$dir/c.jsonl"
"$NEWSCLS_BIN" predict --model-dir "$dir/src/ft" --input "$dir/titles.txt" --output "$dir/ft.jsonl"
"$NEWSCLS_BIN" eval --model-dir "$dir/cascade" --data "$dir/data" --out "$dir/eval/metrics.json" >/dev/null
# each cascade's answers (predict's JSONL) against fasttext's alone
same_as_fasttext() {
  python3 - "$1" "$dir/ft.jsonl" <<'PY'
import json, sys
cascade = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
ft = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
assert all(p["stage"] == "fasttext" and "failed" not in p for p in cascade), [p for p in cascade if p["stage"] != "fasttext"][:3]
assert [p["label"] for p in cascade] == [p["label"] for p in ft]
PY
}
same_as_fasttext "$dir/c.jsonl" || fail "unknown LLM answers did not keep fasttext's"
python3 - "$dir/eval/metrics.json" <<'PY' || fail "unknown LLM answers credited to the LLM"
import json, sys
j = json.load(open(sys.argv[1]))
unknown = j["run_stats"]["members"][1]["run_stats"]["unknown_replies"]
assert unknown > 0, j["run_stats"]                  # titles did reach the LLM
stages = {s["name"]: s for s in j["stages"]}
assert set(stages) == {"fasttext"} and stages["fasttext"]["answered"] == 200, j["stages"]
assert j["run_stats"]["members"][1]["answered"] == 0, j["run_stats"]
PY
# The LLM member has no calibration (skipped: each dev title would be a call), so the cascade
# does not call itself calibrated; and calibrate= is refused for a cascade, which fits none.
python3 - "$dir/cascade/manifest.json" "$dir/eval/metrics.json" <<'PY' || fail "cascade with an uncalibrated member called calibrated"
import json, sys
m, j = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert m["training"]["uncalibrated_members"] == ["llm"] and m["training"]["calibrated"] is False, m["training"]
assert j["calibrated"] is False, j["calibrated"]
PY
expect_exit 1 "$dir/c2.err" "$NEWSCLS_BIN" train --model cascade --data "$dir/data" --out "$dir/c2" \
  --set "members=$dir/src/ft,$dir/src/llm" --set calibrate=false
assert_contains "$dir/c2.err" "config key 'calibrate': a cascade answers with its members' calibrated probabilities"
[ ! -e "$dir/c2" ] || fail "a refused cascade left a bundle"

# The LLM alone on 40 dev titles (answered) and 40 test titles ("unknown"): its risk-coverage
# curve covers the answered half, not an error at full coverage.
{ head -40 "$dir/data/dev.txt"; head -40 "$dir/data/test.txt"; } >"$dir/mixed.txt"
"$NEWSCLS_BIN" eval --model-dir "$dir/src/llm" --data "$dir/data" --input "$dir/mixed.txt" \
  --out "$dir/llm_eval/metrics.json" >/dev/null 2>&1 || fail "llm eval"
python3 - "$dir/llm_eval/metrics.json" <<'PY' || fail "risk-coverage counted unknown answers as answered"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["unknown"] == 40, j["unknown"]
curve = j["risk_coverage"]
assert abs(curve[-1]["coverage"] - 0.5) < 1e-9 and curve[-1]["accuracy"] == 1.0, curve[-3:]
PY

"$NEWSCLS_BIN" train --model cascade --data "$dir/data" --out "$dir/last" --set "members=$dir/src/ft,$dir/src/llm" \
  --set last_share=0.5 --set combine=last >/dev/null 2>"$dir/last.err" || { cat "$dir/last.err"; fail "cascade train, combine=last"; }
"$NEWSCLS_BIN" train --model cascade --data "$dir/data" --out "$dir/middle" --set "members=$dir/src/ft,$dir/src/llm,$dir/src/ft2" \
  --set combine=last >/dev/null 2>"$dir/middle.err" || { cat "$dir/middle.err"; fail "cascade train, an LLM in the middle"; }
stop_llm_server
# The outage: predict stopped (exit 1) once a batch's LLM titles all failed.
"$NEWSCLS_BIN" predict --model-dir "$dir/cascade" --input "$dir/titles.txt" --output "$dir/down.jsonl" 2>"$dir/down.err" ||
  { cat "$dir/down.err" >&2; fail "a cascade (combine=product) stopped for an LLM outage"; }
same_as_fasttext "$dir/down.jsonl" || fail "titles the LLM failed did not keep fasttext's answers"
assert_contains "$dir/down.err" "got no answer from the LLM and are predicted by the cascade's earlier members"
"$NEWSCLS_BIN" eval --model-dir "$dir/cascade" --data "$dir/data" --out "$dir/eval_down/metrics.json" >"$dir/eval_down.out" \
  2>"$dir/eval_down.err" || { cat "$dir/eval_down.err" >&2; fail "eval of a cascade (combine=product) during an LLM outage"; }
grep -q "failed_titles [1-9]" "$dir/eval_down.out" || { cat "$dir/eval_down.out" >&2; fail "eval did not say the LLM failed titles"; }
assert_contains "$dir/eval_down.err" "and these figures count them so"
"$NEWSCLS_BIN" predict --model-dir "$dir/middle" --input "$dir/titles.txt" --output "$dir/middle.jsonl" 2>"$dir/middle_down.err" ||
  { cat "$dir/middle_down.err" >&2; fail "a cascade with the LLM before its last member stopped for an LLM outage"; }
python3 - "$dir/middle.jsonl" "$dir/middle/manifest.json" <<'PY' || fail "titles the middle LLM failed did not reach the last member"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
shares = json.load(open(sys.argv[2]))["training"]["dev_shares"]
assert shares[1] > 0, shares                                   # the LLM answers dev titles
assert len(lines) == 200 and all("failed" not in p and p["stage"] != "llm" for p in lines), lines[:3]
PY
expect_exit 1 "$dir/last_down.err" "$NEWSCLS_BIN" predict --model-dir "$dir/last" --input "$dir/titles.txt" --output "$dir/last.jsonl"
assert_contains "$dir/last_down.err" "titles in a row failed"
echo "test_cascade_unknown: ok"
