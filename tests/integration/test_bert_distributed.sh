#!/usr/bin/env bash
# Data-parallel bert through the real binary on loopback: 2 ranks with batch B each end with the
# same weights as 1 process with batch 2B (20 steps, dropout off, a sparse bigram table), with
# the sparse gradients all-gathered and all-reduced; the bundle records the world size; a family
# that cannot train distributed refuses. Faults: test_bert_distributed_faults.sh.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/dist_lib.sh"
dir=$(scratch)
make_slice "$dir/data" 400 100
launch="$NEWSCLS_SOURCE_DIR/scripts/train_distributed.sh"
export NEWSCLS_BIN NEWSCLS_DIST_LOGS="$dir/logs"
tiny=(train --model bert --data "$dir/data" --threads 1 --seed 5 --set layers=1 --set hidden=32
      --set heads=2 --set ff=64 --set max_len=32 --set dropout=0 --set attention_dropout=0
      --set bigram_buckets=512 --set pretrain_epochs=0 --set epochs=1 --set max_steps=20 --set calibrate=false)

"$NEWSCLS_BIN" "${tiny[@]}" --set batch_size=16 --out "$dir/one" >/dev/null 2>"$dir/one.err"
MASTER_PORT=$(free_port) "$launch" 2 "${tiny[@]}" --set batch_size=8 --out "$dir/two" >/dev/null 2>"$dir/two.err"
NEWSCLS_SPARSE_REDUCE=dense MASTER_PORT=$(free_port) "$launch" 2 "${tiny[@]}" --set batch_size=8 \
  --out "$dir/dense" >/dev/null 2>"$dir/dense.err"

for run in one two dense; do
  assert_eq 20 "$(json_get "$dir/$run/manifest.json" "j['training']['steps']")" "$run steps"
done
assert_eq 2 "$(json_get "$dir/two/manifest.json" "j['training']['world_size']")" "world size in the manifest"
assert_eq 2 "$(json_get "$dir/two/metrics.json" "j['training']['world_size']")" "world size in metrics.json"
assert_eq gather "$(json_get "$dir/two/manifest.json" "j['training']['distributed']['sparse_reduce']")" "sparse mode"
assert_eq dense "$(json_get "$dir/dense/manifest.json" "j['training']['distributed']['sparse_reduce']")" "sparse mode"
for run in two dense; do
  diff=$(max_weight_diff "$dir/one" "$dir/$run")
  echo "max |w(1 rank, batch 16) - w(2 ranks, batch 8, $run)| = $diff"
  assert_eq True "$(python3 -c "print($diff <= 1e-5)")" "2 ranks ($run) match 1 rank within 1e-5 (got $diff)"
done
# The comparison can fail: a different global batch gives other weights.
diff=$(max_weight_diff "$dir/one" "$dir/two" >/dev/null; "$NEWSCLS_BIN" "${tiny[@]}" --set batch_size=8 \
  --out "$dir/half" >/dev/null 2>&1; max_weight_diff "$dir/one" "$dir/half")
assert_eq True "$(python3 -c "print($diff > 1e-3)")" "batch 8 on one rank differs from batch 16 (got $diff)"

# pretrain: 2 ranks, one encoder bundle written by rank 0.
MASTER_PORT=$(free_port) "$launch" 2 pretrain --model bert --data "$dir/data" --threads 1 --set layers=1 \
  --set hidden=32 --set heads=2 --set ff=64 --set max_len=32 --set batch_size=8 --set bigram_buckets=512 \
  --set pretrain_epochs=1 --set pretrain_max_steps=10 --out "$dir/encoder" >/dev/null 2>"$dir/pretrain.err"
assert_eq "10 2" "$(json_get "$dir/encoder/manifest.json" "j['training']['pretrain_steps'], j['training']['world_size']" | tr -d '(),')" "pretrain steps and world size"

expect_exit 2 "$dir/refuse.err" env WORLD_SIZE=2 RANK=0 "$NEWSCLS_BIN" train --model fasttext --data "$dir/data" \
  --out "$dir/ft"
assert_contains "$dir/refuse.err" "cannot train distributed"

echo "bert distributed: ok"
