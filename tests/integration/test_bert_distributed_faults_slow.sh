#!/usr/bin/env bash
# Faults of a 2-rank bert training on loopback: a rank killed with SIGKILL mid-epoch makes the
# other exit non-zero within the timeout naming the lost rank, and no bundle is written;
# restarting both ranks with --resume continues from the last checkpoint and ends with the
# weights of a run never interrupted. Killing rank 0 (the store's host), or stopping it (hung),
# stops rank 1 naming it;
# SIGINT to one rank stops both. A rank whose peer never comes names it after the timeout.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/dist_lib.sh"
dir=$(scratch)
make_slice "$dir/data" 3000 20
timeout_s=8
args=(--log-level info train --model bert --data "$dir/data" --threads 1 --seed 3
      --set layers=1 --set hidden=32 --set heads=2 --set ff=64 --set max_len=32 --set batch_size=16
      --set bigram_buckets=512 --set pretrain_epochs=0 --set epochs=3 --set patience=10 --set calibrate=false)
export NEWSCLS_BIN NEWSCLS_DIST_LOGS="$dir/logs"
launch="$NEWSCLS_SOURCE_DIR/scripts/train_distributed.sh"
alone=("${args[@]}" --dist-timeout 2)
args+=(--dist-timeout "$timeout_s")

MASTER_PORT=$(free_port) "$launch" 2 "${args[@]}" --out "$dir/straight" >/dev/null 2>"$dir/straight.err"

port=$(free_port)
WORLD_SIZE=2 RANK=0 MASTER_PORT=$port "$NEWSCLS_BIN" "${args[@]}" --out "$dir/killed" >/dev/null 2>"$dir/rank0.err" &
pid0=$!
WORLD_SIZE=2 RANK=1 MASTER_PORT=$port "$NEWSCLS_BIN" "${args[@]}" --out "$dir/killed" >/dev/null 2>"$dir/rank1.err" &
pid1=$!
# under_way RUN: until ranks $pid0 and $pid1 are training (RUN's first epoch has its checkpoint).
under_way() {
  poll_until "$POLL_DEADLINE_S" test -s "$dir/$1.work/bert_checkpoint/state.bin" ||
    { kill -KILL "$pid0" "$pid1" 2>/dev/null || true; fail "no checkpoint of $1's first epoch after $POLL_DEADLINE_S s"; }
}
under_way killed
POLL_INTERVAL_S=0.02 wait_for_cpu "$pid1" 0.2 "rank 1 to get into its second epoch (0.2 CPU-seconds of its steps)"
kill -KILL "$pid1"
killed_at=$SECONDS
# Within the timeout; the rest of the deadline is room for a busy machine.
wait_for_exit "$pid0" "rank 0 to stop after rank 1 was killed (timeout $timeout_s s)" $((timeout_s + 30))
wait "$pid0" && fail "rank 0 finished although rank 1 was killed"
echo "rank 0 stopped $((SECONDS - killed_at)) s after rank 1 was killed"
assert_contains "$dir/rank0.err" "lost rank 1"
[[ ! -e "$dir/killed/manifest.json" ]] || fail "a run that lost a rank wrote a bundle"

MASTER_PORT=$(free_port) "$launch" 2 "${args[@]}" --out "$dir/killed" --resume >/dev/null 2>"$dir/resume.err"
assert_contains "$dir/resume.err" "resuming fine-tuning at epoch"
assert_contains "$dir/logs/rank1.log" "resuming fine-tuning at epoch"
assert_eq 3 "$(json_get "$dir/killed/manifest.json" "len(j['training']['history'])")" "epochs after resume"
assert_eq 2 "$(json_get "$dir/killed/manifest.json" "j['training']['world_size']")" "world size"
diff=$(max_weight_diff "$dir/straight" "$dir/killed")
assert_eq True "$(python3 -c "print($diff == 0)")" "resumed weights equal the uninterrupted run's (max diff $diff)"

# Killing rank 0, which also hosts the store: rank 1 names it.
port=$(free_port)
WORLD_SIZE=2 RANK=0 MASTER_PORT=$port "$NEWSCLS_BIN" "${args[@]}" --out "$dir/root" >/dev/null 2>&1 &
pid0=$!
WORLD_SIZE=2 RANK=1 MASTER_PORT=$port "$NEWSCLS_BIN" "${args[@]}" --out "$dir/root" >/dev/null 2>"$dir/root1.err" &
pid1=$!
under_way root
kill -KILL "$pid0"
wait_for_exit "$pid1" "rank 1 to stop after rank 0 was killed (timeout $timeout_s s)" $((timeout_s + 30))
wait "$pid1" && fail "rank 1 finished although rank 0 was killed"
assert_contains "$dir/root1.err" "lost rank 0"

# Rank 0 hung (stopped, not dead): rank 1's collective times out, and asking rank 0's store
# which rank is lost would block for ever; it stops naming rank 0.
port=$(free_port)
WORLD_SIZE=2 RANK=0 MASTER_PORT=$port "$NEWSCLS_BIN" "${args[@]}" --out "$dir/hung" >/dev/null 2>&1 &
pid0=$!
WORLD_SIZE=2 RANK=1 MASTER_PORT=$port "$NEWSCLS_BIN" "${args[@]}" --out "$dir/hung" >/dev/null 2>"$dir/hung1.err" &
pid1=$!
under_way hung
kill -STOP "$pid0"
wait_for_exit "$pid1" "rank 1 to stop beside a hung rank 0 (timeout $timeout_s s)" $((timeout_s + 40))
set +e
wait "$pid1"
code1=$?
set -e
kill -KILL "$pid0"
kill -CONT "$pid0" 2>/dev/null || true
((code1 == 1)) || { cat "$dir/hung1.err" >&2; fail "rank 1 beside a hung rank 0 exited $code1"; }
assert_contains "$dir/hung1.err" "lost rank 0"

# SIGINT to rank 1 alone: both ranks stop after the same step as interrupted (exit 130).
port=$(free_port)
WORLD_SIZE=2 RANK=0 MASTER_PORT=$port "$NEWSCLS_BIN" "${args[@]}" --out "$dir/int" >/dev/null 2>"$dir/int0.err" &
pid0=$!
WORLD_SIZE=2 RANK=1 MASTER_PORT=$port "$NEWSCLS_BIN" "${args[@]}" --out "$dir/int" >/dev/null 2>"$dir/int1.err" &
pid1=$!
under_way int
kill -INT "$pid1"
set +e
wait "$pid0"
code0=$?
wait "$pid1"
code1=$?
set -e
assert_eq "130 130" "$code0 $code1" "exit codes of both ranks after SIGINT to rank 1"
assert_contains "$dir/int0.err" "interrupted"

# Rank 1 alone: rank 0 never opens the store.
set +e
WORLD_SIZE=2 RANK=1 MASTER_PORT=$(free_port) "$NEWSCLS_BIN" "${alone[@]}" --out "$dir/alone1" \
  >/dev/null 2>"$dir/alone1.err"
code=$?
# Rank 0 alone: it opens the store and names rank 1, which never joins.
WORLD_SIZE=2 RANK=0 MASTER_PORT=$(free_port) "$NEWSCLS_BIN" "${alone[@]}" --out "$dir/alone0" \
  >/dev/null 2>"$dir/alone0.err"
code0=$?
set -e
((code != 0 && code0 != 0)) || fail "a rank without its peer succeeded"
assert_contains "$dir/alone1.err" "is rank 0 running?"
assert_contains "$dir/alone0.err" "rank(s) 1 did not join within 2 s"
echo "bert distributed faults: ok"
