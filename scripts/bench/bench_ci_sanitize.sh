#!/usr/bin/env bash
# CI's sanitizer job at -O1 (what it builds now) and at -O3 (Release's level, what it built
# before 2026-12-05), one after the other on the same tree, each from an empty build folder with
# the compiler cache off: prints each job's build and test seconds (scripts/ci_sanitize.sh's
# own last line). About 80 minutes on 2 cores.
# Usage: scripts/bench/bench_ci_sanitize.sh   env: WORK (scratch folder, default /tmp/newscls-bench-asan)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=${WORK:-/tmp/newscls-bench-asan}
for opt in -O1 -O3; do
  rm -rf "$work/$opt"
  line=$(CCACHE_DISABLE=1 NEWSCLS_ASAN_OPT=$opt NEWSCLS_ASAN_BUILD_DIR="$work/$opt" scripts/ci_sanitize.sh 2>&1 | tail -1)
  echo "$opt: $line"
done
