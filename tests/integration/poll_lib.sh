# Waiting for events, not for a fixed time: a test that sleeps "long enough" fails on a busy
# or sanitized build and wastes time on a fast one. Sourced by lib.sh (uses its fail).

# Generous: an AddressSanitizer build on 2 busy cores; a passing test never waits this long.
POLL_DEADLINE_S=${POLL_DEADLINE_S:-120}
POLL_INTERVAL_S=${POLL_INTERVAL_S:-0.1}

# poll_until DEADLINE_S cmd...: runs cmd until it succeeds (0) or DEADLINE_S seconds pass (1).
poll_until() {
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < end)) || return 1
    sleep "$POLL_INTERVAL_S"
  done
}

# wait_until DEADLINE_S DESCRIPTION cmd...: poll_until, failing with DESCRIPTION (the event).
wait_until() {
  local deadline=$1 what=$2
  shift 2
  poll_until "$deadline" "$@" || fail "gave up after $deadline s waiting for $what"
}

# wait_for_file FILE [DEADLINE_S]: until FILE exists and is not empty.
wait_for_file() {
  wait_until "${2:-$POLL_DEADLINE_S}" "$1 to be written" test -s "$1"
}

# wait_for_log TEXT FILE [DEADLINE_S]: until FILE has a line containing TEXT; shows FILE if not.
wait_for_log() {
  poll_until "${3:-$POLL_DEADLINE_S}" grep -qF -- "$1" "$2" 2>/dev/null ||
    { cat "$2" >&2 2>/dev/null || true; fail "gave up after ${3:-$POLL_DEADLINE_S} s waiting for '$1' in $2"; }
}

# gone PID: the process PID has ended (a child's status stays for `wait PID`).
gone() { ! kill -0 "$1" 2>/dev/null; }

# wait_for_exit PID DESCRIPTION [DEADLINE_S]: until PID is gone; past the deadline it is
# killed and the test fails.
wait_for_exit() {
  poll_until "${3:-$POLL_DEADLINE_S}" gone "$1" ||
    { kill -KILL "$1" 2>/dev/null || true; fail "gave up after ${3:-$POLL_DEADLINE_S} s waiting for $2"; }
}

# cpu_ticks PID: CPU time PID has used (all threads), in clock ticks; 0 once it is gone.
cpu_ticks() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
  stat=${stat##*) }  # past "pid (comm) ": the comm may hold spaces
  awk '{print $12 + $13}' <<<"$stat"
}

# wait_for_cpu PID SECONDS DESCRIPTION: until PID has used SECONDS more CPU time than now (or
# is gone): progress in its own work, however slow or busy the machine.
wait_for_cpu() {
  local target
  target=$(awk -v t="$(cpu_ticks "$1")" -v s="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN { print int(t + s * hz) }')
  wait_until "$POLL_DEADLINE_S" "$3" cpu_past "$1" "$target"
}
cpu_past() { gone "$1" || (($(cpu_ticks "$1") >= $2)); }
