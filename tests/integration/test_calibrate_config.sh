#!/usr/bin/env bash
# calibrate is a workflow-level key in a config file as with --set: {"calibrate": false} in
# `train --config` or in a `pipeline --config-dir` stage file skips the calibration instead of
# being refused as unknown; --set overrides the file; a value other than true or false is refused.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
data="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
calibrated() {  # BUNDLE
  json_get "$1/manifest.json" "'calibration' in j['training']"
}
echo '{"calibrate": false, "epochs": 1}' >"$dir/off.json"
"$NEWSCLS_BIN" train --model fasttext --data "$data" --out "$dir/ft" --config "$dir/off.json" >/dev/null 2>"$dir/err" \
  || { cat "$dir/err" >&2; fail "train --config with calibrate false"; }
assert_eq False "$(calibrated "$dir/ft")" "train --config {calibrate: false}"
assert_eq 1 "$(json_get "$dir/ft/manifest.json" "j['config']['epochs']")" "the file's other keys"
"$NEWSCLS_BIN" train --model fasttext --data "$data" --out "$dir/ft2" --config "$dir/off.json" --set calibrate=true \
  >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "train --config, --set calibrate=true"; }
assert_eq True "$(calibrated "$dir/ft2")" "--set calibrate=true over the file's false"

mkdir "$dir/configs" && cp "$dir/off.json" "$dir/configs/fasttext.json"
"$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/run" --stages fasttext --compress none --config-dir "$dir/configs" \
  >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "pipeline --config-dir with calibrate false"; }
assert_eq False "$(calibrated "$dir/run/fasttext")" "pipeline --config-dir {calibrate: false}"

echo '{"calibrate": "no"}' >"$dir/bad.json"
expect_exit 1 "$dir/err" "$NEWSCLS_BIN" train --model fasttext --data "$data" --out "$dir/ft3" --config "$dir/bad.json"
assert_contains "$dir/err" "expects true or false"
[[ ! -e "$dir/ft3" ]] || fail "a bundle was written with a malformed calibrate"
echo "test_calibrate_config: ok"
