#!/usr/bin/env bash
# CI's sanitizer job: builds newscls and its tests with AddressSanitizer and
# UndefinedBehaviorSanitizer (GCC, -DNEWSCLS_SANITIZE=ON) in build-asan/, then runs the unit
# and integration tests except those labelled slow or bert-training. Any sanitizer report fails
# the job. bert-training scripts spend their minutes in LibTorch, which is not instrumented; the
# bert code of ours they run is sanitized through its unit tests and the integration tests that
# load, predict with and corrupt bert bundles (docs/BENCHMARKS.md, "CI's time").
#
# The SentencePiece tests are left out, and the sanitizers' options set, by
# scripts/sanitizer_env.sh (why, there).
#
# -O1, not Release's -O3: the level the sanitizers' documentation advises, and a shorter CI
# (docs/BENCHMARKS.md, "CI's time").
# Env: NEWSCLS_ASAN_BUILD_DIR (default build-asan), NEWSCLS_ASAN_OPT (default -O1),
# NEWSCLS_ASAN_ONLY (build or tests: that half alone, so CI can time each; default both).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${NEWSCLS_ASAN_BUILD_DIR:-build-asan}
only=${NEWSCLS_ASAN_ONLY:-}
scripts/setup.sh
start=$(date +%s)
if [[ $only != tests ]]; then
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="${NEWSCLS_ASAN_OPT:--O1} -DNDEBUG" -DNEWSCLS_SANITIZE=ON >/dev/null
  cmake --build "$build_dir" -j"$(nproc)" --target newscls newscls_unit_tests newscls_plugin_unit_tests
fi
built=$(date +%s)
[[ $only == build ]] && exit 0

source scripts/sanitizer_env.sh
scripts/run_ctest.sh "$build_dir" -L 'unit|integration' -LE 'slow|bert-training' -E "$sanitizer_excluded_tests" "$@"
echo "ci_sanitize: build $((built - start)) s, tests $(($(date +%s) - built)) s"
