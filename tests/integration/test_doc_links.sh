#!/usr/bin/env bash
# Every relative Markdown link in the docs names a file that exists and, with #fragment, one of
# its headings (scripts/check_doc_links.py); and the checker does see a dead one.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
check="$NEWSCLS_SOURCE_DIR/scripts/check_doc_links.py"

python3 "$check" "$NEWSCLS_SOURCE_DIR" >"$dir/broken" 2>"$dir/err" || {
  cat "$dir/broken" >&2
  fail "docs link to files or headings that do not exist (listed above)"
}
assert_contains "$dir/err" ", 0 broken links"

mkdir -p "$dir/tree/docs"
printf '# Top\n\n## A section (issue 1)\n\n[ok](#a-section-issue-1) [ok](docs/B.md#b) [dead](#no-such) [dead](docs/B.md#c) [dead](docs/C.md)\n' \
  >"$dir/tree/README.md"
printf '# B\n' >"$dir/tree/docs/B.md"
expect_exit 1 "$dir/err" python3 "$check" "$dir/tree"
python3 "$check" "$dir/tree" >"$dir/found" 2>/dev/null || true
assert_eq 3 "$(wc -l <"$dir/found")" "dead links found in the hand-made tree"
assert_contains "$dir/found" "README.md:5: #no-such: no heading #no-such in README.md"
assert_contains "$dir/found" "docs/B.md#c: no heading #c in docs/B.md"
assert_contains "$dir/found" "docs/C.md: no file docs/C.md"
echo "test_doc_links: OK"
