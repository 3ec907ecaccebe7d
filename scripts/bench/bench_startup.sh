#!/usr/bin/env bash
# Start-up cost of the tool, two binaries side by side (e.g. before and after a change),
# runs interleaved so that both see the same machine load:
#   - `newscls --help`: wall time and peak RSS (median of RUNS runs);
#   - `newscls predict` end to end (start-up included) on test titles with each bundle given:
#     titles/s, median of RUNS runs; the 10,000 test titles, and for fasttext also 50,000
#     (the test titles five times), the sizes of the issue's bars;
#   - with BERT_BUNDLE=DIR: `newscls predict` of 100 test titles with a bert bundle, where
#     loading the plugin and LibTorch is most of the time.
#
#   NEWSCLS_DATA=/path/to/thucnews [BERT_BUNDLE=DIR] scripts/bench/bench_startup.sh OLD_BIN NEW_BIN TFIDF_RF_BUNDLE FASTTEXT_BUNDLE [RUNS]
# NEWSCLS_DATA (required): the folder of the full THUCNews data (train/dev/test.txt, class.txt);
# its test.txt gives the titles.
set -euo pipefail
(( $# >= 4 )) || { echo "usage: $0 OLD_BIN NEW_BIN TFIDF_RF_BUNDLE FASTTEXT_BUNDLE [RUNS]" >&2; exit 2; }
old=$1 new=$2 tfidf=$3 fasttext=$4 runs=${5:-5}
: "${NEWSCLS_DATA:?set NEWSCLS_DATA to the folder of the full THUCNews data (train/dev/test.txt, class.txt)}"
data=$NEWSCLS_DATA
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cut -f1 "$data/test.txt" >"$work/test10k.txt"
for _ in 1 2 3 4 5; do cat "$work/test10k.txt"; done >"$work/test50k.txt"
head -100 "$work/test10k.txt" >"$work/test100.txt"

# median of the numbers on stdin
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# one_run BIN ARGS...: prints "seconds peak_kb"
one_run() {
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  cat "$work/time"
}

measure() {  # label args...
  local label=$1
  shift
  : >"$work/old.txt"
  : >"$work/new.txt"
  for _ in $(seq "$runs"); do
    one_run "$old" "$@" >>"$work/old.txt"
    one_run "$new" "$@" >>"$work/new.txt"
  done
  local os om ns nm
  os=$(cut -d' ' -f1 "$work/old.txt" | median); om=$(cut -d' ' -f2 "$work/old.txt" | median)
  ns=$(cut -d' ' -f1 "$work/new.txt" | median); nm=$(cut -d' ' -f2 "$work/new.txt" | median)
  awk -v l="$label" -v os="$os" -v om="$om" -v ns="$ns" -v nm="$nm" 'BEGIN {
    printf "%-34s old %7.3f s %7.1f MB | new %7.3f s %7.1f MB | old/new time %.2fx\n", l, os, om / 1024, ns, nm / 1024, os / ns }' 
  echo "$os $ns" >"$work/last"
}

rate() {  # titles label: titles/s of the last measurement
  read -r os ns <"$work/last"
  awk -v n="$1" -v l="$2" -v os="$os" -v ns="$ns" 'BEGIN { printf "%-34s old %8.0f titles/s | new %8.0f titles/s\n", l, n / os, n / ns }' 
}

echo "median of $runs interleaved runs; old=$old new=$new; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
measure "--help" --help
measure "predict tfidf-rf 10k" predict --model-dir "$tfidf" --input "$work/test10k.txt" --log-level warn
rate 10000 "predict tfidf-rf 10k"
measure "predict fasttext 10k" predict --model-dir "$fasttext" --input "$work/test10k.txt" --log-level warn
rate 10000 "predict fasttext 10k"
measure "predict fasttext 50k" predict --model-dir "$fasttext" --input "$work/test50k.txt" --log-level warn
rate 50000 "predict fasttext 50k"
if [[ -n ${BERT_BUNDLE:-} ]]; then
  measure "predict bert 100" predict --model-dir "$BERT_BUNDLE" --input "$work/test100.txt" --threads 1 --log-level warn
fi
