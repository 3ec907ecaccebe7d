#!/usr/bin/env bash
# newscls adapt and train --unlabeled through the real binary, on a slice of THUCNews and the
# demo set's unlabelled feed: what the manifest records, determinism for a
# seed, the source bundle untouched, co-training with a teacher, the feed's vocabulary for
# tfidf-rf, --set, and the refusals (an empty feed, a binary one, --out over the source).
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
make_slice "$dir/data" 3000 50
cp "$(demo_data_dir)/feed.txt" "$dir/feed.txt"

"$NEWSCLS_BIN" train --model fasttext --data "$dir/data" --out "$dir/ft" --threads 1 --seed 3 --set epochs=5 >/dev/null
before=$(sha256sum "$dir/ft/manifest.json" "$dir/ft/fasttext.bin")

"$NEWSCLS_BIN" adapt --model-dir "$dir/ft" --unlabeled "$dir/feed.txt" --out "$dir/ft-a" --threads 1 --seed 3 \
  --min-confidence 0.6 --rounds 2 >"$dir/adapt.out" 2>"$dir/adapt.err"
m="$dir/ft-a/manifest.json"
assert_eq "$before" "$(sha256sum "$dir/ft/manifest.json" "$dir/ft/fasttext.bin")" "the source bundle is only read"
assert_eq 1000 "$(json_get "$m" "j['training']['adaptation']['feed']['lines']")" "feed line count"
assert_eq "$(sha256sum <"$dir/feed.txt" | cut -d' ' -f1)" "$(json_get "$m" "j['training']['adaptation']['feed']['sha256']")" "feed sha256"
assert_eq "feed vocabulary + self-training" "$(json_get "$m" "j['training']['adaptation']['method']")" "method"
assert_eq True "$(json_get "$m" "j['training']['adaptation']['rounds'][0]['kept'] > 0")" "feed titles kept in round 1"
assert_eq True "$(json_get "$m" "0.5 < j['training']['test_accuracy'] <= 1")" "the adapted model still classifies"
assert_contains "$dir/adapt.out" "adapted $dir/ft on test"
"$NEWSCLS_BIN" info --model-dir "$dir/ft-a" >"$dir/info.json"
assert_contains "$dir/info.json" '"adaptation"'

# The same seed on one thread gives the same bundle.
"$NEWSCLS_BIN" adapt --model-dir "$dir/ft" --unlabeled "$dir/feed.txt" --out "$dir/ft-b" --threads 1 --seed 3 \
  --min-confidence 0.6 --rounds 2 >/dev/null 2>&1
assert_eq "$(sha256sum <"$dir/ft-a/fasttext.bin")" "$(sha256sum <"$dir/ft-b/fasttext.bin")" "deterministic for a seed"

# A labelled feed: the labels are never read, and a warning says so; the titles are the same
# ones, so the bundle is too.
awk '{print $0 "\t" (NR % 10)}' "$dir/feed.txt" >"$dir/labelled.txt"
"$NEWSCLS_BIN" adapt --model-dir "$dir/ft" --unlabeled "$dir/labelled.txt" --out "$dir/ft-l" --threads 1 --seed 3 \
  --min-confidence 0.6 --rounds 2 >/dev/null 2>"$dir/labelled.err"
assert_contains "$dir/labelled.err" "a label after it is never read"
assert_eq "$(sha256sum <"$dir/ft-a/fasttext.bin")" "$(sha256sum <"$dir/ft-l/fasttext.bin")" "labels in the feed change nothing"

# Co-training with a tfidf-rf teacher; train --unlabeled counts the feed in the vocabulary.
"$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/data" --out "$dir/rf" --threads 2 --set n_trees=10 >/dev/null
"$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/data" --out "$dir/rf-u" --threads 2 --set n_trees=10 \
  --unlabeled "$dir/feed.txt" --rounds 0 >/dev/null 2>&1
with_feed=$(json_get "$dir/rf-u/manifest.json" "j['training']['n_features']")
without=$(json_get "$dir/rf/manifest.json" "j['training']['n_features']")
((with_feed > without)) || fail "the feed's n-grams join tfidf-rf's features: $with_feed against $without"
"$NEWSCLS_BIN" adapt --model-dir "$dir/ft" --teacher "$dir/rf" --unlabeled - --out "$dir/ft-co" --threads 1 \
  --min-confidence 0.5 --rounds 1 <"$dir/feed.txt" >/dev/null 2>&1
assert_eq "feed vocabulary + co-training" "$(json_get "$dir/ft-co/manifest.json" "j['training']['adaptation']['method']")" "co-training"
assert_eq True "$(json_get "$dir/ft-co/manifest.json" "j['training']['adaptation']['rounds'][0]['disagreed'] > 0")" "disagreements counted"

# The pipeline adapts each local stage after it: both rows in the report.
"$NEWSCLS_BIN" pipeline --data "$dir/data" --out "$dir/run" --stages fasttext --compress none --threads 1 \
  --set fasttext.epochs=3 --unlabeled "$dir/feed.txt" >"$dir/pipeline.out" 2>&1
assert_contains "$dir/pipeline.out" "fasttext-adapted"
assert_eq "done" "$(json_get "$dir/run/pipeline.json" "[s['status'] for s in j['stages'] if s['stage'] == 'fasttext-adapted'][0]")" "adapted stage"
assert_contains "$dir/run/report.md" "| fasttext-adapted |"

# fasttext's default: the feed's vocabulary and IDF, no self-training round (docs/BENCHMARKS.md).
"$NEWSCLS_BIN" adapt --model-dir "$dir/ft" --unlabeled "$dir/feed.txt" --out "$dir/ft-d" --threads 1 >/dev/null 2>&1
assert_eq "feed vocabulary|0|0" "$(json_get "$dir/ft-d/manifest.json" \
  "'|'.join(str(x) for x in (j['training']['adaptation']['method'], j['training']['adaptation']['settings']['rounds'], len(j['training']['adaptation']['rounds'])))")" \
  "fasttext's default adaptation"

# An imported WordPiece bundle (the compatibility fixture's, its vocabulary cut to a few hundred
# tokens): its encoder continues on the feed, its vocabulary grown by the feed's characters it
# lacked, then it is fine-tuned again from there; it predicts as a WordPiece bundle.
fx="$NEWSCLS_SOURCE_DIR/tests/fixtures/bundles_v1"
"$NEWSCLS_BIN" adapt --model-dir "$fx/bundles/bert-hf" --data "$fx/data" --unlabeled "$dir/feed.txt" --out "$dir/hf-a" \
  --threads 1 --seed 3 --rounds 0 >/dev/null 2>"$dir/hf.err" || { tail "$dir/hf.err" >&2; fail "adapting an imported bundle"; }
m="$dir/hf-a/manifest.json"
assert_eq "feed vocabulary + domain-adaptive pretraining" "$(json_get "$m" "j['training']['adaptation']['method']")" "WordPiece method"
assert_eq True "$(json_get "$m" "j['training']['adaptation']['pretraining']['vocab_added'] > 100")" "the WordPiece vocabulary grew"
assert_eq wordpiece "$(json_get "$m" "j['config']['tokenizer']")" "still a WordPiece bundle"
echo "央行宣布降准" | "$NEWSCLS_BIN" predict --model-dir "$dir/hf-a" >"$dir/hf.pred" || fail "predict with the adapted WordPiece bundle"
assert_contains "$dir/hf.pred" '"label"'

# --set reaches the continued pretraining and the fine-tuning; the encoder's architecture stays
# the bundle's, and a cascade's members keep their own settings.
"$NEWSCLS_BIN" adapt --model-dir "$fx/bundles/bert-hf" --data "$fx/data" --unlabeled "$dir/feed.txt" --out "$dir/hf-s" \
  --threads 1 --seed 3 --rounds 0 --set pretrain_max_steps=2 --set epochs=1 >/dev/null 2>"$dir/hf-s.err" ||
  { tail "$dir/hf-s.err" >&2; fail "adapt --set"; }
m="$dir/hf-s/manifest.json"
assert_eq 2 "$(json_get "$m" "j['training']['adaptation']['pretraining']['pretrain_steps']")" "--set pretrain_max_steps"
assert_eq "pretrain_max_steps=2 epochs=1" "$(json_get "$m" "' '.join(j['training']['adaptation']['overrides'])")" "overrides recorded"
# A bundle trained without pretraining (pretrain_epochs 0) still continues on the feed.
"$NEWSCLS_BIN" adapt --model-dir "$fx/bundles/bert" --data "$fx/data" --unlabeled "$dir/feed.txt" --out "$dir/b0-a" \
  --threads 1 --rounds 0 --set continued_pretrain_epochs=1 >/dev/null 2>"$dir/b0.err" ||
  { tail "$dir/b0.err" >&2; fail "adapting a bundle trained without pretraining"; }
assert_eq True "$(json_get "$dir/b0-a/manifest.json" "j['training']['adaptation']['pretraining']['pretrain_steps'] > 0")" \
  "continued pretraining of a bundle with pretrain_epochs 0"
expect_exit 1 "$dir/arch.err" "$NEWSCLS_BIN" adapt --model-dir "$fx/bundles/bert-hf" --data "$fx/data" \
  --unlabeled "$dir/feed.txt" --out "$dir/x" --threads 1 --set layers=3
assert_contains "$dir/arch.err" "layers"
expect_exit 1 "$dir/fold.err" "$NEWSCLS_BIN" adapt --model-dir "$fx/bundles/bert" --data "$fx/data" \
  --unlabeled "$dir/feed.txt" --out "$dir/x" --threads 1 --set fold_punctuation=true
assert_contains "$dir/fold.err" "fold_punctuation"
expect_exit 1 "$dir/key.err" "$NEWSCLS_BIN" adapt --model-dir "$dir/ft" --unlabeled "$dir/feed.txt" --out "$dir/x" \
  --set no_such_key=1
assert_contains "$dir/key.err" "no_such_key"
expect_exit 2 "$dir/cascade.err" "$NEWSCLS_BIN" adapt --model-dir "$fx/bundles/cascade" --data "$fx/data" \
  --unlabeled "$dir/feed.txt" --out "$dir/x" --set epochs=1
assert_contains "$dir/cascade.err" "adapt a member with --set"

# Refusals: nothing written under --out.
printf '\n  \n' >"$dir/empty.txt"
expect_exit 1 "$dir/empty.err" "$NEWSCLS_BIN" adapt --model-dir "$dir/ft" --unlabeled "$dir/empty.txt" --out "$dir/x"
assert_contains "$dir/empty.err" "no usable title"
printf 'ok\n\xff\xfe\x00\x01\n' >"$dir/binary.txt"
expect_exit 1 "$dir/binary.err" "$NEWSCLS_BIN" adapt --model-dir "$dir/ft" --unlabeled "$dir/binary.txt" --out "$dir/x"
assert_contains "$dir/binary.err" "binary.txt:2"
expect_exit 2 "$dir/same.err" "$NEWSCLS_BIN" adapt --model-dir "$dir/ft" --unlabeled "$dir/feed.txt" --out "$dir/ft"
[[ ! -e $dir/x ]] || fail "a refused adaptation wrote $dir/x"
echo "test_adapt: ok"
