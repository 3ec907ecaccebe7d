#!/usr/bin/env bash
# Outputs never replace what newscls reads or did not write: eval's --out over the data
# folder's files or over the files it writes beside metrics.json; a bundle inside another
# bundle; a cascade over its own member; bert's <out>.work holding the user's files. Keys only
# an import sets (tokenizer=wordpiece, classifier=false) are refused before training; options
# of distillation are refused for the other compression methods.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
mkdir -p "$dir/data"
cp "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny/"*.txt "$dir/data/"
"$NEWSCLS_BIN" train --model fasttext --data "$dir/data" --out "$dir/ft" --set epochs=1 >/dev/null 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "fasttext"; }
"$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/data" --out "$dir/tf" --set n_trees=2 >/dev/null 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "tfidf-rf"; }
cp -r "$dir/data" "$dir/data.orig"

# eval --out: the data folder's class.txt (it was overwritten, exit 0) and train.txt.
for f in class.txt train.txt; do
  expect_exit 2 "$dir/err" "$NEWSCLS_BIN" eval --model-dir "$dir/ft" --data "$dir/data" --out "$dir/data/$f"
  assert_contains "$dir/err" "which is $dir/data/$f"
done
diff -r "$dir/data" "$dir/data.orig" >/dev/null || fail "eval changed the data folder"
# eval --out named as one of the files written beside it (the metrics replaced the predictions).
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" eval --model-dir "$dir/ft" --data "$dir/data" --out "$dir/res/predictions.tsv"
assert_contains "$dir/err" "eval writes its predictions.tsv beside metrics.json"
# A device: the metrics only, nothing written beside it into /dev.
"$NEWSCLS_BIN" eval --model-dir "$dir/ft" --data "$dir/data" --out /dev/null >/dev/null 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "eval --out /dev/null"; }
assert_contains "$dir/err" "/dev/null: metrics only"
# A FIFO likewise; a file in /dev/shm (a folder like any other) gets its files beside it.
mkdir "$dir/fifo" && mkfifo "$dir/fifo/m"
cat "$dir/fifo/m" >"$dir/fifo.out" &
"$NEWSCLS_BIN" eval --model-dir "$dir/ft" --data "$dir/data" --out "$dir/fifo/m" >/dev/null 2>"$dir/err" ||
  { cat "$dir/err" >&2; fail "eval --out FIFO"; }
wait
assert_eq "m" "$(ls "$dir/fifo")" "files beside a FIFO"
assert_contains "$dir/fifo.out" '"accuracy"'
if [[ -d /dev/shm && -w /dev/shm ]]; then
  shm=$(mktemp -d /dev/shm/newscls-test.XXXXXX)
  "$NEWSCLS_BIN" eval --model-dir "$dir/ft" --data "$dir/data" --out "$shm/e/metrics.json" >/dev/null 2>"$dir/err" ||
    { rm -rf "$shm"; cat "$dir/err" >&2; fail "eval --out into /dev/shm"; }
  [[ -f "$shm/e/predictions.tsv" ]] || { rm -rf "$shm"; fail "no predictions.tsv in /dev/shm"; }
  rm -rf "$shm"
fi

# A bundle inside another bundle (a cascade's member, a subfolder) is refused.
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/data" --out "$dir/ft/sub" --set n_trees=2
assert_contains "$dir/err" "lies inside the model bundle $dir/ft"
"$NEWSCLS_BIN" info --model-dir "$dir/ft" >/dev/null || fail "the outer bundle no longer verifies"
# A cascade written over one of its members (it replaced the member, exit 0).
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train --model cascade --data "$dir/data" --out "$dir/ft" --set "members=$dir/ft,$dir/tf"
assert_contains "$dir/err" "would replace the member $dir/ft"
assert_eq fasttext "$(json_get "$dir/ft/manifest.json" 'j["family"]')" "the member's family"

# bert's work folder: a file, or a folder of the user's files, at <out>.work (it was deleted).
echo notes >"$dir/b.work"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train --model bert --data "$dir/data" --out "$dir/b" --threads 1
assert_contains "$dir/err" "$dir/b.work is not a newscls work folder"
assert_eq notes "$(cat "$dir/b.work")" "the user's file"
mkdir -p "$dir/c.work" && echo keep >"$dir/c.work/notes.txt"
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" train --model bert --data "$dir/data" --out "$dir/c" --threads 1
assert_contains "$dir/err" "holds files without newscls's record of a training (notes.txt)"
[[ -f "$dir/c.work/notes.txt" ]] || fail "the user's notes were deleted"
# Keys an import sets, given by hand: refused before training (it wrote a bundle that did not load).
# So are settings the architecture rules out, and a vocabulary of no character: they were
# refused after pretraining (freeze_layers, pooler) or in LibTorch's words with a stack trace.
for key in tokenizer=wordpiece classifier=false freeze_layers=3 pooler=false vocab_min_count=1000000 positions=10; do
  expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model bert --data "$dir/data" --out "$dir/w/" --threads 1 --set "$key"
  assert_contains "$dir/err" "config key '${key%%=*}'"
  assert_not_contains "$dir/err" "epoch"
  assert_not_contains "$dir/err" "pretrain:"
  assert_not_contains "$dir/err" "frame #"
  [[ ! -e "$dir/w/manifest.json" ]] || fail "a bundle was written with $key"
done
# --out "w/": the work folder is w.work beside it (it was w/.work, and w then refused as no bundle).
[[ -d "$dir/w.work" && ! -e "$dir/w/.work" ]] || fail "the work folder of --out w/ is not w.work"
# A link to a folder at <out>.work is a folder (it was called a file).
mkdir "$dir/elsewhere" && ln -s "$dir/elsewhere" "$dir/l.work"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model bert --data "$dir/data" --out "$dir/l" --threads 1 --set tokenizer=wordpiece
assert_not_contains "$dir/err" "not a newscls work folder"
# --teacher and --unlabelled belong to distillation (quantize ignored them and recorded a teacher).
expect_exit 2 "$dir/err" "$NEWSCLS_BIN" compress --model-dir "$dir/ft" --method quantize --out "$dir/q" --teacher "$dir/tf"
assert_contains "$dir/err" "--teacher is for --method distill only"
echo "test_output_guards: ok"
