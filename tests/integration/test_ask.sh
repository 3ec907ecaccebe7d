#!/usr/bin/env bash
# newscls ask and adapt --labels on the demo set and its feed: ask writes exactly the budget of
# distinct feed titles, none already answered, label empty (active and random); the refusals
# (a budget of 0 or past the titles left, a bad answer, a title not in the feed, answers all
# skipped), nothing written by a refused command; adapt --labels learns the answers and its
# manifest counts them, none's included.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
src=$(demo_data_dir)
answers="$NEWSCLS_SOURCE_DIR/tests/fixtures/answers/demo_feed_answers.csv"
feed="$src/feed.txt"
"$NEWSCLS_BIN" train --model fasttext --data "$src" --out "$dir/ft" --threads 1 --seed 1 --set epochs=5 >/dev/null 2>&1 \
  || fail "training the demo fasttext model"

# check_ask FILE BUDGET: the header, BUDGET distinct feed titles, label empty, none answered.
check_ask() {
  python3 - "$1" "$2" "$feed" "$answers" "$src/class.txt" <<'PY' || fail "$1 (above)"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], encoding="utf-8", newline="")))
budget, feed = int(sys.argv[2]), set(open(sys.argv[3], encoding="utf-8").read().splitlines())
answered = {r["title"] for r in csv.DictReader(open(sys.argv[4], encoding="utf-8", newline=""))}
classes = open(sys.argv[5], encoding="utf-8").read().split()
assert rows[0] == ["title", "label", "suggested", "score"], rows[0]
rows = rows[1:]
titles = [r[0] for r in rows]
assert len(rows) == budget, f"{len(rows)} rows, budget {budget}"
assert len(set(titles)) == budget, "a title asked twice"
assert all(t in feed for t in titles), "a title not in the feed"
assert not answered & set(titles), "an answered title asked again"
assert all(r[1] == "" and r[2] in classes and 0 <= float(r[3]) <= 1 for r in rows), "label, suggested or score"
PY
}

"$NEWSCLS_BIN" ask --model-dir "$dir/ft" --unlabeled "$feed" --budget 50 --labels "$answers" --out "$dir/ask.csv" \
  2>"$dir/ask.err" || { cat "$dir/ask.err" >&2; fail "ask"; }
check_ask "$dir/ask.csv" 50
"$NEWSCLS_BIN" ask --model-dir "$dir/ft" --unlabeled "$feed" --budget 50 --labels "$answers" --out "$dir/random.csv" \
  --strategy random --seed 3 2>/dev/null || fail "ask --strategy random"
check_ask "$dir/random.csv" 50
! cmp -s "$dir/ask.csv" "$dir/random.csv" || fail "active and random asked the same"
# A feed with its titles repeated: each is asked once, and the whole feed can be asked.
cat "$feed" "$feed" >"$dir/twice.txt"
distinct=$(sort -u "$feed" | grep -c .)
"$NEWSCLS_BIN" ask --model-dir "$dir/ft" --unlabeled "$dir/twice.txt" --budget "$distinct" --out "$dir/all.csv" 2>/dev/null \
  || fail "ask for every distinct title"
assert_eq "$distinct" "$(python3 -c "import csv,sys; print(len({r['title'] for r in csv.DictReader(open(sys.argv[1], encoding='utf-8'))}))" "$dir/all.csv")" "every distinct title once"

# Refusals: the budget (2, naming both numbers), bad answer files (1, naming file:line);
# nothing written.
left=$((distinct - $(tail -n +2 "$answers" | wc -l)))
expect_exit 2 "$dir/e1" "$NEWSCLS_BIN" ask --model-dir "$dir/ft" --unlabeled "$feed" --budget 0 --out "$dir/x.csv"
assert_contains "$dir/e1" "--budget 0"
assert_contains "$dir/e1" "$distinct distinct titles"
expect_exit 2 "$dir/e1b" "$NEWSCLS_BIN" ask --model-dir "$dir/ft" --unlabeled "$feed" --budget -1 --out "$dir/x.csv"
expect_exit 2 "$dir/e2" "$NEWSCLS_BIN" ask --model-dir "$dir/ft" --unlabeled "$feed" --budget $((left + 1)) \
  --labels "$answers" --out "$dir/x.csv"
assert_contains "$dir/e2" "--budget $((left + 1)) is more than the feed's $left distinct titles"
{ head -3 "$answers"; echo "看国际舆论如何评价G20杭州峰会,diplomacy"; } >"$dir/bad.csv"
expect_exit 1 "$dir/e3" "$NEWSCLS_BIN" ask --model-dir "$dir/ft" --unlabeled "$feed" --budget 5 --labels "$dir/bad.csv" --out "$dir/x.csv"
assert_contains "$dir/e3" "bad.csv:4: answer 'diplomacy' is neither a class"
{ head -2 "$answers"; echo "这个标题不在订阅里,finance"; } >"$dir/other.csv"
expect_exit 1 "$dir/e4" "$NEWSCLS_BIN" adapt --model-dir "$dir/ft" --unlabeled "$feed" --labels "$dir/other.csv" --out "$dir/x"
assert_contains "$dir/e4" "other.csv:3: title"
assert_contains "$dir/e4" "is not in the feed"
expect_exit 1 "$dir/e5" "$NEWSCLS_BIN" adapt --model-dir "$dir/ft" --unlabeled "$feed" --labels "$dir/ask.csv" --out "$dir/x"
assert_contains "$dir/e5" "hold no answer, only skipped titles"
: >"$dir/empty.csv"
expect_exit 1 "$dir/e6" "$NEWSCLS_BIN" ask --model-dir "$dir/ft" --unlabeled "$feed" --budget 5 --labels "$dir/empty.csv" --out "$dir/x.csv"
assert_contains "$dir/e6" "empty.csv"
expect_exit 2 "$dir/e7" "$NEWSCLS_BIN" ask --model-dir "$dir/ft" --unlabeled "$feed" --budget 5 --labels "$answers" --out "$answers"
[[ ! -e "$dir/x.csv" && ! -e "$dir/x" ]] || fail "a refused command wrote its output"

# adapt --labels: the answers with a class join training; the manifest counts every answer.
"$NEWSCLS_BIN" adapt --model-dir "$dir/ft" --unlabeled "$feed" --labels "$answers" --out "$dir/ft-a" --threads 1 \
  >/dev/null 2>"$dir/adapt.err" || { cat "$dir/adapt.err" >&2; fail "adapt --labels"; }
assert_contains "$dir/adapt.err" "answers 'none' (fits no class) are counted, not learnt yet"
m="$dir/ft-a/manifest.json"
a="j['training']['adaptation']['answers']"
assert_eq 35 "$(json_get "$m" "$a['none']")" "none answers"
assert_eq 3 "$(json_get "$m" "$a['skipped']")" "skipped answers"
assert_eq 6 "$(json_get "$m" "$a['classes']['game']")" "game answers"
assert_eq "$(sha256sum <"$answers" | cut -d' ' -f1)" "$(json_get "$m" "$a['files'][0]['sha256']")" "answer file sha256"
assert_eq False "$(json_get "$m" "$a['none_learnt']")" "none answers not learnt"
# The answered titles are learnt: the adapted model gives most of them their answer.
python3 - "$answers" >"$dir/answered.txt" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], encoding="utf-8", newline="")):
    if r["label"] not in ("", "none"):
        print(r["title"])
PY
"$NEWSCLS_BIN" predict --model-dir "$dir/ft-a" --input "$dir/answered.txt" --output "$dir/pred.jsonl" 2>/dev/null \
  || fail "predict with the adapted bundle"
python3 - "$answers" "$dir/pred.jsonl" <<'PY' || fail "the adapted model did not learn the answers"
import csv, json, sys
want = {r["title"]: r["label"] for r in csv.DictReader(open(sys.argv[1], encoding="utf-8", newline=""))}
got = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
right = sum(want[p["title"]] == p["label"] for p in got)
assert right >= 0.8 * len(got), f"{right} of {len(got)} answered titles predicted as answered"
PY

# The same through tfidf-rf: ask and adapt --labels ask only the Classifier interface.
"$NEWSCLS_BIN" train --model tfidf-rf --data "$src" --out "$dir/rf" --threads 2 --set n_trees=10 >/dev/null 2>&1 \
  || fail "training the demo tfidf-rf model"
"$NEWSCLS_BIN" ask --model-dir "$dir/rf" --unlabeled "$feed" --budget 20 --labels "$answers" --out "$dir/rf.csv" 2>/dev/null \
  || fail "ask with tfidf-rf"
check_ask "$dir/rf.csv" 20
"$NEWSCLS_BIN" adapt --model-dir "$dir/rf" --unlabeled "$feed" --labels "$answers" --out "$dir/rf-a" >/dev/null 2>&1 \
  || fail "adapt --labels with tfidf-rf"
assert_eq 35 "$(json_get "$dir/rf-a/manifest.json" "$a['none']")" "tfidf-rf: none answers"
echo "test_ask: ok"
