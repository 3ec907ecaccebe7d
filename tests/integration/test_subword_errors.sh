#!/usr/bin/env bash
# A failed SentencePiece training names the config key that sizes it (it named "subword
# tokenizer", no key). Not in the sanitizer job, which cannot load the SentencePiece plugin.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model tfidf-rf --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --out "$dir/sw" \
  --set subword=true --set subword_vocab_size=100
assert_contains "$dir/err" "config key 'subword_vocab_size': SentencePiece training failed"
[[ ! -e "$dir/sw" ]] || fail "a failed training left a bundle"
echo "test_subword_errors: ok"
