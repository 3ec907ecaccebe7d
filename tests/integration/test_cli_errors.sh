#!/usr/bin/env bash
# Usage errors exit 2; bad data exits 1 with one "error:" line naming path:line.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)

expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train --model no-such-family
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" predict --model-dir "$dir" --format xml
expect_exit 0 "$dir/err" "$NEWSCLS_BIN" --help
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" --log-level warn trian --model fasttext
assert_contains "$dir/err" "'trian' is no newscls subcommand"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" predict --model-dir "$dir" --output ""
assert_contains "$dir/err" "--output: an empty path"

mkdir -p "$dir/data"
cp "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny/"*.txt "$dir/data/"
printf 'good title\t1\nline without a tab\n' >"$dir/data/train.txt"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/data" --out "$dir/model"
assert_eq 1 "$(grep -c '^error:' "$dir/err")" "error lines"
assert_contains "$dir/err" "error: $dir/data/train.txt:2: no tab between title and label"
[[ ! -e "$dir/model" ]] || fail "a failed run left $dir/model"

printf 'x\t1\ny\t12\n' >"$dir/data/train.txt"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/data" --out "$dir/model"
assert_contains "$dir/err" "train.txt:2: label 12 out of range 0..2"

# class.txt: ids are line numbers, so a blank line among the names is an error, not skipped;
# a tab in a name would break the TSV outputs.
printf 'x\t1\n' >"$dir/data/train.txt"
cp "$dir/data/class.txt" "$dir/class.good"
printf 'a\n\nb\nc\n' >"$dir/data/class.txt"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/data" --out "$dir/model"
assert_contains "$dir/err" "class.txt:2: blank line among the class names"
printf 'a\nb\tc\nd\n\n' >"$dir/data/class.txt"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/data" --out "$dir/model"
assert_contains "$dir/err" "class.txt:2: class name holds a tab"
cp "$dir/class.good" "$dir/data/class.txt"

expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/missing"
assert_contains "$dir/err" "$dir/missing: no such data folder (named by --data)"
# A folder without class.txt, and a class.txt that is a folder, are told apart from a missing one.
mkdir -p "$dir/empty" "$dir/dirclass/class.txt"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/empty"
assert_contains "$dir/err" "$dir/empty: no class.txt in this data folder (named by --data)"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/dirclass"
assert_contains "$dir/err" "$dir/dirclass/class.txt: is a folder, not a file"
# info on a bundle's file (manifest.json, say) said "no such model directory".
mkdir -p "$dir/fake" && echo '{}' >"$dir/fake/manifest.json"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" info --model-dir "$dir/fake/manifest.json"
assert_contains "$dir/err" "$dir/fake/manifest.json: is a file, not a model directory"
# A mistyped $NEWSCLS_DATA is an error, not a fall-back to data/thucnews or the shared data.
NEWSCLS_DATA="$dir/typo" expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --out "$dir/model"
assert_contains "$dir/err" "$dir/typo: no such data folder (named by \$NEWSCLS_DATA)"

expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --set no_such_key=1
assert_contains "$dir/err" "config key 'no_such_key': unknown key"
assert_contains "$dir/err" "known keys: "  # what would have been accepted
assert_contains "$dir/err" "n_trees"
assert_contains "$dir/err" ", calibrate, "  # the workflow's key too
# pretrain refuses a family without an encoder before reading any data.
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" pretrain --model fasttext --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --out "$dir/enc"
assert_contains "$dir/err" "fasttext not in {bert}"  # --help lists only the families that pretrain
assert_not_contains "$dir/err" "pretraining a"
# A negative --threads gets a short message (CLI11 printed a range up to DBL_MAX).
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train --model fasttext --threads -1
assert_contains "$dir/err" "not in range 0 to 4096"
# A trailing blank line (and one between titles) is passed over, not "no tab".
mkdir -p "$dir/blank" && cp "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny/"*.txt "$dir/blank/"
printf '\n' >>"$dir/blank/train.txt" && sed -i '3s/^/\n/' "$dir/blank/dev.txt"
"$NEWSCLS_BIN" train --model fasttext --data "$dir/blank" --out "$dir/blank_ft" --threads 1 --set epochs=1 >/dev/null 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "train on files with blank lines"; }

expect_exit 1 "$dir/err" "$NEWSCLS_BIN" info --model-dir "$dir"
assert_contains "$dir/err" "not a newscls bundle"
# An --out that is not a bundle is refused before any training (it was refused after).
mkdir -p "$dir/notes" && echo keep >"$dir/notes/notes.txt"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model fasttext --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --out "$dir/notes"
assert_contains "$dir/err" "$dir/notes: exists and is not a newscls bundle"
assert_not_contains "$dir/err" "trained in"
assert_eq keep "$(cat "$dir/notes/notes.txt")" "the folder's file"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model fasttext --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --out "$dir/notes/notes.txt/m"
assert_contains "$dir/err" "$dir/notes/notes.txt is not a directory"
assert_not_contains "$dir/err" "trained in"
# A "_" key documents a config file; on the command line it is an unknown key, not ignored.
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --set _n_trees=1
assert_contains "$dir/err" "config key '_n_trees': unknown key"

# Options a family would ignore are refused.
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train --model fasttext --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --out "$dir/x" --init "$dir"
assert_contains "$dir/err" "--init"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train --model fasttext --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --out "$dir/x" --resume
assert_contains "$dir/err" "--resume: family 'fasttext' keeps no checkpoints"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --out "$dir/x" --device cuda
assert_contains "$dir/err" "cuda not in {cpu}"  # this build's LibTorch has no CUDA: not offered

# A family without attention is refused before eval or attention writes anything.
tiny="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
"$NEWSCLS_BIN" train --model fasttext --data "$tiny" --out "$dir/ft" --threads 1 --set epochs=2 >/dev/null 2>&1 || fail "fasttext on tiny"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" eval --model-dir "$dir/ft" --data "$tiny" --dump-attention 2 --out "$dir/att/metrics.json"
assert_contains "$dir/err" "no attention weights"
[[ ! -e "$dir/att" ]] || fail "a refused eval wrote $dir/att"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" eval --model-dir "$dir/ft" --data "$tiny" --dump-attention -3
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" attention --model-dir "$dir/ft" --input "$tiny/test.txt" --out "$dir/attn"
[[ ! -e "$dir/attn" ]] || fail "a refused attention made $dir/attn"
# predict --output creates its folder, as eval --out does.
"$NEWSCLS_BIN" predict --model-dir "$dir/ft" --input "$tiny/test.txt" --output "$dir/new/sub/p.jsonl" 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "predict into a new folder"; }
assert_eq "$(wc -l <"$tiny/test.txt")" "$(wc -l <"$dir/new/sub/p.jsonl")" "predictions in a new folder"
# Training again into a bundle replaces what newscls wrote there (an eval's dev/ too), but a
# bundle holding the user's own files is refused: replacing the folder would delete them.
"$NEWSCLS_BIN" eval --model-dir "$dir/ft" --data "$tiny" --split dev --out "$dir/ft/dev/metrics.json" >/dev/null 2>&1 || fail "eval into dev/"
"$NEWSCLS_BIN" train --model fasttext --data "$tiny" --out "$dir/ft" --threads 1 --set epochs=2 >/dev/null 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "train over a bundle with dev/"; }
echo keep >"$dir/ft/mynotes.txt" && mkdir "$dir/ft/mine"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model fasttext --data "$tiny" --out "$dir/ft" --threads 1 --set epochs=2
assert_contains "$dir/err" "holds files a new bundle would not keep (mine/, mynotes.txt)"
assert_eq keep "$(cat "$dir/ft/mynotes.txt")" "the user's file in the bundle"
rm -r "$dir/ft/mynotes.txt" "$dir/ft/mine"
# Inside dev/ and attention/ only eval's and a dump's files count as newscls's: in attention/,
# those its index (dumps.json) says a dump wrote, and its staging folder (.dumping.<pid>).
# 012.json, 5.json with no index, and .dumping.mine/ were taken for a dump's and would have gone
# with the bundle (the dump itself refused to replace them).
mkdir -p "$dir/ft/attention/.dumping.mine" "$dir/ft/dev" && echo keep >"$dir/ft/dev/notes.txt"
for file in notes.txt 012.json 5.json; do echo keep >"$dir/ft/attention/$file"; done
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model fasttext --data "$tiny" --out "$dir/ft" --threads 1 --set epochs=2
assert_contains "$dir/err" "(attention/.dumping.mine/, attention/012.json, attention/5.json, attention/notes.txt, dev/notes.txt)"
rm -r "$dir/ft/dev" "$dir/ft/attention"
# A folder whose manifest.json is not newscls's (another program's) is not a bundle to replace.
mkdir -p "$dir/app/src" && echo '{"name":"my-web-app"}' >"$dir/app/manifest.json" && echo keep >"$dir/app/src/index.js"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model fasttext --data "$tiny" --out "$dir/app" --threads 1 --set epochs=2
assert_contains "$dir/err" "holds files a new bundle would not keep (src/)"
assert_eq keep "$(cat "$dir/app/src/index.js")" "another program's file"
# A bundle whose manifest newscls cannot read (newer, broken) beside other files is not guessed at.
cp -r "$dir/blank_ft" "$dir/broken_ft" && head -c 50 "$dir/blank_ft/manifest.json" >"$dir/broken_ft/manifest.json"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model fasttext --data "$tiny" --out "$dir/broken_ft" --threads 1 --set epochs=2
assert_contains "$dir/err" "newscls cannot read its manifest.json"
# A bundle folder that happens to be named attention/ is retrained like any other.
for _ in 1 2; do
  "$NEWSCLS_BIN" train --model fasttext --data "$tiny" --out "$dir/r/attention" --threads 1 --set epochs=2 >/dev/null 2>"$dir/err" ||
    { cat "$dir/err" >&2; fail "train into a bundle named attention"; }
done
# predict --output through a link to another bundle's payload is refused (it replaced it).
ln -s "$dir/blank_ft/fasttext.bin" "$dir/link.bin"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" predict --model-dir "$dir/ft" --input "$tiny/test.txt" --output "$dir/link.bin"
assert_contains "$dir/err" "is a file of a model bundle"
"$NEWSCLS_BIN" info --model-dir "$dir/blank_ft" >/dev/null 2>&1 || fail "predict wrote through a link into a bundle"
# Nor a bundle's other files: its metrics.json and predictions.tsv were replaced without a word.
cp "$dir/blank_ft/metrics.json" "$dir/metrics.before"
for name in metrics.json predictions.tsv new.jsonl sub/p.jsonl; do
  expect_exit 2 "$dir/err" "$NEWSCLS_BIN" predict --model-dir "$dir/ft" --input "$tiny/test.txt" --output "$dir/blank_ft/$name"
  assert_contains "$dir/err" "is inside the model bundle"
done
# Another program's manifest.json makes no bundle: predict writes beside it.
mkdir -p "$dir/webapp" && echo '{"name": "my-web-app"}' >"$dir/webapp/manifest.json"
"$NEWSCLS_BIN" predict --model-dir "$dir/ft" --input "$tiny/test.txt" --output "$dir/webapp/p.jsonl" 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "predict beside another program's manifest.json"; }
cmp -s "$dir/metrics.before" "$dir/blank_ft/metrics.json" || fail "predict replaced a bundle's metrics.json"
# --data "" (an unset variable) is refused, not read as "look elsewhere".
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train --model fasttext --data "" --out "$dir/x"

# Numbers out of range are usage errors, not wrapped (--seed -1 was 2^64-1) or ignored
# (--min-score nan turned abstention off).
for args in "predict --model-dir $dir/ft --min-score nan" "eval --model-dir $dir/ft --data $tiny --min-score nan" \
            "predict --model-dir $dir/ft --min-score 1.5" "train --model fasttext --data $tiny --out $dir/s --seed -1" \
            "train --model fasttext --data $tiny --out $dir/s --seed 18446744073709551616"; do
  # shellcheck disable=SC2086
  expect_exit 2 "$dir/err" "$NEWSCLS_BIN" $args </dev/null
done
[[ ! -e "$dir/s" ]] || fail "a refused --seed trained"

# A manifest listing a label twice is refused.
cp -r "$dir/ft" "$dir/ft2"
python3 - "$dir/ft2/manifest.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["labels"][1] = j["labels"][0]
json.dump(j, open(sys.argv[1], "w"))
PY
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" info --model-dir "$dir/ft2"
assert_contains "$dir/err" "is empty or listed twice"

# info checks a bundle's calibration as predict would.
python3 - "$dir/ft/manifest.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["training"]["calibration"] = {"temperature": 1e308, "floor": 1e-6}
json.dump(j, open(sys.argv[1], "w"))
PY
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" info --model-dir "$dir/ft"
assert_contains "$dir/err" "training.calibration needs a temperature in (0, 100]"
# A class no training title has is warned of; a min_df that leaves no features is an error
# (both trained a bundle without a word: the second answered one class for every title).
mkdir -p "$dir/gap" && cp "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny/"*.txt "$dir/gap/"
awk -F'\t' '$2 != 2' "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny/train.txt" >"$dir/gap/train.txt"
"$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/gap" --out "$dir/gap-model" --set n_trees=2 >/dev/null 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "training without class 2"; }
assert_contains "$dir/err" "no training title of class $(sed -n 3p "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny/class.txt") (2)"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/gap" --out "$dir/nofeat" --set min_df=100000
assert_contains "$dir/err" "config key 'min_df': no n-gram occurs in 100000 training titles"
# --unlabeled is one option in every command; compress's old spelling --unlabelled still works
# for a release, with a warning, and both at once are refused before any work.
echo 央行宣布降准 >"$dir/feed.txt"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" adapt --model-dir "$dir/ft" --unlabeled "$dir/feed.txt" --unlabelled "$dir/feed.txt" --out "$dir/a"
assert_contains "$dir/err" "adapt --unlabelled is the old name of --unlabeled"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" adapt --model-dir "$dir/missing" --unlabelled "$dir/feed.txt" --out "$dir/a"
assert_contains "$dir/err" "adapt --unlabelled is now --unlabeled"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" adapt --model-dir "$dir/ft" --out "$dir/a"
assert_contains "$dir/err" "--unlabeled is required"
echo "test_cli_errors: ok"
