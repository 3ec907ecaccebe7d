#!/usr/bin/env bash
# Hostile data: empty files, a missing directory, blank and U+FFFD titles, invalid UTF-8, a
# 10 MB single line, NUL bytes, CRLF and a BOM. `train` and `predict` exit 1 with one error
# line naming file:line, or give a correct result; a refused run leaves no output behind.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"
dir=$(scratch)
HOSTILE_ERR="$dir/err"
tiny="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
bundle="$dir/bundle"
train_tiny tfidf-rf "$bundle" --set n_trees=3 --set min_df=1
tried=0

fresh_data() {
  rm -rf "$dir/data" && mkdir -p "$dir/data" && cp "$tiny"/*.txt "$dir/data/"
}
train_refused() {  # TEXT: training on $dir/data is refused naming TEXT, and leaves no bundle
  expect_error_naming "$1" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/data" --out "$dir/model" --set n_trees=2
  [[ ! -e "$dir/model" ]] || fail "a refused train left $dir/model"
  tried=$((tried + 1))
}
predict_ok() {  # INPUT N: predict answers N well-formed lines
  "$NEWSCLS_BIN" --log-level warn predict --model-dir "$bundle" --input "$1" --output "$dir/out.jsonl"
  check_jsonl "$dir/out.jsonl" "$2" sports finance game
  rm -f "$dir/out.jsonl"
  tried=$((tried + 1))
}
predict_refused() {  # INPUT TEXT
  expect_error_naming "$2" "$NEWSCLS_BIN" predict --model-dir "$bundle" --input "$1" --output "$dir/out.jsonl"
  [[ ! -e "$dir/out.jsonl" ]] || fail "a refused predict left $dir/out.jsonl"
  ls "$dir" | grep -q 'out.jsonl.tmp' && fail "a refused predict left a temporary file"
  tried=$((tried + 1))
}

# --- training data ---
expect_error_naming "$dir/no-such-dir" "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/no-such-dir" --out "$dir/model"
tried=$((tried + 1))
fresh_data; : >"$dir/data/train.txt"; train_refused "$dir/data/train.txt: no usable lines"
fresh_data; : >"$dir/data/class.txt"; train_refused "$dir/data/class.txt"
fresh_data; rm "$dir/data/dev.txt"; train_refused "$dir/data/dev.txt"
fresh_data; printf 'ok title\t0\n   \t1\n' >>"$dir/data/train.txt"; train_refused "$dir/data/train.txt:32: empty title"
fresh_data; printf 'ok\t0\nbad \xff\xfe title\t1\n' >>"$dir/data/train.txt"; train_refused "$dir/data/train.txt:32: title is not valid UTF-8"
fresh_data; printf 'overlong \xc0\xaf\t1\n' >>"$dir/data/test.txt"; train_refused "$dir/data/test.txt:10: title is not valid UTF-8"
fresh_data; printf 'surrogate \xed\xa0\x80\t1\n' >>"$dir/data/train.txt"; train_refused "$dir/data/train.txt:31: title is not valid UTF-8"
fresh_data; printf 'sports\nfinance\nsports\n' >"$dir/data/class.txt"; train_refused "$dir/data/class.txt:3: duplicate class name"
fresh_data; printf '\xef\xbf\xbd\xef\xbf\xbd\t1\n' >>"$dir/data/train.txt"  # U+FFFD titles are titles
"$NEWSCLS_BIN" --log-level warn train --model tfidf-rf --data "$dir/data" --out "$dir/model" --set n_trees=2 --set min_df=1 >/dev/null
[[ -f "$dir/model/manifest.json" ]] || fail "U+FFFD title: no bundle"
rm -rf "$dir/model"
tried=$((tried + 1))

# A 10 MB title in the training data: trained on, or refused naming the line.
fresh_data
python3 -c "import sys; sys.stdout.write('长' * 3500000 + '\t0\n')" >>"$dir/data/train.txt"
set +e
"$NEWSCLS_BIN" --log-level warn train --model tfidf-rf --data "$dir/data" --out "$dir/model" --set n_trees=2 >/dev/null 2>"$HOSTILE_ERR"
rc=$?
set -e
case $rc in
  0) [[ -f "$dir/model/manifest.json" ]] || fail "10 MB line: exit 0 but no bundle" ;;
  1) expect_one_error "$HOSTILE_ERR" "$dir/data/train.txt:31" ;;
  *) cat "$HOSTILE_ERR" >&2; fail "10 MB training line: exit $rc" ;;
esac
rm -rf "$dir/model"
tried=$((tried + 1))

# --- predict input ---
: >"$dir/empty.txt"
"$NEWSCLS_BIN" --log-level warn predict --model-dir "$bundle" --input "$dir/empty.txt" --output "$dir/out.jsonl"
[[ -f "$dir/out.jsonl" && ! -s "$dir/out.jsonl" ]] || fail "empty input: expected an empty output file"
rm -f "$dir/out.jsonl"
printf '\n \n\t\n\xe3\x80\x80\n   \t   \n' >"$dir/blank.txt"
predict_ok "$dir/blank.txt" 5
printf '\xef\xbf\xbd\n\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\n\xef\xbf\xbd\t1\n' >"$dir/fffd.txt"
predict_ok "$dir/fffd.txt" 3
printf '\xef\xbb\xbf体育新闻\r\n财经\r\nNUL\x00inside\r\n' >"$dir/crlf.txt"
predict_ok "$dir/crlf.txt" 3
python3 -c "import sys; sys.stdout.write('长' * 3500000)" >"$dir/long.txt"  # 10.5 MB, no final newline
predict_ok "$dir/long.txt" 1
python3 -c "import sys; sys.stdout.write('ab ' * 3500000 + '\n' + 'second\n')" >"$dir/long2.txt"
predict_ok "$dir/long2.txt" 2
printf 'good\nalso good\nbad \xff title\nnever read\n' >"$dir/bad.txt"
predict_refused "$dir/bad.txt" "$dir/bad.txt:3: title is not valid UTF-8"
printf 'good\n\xe4\xb8' >"$dir/cut.txt"  # a character cut off by the end of the file
predict_refused "$dir/cut.txt" "$dir/cut.txt:2: title is not valid UTF-8"
predict_refused "$dir/no-such-input.txt" "$dir/no-such-input.txt"
expect_error_naming "$dir/no-such-model" "$NEWSCLS_BIN" predict --model-dir "$dir/no-such-model" --input "$dir/blank.txt"
tried=$((tried + 1))
# stdin works the same way
printf '体育\n\xff\n' | { expect_error_naming "<stdin>:2" "$NEWSCLS_BIN" predict --model-dir "$bundle" --input - --output "$dir/out.jsonl"; }
printf '体育\n财经\n' | "$NEWSCLS_BIN" --log-level warn predict --model-dir "$bundle" --format tsv >"$dir/out.tsv"
assert_eq 2 "$(wc -l <"$dir/out.tsv")" "tsv lines from stdin"
tried=$((tried + 2))
echo "test_hostile_data: ok ($tried hostile inputs: each refused naming file:line, or answered correctly)"
