#!/usr/bin/env bash
# docs/CLI.md carries every command's --help text (scripts/gen_cli_docs.sh writes it): this fails
# when the doc is stale, naming the fix. Also: the help offers only what this build can run.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
gen="$NEWSCLS_SOURCE_DIR/scripts/gen_cli_docs.sh"
doc="$NEWSCLS_SOURCE_DIR/docs/CLI.md"

"$gen" "$NEWSCLS_BIN" --check 2>"$dir/check.err" || {
  cat "$dir/check.err" >&2
  fail "docs/CLI.md's --help text is stale: run scripts/gen_cli_docs.sh build/apps/newscls/newscls and commit docs/CLI.md"
}

# Every command the binary lists has its section, so an empty generated part cannot pass.
"$NEWSCLS_BIN" --help | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }' >"$dir/commands"
[[ $(wc -l <"$dir/commands") -ge 10 ]] || fail "newscls --help lists $(wc -l <"$dir/commands") subcommands"
while read -r name; do
  assert_contains "$doc" "### \`newscls $name\`"
done <"$dir/commands"

# The check sees a change: a doc edited by hand inside the generated part is stale.
sed '0,/Print this help message and exit/s//Print this help/' "$doc" >"$dir/CLI.md"
! cmp -s "$doc" "$dir/CLI.md" || fail "the edit did not change the copy of docs/CLI.md"
expect_exit 1 "$dir/stale.err" "$gen" "$NEWSCLS_BIN" --check --doc "$dir/CLI.md"
assert_contains "$dir/stale.err" "is stale"
assert_contains "$dir/stale.err" "run: scripts/gen_cli_docs.sh"
# Regenerating the copy makes it current again.
"$gen" "$NEWSCLS_BIN" --doc "$dir/CLI.md" 2>/dev/null
cmp -s "$doc" "$dir/CLI.md" || fail "regenerating a stale copy did not give docs/CLI.md"

# The help offers no value this build refuses: no CUDA in Debian's LibTorch, and pretrain only
# for the families that pretrain.
"$NEWSCLS_BIN" train --help >"$dir/train.txt"
assert_contains "$dir/train.txt" "--device"
assert_not_contains "$dir/train.txt" "cuda"
"$NEWSCLS_BIN" pretrain --help >"$dir/pretrain.txt"
assert_contains "$dir/pretrain.txt" "{bert}"
assert_not_contains "$dir/pretrain.txt" "fasttext"
echo "test_cli_docs: OK"
