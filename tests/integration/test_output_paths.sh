#!/usr/bin/env bash
# How outputs are named and written: a failed write of stdout fails the command; eval --out
# through a link protects the file it names and puts its files beside that file; an output
# spelt as a folder ("x/") is refused before the work; a legal name too long for ".tmp.<pid>"
# is written, and written again; train --out through a link keeps the link, a link is read
# against its real folder, a loop of links is an error; a UTF-16 data file is named as such;
# a relative --out in folders not made yet is written.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
data="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
"$NEWSCLS_BIN" train --model fasttext --data "$data" --out "$dir/ft" --set epochs=1 >/dev/null 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "fasttext"; }
"$NEWSCLS_BIN" train --model tfidf-rf --data "$data" --out "$dir/tf" --set n_trees=2 >/dev/null 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "tfidf-rf"; }

# A relative --out whose folders do not exist yet, from a folder with nothing in it (the
# writability probe looked for "runs" itself and failed with "No such file or directory").
mkdir -p "$dir/cwd"
(cd "$dir/cwd" && "$NEWSCLS_BIN" train --model tfidf-rf --data "$data" --out runs/new/tf --set n_trees=2) >/dev/null 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "train --out runs/new/tf from an empty folder"; }
[[ -f "$dir/cwd/runs/new/tf/manifest.json" ]] || fail "no bundle at runs/new/tf"
# ... but a link to a folder that is gone (an unmounted disk) is refused before the work.
ln -s "$dir/unmounted" "$dir/cwd/gone"
(cd "$dir/cwd" && "$NEWSCLS_BIN" train --model tfidf-rf --data "$data" --out gone/tf --set n_trees=2) >/dev/null 2>"$dir/err" &&
  fail "train --out through a dangling link succeeded"
assert_contains "$dir/err" "gone/tf: cannot be written: gone is a link to nothing"
assert_not_contains "$dir/err" "trained in"

# info's JSON to a full device (exit 0 with nothing written before).
set +e
"$NEWSCLS_BIN" info --model-dir "$dir/ft" >/dev/full 2>"$dir/err"
code=$?
set -e
assert_eq 1 "$code" "info > /dev/full"
assert_contains "$dir/err" "standard output: write failed: No space left on device"

# eval --out /dev/stdout: the stream is the metrics JSON alone (the printed report followed
# it); with stdout redirected to the --out file, that file is the JSON (the two overlapped).
"$NEWSCLS_BIN" eval --model-dir "$dir/ft" --data "$data" --out /dev/stdout 2>"$dir/err" >"$dir/stdout.json" ||
  { cat "$dir/err" >&2; fail "eval --out /dev/stdout"; }
json_get "$dir/stdout.json" "j['accuracy']" >/dev/null || fail "eval --out /dev/stdout > FILE is no JSON"
"$NEWSCLS_BIN" eval --model-dir "$dir/ft" --data "$data" --out /dev/stdout 2>"$dir/err" | cat >"$dir/piped.json"
json_get "$dir/piped.json" "j['accuracy']" >/dev/null || fail "eval --out /dev/stdout through a pipe is no JSON"
assert_contains "$dir/err" "accuracy"
"$NEWSCLS_BIN" eval --model-dir "$dir/ft" --data "$data" --out "$dir/same.json" >"$dir/same.json" 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "eval --out F > F"; }
json_get "$dir/same.json" "j['accuracy']" >/dev/null || fail "eval --out F > F left no JSON in F"
assert_contains "$dir/err" "fasttext on "  # the report: it was lost with the file's old inode

# eval --out LINK to another bundle's payload (it replaced forest.bin, exit 0).
mkdir -p "$dir/links" && ln -s ../tf/forest.bin "$dir/links/m.json"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" eval --model-dir "$dir/ft" --data "$data" --out "$dir/links/m.json"
assert_contains "$dir/err" "a file of a model bundle"
"$NEWSCLS_BIN" info --model-dir "$dir/tf" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "the forest no longer verifies"; }
# A link to a metrics file elsewhere: the files beside it go beside the file it names.
mkdir -p "$dir/res" && ln -s ../res/m.json "$dir/links/r.json"
"$NEWSCLS_BIN" eval --model-dir "$dir/ft" --data "$data" --out "$dir/links/r.json" >/dev/null 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "eval --out through a link"; }
[[ -L "$dir/links/r.json" && -f "$dir/res/m.json" && -f "$dir/res/predictions.tsv" ]] || fail "eval's files are not beside the linked file"
[[ ! -e "$dir/links/predictions.tsv" ]] || fail "predictions.tsv went beside the link"

# An output spelt as a folder that does not exist (it was made, then refused after the work).
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" eval --model-dir "$dir/ft" --data "$data" --out "$dir/new/"
assert_contains "$dir/err" "ends in '/', so it names a folder"
cut -f1 "$data/test.txt" >"$dir/titles.txt"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" predict --model-dir "$dir/ft" --input "$dir/titles.txt" --output "$dir/new/"
[[ ! -e "$dir/new" ]] || fail "a refused output made the folder $dir/new"

# A name of 250 bytes is legal; "<name>.tmp.<pid>" is not (it was "File name too long").
long=$(printf 'a%.0s' $(seq 244)).jsonl
"$NEWSCLS_BIN" predict --model-dir "$dir/ft" --input "$dir/titles.txt" --output "$dir/$long" 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "predict to a 250-byte name"; }
assert_eq "$(wc -l <"$dir/titles.txt")" "$(wc -l <"$dir/$long")" "lines written under the long name"

# train --out LINK: the bundle it names is replaced, the link kept (it became a folder, and
# the old bundle stayed where the link pointed).
ln -s tf "$dir/latest"
"$NEWSCLS_BIN" train --model fasttext --data "$data" --out "$dir/latest" --set epochs=1 >/dev/null 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "train through a link"; }
[[ -L "$dir/latest" ]] || fail "the link was replaced by a folder"
assert_eq fasttext "$(json_get "$dir/tf/manifest.json" 'j["family"]')" "the family of the bundle the link names"

# Again into the same long name: the old bundle was moved aside as "<name>.old.<pid>", too long.
longb=$(printf 'b%.0s' $(seq 250))
for run in 1 2; do
  "$NEWSCLS_BIN" train --model fasttext --data "$data" --out "$dir/$longb" --set epochs=1 >/dev/null 2>"$dir/err" ||
    { cat "$dir/err" >&2; fail "train into a 250-byte name, run $run"; }
done
# A link read against its real folder: s -> real/sub and s/latest -> ../bundles/b1 name
# real/bundles/b1 (the bundle was written to ./bundles/b1, a folder nobody named).
mkdir -p "$dir/real/sub" "$dir/real/bundles" && cp -r "$dir/ft" "$dir/real/bundles/b1"
ln -s real/sub "$dir/s" && ln -s ../bundles/b1 "$dir/real/sub/latest"
(cd "$dir" && "$NEWSCLS_BIN" train --model tfidf-rf --data "$data" --out s/latest --set n_trees=2 >/dev/null 2>err) ||
  { cat "$dir/err" >&2; fail "train through a link in a linked folder"; }
assert_eq tfidf-rf "$(json_get "$dir/real/bundles/b1/manifest.json" 'j["family"]')" "the bundle the link names"
[[ ! -e "$dir/bundles" ]] || fail "a bundle was written where no link points"
# A loop of three links (a crash: is_bundle_file followed it without end).
mkdir -p "$dir/loop" && ln -s b "$dir/loop/a" && ln -s c "$dir/loop/b" && ln -s a "$dir/loop/c"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" predict --model-dir "$dir/ft" --input "$dir/titles.txt" --output "$dir/loop/a"
assert_contains "$dir/err" "is a loop of symbolic links"
# --fit-calibration on the bundle in the current folder (refused as "inside itself").
cp -r "$dir/ft" "$dir/fit"
(cd "$dir/fit" && "$NEWSCLS_BIN" eval --model-dir . --data "$data" --split dev --fit-calibration >/dev/null 2>"$dir/err") ||
  { cat "$dir/err" >&2; fail "--fit-calibration on ."; }

# A data file saved as UTF-16: the error said "label '" and stopped at the first NUL.
mkdir -p "$dir/u16" && cp "$data/class.txt" "$dir/u16/"
iconv -f UTF-8 -t UTF-16 "$data/test.txt" >"$dir/u16/test.txt"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" eval --model-dir "$dir/ft" --data "$data" --input "$dir/u16/test.txt"
assert_contains "$dir/err" "$dir/u16/test.txt:1: a NUL byte in the record: is the file UTF-16?"
echo "test_output_paths: ok"
