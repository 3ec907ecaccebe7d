#!/usr/bin/env bash
# Starts N ranks of one newscls training on this machine, meeting on loopback: the demo of
# data-parallel training and what the tests use. Across machines, start one rank per machine
# yourself with WORLD_SIZE, RANK, MASTER_ADDR, MASTER_PORT (see README).
#
#   scripts/train_distributed.sh 2 train --model bert --out runs/bert-2x --threads 1
#   scripts/train_distributed.sh 2 pretrain --model bert --out runs/enc-2x --threads 1
#
# Rank 0 writes to this terminal; rank i > 0 logs to $NEWSCLS_DIST_LOGS/rank<i>.log (default
# a fresh directory under /tmp, printed). MASTER_PORT defaults to 29500, NEWSCLS_BIN to the
# build tree's binary. When a rank fails the others are stopped; exits with the status of the
# first rank to fail, else 0.
set -euo pipefail

if (($# < 2)) || ! [[ "$1" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 N train|pretrain [newscls options...]" >&2
  exit 2
fi
world=$1
shift
# The subcommand is the first word past the global options (newscls has one: --log-level).
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case ${args[$i]} in
    --log-level) ((++i)) ;;
    --log-level=*) ;;
    *) break ;;
  esac
done
case ${args[$i]-} in
  train | pretrain) ;;
  *) echo "usage: $0 N train|pretrain [newscls options...] ('${args[$i]-}' is not trained across ranks)" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${NEWSCLS_BIN:-$root/build/apps/newscls/newscls}
[[ -x "$bin" ]] || { echo "$0: no newscls binary at $bin (build it or set NEWSCLS_BIN)" >&2; exit 2; }
logs=${NEWSCLS_DIST_LOGS:-$(mktemp -d /tmp/newscls-dist.XXXXXX)}
mkdir -p "$logs"
export WORLD_SIZE=$world MASTER_ADDR=${MASTER_ADDR:-127.0.0.1} MASTER_PORT=${MASTER_PORT:-29500}

pids=()
# SIGINT/SIGTERM to this script reach every rank, which stop together.
forward() { kill -s "$1" "${pids[@]}" 2>/dev/null || true; }
stopped=""  # the signal this script was sent: the ranks' exits are then no failure of their own
trap 'stopped=INT; forward INT' INT
trap 'stopped=TERM; forward TERM' TERM

for ((rank = 0; rank < world; rank++)); do
  if ((rank == 0)); then
    RANK=0 "$bin" "$@" &
  else
    RANK=$rank "$bin" "$@" >"$logs/rank$rank.log" 2>&1 &
  fi
  pids+=($!)
done
((world > 1)) && echo "train_distributed: $world ranks on $MASTER_ADDR:$MASTER_PORT; ranks 1..$((world - 1)) log to $logs" >&2

# The ranks wait for each other: when one fails (rank 0 refusing its --out, say), the others
# are stopped at once instead of waiting out --dist-timeout for it.
status=0
live=("${pids[@]}")
ended() {  # pid code: one rank is gone
  local rank p rest=()
  for ((rank = 0; rank < world; rank++)); do [[ ${pids[$rank]} == "$1" ]] && break; done
  for p in "${live[@]}"; do [[ $p == "$1" ]] || rest+=("$p"); done
  live=("${rest[@]}")
  (($2 != 0)) || return 0
  if [[ -n $stopped ]]; then
    echo "train_distributed: rank $rank stopped by SIG$stopped (status $2)" >&2
  else
    echo "train_distributed: rank $rank exited with status $2" >&2
  fi
  if ((status == 0)); then
    status=$2
    [[ -n $stopped ]] || ((${#live[@]} == 0)) || { echo "train_distributed: stopping the other ranks" >&2; forward TERM; }
  fi
}
# Polled, not `wait -n`: bash reaps a rank outside `wait -n` when two end together (or during
# a trap) and then forgets it ("no such job"), so `wait -n` spun, or blocked on the others while
# a failed rank went unreported; plain `wait PID` still has the status of a rank that is gone.
while ((${#live[@]} > 0)); do
  for p in "${live[@]}"; do
    kill -0 "$p" 2>/dev/null && continue
    wait "$p" && code=0 || code=$?
    ended "$p" "$code"
  done
  ((${#live[@]} == 0)) || sleep 0.2
done
exit "$status"
