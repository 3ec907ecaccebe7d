#!/usr/bin/env bash
# The tuning runs behind docs/BENCHMARKS.md's choices, measured on dev only (the tfidf-rf rows
# are the first, 30-tree round; the doc keeps the figures of the rounds that set today's defaults,
# git history the rest).
#
# Each row is one `newscls train` of a family with some --set overrides. Training reads a data
# folder whose test.txt is a link to dev.txt, so the evaluation that `train` runs at its end is
# on dev and no test figure is computed while tuning; the chosen configuration's test figure
# comes once, from the bar runs (bench_tfidf_rf.sh, bench_fasttext.sh, the bert default run).
# Accuracy runs are niced (these machines are shared); times are printed but are not
# comparable across rows measured at different loads.
#
#   NEWSCLS_DATA=/path/to/thucnews scripts/bench/tune_dev.sh tfidf-rf   # 8 rows of 30 trees
#   scripts/bench/tune_dev.sh fasttext            # design choices, seed 1 (SEEDS="1 2": both), one thread
#     (rows after default: the design built up step by step, then one change to the default each)
#   scripts/bench/tune_dev.sh bert                # epochs (2 vs 5) and the trigram table
#   ROWS="sqrt_l3" scripts/bench/tune_dev.sh tfidf-rf   # only the named rows
#   EXISTING="default=/path/to/bert" scripts/bench/tune_dev.sh bert
#       (a row from a bundle trained elsewhere on the real data: evaluated with `eval --split dev`;
#        its per-epoch dev macro-F1 comes from its metrics.json)
# Env: NEWSCLS_DATA (required, in every example above: the folder of the full THUCNews data,
# train/dev/test.txt and class.txt), NEWSCLS_BIN, WORK (kept: a row already measured there with the same
# binary, plugins, data and settings is not rerun, and is marked "(kept)").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${NEWSCLS_BIN:-$root/build/apps/newscls/newscls}
: "${NEWSCLS_DATA:?set NEWSCLS_DATA to the folder of the full THUCNews data (train/dev/test.txt, class.txt)}"
data=$NEWSCLS_DATA
model=${1:?usage: tune_dev.sh tfidf-rf|fasttext|bert}
work=${WORK:-/tmp/newscls-tune-$model}
[[ -x $bin ]] || { echo "error: no newscls binary at $bin (set NEWSCLS_BIN)" >&2; exit 1; }
[[ -f $data/dev.txt ]] || { echo "error: no dev.txt in $data (set NEWSCLS_DATA)" >&2; exit 1; }

# name|seed|threads|--set overrides (space-separated key=value)
# One factor at a time around the default of 56dd0ff, when the table was made (sqrt candidates
# per split, leaves of 3 draws, 50k character 1-2-gram features, L2 rows; pinned in $t, since
# the defaults have changed), then the earlier starting point sqrt*4 with leaves of 1, then the
# trigram row again at 100 trees. The forest's split search has changed since (BENCHMARKS "a
# faster split search"), so a rerun grows other trees than the table's.
rows_tfidf_rf() {
  local t="n_trees=30 max_features=50000 max_features_per_split=sqrt l2_normalize=true"
  cat <<EOF
default|1|2|$t
leaf2|1|2|$t min_samples_leaf=2
leaf5|1|2|$t min_samples_leaf=5
sqrt2|1|2|$t max_features_per_split=sqrt*2
features20k|1|2|$t max_features=20000
trigrams|1|2|$t ngram_max=3
leaf1|1|2|$t min_samples_leaf=1
sqrt4_l1|1|2|$t max_features_per_split=sqrt*4 min_samples_leaf=1
trigrams_100|1|2|n_trees=100 ngram_max=3
EOF
}

# One thread: Hogwild with two threads is not reproducible; one thread is, for a seed.
rows_fasttext() {
  local name sets seed
  while IFS='|' read -r name sets; do
    for seed in ${SEEDS:-1}; do echo "$name|$seed|1|$sets"; done
  done <<EOF
default|
plain|idf=false dropout=0 loss=softmax
idf|dropout=0 loss=softmax
idf_dropout|loss=softmax
no_dropout|dropout=0
ngram_min_count1|ngram_min_count=1
dim100|dim=100
ngram4|ngram_max=4
skip_bigrams|skip_bigrams=true
label_smoothing|label_smoothing=0.1
l2_pooling|pooling=l2
lr1|lr=1.0
ensemble2|ensemble=2
quantize|quantize=true
EOF
}

# Default when the table was made: 2 MLM epochs, 2 fine-tuning epochs, no trigram table, no
# joined titles (join_prob 0, pinned: it is 0.25 since 2026-12-01). Seed 1 everywhere.
rows_bert() {
  cat <<EOF
epochs5|1|2|join_prob=0 epochs=5
nopt_bi|1|2|join_prob=0 pretrain_epochs=0
nopt_tri|1|2|join_prob=0 pretrain_epochs=0 trigram_buckets=32768
EOF
}

case $model in
  tfidf-rf) rows=$(rows_tfidf_rf) ;;
  fasttext) rows=$(rows_fasttext) ;;
  bert) rows=$(rows_bert) ;;
  *) echo "error: unknown model '$model'" >&2; exit 2 ;;
esac

mkdir -p "$work/devdata"
for f in train.txt dev.txt class.txt; do ln -sfn "$(realpath "$data/$f")" "$work/devdata/$f"; done
ln -sfn "$(realpath "$data/dev.txt")" "$work/devdata/test.txt"

# summary DIR: accuracy, macro-F1, train seconds and the per-epoch dev macro-F1 (bert) of a
# metrics.json whose evaluation was on dev.
summary() {
  python3 - "$1" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
t = m.get("training", {})
hist = t.get("history") or t.get("fine_tuning", {}).get("history") or []
epochs = ",".join(f"{h['dev_macro_f1']:.4f}" for h in hist if "dev_macro_f1" in h)
secs = t.get("train_seconds", 0.0)
print(f"{m['accuracy']:.4f} {m['macro_f1']:.4f} {secs:.1f} {epochs or '-'}")
EOF
}

wanted() { [[ -z ${ROWS:-} ]] || [[ " $ROWS " == *" $1 "* ]]; }

# What a kept row must have been measured with: the binary and its family plugins, the data.
build_key() {
  local src plugins=()
  src="$(dirname "$bin")/../../src"  # a build tree's plugins (an installed binary has none here)
  [[ -d $src ]] && mapfile -t plugins < <(find "$src" -maxdepth 2 -name 'libnewscls_*.so' | sort)
  { cat "$bin" "${plugins[@]}" | sha256sum | cut -c1-16; cat "$data/train.txt" "$data/dev.txt" | sha256sum | cut -c1-16; } | tr '\n' ' '
}
key=$(build_key)
# kept DIR ROW-KEY: whether DIR holds a result measured under ROW-KEY; else DIR is cleared.
kept() {
  if [[ -f $1/metrics.json && "$(cat "$1.key" 2>/dev/null)" == "$2" ]]; then return 0; fi
  rm -rf "$1" "$1.key"
  return 1
}

echo "# $model on dev ($(wc -l <"$data/dev.txt") titles), $(date -u +%FT%TZ), commit $(git -C "$root" rev-parse --short HEAD)"
echo "# binary $bin; $(nproc) cores, load average $(cut -d ' ' -f1-3 /proc/loadavg)"
printf '%-18s %-4s %-7s %-9s %-8s %-8s %s\n' row seed threads dev_acc dev_f1 train_s "dev_f1_per_epoch | settings"

for spec in ${EXISTING:-}; do
  name=${spec%%=*} dir=${spec#*=}
  out="$work/$name.existing"
  row_key="$key $(sha256sum <"$dir/manifest.json" | cut -c1-16)"
  note=" (kept)"
  if ! kept "$out" "$row_key"; then
    mkdir -p "$out"
    nice -n 10 "$bin" --log-level warn eval --model-dir "$dir" --data "$data" --split dev \
      --out "$out/metrics.json" >/dev/null
    echo "$row_key" >"$out.key"
    note=""
  fi
  read -r acc f1 _ _ < <(summary "$out/metrics.json")
  read -r _ _ secs epochs < <(summary "$dir/metrics.json")
  printf '%-18s %-4s %-7s %-9s %-8s %-8s %s\n' "$name" - - "$acc" "$f1" "$secs" "$epochs | bundle $dir$note"
done

while IFS='|' read -r name seed threads sets; do
  wanted "$name" || continue
  dir="$work/$name.s$seed"
  set_args=()
  for kv in $sets; do set_args+=(--set "$kv"); done
  row_key="$key $seed $threads $sets"
  note=" (kept)"
  if ! kept "$dir" "$row_key"; then
    nice -n 10 "$bin" --log-level info train --model "$model" --data "$work/devdata" --out "$dir" \
      --seed "$seed" --threads "$threads" "${set_args[@]}" >"$dir.stdout" 2>"$dir.log" ||
      { echo "error: row $name failed, see $dir.log" >&2; exit 1; }
    echo "$row_key" >"$dir.key"
    note=""
  fi
  read -r acc f1 secs epochs < <(summary "$dir/metrics.json")
  printf '%-18s %-4s %-7s %-9s %-8s %-8s %s\n' "$name" "$seed" "$threads" "$acc" "$f1" "$secs" \
    "$epochs | ${sets:-defaults}$note"
done <<<"$rows"
