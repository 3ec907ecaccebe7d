#!/usr/bin/env bash
# eval writes metrics.json and files beside it (predictions.tsv, svgs): it refuses, before any
# work (exit 2), to write one over a file it reads, however named (a hard or symbolic link):
# the labelled input, the bundle's manifest.json or a payload; and an --out that is a folder.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
data="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
"$NEWSCLS_BIN" train --model fasttext --data "$data" --out "$dir/ft" --set epochs=1 >/dev/null 2>"$dir/err" \
  || { cat "$dir/err" >&2; fail "fasttext training on the tiny fixture"; }
cp "$data/test.txt" "$dir/x.txt"
cp -r "$dir/ft" "$dir/ft.orig"

refused() {  # KEPT-FILE ORIGINAL EVAL-ARGS...: exit 2 and KEPT-FILE still as ORIGINAL
  local kept=$1 original=$2
  shift 2
  expect_exit 2 "$dir/err" "$NEWSCLS_BIN" eval --model-dir "$dir/ft" "$@"
  assert_contains "$dir/err" "name another --out"
  cmp -s "$kept" "$original" || fail "$kept was overwritten: eval $*"
}
refused "$dir/x.txt" "$data/test.txt" --input "$dir/x.txt" --out "$dir/x.txt"
ln "$dir/x.txt" "$dir/hard.txt"
refused "$dir/x.txt" "$data/test.txt" --input "$dir/x.txt" --out "$dir/hard.txt"
ln -s x.txt "$dir/soft.txt"
refused "$dir/x.txt" "$data/test.txt" --input "$dir/soft.txt" --out "$dir/x.txt"
refused "$dir/ft/manifest.json" "$dir/ft.orig/manifest.json" --data "$data" --out "$dir/ft/manifest.json"
refused "$dir/ft/fasttext.bin" "$dir/ft.orig/fasttext.bin" --data "$data" --out "$dir/ft/fasttext.bin"
# Another bundle's files (a cascade's members are bundles inside its folder) are refused too.
cp -r "$dir/ft.orig" "$dir/ft.keep"
refused "$dir/ft.orig/manifest.json" "$dir/ft.keep/manifest.json" --data "$data" --out "$dir/ft.orig/manifest.json"
refused "$dir/ft.orig/fasttext.bin" "$dir/ft.keep/fasttext.bin" --data "$data" --out "$dir/ft.orig/fasttext.bin"
# A side file: predictions.tsv goes next to metrics.json.
mkdir "$dir/d" && cp "$data/test.txt" "$dir/d/predictions.tsv"
refused "$dir/d/predictions.tsv" "$data/test.txt" --input "$dir/d/predictions.tsv" --out "$dir/d/metrics.json"

# A folder as --out is refused before anything is written beside it.
mkdir "$dir/o" "$dir/o/adir"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" eval --model-dir "$dir/ft" --input "$dir/x.txt" --out "$dir/o/adir"
assert_contains "$dir/err" "eval --out $dir/o/adir is a folder"
[[ ! -e "$dir/o/predictions.tsv" ]] || fail "eval wrote predictions.tsv before refusing a folder as --out"

"$NEWSCLS_BIN" eval --model-dir "$dir/ft" --input "$dir/x.txt" --out "$dir/e/metrics.json" >/dev/null 2>"$dir/err" \
  || { cat "$dir/err" >&2; fail "eval into a folder of its own"; }
[[ -f "$dir/e/predictions.tsv" ]] || fail "no predictions.tsv beside metrics.json"
# predictions.tsv names each title's line in the file: a blank line and a skipped bad one do
# not shift it (its first column counted titles). train captions its figures as eval does.
{ sed -n 1p "$data/test.txt"; echo; sed -n 2p "$data/test.txt"; printf 'no label here\n'; sed -n 3p "$data/test.txt"; } >"$dir/gaps.txt"
"$NEWSCLS_BIN" eval --model-dir "$dir/ft" --input "$dir/gaps.txt" --out "$dir/g/metrics.json" --skip-bad-lines \
  >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "eval of a file with gaps"; }
assert_eq "line 1 3 5" "$(cut -f1 "$dir/g/predictions.tsv" | tr '\n' ' ' | sed 's/ $//')" "predictions.tsv's first column"
assert_eq "$(sed -n 3p "$data/test.txt" | cut -f1)" "$(sed -n 4p "$dir/g/predictions.tsv" | cut -f5)" "the title of line 5"
assert_contains "$dir/ft/confusion.svg" "fasttext (ft) on test.txt"
# Inside a bundle, eval writes at its top or in dev/ only: files in another subfolder made the
# bundle one that retraining refused to replace.
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" eval --model-dir "$dir/ft" --input "$dir/x.txt" --out "$dir/ft/sub/metrics.json"
assert_contains "$dir/err" "lies in a subfolder of the model bundle"
[[ ! -e "$dir/ft/sub" ]] || fail "eval wrote into a subfolder of the bundle before refusing"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" eval --model-dir "$dir/ft" --input "$dir/x.txt" --out "$dir/ft/nosuch/../metrics.json"
assert_contains "$dir/err" "does not exist, so the '..' after it cannot be followed"
[[ ! -e "$dir/ft/nosuch" ]] || fail "eval left an empty folder in the bundle"
"$NEWSCLS_BIN" eval --model-dir "$dir/ft" --input "$dir/x.txt" --out "$dir/ft/dev/metrics.json" >/dev/null 2>"$dir/err" \
  || { cat "$dir/err" >&2; fail "eval into the bundle's dev/"; }
echo "test_eval_outputs: ok"
