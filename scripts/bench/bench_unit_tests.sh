#!/usr/bin/env bash
# The unit tests through ctest (one process per test, as scripts/test.sh and CI run them) in
# build folders side by side, rounds interleaved, so two layouts or two commits are compared in
# one run on the same load. Prints per round and folder: tests, wall seconds, ctest's
# sec*proc, and each unit binary's start-up (run with a filter that matches no test, best of 3).
#
#   scripts/bench/bench_unit_tests.sh /work/before/build build          # Release builds
#   ROUNDS=1 SANITIZE=1 scripts/bench/bench_unit_tests.sh OLD/build-asan build-asan
#
# Env: ROUNDS (default 2), JOBS (ctest -j, default nproc), SANITIZE=1 for build folders made by
# scripts/ci_sanitize.sh (runs them as it does: scripts/sanitizer_env.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
(($#)) || { echo "usage: $0 BUILD_DIR [BUILD_DIR...]" >&2; exit 2; }
rounds=${ROUNDS:-2}
jobs=${JOBS:-$(nproc)}
exclude=()
if [[ ${SANITIZE:-0} == 1 ]]; then
  source "$root/scripts/sanitizer_env.sh"
  exclude=(-E "$sanitizer_excluded_tests")
fi
for dir in "$@"; do
  [[ -f $dir/CTestTestfile.cmake ]] || { echo "error: $dir is not a configured build folder" >&2; exit 1; }
done

startup() {  # best of 3 wall seconds of a unit binary that runs no test
  local bin=$1 best=999 t times
  times=$(mktemp)
  for _ in 1 2 3; do
    /usr/bin/time -f %e -o "$times" "$bin" --gtest_filter=NoSuchSuite.NoSuchTest >/dev/null 2>&1
    t=$(tail -1 "$times")
    best=$(awk -v a="$best" -v b="$t" 'BEGIN {print (b < a) ? b : a}')
  done
  rm -f "$times"
  echo "$best"
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg), ctest -j$jobs, $rounds round(s)"
for ((r = 1; r <= rounds; r++)); do
  for dir in "$@"; do
    log=$(mktemp)
    start=$(date +%s.%N)
    (cd "$dir" && ctest -j"$jobs" -L unit "${exclude[@]}" >"$log" 2>&1) || { tail -20 "$log"; echo "error: unit tests failed in $dir" >&2; exit 1; }
    wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
    summary=$(grep -o 'unit *= *[0-9.]* sec\*proc ([0-9]* tests)' "$log")
    starts=""
    for bin in "$dir"/tests/newscls_*unit_tests; do starts+=" $(basename "$bin") $(startup "$bin") s;"; done
    echo "round $r  $dir  wall ${wall} s  ${summary}  start-up:${starts}"
    rm -f "$log"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
