#!/usr/bin/env bash
# Checks that the C++ sources follow .clang-format (clang-format 14, Debian 12's): lists each
# file that differs and fails. `scripts/check_format.sh --fix` rewrites them instead.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --format >/dev/null
mapfile -t files < <(git ls-files 'src/*.cpp' 'src/*.h' 'apps/*.cpp' 'apps/*.h' 'include/*.h' 'tests/*.cpp' 'tests/*.h')
if [[ ${1:-} == --fix ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
clang-format --dry-run -Werror "${files[@]}"
echo "check_format: ${#files[@]} files follow .clang-format"
