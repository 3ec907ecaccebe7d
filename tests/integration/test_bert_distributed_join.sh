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

# signal_after SECONDS ERR CMD...: sends SIGTERM after SECONDS; sets rc and took.
signal_after() {
  local wait_s=$1 err=$2
  shift 2
  local start=$SECONDS
  "$@" >/dev/null 2>"$err" &
  local pid=$!
  sleep "$wait_s"
  kill -TERM "$pid"
  set +e
  wait "$pid"
  rc=$?
  set -e
  took=$((SECONDS - start))
}

# SIGTERM while blocked in c10d's read: ends within the watchdog's second, not at the timeout.
signal_after 2 "$dir/term.err" env WORLD_SIZE=2 RANK=1 MASTER_PORT="$silent" "$NEWSCLS_BIN" "${tiny[@]}" \
  --dist-timeout 120 --out "$dir/term"
((rc == 130)) || { cat "$dir/term.err" >&2; fail "SIGTERM while joining exited $rc"; }
((took <= 10)) || fail "SIGTERM while joining took $took s"
assert_contains "$dir/term.err" "interrupted while rank 1 was"

# Rank 0 waiting for a rank that never comes stops on SIGTERM too.
signal_after 2 "$dir/wait.err" env WORLD_SIZE=2 RANK=0 MASTER_PORT="$(free_port)" "$NEWSCLS_BIN" "${tiny[@]}" \
  --dist-timeout 120 --out "$dir/wait"
((rc == 130 && took <= 10)) || { cat "$dir/wait.err" >&2; fail "rank 0 waiting: exit $rc after $took s"; }
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
assert_contains "$dir/empty.err" "\$WORLD_SIZE: is set but empty"
[[ ! -e "$dir/empty/manifest.json" ]] || fail "an empty WORLD_SIZE trained alone"

echo "bert distributed join: ok"
