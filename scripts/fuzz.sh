#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang) and runs each for SECONDS (default 60).
# First replays every saved reproducer in tests/fuzz/regressions/ (named <target>-*), then
# fuzzes (as many targets at once as there are cores) from the seed corpus tests/fuzz/corpus/<target>/; new inputs go to the build dir,
# never into the repository. Exits 1 when any target finds a crash, leak, hang or failed
# invariant, printing the saved input and the command that replays it.
#
#   scripts/fuzz.sh 20                   # every target, 20 s each
#   scripts/fuzz.sh 300 manifest payload # chosen targets
# Env: NEWSCLS_FUZZ_BUILD_DIR (default build-fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
build_dir=${NEWSCLS_FUZZ_BUILD_DIR:-build-fuzz}

command -v clang++ >/dev/null || { echo "fuzz: clang++ not found; run scripts/setup.sh --fuzz" >&2; exit 1; }
cmake -S tests/fuzz -B "$build_dir" -DCMAKE_CXX_COMPILER=clang++ >/dev/null
cmake --build "$build_dir" -j"$(nproc)" >/dev/null

if (($# > 0)); then
  targets=("$@")
else
  targets=()
  for seeds in tests/fuzz/corpus/*/; do targets+=("$(basename "$seeds")"); done
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# fuzz_one TARGET: replays its reproducers, fuzzes it, and prints its row of the table.
fuzz_one() {
  local t=$1 bin work findings log result rc artifact runs rate repro
  bin="$build_dir/fuzz_$t"
  work="$build_dir/work/$t" findings="$build_dir/findings"
  log="$build_dir/logs/$t.log"
  mkdir -p "$work" "$findings" "$(dirname "$log")"
  result=ok
  for repro in tests/fuzz/regressions/"$t"-*; do
    [[ -e "$repro" ]] || continue
    if ! "$bin" "$repro" >"$log.regression" 2>&1; then
      result="regression $repro fails again (log: $log.regression)"
    fi
  done
  if [[ $result == ok ]]; then
    set +e
    "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$findings/$t-" "$work" "tests/fuzz/corpus/$t" >"$log" 2>&1
    rc=$?
    set -e
    if ((rc != 0)); then
      artifact=$(grep -ao "Test unit written to [^ ]*" "$log" | tail -1 | cut -d' ' -f5)
      result="FINDING (exit $rc): ${artifact:-see $log}; replay: $bin ${artifact:-<input>}"
    fi
  fi
  runs=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$log" 2>/dev/null | grep -o '[0-9]*$' || true)
  rate=$(grep -ao 'stat::average_exec_per_sec: *[0-9]*' "$log" 2>/dev/null | grep -o '[0-9]*$' || true)
  printf '%-16s %8s %10s %8s  %s\n' "$t" "$seconds" "${runs:--}" "${rate:--}" "$result"
}

for t in "${targets[@]}"; do
  [[ -x "$build_dir/fuzz_$t" ]] || { echo "fuzz: no fuzzer $build_dir/fuzz_$t" >&2; exit 1; }
done
# A fuzzer runs on one core: as many at once as there are cores, each row kept until the end.
rows="$build_dir/rows"
rm -rf "$rows" && mkdir -p "$rows"
running=0
for t in "${targets[@]}"; do
  if ((running >= $(nproc))); then wait -n || true; running=$((running - 1)); fi
  fuzz_one "$t" >"$rows/$t" &
  running=$((running + 1))
done
wait
printf '%-16s %8s %10s %8s  %s\n' target seconds runs exec/s result
failed=()
for t in "${targets[@]}"; do
  cat "$rows/$t"
  grep -q '  ok$' "$rows/$t" || failed+=("$t")
done
if ((${#failed[@]} > 0)); then
  echo "fuzz: findings in: ${failed[*]} (inputs under $build_dir/findings/)" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, ${seconds}s each, no finding"
