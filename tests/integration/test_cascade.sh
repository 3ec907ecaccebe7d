#!/usr/bin/env bash
# The cascade family through the real binary, with the loopback LLM server as last member:
# fasttext -> llm chained into one self-contained bundle, thresholds chosen on dev with at most
# 15% of titles reaching the LLM; eval reports each stage's share and the LLM calls; predict
# says which stage answered; the bundle works with its sources deleted.
source "$(dirname "$0")/lib.sh"
source "$NEWSCLS_SOURCE_DIR/tests/llm_server/lib.sh"
dir=$(scratch)
make_slice "$dir/data" 3000 40      # 400 dev and 400 test titles
start_llm_server "$dir" --truth "$dir/data/test.txt" --truth "$dir/data/dev.txt" --classes "$dir/data/class.txt"
export NEWSCLS_LLM_API_KEY=unused

cascade_members "$dir"
"$NEWSCLS_BIN" train --model fasttext --data "$dir/data" --out "$dir/other_ft" --threads 1 --seed 2 --set epochs=2 >/dev/null 2>&1 ||
  fail "a second fasttext bundle"
ft_acc=$(json_get "$dir/src/ft/metrics.json" "j['accuracy']")

# Two members of one family are told apart by their folders (both were "fasttext").
"$NEWSCLS_BIN" train --model cascade --data "$dir/data" --out "$dir/two_ft" --threads 1 \
  --set "members=$dir/other_ft,$dir/src/ft" >"$dir/two.out" 2>"$dir/two.err" || { cat "$dir/two.err" >&2; fail "two fasttext members"; }
assert_eq "['fasttext (other_ft)', 'fasttext (ft)']" "$(json_get "$dir/two_ft/manifest.json" "j['training']['stages']")" "stage names"
# No LLM member, no line of LLM calls (it said "requests sent (LLM calls) 0"; predict said nothing).
assert_contains "$dir/two.out" "answered  share"
if grep -q "requests sent" "$dir/two.out"; then fail "a cascade without an LLM printed its LLM calls"; fi

# The default members (fasttext,bert) are looked for next to --out: absent here, an error names
# the field and the member; then train with the LLM share capped.
expect_exit 1 "$dir/none.err" "$NEWSCLS_BIN" train --model cascade --data "$dir/data" --out "$dir/none"
assert_contains "$dir/none.err" "members"
assert_contains "$dir/none.err" "'fasttext' is no trained bundle"
expect_exit 1 "$dir/combine.err" "$NEWSCLS_BIN" train --model cascade --data "$dir/data" --out "$dir/bad" \
  --set "members=$dir/src/ft,$dir/src/llm" --set combine=mean
assert_contains "$dir/combine.err" "combine"
reset_llm_server
"$NEWSCLS_BIN" train --model cascade --data "$dir/data" --out "$dir/cascade" \
  --set "members=$dir/src/ft,$dir/src/llm" --set last_share=0.15 >"$dir/cascade.out" 2>"$dir/cascade.err" ||
  { cat "$dir/cascade.err"; fail "cascade train"; }
# The test figures count the test run's LLM calls alone; those made on dev to choose the
# thresholds are the training's "selection". train prints the per-stage table as eval does.
assert_contains "$dir/cascade.out" "requests sent (LLM calls)"
python3 - "$dir/cascade/metrics.json" "$(server_stat "j['requests']")" <<'PY' || fail "cascade train's LLM figures"
import json, sys
j, requests = json.load(open(sys.argv[1])), int(sys.argv[2])
selection, stats = j["training"]["selection"], j["run_stats"]
stages = {s["name"]: s for s in j["stages"]}
assert selection["requests_sent"] >= 390 and selection["cost_usd"] > 0, selection  # every dev title, once
assert stats["requests_sent"] == stages["llm"]["answered"] == stats["members"][1]["run_stats"]["titles"], (stats, stages)
assert stats["requests_sent"] + selection["requests_sent"] == requests, (stats, selection, requests)
PY
# Members must be distinct bundles, none of them a cascade (a nested one was copied without
# its own members), with no empty entry.
for members in "$dir/src/ft,,$dir/src/llm" "$dir/src/ft,$dir/src/ft/" "$dir/cascade,$dir/src/llm"; do
  expect_exit 1 "$dir/members.err" "$NEWSCLS_BIN" train --model cascade --data "$dir/data" --out "$dir/bad" --set "members=$members"
  grep -qE "empty entry|listed twice|is a cascade itself" "$dir/members.err" || { cat "$dir/members.err"; fail "members=$members"; }
done
[[ ! -e "$dir/bad" ]] || fail "a refused cascade was written"
m="$dir/cascade/manifest.json"
assert_eq cascade "$(json_get "$m" "j['family']")" "family"
assert_eq True "$(json_get "$m" "j['training']['dev_shares'][1] <= 0.15")" "dev share reaching the LLM"
assert_eq "['fasttext', 'llm']" "$(json_get "$m" "j['training']['stages']")" "stage names"

# Self-contained: the sources can go.
rm -rf "$dir/src"
reset_llm_server
"$NEWSCLS_BIN" eval --model-dir "$dir/cascade" --data "$dir/data" --out "$dir/eval/metrics.json" >"$dir/eval.out"
assert_contains "$dir/eval.out" "requests sent (LLM calls)"
# Its LLM member has no calibration (each dev title would be a call), so neither has the cascade.
assert_eq False "$(json_get "$dir/eval/metrics.json" "j['calibrated']")" "a cascade with an uncalibrated member"
expect_exit 2 "$dir/unc.err" "$NEWSCLS_BIN" eval --model-dir "$dir/cascade" --data "$dir/data" --uncalibrated --out "$dir/unc/metrics.json"
assert_contains "$dir/unc.err" "members"
python3 - "$dir/eval/metrics.json" "$ft_acc" "$(server_stat "j['requests']")" <<'PY' || fail "cascade eval figures"
import json, sys
j = json.load(open(sys.argv[1]))
ft_acc, requests = float(sys.argv[2]), int(sys.argv[3])
stages = {s["name"]: s for s in j["stages"]}
assert set(stages) == {"fasttext", "llm"}, stages
assert abs(sum(s["share"] for s in stages.values()) - 1) < 1e-9
assert 0 < stages["llm"]["share"] <= 0.25, stages        # 15% on dev; test is close
assert j["run_stats"]["requests_sent"] == stages["llm"]["answered"] == requests, (j["run_stats"], requests)
assert j["accuracy"] > ft_acc, (j["accuracy"], ft_acc)
PY

head -n 50 "$dir/data/test.txt" | cut -f1 >"$dir/titles.txt"  # not cut | head: pipefail sees SIGPIPE
"$NEWSCLS_BIN" predict --model-dir "$dir/cascade" --input "$dir/titles.txt" --output "$dir/p.jsonl"
python3 - "$dir/p.jsonl" <<'PY' || fail "predict stage field"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
assert len(lines) == 50 and all(p["stage"] in ("fasttext", "llm") for p in lines)
PY
"$NEWSCLS_BIN" info --model-dir "$dir/cascade" >"$dir/info.out" || fail "info"
assert_contains "$dir/info.out" "cascade"
# Its size counts the members' payloads, not cascade.json alone.
python3 - "$dir/info.out" "$dir/cascade" <<'PY' || fail "info bundle_bytes"
import json, os, sys
info, total = json.load(open(sys.argv[1])), 0
for root, _, files in os.walk(sys.argv[2]):
    if "manifest.json" in files:
        total += sum(os.path.getsize(os.path.join(root, p)) for p in json.load(open(os.path.join(root, "manifest.json")))["payloads"])
assert info["bundle_bytes"] == total and total > 1000, (info["bundle_bytes"], total)
PY
# cascade.json may not point outside its bundle, even with its checksum made right.
cp -r "$dir/cascade" "$dir/escape"
python3 - "$dir/escape" <<'PY'
import hashlib, json, sys
d = sys.argv[1]
c = json.load(open(f"{d}/cascade.json")); c["members"][0]["dir"] = "../other_ft"; c["members"][0].pop("manifest_sha256")
open(f"{d}/cascade.json", "w").write(json.dumps(c))
m = json.load(open(f"{d}/manifest.json"))
m["payloads"]["cascade.json"]["sha256"] = hashlib.sha256(open(f"{d}/cascade.json", "rb").read()).hexdigest()
json.dump(m, open(f"{d}/manifest.json", "w"))
PY
expect_exit 1 "$dir/escape.err" "$NEWSCLS_BIN" info --model-dir "$dir/escape"
assert_contains "$dir/escape.err" "member folder '../other_ft' is not inside the bundle"
# A member swapped for another valid bundle is refused, naming the cascade's payload and the member.
cp -r "$dir/cascade" "$dir/swapped"
rm -rf "$dir/swapped/members/0" && cp -r "$dir/other_ft" "$dir/swapped/members/0"
expect_exit 1 "$dir/swapped.err" "$NEWSCLS_BIN" info --model-dir "$dir/swapped"
assert_contains "$dir/swapped.err" "cascade.json"
assert_contains "$dir/swapped.err" "members/0: manifest.json is not the one this cascade was trained with"
# --fit-calibration on a member rewrote its manifest, and the cascade no longer loaded; on the
# cascade it stacked a second temperature on its members'.
expect_exit 2 "$dir/fit.err" "$NEWSCLS_BIN" eval --model-dir "$dir/cascade/members/0" --data "$dir/data" --split dev --fit-calibration
assert_contains "$dir/fit.err" "lies inside the bundle"
expect_exit 2 "$dir/fit.err" "$NEWSCLS_BIN" eval --model-dir "$dir/cascade" --data "$dir/data" --split dev --fit-calibration
assert_contains "$dir/fit.err" "its members' own"
"$NEWSCLS_BIN" info --model-dir "$dir/cascade" >/dev/null 2>"$dir/fit.err" || { cat "$dir/fit.err" >&2; fail "the cascade no longer verifies"; }
echo "test_cascade: ok"
