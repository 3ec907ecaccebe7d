#!/usr/bin/env bash
# Data-parallel bert, the other modes: with the sparse table's gradient all-reduced densely
# (NEWSCLS_SPARSE_REDUCE=dense) 2 ranks with batch B still end with 1 process's weights at
# batch 2B; `pretrain` on 2 ranks writes one encoder bundle recording the world size.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/dist_lib.sh"
tiny_setup

"$NEWSCLS_BIN" "${tiny[@]}" --set batch_size=16 --out "$dir/one" >/dev/null 2>"$dir/one.err"
NEWSCLS_SPARSE_REDUCE=dense MASTER_PORT=$(free_port) "$launch" 2 "${tiny[@]}" --set batch_size=8 \
  --out "$dir/dense" >/dev/null 2>"$dir/dense.err"
assert_eq dense "$(json_get "$dir/dense/manifest.json" "j['training']['distributed']['sparse_reduce']")" "sparse mode"
diff=$(max_weight_diff "$dir/one" "$dir/dense")
echo "max |w(1 rank, batch 16) - w(2 ranks, batch 8, dense)| = $diff"
assert_eq True "$(python3 -c "print($diff <= 1e-5)")" "2 ranks (dense) match 1 rank within 1e-5 (got $diff)"

# pretrain: 2 ranks, one encoder bundle written by rank 0.
MASTER_PORT=$(free_port) "$launch" 2 pretrain --model bert --data "$dir/data" --threads 1 --set layers=1 \
  --set hidden=32 --set heads=2 --set ff=64 --set max_len=32 --set batch_size=8 --set bigram_buckets=512 \
  --set pretrain_epochs=1 --set pretrain_max_steps=10 --out "$dir/encoder" >/dev/null 2>"$dir/pretrain.err"
assert_eq "10 2" "$(json_get "$dir/encoder/manifest.json" "j['training']['pretrain_steps'], j['training']['world_size']" | tr -d '(),')" "pretrain steps and world size"

# Ranks pretraining with different settings stop before pretraining, naming it; a rank with
# other threads (how it runs, not what it computes) is no difference.
pre=(pretrain --model bert --data "$dir/data" --threads 1 --set layers=1 --set hidden=32 --set heads=2 --set ff=64
     --set max_len=32 --set batch_size=8 --set bigram_buckets=512 --set pretrain_epochs=1 --set pretrain_max_steps=2)
port=$(free_port)
WORLD_SIZE=2 RANK=0 MASTER_PORT=$port "$NEWSCLS_BIN" "${pre[@]}" --out "$dir/mixed" >/dev/null 2>"$dir/mixed0.err" &
pid0=$!
set +e
WORLD_SIZE=2 RANK=1 MASTER_PORT=$port "$NEWSCLS_BIN" "${pre[@]}" --set pretrain_lr=1e-3 --out "$dir/mixed" \
  >/dev/null 2>"$dir/mixed1.err"
rc1=$?
wait "$pid0"
rc0=$?
set -e
((rc0 == 1 && rc1 == 1)) || fail "ranks pretraining with different settings exited $rc0 and $rc1"
assert_contains "$dir/mixed0.err" "the ranks disagree on the pretraining settings"
assert_contains "$dir/mixed0.err" "config.pretrain_lr differs"
[[ ! -e "$dir/mixed/manifest.json" ]] || fail "an encoder bundle was written"
port=$(free_port)
WORLD_SIZE=2 RANK=0 MASTER_PORT=$port "$NEWSCLS_BIN" "${pre[@]}" --out "$dir/threads" >/dev/null 2>"$dir/threads0.err" &
pid0=$!
WORLD_SIZE=2 RANK=1 MASTER_PORT=$port "$NEWSCLS_BIN" "${pre[@]}" --set max_threads=2 --out "$dir/threads" \
  >/dev/null 2>"$dir/threads1.err" || { cat "$dir/threads1.err" >&2; fail "rank 1 with max_threads 2"; }
wait "$pid0" || { cat "$dir/threads0.err" >&2; fail "rank 0 beside a rank with max_threads 2"; }

echo "bert distributed modes: ok"
