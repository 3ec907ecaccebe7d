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

# The committed demo set (data/demo/SOURCE.md): 3,000 train, 500 dev, 1,000 test titles, shuffled.
demo_data_dir() {
  local dir="$NEWSCLS_SOURCE_DIR/data/demo"
  [[ -f "$dir/class.txt" ]] || fail "the demo set is missing at $dir"
  echo "$dir"
}

# first_per_class K FILE: the first K titles of each class, in file order.
first_per_class() {
  awk -F'\t' -v k="$1" 'seen[$2]++ < k' "$2"
}

# make_slice DIR N_TRAIN K: N_TRAIN train titles of the demo set (cycled when it has fewer, for a
# test that needs a long training), and K dev and K test titles of each class (dev has 50 of each).
make_slice() {
  local out=$1 n=$2 k=$3 src
  src=$(demo_data_dir)
  mkdir -p "$out"
  awk -v n="$n" '{ line[NR] = $0 } END { for (i = 0; i < n; i++) print line[i % NR + 1] }' "$src/train.txt" \
    >"$out/train.txt"
  first_per_class "$k" "$src/dev.txt" >"$out/dev.txt"
  first_per_class "$k" "$src/test.txt" >"$out/test.txt"
  cp "$src/class.txt" "$out/class.txt"
}
source "$(dirname "${BASH_SOURCE[0]}")/poll_lib.sh"
