#!/usr/bin/env bash
# The main job, end to end on a fresh machine: install what is missing, build, run every
# stage on the default data into runs/<timestamp>/, write the report, and classify a few
# titles with each trained stage. Extra arguments go to `newscls pipeline`
# (e.g. --stages tfidf-rf,fasttext or --set bert.max_steps=30); with --out DIR the run goes
# there instead, and --out DIR --resume continues an earlier run with the same settings.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
bin=build/apps/newscls/newscls
run_dir=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --out) run_dir="${args[i + 1]:-}" ;;
    --out=*) run_dir="${args[i]#--out=}" ;;
  esac
done
if [[ -z $run_dir ]]; then
  run_dir="runs/$(date +%Y%m%d-%H%M%S)"
  set -- --out "$run_dir" "$@"
fi
status=0
"$bin" pipeline "$@" || status=$?
if ((status != 0)); then
  echo "run_pipeline: newscls pipeline exited $status: a stage failed or the run stopped (see $run_dir/pipeline.json)" >&2
  [[ -d "$run_dir" ]] || exit "$status"
fi

examples=$(mktemp)
trap 'rm -f "$examples"' EXIT
printf '%s\n' "央行宣布下调金融机构存款准备金率" "湖人队加时险胜勇士 詹姆斯砍下40分" \
  "北京东三环新盘开盘 均价每平米六万" "新赛季电竞联赛今晚开幕" >"$examples"
for stage_dir in "$run_dir"/*/; do
  [[ -f "$stage_dir/manifest.json" ]] || continue
  echo "== $(basename "$stage_dir")"
  "$bin" predict --model-dir "$stage_dir" --input "$examples" --format tsv --log-level warn || true
done
echo "report: $run_dir/report.html"
exit "$status"
