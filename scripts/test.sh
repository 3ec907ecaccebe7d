#!/usr/bin/env bash
# The test command of the README and of CI: installs what is missing, builds, runs ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cd "${NEWSCLS_BUILD_DIR:-build}"
ctest --output-on-failure -j"$(nproc)" "$@"
