#!/usr/bin/env bash
# calibrate is a workflow-level key, not in the config the manifest records, yet it changes the
# bundle: pipeline --resume with another calibrate setting trains the stage again, the log
# saying why, instead of keeping a bundle calibrated otherwise.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
data="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
run() {
  "$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/run" --stages fasttext --threads 1 --compress none \
    --set fasttext.epochs=1 "$@" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "pipeline $*"; }
}
status() {
  json_get "$dir/run/pipeline.json" "[s['status'] for s in j['stages'] if s['stage'] == 'fasttext'][0]"
}
calibrated() {
  json_get "$dir/run/fasttext/manifest.json" "'calibration' in j['training']"
}

run --set fasttext.calibrate=false
assert_eq False "$(calibrated)" "calibrate=false"
run --resume --set fasttext.calibrate=false
assert_eq resumed "$(status)" "the same calibrate setting"
run --resume
assert_eq done "$(status)" "calibrate=false, then the default"
assert_contains "$dir/err" "not resumed: it was trained with calibrate false, this run asks for auto"
assert_eq True "$(calibrated)" "the default"
run --resume --set fasttext.calibrate=false
assert_eq done "$(status)" "the default, then calibrate=false"
assert_eq False "$(calibrated)" "calibrate=false again"
# A bundle trained before the setting was recorded (no training.calibrate) is not compared:
# resumed, not trained again under a guessed setting.
python3 - "$dir/run/fasttext/manifest.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); del j["training"]["calibrate"]
json.dump(j, open(sys.argv[1], "w"))
PY
run --resume --set fasttext.calibrate=false
assert_eq resumed "$(status)" "a bundle without the record"
echo "test_pipeline_resume_calibrate: ok"
