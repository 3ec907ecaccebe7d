#!/usr/bin/env bash
# newscls audit on the demo set with 5% of its training labels flipped (seeded): it finds most
# of them, writes the CSV as documented, and train --exclude / --relabel read it back; bad
# input is refused, naming the option or file:line.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
src=$(demo_data_dir)
mkdir -p "$dir/data"
cp "$src/class.txt" "$src/dev.txt" "$src/test.txt" "$dir/data/"
python3 - "$src/train.txt" "$dir/data/train.txt" "$dir/flipped.txt" <<'PY'
import random, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
rng = random.Random(7)
flipped = sorted(rng.sample(range(len(lines)), len(lines) // 20))
for i in flipped:
    title, label = lines[i].rsplit("\t", 1)
    lines[i] = f"{title}\t{(int(label) + rng.randint(1, 9)) % 10}"
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(lines) + "\n")
open(sys.argv[3], "w").write("".join(f"{i + 1}\n" for i in flipped))
PY
ft=(--model fasttext --threads 1 --seed 1)

"$NEWSCLS_BIN" audit "${ft[@]}" --data "$dir/data" --out "$dir/audit.csv" 2>"$dir/audit.err" \
  || { cat "$dir/audit.err" >&2; fail "audit of the demo set"; }
assert_contains "$dir/audit.err" "given -> suggested"
rows=$(python3 - "$dir/audit.csv" "$dir/data/train.txt" "$dir/data/class.txt" "$dir/flipped.txt" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], encoding="utf-8", newline="")))
train = open(sys.argv[2], encoding="utf-8").read().splitlines()
classes = open(sys.argv[3], encoding="utf-8").read().split()
flipped = {int(l) for l in open(sys.argv[4])}
assert rows[0] == ["line", "title", "given", "suggested", "score"], rows[0]
rows = rows[1:]
scores = [float(r[4]) for r in rows]
assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores), "scores not sorted or out of 0..1"
for line, title, given, suggested, _ in rows:
    t, label = train[int(line) - 1].rsplit("\t", 1)
    assert t == title and given == classes[int(label)], (line, title, given)
    assert suggested in classes and suggested != given, (line, suggested)
found = [int(r[0]) in flipped for r in rows]
recall = sum(found) / len(flipped)
precision = sum(found[:len(flipped)]) / len(flipped)
assert recall >= 0.8 and precision >= 0.55, f"recall {recall:.2f} precision at k {precision:.2f}"
print(len(rows))
PY
) || fail "audit.csv (above)"
assert_contains "$dir/audit.err" "flagged $rows of 3000 titles"

# --exclude leaves the flagged titles out, --relabel gives them the suggested class; the
# manifest records how many and the audit file's sha256.
sha=$(sha256sum "$dir/audit.csv" | cut -d' ' -f1)
for use in exclude relabel; do
  "$NEWSCLS_BIN" train "${ft[@]}" --data "$dir/data" --out "$dir/$use" --"$use" "$dir/audit.csv" >/dev/null 2>"$dir/$use.err" \
    || { cat "$dir/$use.err" >&2; fail "train --$use"; }
  m="$dir/$use/manifest.json"
  count=$([[ $use == exclude ]] && echo excluded || echo relabelled)
  assert_eq "$rows" "$(json_get "$m" "j['training']['audit']['$count']")" "$use count"
  assert_eq "$sha" "$(json_get "$m" "j['training']['audit']['sha256']")" "$use: the audit file's sha256"
done

# Bad input: refused before any work (2) or naming the audit file's line (1).
expect_exit 2 "$dir/e1" "$NEWSCLS_BIN" audit "${ft[@]}" --data "$dir/data" --out "$dir/data/train.txt"
assert_contains "$dir/e1" "which the audit reads"
expect_exit 2 "$dir/e2" "$NEWSCLS_BIN" audit "${ft[@]}" --data "$dir/data" --out "$dir"
expect_exit 2 "$dir/e3" "$NEWSCLS_BIN" audit "${ft[@]}" --data "$dir/data" --out "$dir/a.csv" --folds 1
expect_exit 2 "$dir/e4" "$NEWSCLS_BIN" audit --model cascade --data "$dir/data" --out "$dir/a.csv"
assert_contains "$dir/e4" "out-of-fold"
expect_exit 2 "$dir/e5" "$NEWSCLS_BIN" train "${ft[@]}" --data "$dir/data" --exclude "$dir/audit.csv" --relabel "$dir/audit.csv"
line=$(sed -n 2p "$dir/audit.csv" | cut -d, -f1)
{ head -1 "$dir/audit.csv"; echo "$line,另一个标题,finance,stocks,0.9"; } >"$dir/other.csv"
expect_exit 1 "$dir/e6" "$NEWSCLS_BIN" train "${ft[@]}" --data "$dir/data" --out "$dir/x" --exclude "$dir/other.csv"
assert_contains "$dir/e6" "other.csv:2: title"
assert_contains "$dir/e6" "train.txt:$line"
{ head -1 "$dir/audit.csv"; echo "9999,另一个标题,finance,stocks,0.9"; } >"$dir/past.csv"
expect_exit 1 "$dir/e7" "$NEWSCLS_BIN" train "${ft[@]}" --data "$dir/data" --out "$dir/x" --relabel "$dir/past.csv"
assert_contains "$dir/e7" "past.csv:2: line 9999"
expect_exit 1 "$dir/e8" "$NEWSCLS_BIN" train "${ft[@]}" --data "$dir/data" --out "$dir/x" --exclude "$dir/data/train.txt"
assert_contains "$dir/e8" "not an audit file"
[[ ! -e "$dir/x" ]] || fail "a refused training wrote its bundle"
echo "test_audit: ok"
