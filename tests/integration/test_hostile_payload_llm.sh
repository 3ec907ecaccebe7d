#!/usr/bin/env bash
# Corrupt llm bundles: prompt.json truncated, bit-flipped, not JSON, with keys missing, wrong
# types, a newer prompt format, labels that disagree with the manifest, few-shot labels out of
# range; checksums rewritten to match so the prompt reader itself must catch them. `info` and
# `predict` each exit 1 with one error naming prompt.json, and predict sends no request.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"
source "$NEWSCLS_SOURCE_DIR/tests/llm_server/lib.sh"
dir=$(scratch)
HOSTILE_ERR="$dir/err"
llm_slice "$dir/data" 4
start_llm_server "$dir" --truth "$dir/data/test.txt" --classes "$dir/data/class.txt"
bundle="$dir/bundle"
"$NEWSCLS_BIN" --log-level warn train --model llm --data "$dir/data" --out "$bundle" \
  --set "base_url=$LLM_URL" --set cache_path=off >/dev/null
head -n 3 "$dir/data/test.txt" | cut -f1 >"$dir/titles.txt"
requests=$(server_stat "j['requests']")
size=$(stat -c %s "$bundle/prompt.json")
tried=0
flip_byte_at() { flip_byte "$2" "$1"; }

py() {  # PYTHON FILE: rewrites the prompt JSON object p in FILE
  python3 - "$2" "$1" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
exec(sys.argv[2])
open(sys.argv[1], "w").write(json.dumps(p, ensure_ascii=False))
PY
}

corrupt() {  # HOW: a command given the copied prompt.json as its last argument
  local copy="$dir/copy"
  rm -rf "$copy" && cp -r "$bundle" "$copy"
  eval "$1 \"$copy/prompt.json\""
  rehash "$copy"
  echo "prompt corruption: $1"
  expect_error_naming "$copy/prompt.json" "$NEWSCLS_BIN" info --model-dir "$copy"
  expect_error_naming "$copy/prompt.json" "$NEWSCLS_BIN" predict --model-dir "$copy" \
    --input "$dir/titles.txt" --output "$dir/out.jsonl"
  [[ ! -e "$dir/out.jsonl" ]] || fail "a refused bundle left $dir/out.jsonl"
  tried=$((tried + 1))
}

for keep in 0 1 $((size / 2)) $((size - 2)); do corrupt "truncate -s $keep"; done
corrupt "flip_byte_at 0"
corrupt "flip_byte_at $((size / 2))"
corrupt "printf 'not json' >"
corrupt "printf '[]' >"
for key in format format_version labels few_shot json_mode prompt_version system; do
  corrupt "py \"del p['$key']\""
done
corrupt "py \"p['format'] = 'something-else'\""
corrupt "py \"p['format_version'] = 2\""
assert_contains "$HOSTILE_ERR" "newer"
corrupt "py \"p['format_version'] = 'one'\""
corrupt "py \"p['labels'] = p['labels'][:-1]\""
corrupt "py \"p['labels'] = 'sports'\""
corrupt "py \"p['labels'][0] = {'en': 7, 'zh': '?'}\""
corrupt "py \"p['labels'][0] = {'en': '', 'zh': ''}\""
corrupt "py \"p['few_shot'] = [{'title': 'x', 'label': 99}]\""
corrupt "py \"p['few_shot'] = [{'title': 'x', 'label': -1}]\""
corrupt "py \"p['few_shot'] = [{'title': 7, 'label': 0}]\""
corrupt "py \"p['json_mode'] = 'yes'\""

assert_eq "$requests" "$(server_stat "j['requests']")" "requests sent for refused bundles"
"$NEWSCLS_BIN" --log-level warn predict --model-dir "$bundle" --input "$dir/titles.txt" --output "$dir/out.jsonl"
assert_eq 3 "$(wc -l <"$dir/out.jsonl")" "the untouched bundle still answers"
echo "test_hostile_payload_llm: ok ($tried corrupt prompts refused, no request sent)"
