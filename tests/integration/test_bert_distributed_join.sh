#!/usr/bin/env bash
# Joining a distributed run goes wrong in ways c10d reports badly or not at all: a MASTER_PORT
# where another program listens and never answers (c10d's store reads without a timeout), one
# that closes at once, a signal while blocked there or while rank 0 waits, an address that does
# not resolve, and WORLD_SIZE/RANK/MASTER_PORT values that are not numbers or are set but empty.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/dist_lib.sh"
tiny_setup

# start_listener MODE: a loopback listener that holds every connection silently ("silent") or
# closes it ("close"); its port goes to $dir/MODE.port. Started in this shell (not in $(...),
# which would wait for it) and stopped when the test ends.
listeners=()
trap 'kill "${listeners[@]}" 2>/dev/null || true' EXIT
start_listener() {
  python3 -u -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16); print(s.getsockname()[1])
held = []
while True:
    c, _ = s.accept()
    if sys.argv[1] == "close": c.close()
    else: held.append(c)' "$1" >"$dir/$1.port" 2>/dev/null </dev/null &
  listeners+=($!)
  for _ in $(seq 50); do [[ -s "$dir/$1.port" ]] && return; sleep 0.1; done
  fail "the $1 listener did not start"
}
start_listener silent
start_listener close
silent=$(cat "$dir/silent.port")
closing=$(cat "$dir/close.port")

# Silent listener: the rank gives up within --dist-timeout and the watchdog's grace (5 s).
start=$SECONDS
expect_exit 1 "$dir/silent.err" env WORLD_SIZE=2 RANK=1 MASTER_PORT="$silent" "$NEWSCLS_BIN" "${tiny[@]}" \
  --dist-timeout 1 --out "$dir/silent"
(( SECONDS - start <= 15 )) || fail "a rank talking to a silent listener took $((SECONDS - start)) s"
assert_contains "$dir/silent.err" "no answer within 6 s while rank 1 was"
assert_contains "$dir/silent.err" "is another program listening on MASTER_PORT?"

# term_when_joining ERR CMD...: sends SIGTERM once the rank has begun to join (its log says
# so) and a little more; sets rc and took (seconds from the signal to the exit).
term_when_joining() {
  local err=$1
  shift
  "$@" >/dev/null 2>"$err" &
  local pid=$!
  for _ in $(seq 300); do grep -q "LibTorch thread" "$err" && break; sleep 0.1; done
  sleep 1
  local start=$SECONDS
  kill -TERM "$pid"
  set +e
  wait "$pid"
  rc=$?
  set -e
  took=$((SECONDS - start))
}

# SIGTERM while blocked in c10d's read: ends within the watchdog's second, not at the timeout;
# the hint about another program is for timeouts only.
term_when_joining "$dir/term.err" env WORLD_SIZE=2 RANK=1 MASTER_PORT="$silent" "$NEWSCLS_BIN" "${tiny[@]}" \
  --dist-timeout 120 --out "$dir/term"
((rc == 130)) || { cat "$dir/term.err" >&2; fail "SIGTERM while joining exited $rc"; }
((took <= 5)) || fail "SIGTERM while joining took $took s"
assert_contains "$dir/term.err" "interrupted while rank 1 was"
if grep -q "another program" "$dir/term.err"; then fail "an interrupted join blamed another program"; fi

# SIGTERM while rank 1 waits for a rank 0 that is not there yet (c10d retries its connect),
# and while rank 0 waits for a rank that never comes.
term_when_joining "$dir/connect.err" env WORLD_SIZE=2 RANK=1 MASTER_PORT="$(free_port)" "$NEWSCLS_BIN" "${tiny[@]}" \
  --dist-timeout 120 --out "$dir/connect"
((rc == 130 && took <= 5)) || { cat "$dir/connect.err" >&2; fail "rank 1 connecting: exit $rc after $took s"; }
term_when_joining "$dir/wait.err" env WORLD_SIZE=2 RANK=0 MASTER_PORT="$(free_port)" "$NEWSCLS_BIN" "${tiny[@]}" \
  --dist-timeout 120 --out "$dir/wait"
((rc == 130 && took <= 5)) || { cat "$dir/wait.err" >&2; fail "rank 0 waiting: exit $rc after $took s"; }
[[ ! -e "$dir/wait/manifest.json" ]] || fail "a bundle was written"

# A listener that closes: the rank says what was lost, where (was an uncaught system_error).
expect_exit 1 "$dir/close.err" env WORLD_SIZE=2 RANK=1 MASTER_PORT="$closing" "$NEWSCLS_BIN" "${tiny[@]}" \
  --dist-timeout 5 --out "$dir/close"
assert_contains "$dir/close.err" "rank 1 lost the store at 127.0.0.1:$closing while joining"

expect_exit 2 "$dir/addr.err" env WORLD_SIZE=2 RANK=1 MASTER_ADDR=no-such-host.invalid "$NEWSCLS_BIN" "${tiny[@]}" \
  --dist-timeout 60 --out "$dir/addr"
assert_contains "$dir/addr.err" "MASTER_ADDR 'no-such-host.invalid' does not resolve"
expect_exit 2 "$dir/world.err" env WORLD_SIZE=abc "$NEWSCLS_BIN" "${tiny[@]}" --out "$dir/world"
assert_contains "$dir/world.err" "'abc' is not a whole number from 1 to 65536 (read from the option or from \$WORLD_SIZE)"
expect_exit 2 "$dir/port.err" env MASTER_PORT=0 "$NEWSCLS_BIN" "${tiny[@]}" --out "$dir/port"
assert_contains "$dir/port.err" "--master-port: '0' is not a whole number from 1 to 65535"
expect_exit 2 "$dir/empty.err" env WORLD_SIZE= "$NEWSCLS_BIN" "${tiny[@]}" --out "$dir/empty"
assert_contains "$dir/empty.err" "\$WORLD_SIZE is set but empty"
[[ ! -e "$dir/empty/manifest.json" ]] || fail "an empty WORLD_SIZE trained alone"
expect_exit 2 "$dir/empty.err" env WORLD_SIZE=2 MASTER_PORT= "$NEWSCLS_BIN" "${tiny[@]}" --out "$dir/empty"
assert_contains "$dir/empty.err" "\$MASTER_PORT is set but empty"
# Where the variable is not read (given as an option; MASTER_* alone), or for help, no refusal.
WORLD_SIZE= MASTER_PORT= "$NEWSCLS_BIN" train --help >/dev/null || fail "help refused for an empty variable"
WORLD_SIZE= "$NEWSCLS_BIN" "${tiny[@]}" --world-size 1 --set max_steps=1 --out "$dir/given" >/dev/null 2>&1 \
  || fail "an empty WORLD_SIZE refused although --world-size was given"

# The launcher: rank 0 refusing its --out (a folder of the user's) stops rank 1 at once; it
# waited out --dist-timeout for a rank 0 that had already gone.
mkdir -p "$dir/notes" && echo keep >"$dir/notes/notes.txt"
start=$SECONDS
expect_exit 1 "$dir/launch.err" env MASTER_PORT="$(free_port)" "$launch" 2 "${tiny[@]}" --out "$dir/notes" --dist-timeout 60
assert_contains "$dir/launch.err" "stopping the other ranks"
((SECONDS - start < 30)) || fail "the launcher took $((SECONDS - start)) s to stop after rank 0 failed"
# SIGTERM to the launcher reaches the ranks, and it waits for them (it died at once on
# "pid: unbound variable", exit 1; then, when bash reaped a rank before `wait -n` asked for
# it, it spun on "no such job" for ever: two runs in three here). The ranks are stand-ins.
printf '#!/bin/sh\nexec sleep 30\n' >"$dir/sleeper" && chmod +x "$dir/sleeper"
for delay in 0 0.3 0.6 0 0.3 0.6; do
  port=$(free_port) && rm -f "$dir/term.err"
  NEWSCLS_BIN="$dir/sleeper" MASTER_PORT="$port" "$launch" 2 train 2>"$dir/term.err" &
  launcher=$!
  # Counted from the ranks' start: a signal before the launcher ran tested nothing (a stale term.err).
  for _ in $(seq 50); do grep -qF "2 ranks" "$dir/term.err" 2>/dev/null && break; sleep 0.1; done
  grep -qF "2 ranks" "$dir/term.err" || fail "the launcher did not start its ranks within 5 s"
  sleep "$delay"
  kill -TERM "$launcher"
  timeout 10 tail --pid="$launcher" -f /dev/null ||
    { kill -KILL "$launcher"; fail "the launcher did not stop within 10 s of SIGTERM"; }
  set +e
  wait "$launcher"
  code=$?
  set -e
  assert_eq 143 "$code" "the launcher's status after SIGTERM"
  assert_not_contains "$dir/term.err" "unbound variable"
  assert_not_contains "$dir/term.err" "no such job"
  # The user stopped them: no rank is blamed as failed, nothing else to stop.
  assert_contains "$dir/term.err" "stopped by SIGTERM"
  assert_not_contains "$dir/term.err" "stopping the other ranks"
done
# A rank killed as another exits 0 (bash reaps both at once and forgets the killed one): it
# went unreported until rank 0 ended, and the launcher exited with rank 0's status.
cat >"$dir/standin" <<'SH'
#!/bin/sh
case $RANK in
  0) sleep 8; exit 1 ;;
  1) sleep 1; kill -KILL "$(cat "$NEWSCLS_DIST_LOGS/r2.pid")"; exit 0 ;;
  2) echo $$ >"$NEWSCLS_DIST_LOGS/r2.pid"; exec sleep 30 ;;
esac
SH
chmod +x "$dir/standin"
start=$SECONDS
set +e
NEWSCLS_BIN="$dir/standin" MASTER_PORT="$(free_port)" timeout 20 "$launch" 3 train 2>"$dir/kill.err"
code=$?
set -e
assert_eq 137 "$code" "the launcher's status when rank 2 was killed"
((SECONDS - start < 6)) || fail "rank 2's death was noticed after $((SECONDS - start)) s"
assert_contains "$dir/kill.err" "rank 2 exited with status 137"

# Only training is spread over ranks (`train_distributed.sh 2 predict ...` ran predict twice).
expect_exit 2 "$dir/launch.err" "$launch" 2 predict --model-dir "$dir/x"
assert_contains "$dir/launch.err" "'predict' is not trained across ranks"
expect_exit 2 "$dir/launch.err" "$launch" 2 --log-level warn predict --model-dir "$dir/x"
assert_contains "$dir/launch.err" "'predict' is not trained across ranks"
# Global options before the subcommand (the first version refused "--log-level info train").
NEWSCLS_BIN="$dir/sleeper" MASTER_PORT="$(free_port)" timeout -s TERM 3 "$launch" 2 --log-level=warn --log-level info train 2>"$dir/term.err" &&
  fail "the stand-in ranks should have been stopped by timeout"
assert_not_contains "$dir/term.err" "usage:"
assert_contains "$dir/term.err" "train_distributed: 2 ranks"

echo "bert distributed join: ok"
