#!/usr/bin/env bash
# ctest-labels: bert-training
# compress --method distill on an imported Hugging Face classifier (bert-tiny-cls): a 1-layer
# student initialised from the teacher, with the attention term and extra unlabelled titles,
# that info, eval and predict use like any bundle; an unknown --set key is refused naming it; a
# bundle older than a config key, or folding punctuation, is distilled as predict reads it.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hf_lib.sh"
dir=$(scratch)
bin=$NEWSCLS_BIN
hf_folder bert-tiny-cls "$dir/hf-cls"
make_slice "$dir/data" 200 10
"$bin" import-hf --hf-dir "$dir/hf-cls" --out "$dir/teacher" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "import-hf"; }
head -n 20 "$(demo_data_dir)/test.txt" | cut -f1 >"$dir/unlabelled.txt"

"$bin" compress --model-dir "$dir/teacher" --method distill --out "$dir/student" --data "$dir/data/" --threads 1 \
  --set layers=1 --set init=teacher --set attention_weight=1 --set max_steps=3 --unlabelled "$dir/unlabelled.txt" \
  --speed-titles 20 >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "compress --method distill"; }
c="$dir/student/compression.json"
assert_eq 1 "$(json_get "$c" 'j["settings"]["layers"]')" "student layers"
assert_eq 20 "$(json_get "$c" 'j["facts"]["unlabelled_titles"]')" "unlabelled titles used"
assert_eq "1 $dir/data" "$(json_get "$c" '"%s %s" % (j["seed"], j["data"])')" "the seed and data a rerun needs"
assert_eq True "$(json_get "$c" 'j["after"]["parameters"] < j["before"]["parameters"]')" "fewer parameters"
assert_eq True "$(json_get "$c" '0 <= j["after"]["test"]["accuracy"] <= 1')" "test accuracy measured"
# The manifest's test figures (info, serve) are the student's, not missing or its source's.
assert_eq "$(json_get "$c" 'j["after"]["test"]["accuracy"]')" \
  "$(json_get "$dir/student/manifest.json" 'j["training"]["test_accuracy"]')" "the student's manifest test accuracy"
"$bin" info --model-dir "$dir/student" >"$dir/info.json" || fail "info on the student"
assert_eq 1 "$(json_get "$dir/info.json" 'j["config"]["layers"]')" "info: layers"
printf '%s\n' "央行宣布下调存款准备金率" "湖人客场击败勇士" >"$dir/two.txt"
"$bin" predict --model-dir "$dir/student" --input "$dir/two.txt" --output "$dir/pred.jsonl" 2>/dev/null || fail "predict"
assert_eq 2 "$(wc -l <"$dir/pred.jsonl")" "predictions of the student"

expect_exit 1 "$dir/err" "$bin" compress --model-dir "$dir/teacher" --method distill --out "$dir/bad" \
  --data "$dir/data" --threads 1 --set alpah=0.5
assert_contains "$dir/err" "alpah"
[[ ! -e "$dir/bad/manifest.json" ]] || fail "a refused compress left a bundle"
# --out naming the source however spelt (a trailing slash, "x/.."), or inside it, is refused.
for out in "$dir/teacher/" "$dir/teacher/sub/.." "$dir/teacher/student"; do
  expect_exit 2 "$dir/err" "$bin" compress --model-dir "$dir/teacher" --method distill --out "$out" --data "$dir/data" --threads 1
  assert_contains "$dir/err" "apart from --model-dir"
done
"$bin" info --model-dir "$dir/teacher" >/dev/null || fail "the source bundle was touched"
# A bundle older than the n-gram table keys (absent: no tables) is read as predict reads it:
# distill put today's default bigram table under it, and the teacher's weights did not fit.
cp -r "$dir/teacher" "$dir/old"
python3 - "$dir/old/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1], encoding="utf-8"))
assert m["config"]["bigram_buckets"] == 0 and m["config"]["trigram_buckets"] == 0, m["config"]
del m["config"]["bigram_buckets"], m["config"]["trigram_buckets"]
json.dump(m, open(sys.argv[1], "w", encoding="utf-8"), ensure_ascii=False)
PY
"$bin" predict --model-dir "$dir/old" --input "$dir/unlabelled.txt" --output "$dir/old.jsonl" 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "predict with the older bundle"; }
"$bin" compress --model-dir "$dir/old" --method distill --out "$dir/student_old" --data "$dir/data" --threads 1 \
  --set layers=1 --set max_steps=3 --speed-titles 20 >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "distill the older bundle"; }
assert_eq 0 "$(json_get "$dir/student_old/manifest.json" 'j["config"]["bigram_buckets"]')" "the student of the older bundle: no bigram table"
# A bundle that folds punctuation is read folding, as predict reads it: a student on hard labels
# (alpha 0) learnt the same weights from a folding teacher and from its copy that does not fold.
"$bin" train --model bert --data "$dir/data" --out "$dir/fold" --threads 1 --set layers=1 --set hidden=16 --set heads=2 \
  --set ff=32 --set max_len=32 --set bigram_buckets=64 --set pretrain_epochs=0 --set max_steps=2 \
  --set fold_punctuation=true >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "train a folding bert"; }
cp -r "$dir/fold" "$dir/nofold"
python3 - "$dir/nofold/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1], encoding="utf-8"))
m["config"]["fold_punctuation"] = False
json.dump(m, open(sys.argv[1], "w", encoding="utf-8"), ensure_ascii=False)
PY
for teacher in fold nofold; do
  "$bin" compress --model-dir "$dir/$teacher" --method distill --out "$dir/student_$teacher" --data "$dir/data" --threads 1 \
    --set layers=1 --set alpha=0 --set max_steps=3 --speed-titles 20 >/dev/null 2>"$dir/err" ||
    { cat "$dir/err" >&2; fail "distill the $teacher bundle"; }
done
cmp -s "$dir/student_fold/weights.bin" "$dir/student_nofold/weights.bin" && fail "distill ignored the teacher's fold_punctuation"
# A pruned teacher (layers with different head counts): the student takes the widths it is
# given, not the teacher's head layout, and with soft labels it joins no titles.
"$bin" compress --model-dir "$dir/teacher" --method prune --out "$dir/pruned" --data "$dir/data" --threads 1 \
  --set prune_heads=1 --speed-titles 20 >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "compress --method prune"; }
assert_eq "$(json_get "$dir/pruned/compression.json" 'j["after"]["test"]["accuracy"]')" \
  "$(json_get "$dir/pruned/manifest.json" 'j["training"]["test_accuracy"]')" "the pruned bundle's manifest test accuracy"
# Its attention page counts each layer's own heads (it said "4 heads" for [4, 3]).
echo "央行宣布下调存款准备金率" >"$dir/one.txt"
"$bin" attention --model-dir "$dir/pruned" --input "$dir/one.txt" --out "$dir/attn" >/dev/null 2>&1 || fail "attention on the pruned bundle"
heads=$(json_get "$dir/pruned/manifest.json" '", ".join(str(h) for h in j["config"]["heads_per_layer"])')
assert_contains "$dir/attn/0.html" "2 layers, heads $heads,"
# A dump replaces its own earlier files, never a user's file of the same name, nor trips on a
# folder there with a raw filesystem error.
"$bin" attention --model-dir "$dir/pruned" --input "$dir/one.txt" --out "$dir/attn" >/dev/null 2>&1 || fail "attention again"
mkdir -p "$dir/mine" "$dir/folder/0.json" && echo "my notes" >"$dir/mine/0.json"
expect_exit 1 "$dir/err" "$bin" attention --model-dir "$dir/pruned" --input "$dir/one.txt" --out "$dir/mine"
assert_contains "$dir/err" "was not written by an earlier dump"
assert_eq "my notes" "$(cat "$dir/mine/0.json")" "the user's own 0.json"
expect_exit 1 "$dir/err" "$bin" attention --model-dir "$dir/pruned" --input "$dir/one.txt" --out "$dir/folder"
assert_contains "$dir/err" "is a folder where the dump writes a file"
expect_exit 2 "$dir/err" "$bin" attention --model-dir "$dir/pruned" --input "$dir/one.txt" --out "$dir/nosuch/../att2"
assert_contains "$dir/err" "does not exist, so the '..' after it cannot be followed"
[[ ! -e "$dir/nosuch" ]] || fail "attention left an empty folder behind a '..'"
# A shorter dump removes the title files the longer one wrote beyond it, but not a folder of such
# a name (a dump writes files): the cleanup stopped half done on it, with a raw filesystem error.
"$bin" attention --model-dir "$dir/pruned" --input "$dir/two.txt" --out "$dir/attn2" >/dev/null 2>&1 || fail "attention of two titles"
rm "$dir/attn2/1.json" && mkdir "$dir/attn2/1.json"
"$bin" attention --model-dir "$dir/pruned" --input "$dir/one.txt" --out "$dir/attn2" >/dev/null 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "a shorter dump beside a folder named 1.json"; }
[[ -d "$dir/attn2/1.json" && ! -e "$dir/attn2/1.npy" && -f "$dir/attn2/0.npy" ]] || fail "the shorter dump's cleanup"
# eval --dump-attention checks before its work: no metrics are written beside a refused dump.
mkdir -p "$dir/u/attention" && echo "my notes" >"$dir/u/attention/0.json"
expect_exit 1 "$dir/err" "$bin" eval --model-dir "$dir/pruned" --input "$dir/data/test.txt" --out "$dir/u/metrics.json" --dump-attention 1
assert_contains "$dir/err" "was not written by an earlier dump"
[[ ! -e "$dir/u/metrics.json" ]] || fail "eval wrote its metrics before refusing the dump"
# An --out that is not a bundle is refused before the work (it was refused after it).
mkdir -p "$dir/notes" && echo keep >"$dir/notes/notes.txt"
expect_exit 1 "$dir/err" "$bin" compress --model-dir "$dir/teacher" --method prune --out "$dir/notes" --data "$dir/data" \
  --threads 1 --set prune_heads=1
assert_contains "$dir/err" "exists and is not a newscls bundle"
assert_not_contains "$dir/err" "compressing"
"$bin" compress --model-dir "$dir/pruned" --method distill --out "$dir/student2" --data "$dir/data" --threads 1 \
  --set layers=1 --set max_steps=3 --speed-titles 20 >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "distill from a pruned teacher"; }
assert_eq "[] 0.0" "$(json_get "$dir/student2/manifest.json" '"%s %s" % (j["config"].get("heads_per_layer", []), j["config"]["join_prob"])')" \
  "student head layout and joining"
# int8 keeps its source's training facts, but not its source's test figures in metrics.json.
"$bin" compress --model-dir "$dir/pruned" --method quantize --out "$dir/q8" --data "$dir/data" --threads 1 \
  --speed-titles 20 >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "compress --method quantize"; }
assert_eq False "$(json_get "$dir/q8/metrics.json" '"test_accuracy" in j["training"]')" \
  "the source's test accuracy in the int8 bundle's metrics.json"
# Its figures are captioned as its own ("bert (q8) on test.txt"), not its source's ("bert").
assert_contains "$dir/q8/confusion.svg" "bert (q8) on test.txt"
# --skip-bad-lines reaches the calibration and test evaluations (they stopped at the bad line
# the compression itself had skipped).
cp -r "$dir/data" "$dir/badline"
{ echo "a line without a tab"; cat "$dir/data/test.txt"; } >"$dir/badline/test.txt"
"$bin" compress --model-dir "$dir/pruned" --method quantize --out "$dir/q8skip" --data "$dir/badline" --threads 1 \
  --speed-titles 20 --skip-bad-lines >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "compress --skip-bad-lines"; }
assert_eq 1 "$(json_get "$dir/q8skip/metrics.json" 'j["skipped_lines"]')" "skipped lines of the test evaluation"
# SIGINT once the int8 bundle is written but before it is calibrated and reported on, over an
# existing bundle: exit 130, no unfinished bundle anywhere, and the one that was there as it was
# (it had been replaced, then removed). A staging folder of a run killed outright is removed.
make_slice "$dir/full" 200 100
cp -r "$dir/q8" "$dir/q8int"
before=$(sha256sum "$dir/q8int/manifest.json")
sleep 0 & dead=$!; wait "$dead"
mkdir -p "$dir/.q8int.compressing.$dead/q8int"
"$bin" compress --model-dir "$dir/pruned" --method quantize --out "$dir/q8int" --data "$dir/full" --threads 1 \
  >/dev/null 2>"$dir/int.err" &
pid=$!
staged() { [[ -e "$dir/.q8int.compressing.$pid/q8int/manifest.json" ]] || gone "$pid"; }
POLL_INTERVAL_S=0.02 wait_until 120 "compress to write the int8 bundle in its staging folder" staged  # a short window
kill -INT "$pid" 2>/dev/null || true  # a run that ended first fails below
set +e; wait "$pid"; rc=$?; set -e
assert_eq 130 "$rc" "compress's exit code after SIGINT"
assert_eq "$before" "$(sha256sum "$dir/q8int/manifest.json")" "the bundle at --out after an interrupted compress"
"$bin" info --model-dir "$dir/q8int" >/dev/null || fail "the bundle at --out no longer loads"
assert_contains "$dir/int.err" "$dir/q8int was left as it was"
left=$(cd "$dir" && ls -d .q8int.* 2>/dev/null || true)
assert_eq "" "$left" "staging folders left beside --out"
# Teachers: weights must be finite numbers (nan crashed the run after writing a bundle), and
# a teacher trained on the classes in another order is refused before any work.
expect_exit 1 "$dir/err" "$bin" compress --model-dir "$dir/teacher" --method distill --out "$dir/bad" --data "$dir/data" \
  --threads 1 --teacher "$dir/teacher" --teacher "$dir/pruned" --set teacher_weights=1,nan --set layers=1 --set max_steps=3
assert_contains "$dir/err" "teacher_weights"
expect_exit 1 "$dir/err" "$bin" compress --model-dir "$dir/teacher" --method distill --out "$dir/bad" --data "$dir/data" \
  --threads 1 --teacher "$dir/teacher" --teacher "$dir/pruned" --set teacher_weights=1x,1 --set layers=1 --set max_steps=3
assert_contains "$dir/err" "got '1x,1'"  # read as 1,1 before
cp -r "$dir/teacher" "$dir/reversed"
python3 - "$dir/reversed/manifest.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["labels"].reverse()
json.dump(j, open(sys.argv[1], "w"))
PY
expect_exit 2 "$dir/err" "$bin" compress --model-dir "$dir/teacher" --method distill --out "$dir/bad" --data "$dir/data" \
  --threads 1 --teacher "$dir/reversed" --set layers=1 --set max_steps=3
assert_contains "$dir/err" "teacher $dir/reversed was trained on other classes"
[[ ! -e "$dir/bad/manifest.json" ]] || fail "a refused compress left a bundle"
echo "ok"
