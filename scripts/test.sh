#!/usr/bin/env bash
# The test command of the README and of CI: installs what is missing, builds, runs ctest.
# Extra arguments go to ctest, e.g. `scripts/test.sh -L unit`, `-LE slow` or `-R cascade`.
set -euo pipefail
for arg in "$@"; do
  if [[ $arg == -h || $arg == --help ]]; then
    sed -n '2,3p' "$0" | sed 's/^# \{0,1\}//'
    echo "Labels: unit, integration, slow (CI runs them all). Environment: NEWSCLS_BUILD_DIR (default build)."
    exit 0
  fi
done
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
scripts/run_ctest.sh "${NEWSCLS_BUILD_DIR:-build}" "$@"
