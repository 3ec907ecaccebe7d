#!/usr/bin/env bash
# CI's fuzzing job: installs clang if needed, then a short run of every fuzz target
# (NEWSCLS_CI_FUZZ_SECONDS each, default 20). Fails on any finding or replayed regression.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --fuzz
scripts/fuzz.sh "${NEWSCLS_CI_FUZZ_SECONDS:-20}"
