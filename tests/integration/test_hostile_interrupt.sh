#!/usr/bin/env bash
# SIGINT and SIGTERM during train, predict and eval: the command stops with exit code 130
# and one "error: interrupted" line, leaves no partial file or bundle under a final name and
# no temporary file, and keeps what an earlier run put there byte for byte.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"
hostile_setup
tiny="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
faults=0

# interrupt_when SIGNAL CONDITION LOG cmd...: starts cmd (stderr to LOG), sends SIGNAL once
# the bash CONDITION holds (the run is under way; $pid is cmd's), and returns cmd's exit code
# in $rc (a run that ended first fails expect_interrupted).
interrupt_when() {
  local signal=$1 condition=$2 log=$3
  shift 3
  rm -f "$log"  # a previous run's log must not satisfy CONDITION
  "$@" >/dev/null 2>"$log" &
  local pid=$!
  poll_until "$POLL_DEADLINE_S" under_way "$condition" "$pid" ||
    { kill -KILL "$pid" 2>/dev/null || true; fail "gave up after $POLL_DEADLINE_S s waiting for: $condition"; }
  kill -"$signal" "$pid" 2>/dev/null || true
  set +e
  wait "$pid"
  rc=$?
  set -e
}

under_way() { eval "$1" || gone "$2"; }  # CONDITION PID

expect_interrupted() {  # LOG
  [[ $rc == 130 ]] || { cat "$1" >&2; fail "$1: exit code $rc after the signal, expected 130"; }
  expect_one_error "$1" "interrupted"
  faults=$((faults + 1))
}

no_temp_files() {
  if find "$1" -name '*.tmp.*' | grep -q .; then find "$1" -name '*.tmp.*' >&2; fail "temporary files left in $1"; fi
}

fingerprint() { (cd "$1" && find . -type f -exec sha256sum {} + | sort); }

# --- predict: 1,000,000 titles, interrupted while writing ---
python3 - "$tiny/train.txt" "$dir/million.txt" <<'PY'
import sys
titles = [l.split("\t")[0] for l in open(sys.argv[1], encoding="utf-8")]
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for i in range(1000000):
        out.write(f"{titles[i % len(titles)]} {i}\n")
PY
mkdir -p "$dir/out"
printf 'an earlier result\n' >"$dir/out/kept.jsonl"
for signal in INT TERM; do
  interrupt_when "$signal" 'compgen -G "$dir/out/new.jsonl.tmp.*" >/dev/null' "$dir/predict.log" \
    "$NEWSCLS_BIN" predict --model-dir "$bundle" --input "$dir/million.txt" --output "$dir/out/new.jsonl"
  expect_interrupted "$dir/predict.log"
  [[ ! -e "$dir/out/new.jsonl" ]] || fail "SIG$signal left a partial $dir/out/new.jsonl"
  interrupt_when "$signal" 'compgen -G "$dir/out/kept.jsonl.tmp.*" >/dev/null' "$dir/predict.log" \
    "$NEWSCLS_BIN" predict --model-dir "$bundle" --input "$dir/million.txt" --output "$dir/out/kept.jsonl"
  expect_interrupted "$dir/predict.log"
  assert_eq "an earlier result" "$(cat "$dir/out/kept.jsonl")" "the earlier output after SIG$signal"
  no_temp_files "$dir/out"
done

# --- predict from stdin, interrupted while blocked waiting for more input (in a pipe read:
# the kernel's wait channel for it is pipe_read, anon_pipe_read or pipe_wait) ---
mkfifo "$dir/fifo"
(cut -f1 "$tiny/test.txt"; exec sleep 600) >"$dir/fifo" 2>/dev/null &  # open past any wait below
feeder=$!
blocked='compgen -G "$dir/out/stdin.jsonl.tmp.*" >/dev/null && [[ $(cat /proc/$pid/wchan 2>/dev/null) == *pipe* ]]'
interrupt_when INT "$blocked" "$dir/stdin.log" \
  bash -c 'exec "$0" predict --model-dir "$1" --input - --output "$2" <"$3"' \
  "$NEWSCLS_BIN" "$bundle" "$dir/out/stdin.jsonl" "$dir/fifo"
kill "$feeder" 2>/dev/null || true
expect_interrupted "$dir/stdin.log"
[[ ! -e "$dir/out/stdin.jsonl" ]] || fail "an interrupted predict from stdin left its output"
no_temp_files "$dir/out"

# --- train: interrupted mid-forest, over an earlier bundle ---
make_slice "$dir/data" 20000 50
cp -r "$bundle" "$dir/model"
before=$(fingerprint "$dir/model")
for signal in INT TERM; do
  interrupt_when "$signal" 'grep -q "training tfidf-rf" "$dir/train.log"' "$dir/train.log" \
    "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/data" --out "$dir/model" --set n_trees=300 --threads 2
  expect_interrupted "$dir/train.log"
  assert_eq "$before" "$(fingerprint "$dir/model")" "the earlier bundle after SIG$signal"
  interrupt_when "$signal" 'grep -q "training tfidf-rf" "$dir/train.log"' "$dir/train.log" \
    "$NEWSCLS_BIN" train --model tfidf-rf --data "$dir/data" --out "$dir/fresh" --set n_trees=300 --threads 2
  expect_interrupted "$dir/train.log"
  [[ ! -e "$dir/fresh" ]] || fail "SIG$signal left a partial bundle $dir/fresh"
  no_temp_files "$dir"
done
"$NEWSCLS_BIN" --log-level warn predict --model-dir "$dir/model" --input "$tiny/test.txt" --output "$dir/check.jsonl"
check_jsonl "$dir/check.jsonl" 9 sports finance game

# --- eval of a large labelled file, interrupted ---
awk -F'\t' '{print $1 "\t" (NR % 3)}' "$dir/million.txt" >"$dir/million_labelled.txt"
# Under way once the process has read the whole input (rchar of /proc/PID/io).
input_bytes=$(stat -c %s "$dir/million_labelled.txt")
interrupt_when INT '(( $(awk "/^rchar/ {print \$2}" /proc/$pid/io 2>/dev/null || echo 0) > input_bytes ))' "$dir/eval.log" \
  "$NEWSCLS_BIN" eval --model-dir "$bundle" --input "$dir/million_labelled.txt" --out "$dir/eval/metrics.json"
expect_interrupted "$dir/eval.log"
[[ ! -e "$dir/eval/metrics.json" ]] || fail "an interrupted eval left metrics.json"
[[ ! -d "$dir/eval" ]] || no_temp_files "$dir/eval"
echo "test_hostile_interrupt: ok ($faults signals sent mid-run; partial files under final names: 0; earlier results lost: 0)"
