#!/usr/bin/env bash
# Hostile manifests: wrong types, missing keys, a newer format version, unknown family, bad
# config, paths outside the bundle, not JSON at all. `info` and `predict` both exit 1 with one
# error line naming the manifest (or the payload the manifest disagrees with).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"
hostile_setup
printf '湖人队主场击败勇士队\n' >"$dir/titles.txt"
tried=0

# bad_manifest PYTHON [TEXT] [both]: the edited manifest is refused by predict naming TEXT
# (default: the manifest), and with "both" by info too (each run costs a process start, so
# only some use both).
bad_manifest() {
  local copy="$dir/copy"
  rm -rf "$copy" && cp -r "$bundle" "$copy"
  edit_manifest "$copy" "$1"
  echo "manifest edit: $1"
  local text=${2:-$copy/manifest.json}
  [[ ${3:-} != both ]] || expect_error_naming "$text" "$NEWSCLS_BIN" info --model-dir "$copy"
  expect_error_naming "$text" "$NEWSCLS_BIN" predict --model-dir "$copy" --input "$dir/titles.txt" --output "$dir/out.jsonl"
  [[ ! -e "$dir/out.jsonl" ]] || fail "a refused model left $dir/out.jsonl"
  tried=$((tried + 1))
}

for key in format format_version family labels config payloads; do
  bad_manifest "del m['$key']" "" both
  assert_contains "$HOSTILE_ERR" "'$key'"
done
bad_manifest "m['format_version'] = '1'"
bad_manifest "m['format_version'] = 1.0"
bad_manifest "m['format_version'] = None"
bad_manifest "m['labels'] = 'sports'"
bad_manifest "m['labels'] = [1, 2, 3]"
bad_manifest "m['labels'] = ['sports']"
bad_manifest "m['config'] = []"
bad_manifest "m['payloads'] = ['tfidf.bin']"
bad_manifest "m['payloads']['tfidf.bin'] = 'abc'"
bad_manifest "m['payloads']['tfidf.bin'] = {'sha256': 7}"
bad_manifest "m['family'] = 3"
bad_manifest "m['format'] = 'something-else'"
bad_manifest "m['payloads']['../escape.bin'] = {'sha256': '00'}"
bad_manifest "m['payloads']['/etc/passwd'] = {'sha256': '00'}"
bad_manifest "m['payloads']['extra.bin'] = {'sha256': '00'}" "$dir/copy/extra.bin"
bad_manifest "del m['payloads']['forest.bin']" "$dir/copy/manifest.json"

# A newer bundle format names both versions; 2^32+1 must not pass for version 1.
bad_manifest "m['format_version'] = 2" "" both
assert_contains "$HOSTILE_ERR" "bundle format version 2 is not supported; this newscls reads versions 1..1"
bad_manifest "m['format_version'] = 4294967297" "" both
bad_manifest "m['format_version'] = 0"

# A family this newscls does not know, and a config the family rejects, name the manifest.
bad_manifest "m['family'] = 'no-such-family'" "$dir/copy/manifest.json" both
bad_manifest "m['config']['n_trees'] = 'many'" "$dir/copy/manifest.json"
bad_manifest "m['config']['no_such_key'] = 1" "$dir/copy/manifest.json" both
bad_manifest "m['config']['ngram_max'] = 3" "$dir/copy/tfidf.bin" both
# Labels that disagree with the payloads: the payload is named.
bad_manifest "m['labels'] = m['labels'] + ['extra']" "$dir/copy/forest.bin"

# Not JSON, empty, truncated, a directory in place of the file.
for content in '' '{' 'null' '[]' '"newscls-bundle"' '{"format": "newscls-bundle"' '{"format_version": 1e999}'; do
  rm -rf "$dir/copy" && cp -r "$bundle" "$dir/copy"
  printf '%s' "$content" >"$dir/copy/manifest.json"
  expect_error_naming "$dir/copy/manifest.json" "$NEWSCLS_BIN" info --model-dir "$dir/copy"
  tried=$((tried + 1))
done
rm -rf "$dir/copy" && cp -r "$bundle" "$dir/copy"
head -c 100 "$bundle/manifest.json" >"$dir/copy/manifest.json"
expect_error_naming "$dir/copy/manifest.json" "$NEWSCLS_BIN" info --model-dir "$dir/copy"
rm "$dir/copy/manifest.json" && mkdir "$dir/copy/manifest.json"
expect_error_naming "$dir/copy" "$NEWSCLS_BIN" info --model-dir "$dir/copy"
tried=$((tried + 2))

# The untouched bundle still works.
"$NEWSCLS_BIN" --log-level warn predict --model-dir "$bundle" --input "$dir/titles.txt" --output "$dir/out.jsonl"
check_jsonl "$dir/out.jsonl" 1 sports finance game
echo "test_hostile_manifest: ok ($tried hostile manifests refused)"
