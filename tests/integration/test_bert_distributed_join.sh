#!/usr/bin/env bash
# ctest-labels: bert-training
# Joining a distributed run goes wrong in ways c10d reports badly or not at all: a MASTER_PORT
# where another program listens and never answers (c10d's store reads without a timeout), one
# that closes at once, a signal while blocked there or while rank 0 waits, an address that does
# not resolve, and WORLD_SIZE/RANK/MASTER_PORT values that are not numbers or are set but empty.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/dist_lib.sh"
tiny_setup

# start_listener MODE: a loopback listener that holds every connection silently ("silent") or
# closes it ("close"); its port goes to $dir/MODE.port, a line per connection to
# $dir/MODE.accepts. Started in this shell (not in $(...), which would wait for it) and stopped
# when the test ends.
listeners=()
trap 'kill "${listeners[@]}" 2>/dev/null || true' EXIT
start_listener() {
  python3 -u -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16); print(s.getsockname()[1])
held = []
while True:
    c, _ = s.accept()
    print("accepted", file=sys.stderr)
    if sys.argv[1] == "close": c.close()
    else: held.append(c)' "$1" >"$dir/$1.port" 2>"$dir/$1.accepts" </dev/null &
  listeners+=($!)
  wait_for_file "$dir/$1.port"
}
start_listener silent
start_listener close
silent=$(cat "$dir/silent.port")
closing=$(cat "$dir/close.port")

# finish DESCRIPTION [DEADLINE_S]: waits for the rank $pid to end; its exit status in rc.
finish() {
  wait_for_exit "$pid" "$@"
  rc=0
  wait "$pid" || rc=$?
}

# Silent listener: the rank gives up at --dist-timeout and the watchdog's grace (5 s), as it says.
env WORLD_SIZE=2 RANK=1 MASTER_PORT="$silent" "$NEWSCLS_BIN" "${tiny[@]}" --dist-timeout 1 --out "$dir/silent" \
  >/dev/null 2>"$dir/silent.err" &
pid=$!
finish "a rank talking to a silent listener to give up"
((rc == 1)) || { cat "$dir/silent.err" >&2; fail "a rank talking to a silent listener exited $rc"; }
assert_contains "$dir/silent.err" "no answer within 6 s while rank 1 was"
assert_contains "$dir/silent.err" "is another program listening on MASTER_PORT?"

# term_when_joining ERR JOINING CMD...: sends SIGTERM once the bash condition JOINING holds
# (the rank is blocked joining) and waits for the rank to end, at once (it has a second; its
# --dist-timeout is 600 s); sets rc.
term_when_joining() {
  local err=$1 joining=$2
  shift 2
  "$@" >/dev/null 2>"$err" &
  pid=$!
  wait_until "$POLL_DEADLINE_S" "the rank to be blocked joining ($joining)" eval "$joining"
  kill -TERM "$pid"
  finish "the rank to stop after SIGTERM while joining" 30
}
# listening PORT: a socket listens on PORT (read from /proc, so as not to talk to it).
listening() {
  awk -v port=":$(printf '%04X' "$1")" '$4 == "0A" && substr($2, length($2) - 4) == port { found = 1 }
    END { exit !found }' /proc/net/tcp /proc/net/tcp6
}

# SIGTERM while blocked in c10d's read (the silent listener has taken its connection): ends
# within the watchdog's second, not at the timeout; the hint about another program is for
# timeouts only.
accepted=$(wc -l <"$dir/silent.accepts")
term_when_joining "$dir/term.err" '(($(wc -l <"$dir/silent.accepts") > accepted))' \
  env WORLD_SIZE=2 RANK=1 MASTER_PORT="$silent" "$NEWSCLS_BIN" "${tiny[@]}" --dist-timeout 600 --out "$dir/term"
((rc == 130)) || { cat "$dir/term.err" >&2; fail "SIGTERM while joining exited $rc"; }
assert_contains "$dir/term.err" "interrupted while rank 1 was"
if grep -q "another program" "$dir/term.err"; then fail "an interrupted join blamed another program"; fi

# SIGTERM while rank 1 waits for a rank 0 that is not there yet (c10d sleeps between its
# connects), and while rank 0 waits for a rank that never comes (its store listens).
term_when_joining "$dir/connect.err" '[[ $(cat "/proc/$pid/wchan" 2>/dev/null) == *nanosleep* ]]' \
  env WORLD_SIZE=2 RANK=1 MASTER_PORT="$(free_port)" "$NEWSCLS_BIN" "${tiny[@]}" --dist-timeout 600 --out "$dir/connect"
((rc == 130)) || { cat "$dir/connect.err" >&2; fail "rank 1 connecting: exit $rc after SIGTERM"; }
port=$(free_port)
term_when_joining "$dir/wait.err" 'listening "$port"' \
  env WORLD_SIZE=2 RANK=0 MASTER_PORT="$port" "$NEWSCLS_BIN" "${tiny[@]}" --dist-timeout 600 --out "$dir/wait"
((rc == 130)) || { cat "$dir/wait.err" >&2; fail "rank 0 waiting: exit $rc after SIGTERM"; }
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
# waited out --dist-timeout (600 s here) for a rank 0 that had already gone.
mkdir -p "$dir/notes" && echo keep >"$dir/notes/notes.txt"
MASTER_PORT="$(free_port)" "$launch" 2 "${tiny[@]}" --out "$dir/notes" --dist-timeout 600 >/dev/null 2>"$dir/launch.err" &
pid=$!
finish "the launcher to stop after rank 0 failed"
((rc == 1)) || { cat "$dir/launch.err" >&2; fail "the launcher exited $rc after rank 0 failed"; }
assert_contains "$dir/launch.err" "stopping the other ranks"
# SIGTERM to the launcher reaches the ranks, and it waits for them (it died at once on
# "pid: unbound variable", exit 1; then, when bash reaped a rank before `wait -n` asked for
# it, it spun on "no such job" for ever: two runs in three here). The ranks are stand-ins.
printf '#!/bin/sh\nexec sleep 30\n' >"$dir/sleeper" && chmod +x "$dir/sleeper"
for delay in 0 0.3 0.6 0 0.3 0.6; do
  port=$(free_port) && rm -f "$dir/term.err"
  NEWSCLS_BIN="$dir/sleeper" MASTER_PORT="$port" "$launch" 2 train 2>"$dir/term.err" &
  launcher=$!
  # Counted from the ranks' start: a signal before the launcher ran tested nothing (a stale term.err).
  wait_for_log "2 ranks" "$dir/term.err"
  sleep "$delay"  # the signal at different points of the launcher's loop: what is tested
  kill -TERM "$launcher"
  wait_for_exit "$launcher" "the launcher to stop after SIGTERM" 60
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
# went unreported until rank 0 ended, and the launcher exited with rank 0's status (124 here,
# after 60 s; 137, rank 2's, when it is reported first).
cat >"$dir/standin" <<'SH'
#!/bin/sh
case $RANK in
  0) exec timeout 60 sleep 120 ;;
  1) while [ ! -s "$NEWSCLS_DIST_LOGS/r2.pid" ]; do sleep 0.05; done  # rank 2 has started
     kill -KILL "$(cat "$NEWSCLS_DIST_LOGS/r2.pid")"; exit 0 ;;
  2) echo $$ >"$NEWSCLS_DIST_LOGS/r2.pid"; exec sleep 120 ;;
esac
SH
chmod +x "$dir/standin"
set +e
NEWSCLS_BIN="$dir/standin" MASTER_PORT="$(free_port)" timeout 120 "$launch" 3 train 2>"$dir/kill.err"
code=$?
set -e
assert_eq 137 "$code" "the launcher's status when rank 2 was killed"
assert_contains "$dir/kill.err" "rank 2 exited with status 137"

# Only training is spread over ranks (`train_distributed.sh 2 predict ...` ran predict twice).
expect_exit 2 "$dir/launch.err" "$launch" 2 predict --model-dir "$dir/x"
assert_contains "$dir/launch.err" "'predict' is not trained across ranks"
expect_exit 2 "$dir/launch.err" "$launch" 2 --log-level warn predict --model-dir "$dir/x"
assert_contains "$dir/launch.err" "'predict' is not trained across ranks"
# Global options before the subcommand (the first version refused "--log-level info train").
rm -f "$dir/term.err"
NEWSCLS_BIN="$dir/sleeper" MASTER_PORT="$(free_port)" "$launch" 2 --log-level=warn --log-level info train 2>"$dir/term.err" &
launcher=$!
wait_for_log "train_distributed: 2 ranks" "$dir/term.err"
kill -TERM "$launcher"
wait_for_exit "$launcher" "the launcher to stop after SIGTERM" 60
wait "$launcher" && fail "the stand-in ranks should have been stopped by SIGTERM"
assert_not_contains "$dir/term.err" "usage:"

echo "bert distributed join: ok"
