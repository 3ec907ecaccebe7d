#!/usr/bin/env bash
# Writes configs/<family>.json for every family from what the binary reports
# (`newscls info --defaults FAMILY`: each key's default, doc and accepted values, from the
# family's config table), so the checked-in configs are the code's. --check writes nothing and
# fails when a file is stale (the unit test Config.CheckedInConfigsAreTheTables checks it too).
#
#   scripts/gen_configs.sh build/apps/newscls/newscls            # regenerate
#   scripts/gen_configs.sh build/apps/newscls/newscls --check    # are configs/*.json current?
set -euo pipefail

[[ $# -ge 1 && $# -le 2 && ${2:---check} == --check ]] || { echo "usage: $0 BINARY [--check]" >&2; exit 2; }
bin=$1
check=$(( $# == 2 ))
configs="$(cd "$(dirname "$0")/.." && pwd)/configs"

# The family list comes from the binary's own help (info --defaults' choices), so a new family
# needs no edit here.
families() {
  "$bin" info --help | sed -n 's/.*--defaults TEXT:{\([^}]*\)}.*/\1/p' | tr ',' '\n'
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
names=$(families)
[[ -n $names ]] || { echo "$0: '$bin info --help' lists no families" >&2; exit 1; }
stale=0
for family in $names; do
  "$bin" info --defaults "$family" >"$tmp/$family.json"
  if [[ $check == 1 ]]; then
    if ! diff -u "$configs/$family.json" "$tmp/$family.json"; then
      echo "configs/$family.json is stale (- file, + binary)" >&2
      stale=1
    fi
  else
    cp "$tmp/$family.json" "$configs/$family.json"
  fi
done
if [[ $stale == 1 ]]; then
  echo "run: scripts/gen_configs.sh $bin" >&2
  exit 1
fi
[[ $check == 1 ]] || echo "wrote configs/{$(echo $names | tr ' ' ',')}.json" >&2
