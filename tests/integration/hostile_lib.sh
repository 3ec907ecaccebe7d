# Helpers for the test_hostile_*.sh scripts (sourced after lib.sh).

# expect_one_error ERR_FILE TEXT: exactly one "error:" line, and it contains TEXT (a path).
expect_one_error() {
  local n
  n=$(grep -c '^error:' "$1" || true)
  [[ "$n" == 1 ]] || { cat "$1" >&2; fail "$1: expected one 'error:' line, got $n"; }
  grep '^error:' "$1" | grep -qF -- "$2" || { cat "$1" >&2; fail "$1: the error line does not name '$2'"; }
}

# expect_error_naming TEXT cmd...: exit code 1 and one error line naming TEXT.
expect_error_naming() {
  local text=$1
  shift
  expect_exit 1 "$HOSTILE_ERR" "$@"
  expect_one_error "$HOSTILE_ERR" "$text"
}

# train_tiny FAMILY OUT [--set k=v ...]: a small bundle trained on tests/fixtures/tiny.
train_tiny() {
  local family=$1 out=$2
  shift 2
  "$NEWSCLS_BIN" --log-level warn train --model "$family" --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" \
    --out "$out" --threads 2 "$@" >/dev/null 2>"$out.train.log" || { cat "$out.train.log" >&2; fail "train $family"; }
}

# hostile_setup: sets $dir (a scratch directory), $HOSTILE_ERR in it and $bundle, a tiny
# 3-tree tfidf-rf bundle for the test to attack.
hostile_setup() {
  dir=$(scratch)
  HOSTILE_ERR="$dir/err"
  bundle="$dir/bundle"
  train_tiny tfidf-rf "$bundle" --set n_trees=3 --set min_df=1
}

# Small settings per family, so a tiny bundle trains in seconds.
tiny_settings() {
  case $1 in
    tfidf-rf) echo "--set n_trees=5 --set min_df=1" ;;
    fasttext) echo "--set epochs=5 --set dim=16 --set ensemble=2" ;;
    bert) echo "--set layers=1 --set hidden=32 --set heads=2 --set ff=64 --set epochs=1 --set pretrain_epochs=0 --set vocab_min_count=1" ;;
    *) echo "" ;;
  esac
}

# rehash BUNDLE: rewrites the manifest's checksums to match the payloads as they are now,
# so a corrupted payload reaches the family's own reader instead of the checksum check.
rehash() {
  python3 - "$1" <<'PY'
import hashlib, json, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
for name, entry in m["payloads"].items():
    entry["sha256"] = hashlib.sha256(open(d + "/" + name, "rb").read()).hexdigest()
json.dump(m, open(d + "/manifest.json", "w"), ensure_ascii=False, indent=2)
PY
}

# edit_manifest BUNDLE PYTHON: runs PYTHON with the manifest as `m`, writes it back.
edit_manifest() {
  python3 - "$1" "$2" <<'PY'
import json, sys
path = sys.argv[1] + "/manifest.json"
m = json.load(open(path))
exec(sys.argv[2])
open(path, "w").write(json.dumps(m, ensure_ascii=False))
PY
}

# flip_byte FILE OFFSET: xors the byte at OFFSET with 0x55.
flip_byte() {
  python3 - "$1" "$2" <<'PY'
import sys
p, k = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read())
b[k] ^= 0x55
open(p, "wb").write(bytes(b))
PY
}

# check_jsonl FILE N LABELS...: N lines of valid predictions whose labels are among LABELS; a
# blank title (nothing but white space, U+3000, U+00A0, control and format characters) is
# abstained (label null), never labelled.
check_jsonl() {
  python3 - "$@" <<'PY'
import json, math, sys, unicodedata
path, n, labels = sys.argv[1], int(sys.argv[2]), set(sys.argv[3:]) | {"unknown"}
lines = open(path, encoding="utf-8").read().splitlines()
assert len(lines) == n, f"{path}: {len(lines)} lines, expected {n}"
for i, line in enumerate(lines, 1):
    r = json.loads(line)
    blank = all(c in " \t\r\n\f\v\u3000\u00a0\u0085" or unicodedata.category(c) in ("Cc", "Cf") for c in r["title"])
    assert (r["label"] is None and r["abstained"]) if blank else r["label"] in labels, f"{path}:{i}: label {r['label']!r}"
    assert isinstance(r["score"], (int, float)) or r["score"] is None, f"{path}:{i}: score"
PY
}

# scratch_named NAME: a fresh scratch directory under NEWSCLS_TEST_TMP.
scratch_named() {
  local dir="$NEWSCLS_TEST_TMP/$1"
  rm -rf "$dir" && mkdir -p "$dir" && echo "$dir"
}

# mount_tmpfs DIR OPTIONS: true when mounted (needs root and permission to mount). A test
# that mounts runs `trap unmount_all EXIT` first.
HOSTILE_MOUNTS=()
mount_tmpfs() {
  mkdir -p "$1"
  if [[ $(id -u) == 0 ]] && mount -t tmpfs -o "$2" tmpfs "$1" 2>/dev/null; then
    HOSTILE_MOUNTS+=("$1")
    return 0
  fi
  return 1
}
unmount_all() { for m in "${HOSTILE_MOUNTS[@]}"; do umount "$m" 2>/dev/null || true; done; }

# hostile_env_setup: hostile_setup, mounts undone at exit, $tiny (the fixture data) and
# $dir/titles.txt, 12000 titles whose predictions exceed a 64 KiB disk.
hostile_env_setup() {
  trap unmount_all EXIT
  hostile_setup
  tiny="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
  for _ in $(seq 400); do cut -f1 "$tiny/train.txt"; done >"$dir/titles.txt"
}

no_temp_files() {  # DIR: no *.tmp.* left by a failed run
  if find "$1" -name '*.tmp.*' | grep -q .; then find "$1" -name '*.tmp.*' >&2; fail "temporary files left in $1"; fi
}
