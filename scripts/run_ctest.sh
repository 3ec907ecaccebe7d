#!/usr/bin/env bash
# run_ctest.sh BUILD_DIR [CTEST_ARGS...]: runs ctest in BUILD_DIR on every core, then fails the
# run if a test was skipped that tests/allowed_skips.txt does not allow (tests/check_skips.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=$1
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
(cd "$build_dir" && ctest --output-on-failure -j"$(nproc)" "$@") 2>&1 | tee "$log" || status=$?
"$root/tests/check_skips.sh" "$log" || status=1
exit "$status"
