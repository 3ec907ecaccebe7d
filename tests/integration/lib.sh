# Helpers for integration tests that drive the real newscls binary.
# Env (set by ctest): NEWSCLS_BIN, NEWSCLS_SOURCE_DIR, NEWSCLS_TEST_TMP.
set -euo pipefail

: "${NEWSCLS_BIN:?set NEWSCLS_BIN to the newscls binary}"
: "${NEWSCLS_SOURCE_DIR:?set NEWSCLS_SOURCE_DIR to the repository root}"
NEWSCLS_TEST_TMP="${NEWSCLS_TEST_TMP:-/tmp/newscls-it}"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# skip REASON: ends the test as skipped, not passed: exit 77 is its SKIP_RETURN_CODE in ctest.
skip() {
  echo "$(basename "${BASH_SOURCE[-1]}" .sh): SKIPPED ($*)"
  exit 77
}

# A fresh scratch directory named after the test script being run (not a sourced helper).
scratch() {
  local dir="$NEWSCLS_TEST_TMP/$(basename "${BASH_SOURCE[-1]}" .sh)"
  rm -rf "$dir" && mkdir -p "$dir" && echo "$dir"
}

assert_eq() {  # expected actual what
  [[ "$1" == "$2" ]] || fail "$3: expected '$1', got '$2'"
}

assert_contains() {  # file text
  grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "$1 does not contain '$2'"; }
}

assert_not_contains() {  # file text
  ! grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "$1 contains '$2'"; }
}

# expect_exit CODE STDERR_FILE cmd...: runs cmd, checks its exit code.
expect_exit() {
  local want=$1 err=$2
  shift 2
  set +e
  "$@" 2>"$err" >/dev/null
  local got=$?
  set -e
  [[ "$got" == "$want" ]] || { cat "$err" >&2; fail "exit code $got, expected $want: $*"; }
}

json_get() {  # file python-expression-on-j
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}

shared_data_dir() {
  local dir="$NEWSCLS_SOURCE_DIR/../shared/data/thucnews"
  [[ -f "$dir/class.txt" ]] || fail "shared data not found at $dir"
  echo "$dir"
}

# make_slice DIR N_TRAIN EVERY: the first N_TRAIN train lines, every EVERY-th dev/test line.
make_slice() {
  local out=$1 n=$2 every=$3 src
  src=$(shared_data_dir)
  mkdir -p "$out"
  head -n "$n" "$src/train.txt" >"$out/train.txt"
  awk -v k="$every" 'NR % k == 0' "$src/dev.txt" >"$out/dev.txt"
  awk -v k="$every" 'NR % k == 0' "$src/test.txt" >"$out/test.txt"
  cp "$src/class.txt" "$out/class.txt"
}
