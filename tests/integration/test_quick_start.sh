#!/usr/bin/env bash
# The README's quick start, as a newcomer runs it: its newscls commands are read from the
# README itself (the code block after "## Quick start"), run in a fresh folder with the built
# binary in place of build/apps/newscls/newscls and NEWSCLS_DATA naming a slice of THUCNews,
# and what the README says they print is checked. The README's "Your own data" command is then
# run on a CSV made of the same slice. A stale README fails here.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
make_slice "$dir/data" 3000 50
readme="$NEWSCLS_SOURCE_DIR/README.md"

# The lines of the quick start's code block that run the tool.
mapfile -t commands < <(awk '/^## Quick start/{q=1} q&&/^```/{n++; next} q&&n==1{print}' "$readme" |
  sed 's/ *# .*$//' | grep 'build/apps/newscls/newscls')
((${#commands[@]} >= 2)) || fail "README's quick start names fewer than two newscls commands: ${commands[*]-}"
cd "$dir"
for command in "${commands[@]}"; do
  echo "quick start: $command"
  NEWSCLS_DATA="$dir/data" bash -euo pipefail -c "${command//build\/apps\/newscls\/newscls/$NEWSCLS_BIN}" >"$dir/out.txt" 2>"$dir/err.txt" ||
    { cat "$dir/err.txt" >&2; fail "README quick-start command failed: $command"; }
done
# The last command is the prediction: one JSON line with a label and a score, as the README shows.
python3 - "$dir/out.txt" <<'PY'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert len(lines) == 1, lines
p = json.loads(lines[0])
assert p["title"] == "央行宣布降准" and p["label"] and 0 < p["score"] <= 1 and len(p["top_k"]) == 3, p
PY

# "Your own data": the README's command on a CSV with a header and class names.
own=$(awk '/^## Your own data/{q=1} q&&/^```/{n++; next} q&&n==1{print; exit}' "$readme")
[[ $own == "newscls train "* ]] || fail "README's 'Your own data' block does not start with a newscls train command: $own"
python3 - "$dir/data" "$dir/my.csv" <<'PY'
import csv, sys
classes = open(sys.argv[1] + "/class.txt", encoding="utf-8").read().split("\n")
with open(sys.argv[2], "w", encoding="utf-8", newline="") as f:
    w = csv.writer(f)
    w.writerow(["title", "label"])
    for line in open(sys.argv[1] + "/train.txt", encoding="utf-8"):
        title, label = line.rstrip("\n").rsplit("\t", 1)
        w.writerow([title, classes[int(label)]])
PY
(cd "$dir" && bash -euo pipefail -c "${own/newscls/$NEWSCLS_BIN} --out $dir/own --threads 1" >/dev/null 2>"$dir/own.err") ||
  { cat "$dir/own.err" >&2; fail "README's own-data command failed: $own"; }
assert_eq True "$(json_get "$dir/own/manifest.json" "sorted(j['labels']) == sorted(open('$dir/data/class.txt', encoding='utf-8').read().split(chr(10)))")" \
  "the class list from the CSV's names"
echo "test_quick_start: ok"
