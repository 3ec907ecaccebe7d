#!/usr/bin/env bash
# What `train --init hf:bert-base-chinese` costs on this machine: a random checkpoint of
# bert-base-chinese's size (12 layers, hidden 768, 12 heads, FF 3072, the real 21,128-token
# vocabulary, F16 as published) written by make_hf_checkpoint.py, then in one run:
#   - fine-tuning titles/s from it, all layers trained and with freeze_layers=FREEZE;
#   - predict titles/s of the imported classifier and of an own bundle of the same
#     architecture (character vocabulary, no n-gram tables), whose ratio should be near 1.
# The machine is shared and noisy: compare the ratios within one run, not across runs.
#
#   NEWSCLS_DATA=/path/to/thucnews HF_VOCAB=/path/to/vocab.txt scripts/bench/bench_hf_bert_base.sh
#                                                    # TITLES=256 FREEZE=10 THREADS=2
# Env: NEWSCLS_DATA (required: the folder of the full THUCNews data, train/dev/test.txt and class.txt),
# HF_VOCAB (required: bert-base-chinese's vocab.txt, its 21,128 WordPiece tokens),
# NEWSCLS_BIN (default build/apps/newscls/newscls), TITLES (training and prediction titles), FREEZE, THREADS.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${NEWSCLS_BIN:-$root/build/apps/newscls/newscls}
: "${NEWSCLS_DATA:?set NEWSCLS_DATA to the folder of the full THUCNews data (train/dev/test.txt, class.txt)}"
: "${HF_VOCAB:?set HF_VOCAB to the vocab.txt of bert-base-chinese (its 21,128 WordPiece tokens)}"
data=$NEWSCLS_DATA
vocab=$HF_VOCAB
titles=${TITLES:-256}
freeze=${FREEZE:-10}
threads=${THREADS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 "$root/scripts/bench/make_hf_checkpoint.py" "$work/ck" --vocab "$vocab"
mkdir -p "$work/data"
head -n "$titles" "$data/train.txt" >"$work/data/train.txt"
head -n 64 "$data/dev.txt" >"$work/data/dev.txt"
head -n 64 "$data/test.txt" >"$work/data/test.txt"
cp "$data/class.txt" "$work/data/"
head -n "$titles" "$data/test.txt" | cut -f1 >"$work/titles.txt"

rate() { python3 -c "import json,sys; print('%.1f' % json.load(open(sys.argv[1]))['training']['train_titles_per_s'])" "$1/manifest.json"; }
# predict_rate BUNDLE: titles/s of `predict` over titles.txt, model loading excluded (a
# one-title run is subtracted).
predict_rate() {
  head -n 1 "$work/titles.txt" >"$work/one.txt"
  local t0 t1 t2
  t0=$(date +%s.%N)
  "$bin" --log-level warn predict --model-dir "$1" --input "$work/one.txt" --output "$work/p1" --threads "$threads"
  t1=$(date +%s.%N)
  "$bin" --log-level warn predict --model-dir "$1" --input "$work/titles.txt" --output "$work/p" --threads "$threads"
  t2=$(date +%s.%N)
  python3 -c "import sys; a,b,c,n=map(float,sys.argv[1:]); print('%.1f' % ((n - 1) / max((c-b)-(b-a), 1e-9)))" \
    "$t0" "$t1" "$t2" "$titles"
}

echo "# bert-base-sized checkpoint (12x768, FF 3072, vocab 21128), $titles titles, --threads $threads"
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
common=(--data "$work/data" --threads "$threads" --set epochs=1 --set batch_size=32)
"$bin" --log-level warn train --model bert --init "hf:$work/ck" --out "$work/full" "${common[@]}" >/dev/null
echo "fine-tune, all layers:           $(rate "$work/full") titles/s"
"$bin" --log-level warn train --model bert --init "hf:$work/ck" --out "$work/frozen" "${common[@]}" \
  --set freeze_layers="$freeze" >/dev/null
echo "fine-tune, freeze_layers=$freeze:     $(rate "$work/frozen") titles/s"

"$bin" --log-level warn import-hf --hf-dir "$work/ck" --out "$work/imported" >/dev/null
own_arch=(--set layers=12 --set hidden=768 --set heads=12 --set ff=3072 --set bigram_buckets=0
  --set trigram_buckets=0 --set pretrain_epochs=0 --set max_steps=1)
"$bin" --log-level warn train --model bert --out "$work/own" "${common[@]}" "${own_arch[@]}" >/dev/null
imported=$(predict_rate "$work/imported")
own=$(predict_rate "$work/own")
echo "predict, imported classifier:    $imported titles/s"
echo "predict, own bundle, same size:  $own titles/s"
python3 -c "import sys; print('imported / own predict: %.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$imported" "$own"
