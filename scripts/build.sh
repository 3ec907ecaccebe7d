#!/usr/bin/env bash
# Configures and builds newscls into build/ (or $NEWSCLS_BUILD_DIR), Release by default.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${NEWSCLS_BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${NEWSCLS_BUILD_TYPE:-Release}" "$@" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
