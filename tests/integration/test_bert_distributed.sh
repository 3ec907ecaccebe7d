#!/usr/bin/env bash
# ctest-labels: bert-training
# Data-parallel bert through the real binary on loopback: 2 ranks with batch B each end with the
# same weights as 1 process with batch 2B (20 steps, dropout off, a sparse bigram table, its
# rows all-gathered); the bundle records the world size; a family that cannot train distributed
# refuses; ranks with different settings, or resumed under other settings, refuse; a rank
# other than 0 makes no work folder. The dense sparse exchange and pretrain: test_bert_distributed_modes_slow.sh; faults:
# test_bert_distributed_faults_slow.sh.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/dist_lib.sh"
tiny_setup

"$NEWSCLS_BIN" "${tiny[@]}" --set batch_size=16 --out "$dir/one" >/dev/null 2>"$dir/one.err"
MASTER_PORT=$(free_port) "$launch" 2 "${tiny[@]}" --set batch_size=8 --out "$dir/two" >/dev/null 2>"$dir/two.err"

for run in one two; do
  assert_eq 20 "$(json_get "$dir/$run/manifest.json" "j['training']['steps']")" "$run steps"
done
assert_eq 2 "$(json_get "$dir/two/manifest.json" "j['training']['world_size']")" "world size in the manifest"
assert_eq 2 "$(json_get "$dir/two/metrics.json" "j['training']['world_size']")" "world size in metrics.json"
assert_eq gather "$(json_get "$dir/two/manifest.json" "j['training']['distributed']['sparse_reduce']")" "sparse mode"
for run in two; do
  diff=$(max_weight_diff "$dir/one" "$dir/$run")
  echo "max |w(1 rank, batch 16) - w(2 ranks, batch 8, $run)| = $diff"
  assert_eq True "$(python3 -c "print($diff <= 1e-5)")" "2 ranks ($run) match 1 rank within 1e-5 (got $diff)"
done
# The comparison can fail: a different global batch gives other weights.
diff=$(max_weight_diff "$dir/one" "$dir/two" >/dev/null; "$NEWSCLS_BIN" "${tiny[@]}" --set batch_size=8 \
  --out "$dir/half" >/dev/null 2>&1; max_weight_diff "$dir/one" "$dir/half")
assert_eq True "$(python3 -c "print($diff > 1e-3)")" "batch 8 on one rank differs from batch 16 (got $diff)"

# Resumed under another learning rate, every rank refuses at once (none waits out the 300 s
# default --dist-timeout for the one that refused; 120 s leaves room for a busy machine).
start=$SECONDS
expect_exit 2 "$dir/resume.err" env MASTER_PORT="$(free_port)" "$launch" 2 "${tiny[@]}" --set batch_size=8 \
  --set lr=1e-3 --resume --out "$dir/two"
(( SECONDS - start < 120 )) || fail "a rank waited $((SECONDS - start)) s for the one that refused"
assert_contains "$dir/resume.err" "holds a training started with other settings"
assert_contains "$dir/logs/rank1.log" "holds a training started with other settings"

# Ranks started with different settings stop before training, naming the disagreement.
port=$(free_port)
WORLD_SIZE=2 RANK=0 MASTER_PORT=$port "$NEWSCLS_BIN" "${tiny[@]}" --set batch_size=8 --out "$dir/mixed" \
  >/dev/null 2>"$dir/mixed0.err" &
pid0=$!
set +e
WORLD_SIZE=2 RANK=1 MASTER_PORT=$port "$NEWSCLS_BIN" "${tiny[@]}" --set batch_size=8 --set lr=1e-3 --set weight_decay=0.05 \
  --out "$dir/mixed_rank1" >/dev/null 2>"$dir/mixed1.err"
rc1=$?
wait "$pid0"
rc0=$?
set -e
((rc0 == 1 && rc1 == 1)) || fail "ranks with different settings exited $rc0 and $rc1"
assert_contains "$dir/mixed0.err" "the ranks disagree on the training settings"
# Which settings: they were two hashes.
assert_contains "$dir/mixed0.err" "config.lr, config.weight_decay differ"
assert_contains "$dir/mixed1.err" "config.lr, config.weight_decay differ"
[[ ! -e "$dir/mixed/manifest.json" ]] || fail "a bundle was written"
# Rank 1, as on a machine of its own (its --out elsewhere), writes nothing: it made an empty
# <out>.work there.
[[ ! -e "$dir/mixed_rank1.work" ]] || fail "rank 1 made the work folder $dir/mixed_rank1.work"

# Ranks started with different WORLD_SIZEs are told so as they join (rank 1 waited out the
# timeout for a rank 2, and both then named a missing rank).
port=$(free_port)
start=$SECONDS
WORLD_SIZE=2 RANK=0 MASTER_PORT=$port "$NEWSCLS_BIN" "${tiny[@]}" --out "$dir/sizes" >/dev/null 2>"$dir/sizes0.err" &
pid0=$!
set +e
WORLD_SIZE=3 RANK=1 MASTER_PORT=$port "$NEWSCLS_BIN" "${tiny[@]}" --out "$dir/sizes" >/dev/null 2>"$dir/sizes1.err"
rc1=$?
wait "$pid0"
rc0=$?
set -e
((rc0 == 2 && rc1 != 0)) || { cat "$dir/sizes0.err" "$dir/sizes1.err" >&2; fail "ranks with two WORLD_SIZEs exited $rc0 and $rc1"; }
assert_contains "$dir/sizes0.err" "rank 1 was started with WORLD_SIZE 3 and rank 0 with WORLD_SIZE 2"
(( SECONDS - start < 120 )) || fail "ranks with two WORLD_SIZEs took $((SECONDS - start)) s to stop"

expect_exit 2 "$dir/refuse.err" env WORLD_SIZE=2 RANK=0 "$NEWSCLS_BIN" train --model fasttext --data "$dir/data" \
  --out "$dir/ft"
assert_contains "$dir/refuse.err" "cannot train distributed"
expect_exit 2 "$dir/rank.err" env WORLD_SIZE=2 RANK=2 "$NEWSCLS_BIN" "${tiny[@]}" --out "$dir/rank"
assert_contains "$dir/rank.err" "RANK 2 is outside 0..1"

echo "bert distributed: ok"
