#!/usr/bin/env bash
# Writes every command's --help text into docs/CLI.md, between its BEGIN and END markers, so
# the reference is what the binary says; --check writes nothing and fails when the doc is stale
# (tests/integration/test_cli_docs.sh). Rerun it after adding or changing a command or option.
#
#   scripts/gen_cli_docs.sh build/apps/newscls/newscls            # regenerate
#   scripts/gen_cli_docs.sh build/apps/newscls/newscls --check    # is docs/CLI.md current?
set -euo pipefail

usage() {
  echo "usage: $0 BINARY [--check] [--doc FILE]   (FILE defaults to docs/CLI.md)" >&2
  exit 2
}

[[ $# -ge 1 ]] || usage
bin=$1
shift
check=0
doc="$(cd "$(dirname "$0")/.." && pwd)/docs/CLI.md"
while [[ $# -gt 0 ]]; do
  case $1 in
    --check) check=1 ;;
    --doc) doc=${2:?--doc needs a file}; shift ;;
    *) usage ;;
  esac
  shift
done

readonly begin_marker='<!-- BEGIN GENERATED HELP (scripts/gen_cli_docs.sh; do not edit by hand) -->'
readonly end_marker='<!-- END GENERATED HELP -->'

# The command list comes from the binary's own help, so a new command appears without an edit
# here: CLI11 lists them under "Subcommands:", one per line, indented.
subcommands() {
  help_of | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^[^ ]/ { on = 0 }'
}

# CLI11 prints argv[0] in its usage line: run the binary as plain "newscls", so the text does not
# depend on where the binary is or how it was named.
help_of() {
  (exec -a newscls "$bin" "$@" --help)
}

help_section() {
  local title=$1
  shift
  printf '### `%s`\n\n```\n' "$title"
  help_of "$@"
  printf '```\n\n'
}

generated() {
  local names
  names=$(subcommands)
  [[ -n $names ]] || { echo "$0: '$bin --help' lists no subcommands" >&2; exit 1; }
  help_section "newscls"
  for name in $names; do
    help_section "newscls $name" "$name"
  done
}

# The doc with its generated part replaced by the file $1; the markers must be there, once each.
spliced() {
  local body=$1
  [[ $(grep -cxF "$begin_marker" "$doc") == 1 && $(grep -cxF "$end_marker" "$doc") == 1 ]] || {
    echo "$0: $doc must hold the lines '$begin_marker' and '$end_marker' once each" >&2
    exit 1
  }
  awk -v b="$begin_marker" -v e="$end_marker" -v body="$body" '
    $0 == b { print; while ((getline line < body) > 0) print line; skip = 1; next }
    $0 == e { skip = 0 }
    !skip { print }' "$doc"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
generated >"$tmp/help.md"
spliced "$tmp/help.md" >"$tmp/doc.md"

if [[ $check == 1 ]]; then
  if ! diff -u "$doc" "$tmp/doc.md" >"$tmp/diff"; then
    echo "$doc is stale: its --help text differs from $bin's (- doc, + binary):" >&2
    cat "$tmp/diff" >&2
    echo "run: scripts/gen_cli_docs.sh $bin" >&2
    exit 1
  fi
  exit 0
fi
cat "$tmp/doc.md" >"$doc"
echo "wrote the --help text of $(subcommands | wc -l) commands into $doc" >&2
