#!/usr/bin/env bash
# eval --input FILE: with --data DIR its label ids are DIR/class.txt's, which must list the
# bundle's labels in the bundle's order (as for a split); --split with --input is a usage error
# (the file is evaluated, not a split).
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
data="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
"$NEWSCLS_BIN" train --model fasttext --data "$data" --out "$dir/ft" --set epochs=1 >/dev/null 2>"$dir/err" \
  || { cat "$dir/err" >&2; fail "fasttext training on the tiny fixture"; }
cp -r "$data" "$dir/swapped"
python3 -c "import sys; c=open(sys.argv[1]).read().split(); open(sys.argv[1], 'w').write('\n'.join(c[1::-1] + c[2:]))" \
  "$dir/swapped/class.txt"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" eval --model-dir "$dir/ft" --input "$data/test.txt" --data "$dir/swapped" \
  --out "$dir/e/metrics.json"
assert_contains "$dir/err" "$dir/swapped/class.txt:1:"
assert_contains "$dir/err" "class list differs from the labels the model was trained on"
[[ ! -e "$dir/e" ]] || fail "eval wrote metrics with another class order"
"$NEWSCLS_BIN" eval --model-dir "$dir/ft" --input "$data/test.txt" --data "$data" --out "$dir/e/metrics.json" \
  >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "eval --input with the bundle's class order"; }

expect_exit 2 "$dir/err" "$NEWSCLS_BIN" eval --model-dir "$dir/ft" --input "$data/test.txt" --split dev \
  --out "$dir/e2/metrics.json"
assert_contains "$dir/err" "--split excludes --input"
echo "test_eval_input: ok"
