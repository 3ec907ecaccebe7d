#!/usr/bin/env bash
# fastText CLI 0.9.2 (Debian package `fasttext`) against `newscls train --model fasttext`,
# side by side on the same split and the same cores: test accuracy, training wall time,
# peak RSS (/usr/bin/time -v), and prediction rate; then the ratios newscls / peer.
#
# The peer runs twice on space-separated characters, -wordNgrams 2 -epoch 10 -lr 0.5
# -thread THREADS: with the setting of issue 3 (-dim 100, the tool's default 2,000,000
# buckets), and at newscls's own dim and bucket count (-dim 50 -bucket 2097152, from
# configs/fasttext.json). newscls runs its default config. Accuracy is printed on dev and on
# test (the configurations are fixed: nothing here is tuned).
# Training wall time is the whole command (reading data, training, newscls also
# evaluating on test and writing its bundle). The prediction rate is measured on the test
# titles repeated REPEAT times, end to end (process start, model load, output) and, for
# newscls, also in steady state: (N_big - N_small) / (t_big - t_small), which cancels the
# process start and the bundle load.
#
# Usage: DATA=/path/to/thucnews scripts/bench/bench_fasttext.sh
#   env: DATA (required: the folder of the full THUCNews data, train/dev/test.txt and class.txt),
#        NEWSCLS_BIN, WORK, THREADS, REPEAT
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
NEWSCLS_BIN=${NEWSCLS_BIN:-$root/build/apps/newscls/newscls}
: "${DATA:?set DATA to the folder of the full THUCNews data (train/dev/test.txt, class.txt)}"
WORK=${WORK:-/tmp/newscls-bench-fasttext}
THREADS=${THREADS:-2}
REPEAT=${REPEAT:-20}

command -v fasttext >/dev/null || { echo "fasttext CLI missing: apt-get install -y fasttext" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "/usr/bin/time missing: apt-get install -y time" >&2; exit 1; }
[[ -x $NEWSCLS_BIN ]] || { echo "no newscls binary at $NEWSCLS_BIN (set NEWSCLS_BIN)" >&2; exit 1; }
source "$root/scripts/bench/fresh_dir.sh"
fresh_dir "$WORK"

# "title<TAB>label" -> "__label__N c h a r s" (whitespace dropped, one character per token).
to_peer() {
  paste -d ' ' <(cut -f2 "$1" | sed 's/^/__label__/') \
    <(cut -f1 "$1" | LC_ALL=C.UTF-8 sed 's/[[:space:]]//g; s/./& /g; s/ $//')
}
to_peer "$DATA/train.txt" >"$WORK/train.ft"
to_peer "$DATA/test.txt" >"$WORK/test.ft"
to_peer "$DATA/dev.txt" >"$WORK/dev.ft"
cut -f1 "$DATA/test.txt" >"$WORK/titles.txt"
cut -d ' ' -f2- "$WORK/test.ft" >"$WORK/titles.ft"
for ((i = 0; i < REPEAT; i++)); do cat "$WORK/titles.txt"; done >"$WORK/titles_big.txt"
for ((i = 0; i < REPEAT; i++)); do cat "$WORK/titles.ft"; done >"$WORK/titles_big.ft"
n_small=$(wc -l <"$WORK/titles.txt")
n_big=$(wc -l <"$WORK/titles_big.txt")

# timed NAME cmd...: runs cmd under /usr/bin/time -v; sets SECONDS_<NAME>, CPU_<NAME> (user + sys)
# and RSS_<NAME> (MB).
timed() {
  local name=$1
  shift
  /usr/bin/time -v -o "$WORK/$name.time" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  printf -v "SECONDS_$name" '%s' "$(awk -F': ' '/Elapsed/ {n = split($2, t, ":"); s = 0;
    for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$WORK/$name.time")"
  printf -v "RSS_$name" '%s' "$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2 / 1024}' "$WORK/$name.time")"
  printf -v "CPU_$name" '%s' "$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' "$WORK/$name.time")"
}

echo "machine: $(nproc) cores, load average $(cut -d ' ' -f1-3 /proc/loadavg); threads $THREADS" >&2
# peer NAME args...: trains the tool with the common setting plus args; sets ACC_<NAME>, DEVACC_<NAME>.
peer() {
  local name=$1
  shift
  echo "peer $name: fasttext supervised $*" >&2
  timed "${name}_train" fasttext supervised -input "$WORK/train.ft" -output "$WORK/$name" \
    -wordNgrams 2 -epoch 10 -lr 0.5 -thread "$THREADS" "$@"
  printf -v "ACC_$name" '%s' "$(fasttext test "$WORK/$name.bin" "$WORK/test.ft" | awk '/^P@1/ {print $2}')"
  printf -v "DEVACC_$name" '%s' "$(fasttext test "$WORK/$name.bin" "$WORK/dev.ft" | awk '/^P@1/ {print $2}')"
}
peer peer -dim 100
peer peer50 -dim 50 -bucket 2097152
peer_acc=$ACC_peer
timed peer_predict fasttext predict "$WORK/peer.bin" "$WORK/titles_big.ft"
timed peer50_predict fasttext predict "$WORK/peer50.bin" "$WORK/titles_big.ft"

echo "newscls: train --model fasttext" >&2
timed ours_train "$NEWSCLS_BIN" train --model fasttext --data "$DATA" --out "$WORK/ours" --threads "$THREADS"
ours_acc=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['accuracy'])" "$WORK/ours/metrics.json")
mkdir -p "$WORK/ours_dev"
"$NEWSCLS_BIN" --log-level warn eval --model-dir "$WORK/ours" --data "$DATA" --split dev \
  --out "$WORK/ours_dev/metrics.json" --threads "$THREADS" >/dev/null
ours_dev=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['accuracy'])" "$WORK/ours_dev/metrics.json")
timed ours_predict_small "$NEWSCLS_BIN" predict --model-dir "$WORK/ours" --input "$WORK/titles.txt" \
  --output "$WORK/pred_small.tsv" --format tsv --threads "$THREADS"
timed ours_predict "$NEWSCLS_BIN" predict --model-dir "$WORK/ours" --input "$WORK/titles_big.txt" \
  --output "$WORK/pred_big.tsv" --format tsv --threads "$THREADS"
timed ours_predict_jsonl "$NEWSCLS_BIN" predict --model-dir "$WORK/ours" --input "$WORK/titles_big.txt" \
  --output "$WORK/pred_big.jsonl" --threads "$THREADS"
[[ $(wc -l <"$WORK/pred_big.tsv") == "$n_big" ]] || { echo "newscls predicted the wrong number of lines" >&2; exit 1; }

rate() { awk -v n="$1" -v s="$2" 'BEGIN {printf "%.0f", n / s}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
peer_rate=$(rate "$n_big" "$SECONDS_peer_predict")
ours_rate=$(rate "$n_big" "$SECONDS_ours_predict")
ours_rate_jsonl=$(rate "$n_big" "$SECONDS_ours_predict_jsonl")
ours_steady=$(awk -v nb="$n_big" -v ns="$n_small" -v tb="$SECONDS_ours_predict" -v ts="$SECONDS_ours_predict_small" \
  'BEGIN {printf "%.0f", (nb - ns) / (tb - ts)}')
model_mb=$(du -sm "$WORK/ours" | cut -f1)

peer50_rate=$(rate "$n_big" "$SECONDS_peer50_predict")
echo "# $(date -u +%FT%TZ) commit $(git -C "$root" rev-parse --short HEAD), load average $(cut -d ' ' -f1-3 /proc/loadavg)"
printf '\n%-34s %14s %14s %14s %10s\n' "measure" "fastText dim100" "fastText dim50" "newscls" "ratio"
printf '%-34s %14s %14s %14s\n' "dev accuracy" "$DEVACC_peer" "$DEVACC_peer50" "$ours_dev"
printf '%-34s %14s %14s %14s %10s\n' "test accuracy" "$peer_acc" "$ACC_peer50" "$ours_acc" "$(ratio "$ours_acc" "$peer_acc")"
printf '%-34s %14s %14s %14s %10s\n' "train wall s (whole command)" "$SECONDS_peer_train" "$SECONDS_peer50_train" \
  "$SECONDS_ours_train" "$(ratio "$SECONDS_ours_train" "$SECONDS_peer_train")"
printf '%-34s %14s %14s %14s %10s\n' "train CPU s (user + sys)" "$CPU_peer_train" "$CPU_peer50_train" \
  "$CPU_ours_train" "$(ratio "$CPU_ours_train" "$CPU_peer_train")"
printf '%-34s %14s %14s %14s %10s\n' "train peak RSS MB" "$RSS_peer_train" "$RSS_peer50_train" "$RSS_ours_train" \
  "$(ratio "$RSS_ours_train" "$RSS_peer_train")"
printf '%-34s %14s %14s %14s %10s\n' "predict titles/s, $n_big, end to end" "$peer_rate" "$peer50_rate" "$ours_rate" \
  "$(ratio "$ours_rate" "$peer_rate")"
printf '%-34s %14s %14s %14s\n' "predict titles/s, jsonl output" "-" "-" "$ours_rate_jsonl"
printf '%-34s %14s %14s %14s\n' "predict titles/s, steady state" "-" "-" "$ours_steady"
printf '%-34s %14s %14s %14s\n' "predict start-up s ($n_small titles)" "-" "-" "$SECONDS_ours_predict_small"
printf '%-34s %14s %14s %14s\n' "predict peak RSS MB" "$RSS_peer_predict" "$RSS_peer50_predict" "$RSS_ours_predict"
printf '%-34s %14s %14s %14s\n' "model size MB" "$(du -sm "$WORK/peer.bin" | cut -f1)" \
  "$(du -sm "$WORK/peer50.bin" | cut -f1)" "$model_mb"
echo "(ratio: newscls / fastText dim100, the issue's setting)"
