#!/usr/bin/env bash
# Outputs are on disk before their names appear. Under strace: every file of a new bundle,
# and its directory, is fsynced before the rename that puts it in place, and the parent
# directory after it (a new bundle, then one replacing it); likewise every file of bert's
# fine-tuning checkpoint before it is renamed to bert_checkpoint. An attention dump over an
# earlier one marks its index incomplete before its files move in one by one (a crash
# between them left new and old files under the old index).
source "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || fail "strace missing: scripts/setup.sh installs it"
strace -qq -o /dev/null true 2>/dev/null || skip "strace cannot trace here (ptrace not permitted)"
dir=$(scratch)
tiny="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"

traced_train() {  # TRACE OUT ARGS...: trains under strace, recording syncs and renames
  local trace=$1 out=$2
  shift 2
  # LeakSanitizer stops the world with ptrace, which fails under strace (ci_sanitize.sh).
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -y -qq -e trace=fsync,fdatasync,rename,renameat,renameat2 -o "$trace" \
    "$NEWSCLS_BIN" --log-level warn train --data "$tiny" --out "$out" --threads 2 "$@" \
    >/dev/null 2>"$trace.err" || { cat "$trace.err" >&2; fail "train under strace: $*"; }
}

# synced_before_rename TRACE FINAL_DIR TMP_PREFIX: each file now in FINAL_DIR was fsynced
# under the temporary name (TMP_PREFIX...) before that was renamed to FINAL_DIR, the
# temporary directory too, and the parent of FINAL_DIR after. Prints what it checked.
synced_before_rename() {
  python3 - "$@" <<'PY'
import os, re, sys
trace, final, prefix = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3]
lines = open(trace).read().splitlines()
sync_re = re.compile(r'\bf(?:data)?sync\(\d+<([^>]*)>')
rename_re = re.compile(r'\brename\w*\((?:[^,"]+, )?"([^"]+)", (?:[^,"]+, )?"([^"]+)"')
synced = [(i, m.group(1)) for i, l in enumerate(lines) if (m := sync_re.search(l))]
renames = [(i, os.path.realpath(m.group(1)), os.path.realpath(m.group(2)))
           for i, l in enumerate(lines) if (m := rename_re.search(l))]
into = [(i, src) for i, src, dst in renames if dst == final and os.path.basename(src).startswith(prefix)]
assert len(into) == 1, f"{trace}: expected one rename of {prefix}* to {final}, saw {renames}"
at, tmp = into[0]
before = {path for i, path in synced if i < at}
names = sorted(os.listdir(final))
missing = [n for n in names if os.path.join(tmp, n) not in before]
assert not missing, f"{trace}: not fsynced before the rename into {final}: {missing}"
assert tmp in before, f"{trace}: the directory {tmp} was not fsynced before its rename"
parent = os.path.dirname(final)
assert any(i > at and path == parent for i, path in synced), f"{trace}: {parent} not fsynced after the rename"
print(f"{os.path.basename(final)}: {len(names)} files and the directory fsynced before the rename, the parent after")
PY
}

traced_train "$dir/new.trace" "$dir/model" --model tfidf-rf --set n_trees=2 --set min_df=1
synced_before_rename "$dir/new.trace" "$dir/model" "model.tmp."
traced_train "$dir/replace.trace" "$dir/model" --model tfidf-rf --set n_trees=3 --set min_df=1
synced_before_rename "$dir/replace.trace" "$dir/model" "model.tmp."
grep -q "rename.*\"$dir/model\", .*\"$dir/model.old.[0-9]*\"" "$dir/replace.trace" || fail "the old bundle was not moved aside"
assert_eq 3 "$(json_get "$dir/model/manifest.json" "j['config']['n_trees']")" "trees in the replaced bundle"

traced_train "$dir/bert.trace" "$dir/bert" --model bert --set layers=1 --set hidden=32 --set heads=2 --set ff=64 \
  --set epochs=1 --set pretrain_epochs=0 --set vocab_min_count=1 --set bigram_buckets=64
synced_before_rename "$dir/bert.trace" "$dir/bert.work/bert_checkpoint" "bert_checkpoint.tmp"
synced_before_rename "$dir/bert.trace" "$dir/bert" "bert.tmp."
cut -f1 "$tiny/test.txt" | head -3 >"$dir/titles.txt"
"$NEWSCLS_BIN" --log-level warn attention --model-dir "$dir/bert" --input "$dir/titles.txt" --out "$dir/att" --threads 1
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -y -qq -e trace=rename,renameat,renameat2 -o "$dir/att.trace" \
  "$NEWSCLS_BIN" --log-level warn attention --model-dir "$dir/bert" --input "$dir/titles.txt" --out "$dir/att" --threads 1
python3 - "$dir/att.trace" "$dir/att" <<'PY' || fail "the attention index was not marked before the dump's files moved in"
import os, re, sys
lines, out = open(sys.argv[1]).read().splitlines(), os.path.realpath(sys.argv[2])
dst = [os.path.realpath(m.group(1)) for l in lines if (m := re.search(r'rename\w*\(.*, "([^"]+)"\)', l))]
index, first = dst.index(os.path.join(out, "dumps.json")), dst.index(os.path.join(out, "0.json"))
assert index < first, dst
PY
assert_eq "{'titles': 3}" "$(json_get "$dir/att/dumps.json" "j")" "the index once the dump is in place"
echo "test_bundle_durability: ok"
