#!/usr/bin/env bash
# A bert training run killed with SIGKILL mid-epoch leaves no bundle; rerun with --resume it
# continues from its last end-of-epoch checkpoint and ends with the same model as a run that
# was never interrupted (shuffling and dropout are seeded per epoch). Its manifest keeps the
# first process's pretraining figures and counts its time in train_seconds; its epochs' loss
# averages are the uninterrupted run's.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
make_slice "$dir/data" 3000 20
args=(--log-level info train --model bert --data "$dir/data" --threads 1 --seed 3
      --set layers=1 --set hidden=32 --set heads=2 --set ff=64 --set max_len=32 --set batch_size=16
      --set bigram_buckets=512 --set pretrain_epochs=1 --set pretrain_max_steps=20 --set epochs=3 --set patience=10)

"$NEWSCLS_BIN" "${args[@]}" --out "$dir/straight" >/dev/null 2>"$dir/straight.err"

"$NEWSCLS_BIN" "${args[@]}" --out "$dir/killed" >/dev/null 2>"$dir/first.err" &
pid=$!
wait_for_file "$dir/killed.work/bert_checkpoint/state.bin"  # the first epoch's checkpoint
POLL_INTERVAL_S=0.02 wait_for_cpu "$pid" 0.2 "the run to get into its second epoch (0.2 CPU-seconds of its steps)"
kill -KILL "$pid" 2>/dev/null || true  # a run that ended first fails below
wait "$pid" && fail "the run finished before it was killed"
[[ ! -e "$dir/killed/manifest.json" && ! -e "$dir/killed/metrics.json" ]] || fail "a killed run left outputs"

"$NEWSCLS_BIN" "${args[@]}" --out "$dir/killed" --resume >/dev/null 2>"$dir/resume.err"
assert_contains "$dir/resume.err" "resuming fine-tuning at epoch"
for run in straight killed; do
  assert_eq 3 "$(json_get "$dir/$run/manifest.json" "len(j['training']['history'])")" "$run epochs"
done
same=$(python3 - "$dir/straight/metrics.json" "$dir/killed/metrics.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
print(a["accuracy"] == b["accuracy"] and a["confusion"] == b["confusion"])
PY
)
assert_eq True "$same" "resumed run's test metrics equal the uninterrupted run's"
python3 - "$dir/straight/manifest.json" "$dir/killed/manifest.json" "$dir/resume.err" <<'PY' || fail "a resumed run's figures"
import json, re, sys
a, b = (json.load(open(p))["training"] for p in sys.argv[1:3])
assert b["pretrain_steps"] == a["pretrain_steps"] == 20 and b["pretrain_resumed"], b
# the first process's time up to the checkpoint continued (the epoch before the one resumed at), then this one's
epoch = int(re.search(r"resuming fine-tuning at epoch (\d+)", open(sys.argv[3]).read()).group(1))
assert b["resumed_seconds"] == b["history"][epoch - 2]["wall_seconds"] > 0, (epoch, b)
assert b["train_seconds"] > b["resumed_seconds"], b
# each epoch's loss average and dev score as the uninterrupted run's (the average restarted)
for x, y in zip(a["history"], b["history"]):
    assert abs(x["train_loss"] - y["train_loss"]) < 1e-9 and x["dev_macro_f1"] == y["dev_macro_f1"], (a["history"], b["history"])
PY
echo "bert kill and resume: ok"
