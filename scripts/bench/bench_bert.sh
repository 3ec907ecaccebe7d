#!/usr/bin/env bash
# Side-by-side training throughput of newscls bert and the PyTorch-Python peer
# (peer_torch_bert.py: torch.nn.TransformerEncoder, same architecture, batch, bucketing),
# each over a grid of thread / OpenBLAS settings, plus `newscls predict` titles/s with the
# default config. The throughput grid pins the peer's architecture on our side (4 layers,
# hidden 256, ff 1024, no n-gram tables), since our default config is smaller.
#
#   NEWSCLS_DATA=/path/to/thucnews scripts/bench/bench_bert.sh      # STEPS=60 per run
#   NEWSCLS_DATA=/path/to/thucnews STEPS=100 CORETYPES="Haswell Zen" scripts/bench/bench_bert.sh
# Env: NEWSCLS_DATA (required: the folder of the full THUCNews data, train/dev/test.txt and class.txt),
# NEWSCLS_BIN (default build/apps/newscls/newscls), STEPS, CORETYPES (OPENBLAS_CORETYPE values; "auto" = unset),
# SETTINGS ("torch_threads:blas_threads" pairs).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${NEWSCLS_BIN:-$root/build/apps/newscls/newscls}
: "${NEWSCLS_DATA:?set NEWSCLS_DATA to the folder of the full THUCNews data (train/dev/test.txt, class.txt)}"
data=$NEWSCLS_DATA
steps=${STEPS:-60}
coretypes=${CORETYPES:-Haswell}
settings=${SETTINGS:-"1:1 2:1 1:2"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Full train split (same vocabulary, same batches); tiny dev/test so train's evaluations
# stay out of the way. Throughput is measured over training steps only on both sides.
mkdir -p "$work/data"
cp "$data/train.txt" "$data/class.txt" "$work/data/"
head -n 200 "$data/dev.txt" >"$work/data/dev.txt"
head -n 200 "$data/test.txt" >"$work/data/test.txt"

echo "# bert training throughput, $steps steps of batch 64, layers 4 hidden 256 heads 4 ff 1024"
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
printf '%-10s %-8s %-13s %-12s %s\n' side coretype torch_threads blas_threads titles_per_s
peer_arch=(--set layers=4 --set hidden=256 --set heads=4 --set ff=1024 --set bigram_buckets=0 --set trigram_buckets=0)
best_ours=0 best_peer=0 best_ours_at="" best_peer_at=""
for core in $coretypes; do
  for s in $settings; do
    t=${s%%:*} b=${s##*:}
    env_core=(); [[ "$core" != auto ]] && env_core=(OPENBLAS_CORETYPE="$core")
    env "${env_core[@]}" OPENBLAS_NUM_THREADS="$b" NEWSCLS_NO_BLAS_TUNING=1 "$bin" --log-level warn \
      train --model bert --data "$work/data" --out "$work/run" --threads "$t" \
      "${peer_arch[@]}" --set max_threads="$t" --set pretrain_epochs=0 --set epochs=1 --set max_steps="$steps" >/dev/null
    ours=$(python3 -c "import json;t=json.load(open('$work/run/manifest.json'))['training'];assert t['threads']==$t,t['threads'];print(round(t['train_titles_per_s'],1))")
    peer=$(env "${env_core[@]}" OPENBLAS_NUM_THREADS="$b" /usr/bin/python3 "$root/scripts/bench/peer_torch_bert.py" \
      --data "$data" --steps "$steps" --threads "$t" --predict-titles 0 2>/dev/null | python3 -c "import json,sys;print(round(json.load(sys.stdin)['train_titles_per_s'],1))")
    printf '%-10s %-8s %-13s %-12s %s\n' newscls "$core" "$t" "$b" "$ours"
    printf '%-10s %-8s %-13s %-12s %s\n' pytorch "$core" "$t" "$b" "$peer"
    if python3 -c "import sys;sys.exit(0 if $ours>$best_ours else 1)"; then best_ours=$ours best_ours_at="$core $t:$b"; fi
    if python3 -c "import sys;sys.exit(0 if $peer>$best_peer else 1)"; then best_peer=$peer best_peer_at="$core $t:$b"; fi
  done
done
echo "best newscls: $best_ours titles/s ($best_ours_at)"
echo "best pytorch: $best_peer titles/s ($best_peer_at)"
python3 -c "print('ratio newscls/pytorch: %.2f (bar: >= 1.5)' % ($best_ours/$best_peer))"

# Prediction through the CLI on the 10,000 test titles with the default config (weights
# from a short run: speed does not depend on them), 2 threads.
"$bin" --log-level warn train --model bert --data "$work/data" --out "$work/default" \
  --set pretrain_epochs=0 --set epochs=1 --set max_steps="$steps" >/dev/null
start=$(date +%s.%N)
"$bin" --log-level warn predict --model-dir "$work/default" --input "$data/test.txt" --output "$work/pred.jsonl" --threads 2
end=$(date +%s.%N)
n=$(wc -l <"$work/pred.jsonl")
python3 -c "print('newscls predict: %d titles in %.2f s = %.0f titles/s (bar: >= 1000)' % ($n, $end-$start, $n/($end-$start)))"
