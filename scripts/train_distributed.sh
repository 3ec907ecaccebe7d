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
if ((BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] < 501)); then
  echo "$0: needs bash 5.1 or later (wait -n -p), this is $BASH_VERSION" >&2
  exit 2
fi

if (($# < 2)) || ! [[ "$1" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 N train|pretrain [newscls options...]" >&2
  exit 2
fi
world=$1
shift
case $1 in
  train | pretrain) ;;
  *) echo "usage: $0 N train|pretrain [newscls options...] ('$1' is not trained across ranks)" >&2; exit 2 ;;
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
trap 'forward INT' INT
trap 'forward TERM' TERM

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
while ((${#live[@]} > 0)); do
  wait -n -p pid "${live[@]}" && code=0 || code=$?
  [[ -n ${pid-} ]] || continue  # a trapped signal woke wait (and unset pid): wait again
  for ((rank = 0; rank < world; rank++)); do [[ ${pids[$rank]} == "$pid" ]] && break; done
  rest=()
  for p in "${live[@]}"; do [[ $p == "$pid" ]] || rest+=("$p"); done
  live=("${rest[@]}")
  if ((code != 0)); then
    echo "train_distributed: rank $rank exited with status $code" >&2
    if ((status == 0)); then
      status=$code
      ((${#live[@]} == 0)) || { echo "train_distributed: stopping the other ranks" >&2; forward TERM; }
    fi
  fi
done
exit "$status"
