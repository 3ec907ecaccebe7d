#!/usr/bin/env bash
# Learning from a reader's labels (`newscls ask` + `adapt --labels`): a simulated reader answers
# what ask asks, round after round, for the active and the random strategy; after each round,
# the accuracy on held-out in-class feed titles and THUCNews dev accuracy.
#
#   NEWSCLS_DATA=/path/thucnews FEED=toutiao_feed.txt ANSWERS=toutiao_feed_answers.csv \
#     OUT=/tmp/bench_ask scripts/bench/bench_ask.sh
#
# Required: NEWSCLS_DATA (THUCNews: train/dev/test.txt, class.txt; test is never read), FEED
# (the unlabelled feed), ANSWERS (the simulated reader: title,label for the feed's titles; only
# the answers to titles ask asked are read, and those of the held-out titles, only to measure),
# OUT (a work folder, replaced). Optional: BIN (build/apps/newscls/newscls), ROUNDS (5), BUDGET
# (200), HOLDOUT (3000 feed titles never asked, drawn with SEED), SEED (1), COPIES (adapt's
# --answer-copies; default: its own), STRATEGIES ("active random"), THREADS (2).
set -euo pipefail
: "${NEWSCLS_DATA:?the THUCNews folder}" "${FEED:?the unlabelled feed}" "${ANSWERS:?the simulated answers}"
: "${OUT:?a work folder (replaced)}"
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${BIN:-$root/build/apps/newscls/newscls}
rounds=${ROUNDS:-5} budget=${BUDGET:-200} holdout=${HOLDOUT:-3000} seed=${SEED:-1} threads=${THREADS:-2}
copies=()
[[ -n ${COPIES:-} ]] && copies=(--answer-copies "$COPIES")
rm -rf "$OUT" && mkdir -p "$OUT"
nc() { "$bin" --log-level warn "$@"; }

# The feed split: HOLDOUT titles held out from asking (with their answers, for measuring only),
# the rest asked from and adapted to.
python3 - "$FEED" "$ANSWERS" "$holdout" "$seed" "$OUT" <<'PY'
import csv, random, sys
feed, answers, n, seed, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
titles = list(dict.fromkeys(t for t in open(feed, encoding="utf-8").read().splitlines() if t.strip()))
held = set(random.Random(seed).sample(titles, n))
open(f"{out}/ask_feed.txt", "w", encoding="utf-8").write("".join(t + "\n" for t in titles if t not in held))
with open(f"{out}/holdout.tsv", "w", encoding="utf-8") as f:
    for r in csv.DictReader(open(answers, encoding="utf-8", newline="")):
        if r["title"] in held and r["label"] != "none":
            f.write(f"{r['title']}\t{r['label']}\n")
PY
echo "held out: $(wc -l <"$OUT/holdout.tsv") in-class titles of $holdout; asked from $(wc -l <"$OUT/ask_feed.txt")"

# answer ASK_CSV OUT_CSV: the simulated reader fills in the label column of the titles asked.
answer() {
  python3 - "$1" "$ANSWERS" "$2" <<'PY'
import csv, sys
asked = [r["title"] for r in csv.DictReader(open(sys.argv[1], encoding="utf-8", newline=""))]
wanted, given = set(asked), {}
for r in csv.DictReader(open(sys.argv[2], encoding="utf-8", newline="")):
    if r["title"] in wanted:
        given[r["title"]] = r["label"]
with open(sys.argv[3], "w", encoding="utf-8", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["title", "label"])
    for t in asked:
        w.writerow([t, given[t]])
print(sum(given[t] == "none" for t in asked))
PY
}

# measure BUNDLE: in-class accuracy on the held-out titles, and dev accuracy.
measure() {
  cut -f1 "$OUT/holdout.tsv" >"$OUT/holdout.txt"
  nc predict --model-dir "$1" --input "$OUT/holdout.txt" --format tsv --threads "$threads" >"$OUT/pred.tsv"
  local held dev
  held=$(paste <(cut -f2 "$OUT/holdout.tsv") <(cut -f2 "$OUT/pred.tsv") | awk -F'\t' '{ n++; r += $1 == $2 } END { printf "%.4f", r / n }')
  dev=$(nc eval --model-dir "$1" --data "$NEWSCLS_DATA" --split dev --threads "$threads" | awk '/^titles/ { print $4; exit }')
  echo "$held $dev"
}

nc train --model fasttext --data "$NEWSCLS_DATA" --out "$OUT/m0" --seed "$seed" --threads "$threads" >/dev/null
echo "strategy round answers none_asked heldout_inclass_acc dev_acc"
echo "- 0 0 0 $(measure "$OUT/m0")"
for strategy in ${STRATEGIES:-active random}; do
  model="$OUT/m0" files=()
  for ((r = 1; r <= rounds; r++)); do
    asked="$OUT/$strategy.ask$r.csv" answered="$OUT/$strategy.answers$r.csv"
    nc ask --model-dir "$model" --unlabeled "$OUT/ask_feed.txt" --budget "$budget" --strategy "$strategy" --seed "$((seed + r))" \
      --out "$asked" --threads "$threads" ${files[@]+--labels "${files[@]}"}
    none=$(answer "$asked" "$answered")
    files+=("$answered")
    model="$OUT/$strategy.m$r"
    nc adapt --model-dir "$OUT/m0" --unlabeled "$OUT/ask_feed.txt" --labels "${files[@]}" "${copies[@]}" --out "$model" \
      --seed "$seed" --threads "$threads" >/dev/null 2>&1
    echo "$strategy $r $((r * budget)) $none $(measure "$model")"
  done
done
