#!/usr/bin/env bash
# check_skips.sh CTEST_LOG: fails when ctest's output names a skipped test that
# tests/allowed_skips.txt does not allow. Run as root, no skip is allowed at all.
set -euo pipefail
log=$1
allowed=$(dirname "$0")/allowed_skips.txt
mapfile -t skipped < <(sed -n 's/^[[:space:]]*[0-9]\+ - \([^ ]*\) (Skipped)$/\1/p' "$log")
((${#skipped[@]} == 0)) && { echo "check_skips: no test skipped"; exit 0; }
bad=0
for name in "${skipped[@]}"; do
  reason=$(awk -v n="$name" '$1 == n { $1 = ""; sub(/^ +/, ""); print }' "$allowed")
  if [[ -z $reason ]]; then
    echo "check_skips: $name was skipped and is not in tests/allowed_skips.txt" >&2
    bad=1
  elif [[ $(id -u) == 0 ]]; then
    echo "check_skips: $name was skipped as root; its listed reason holds only without root: $reason" >&2
    bad=1
  else
    echo "check_skips: $name skipped, allowed: $reason"
  fi
done
exit "$bad"
