#!/usr/bin/env bash
# The main job, end to end on a fresh machine: install what is missing, build, run every
# stage on the default data into runs/<timestamp>/, write the report, and classify a few
# titles with each trained stage. Extra arguments go to `newscls pipeline`
# (e.g. --stages tfidf-rf,fasttext or --set bert.max_steps=30); with --out DIR the run goes
# there instead, and --out DIR --resume continues an earlier run with the same settings.
set -euo pipefail
cd "$(dirname "$0")/.."
started_at=$(date +%s)
bin="${NEWSCLS_BUILD_DIR:-build}/apps/newscls/newscls"
for arg in "$@"; do
  if [[ $arg == -h || $arg == --help ]]; then
    sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
    if [[ -x $bin ]]; then "$bin" pipeline --help; else echo "(build first, or run it without --help, for newscls pipeline's options)"; fi
    exit 0
  fi
done
# Said last, whatever the outcome: the run's own wall time, set-up and build included.
trap 'echo "run_pipeline: wall time $(($(date +%s) - started_at)) s" >&2' EXIT
run_dir=""
resume=false
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --out) run_dir="${args[i + 1]:-}" ;;
    --out=*) run_dir="${args[i]#--out=}" ;;
    --resume) resume=true ;;
  esac
done
# A new runs/<timestamp> would resume nothing: every stage trained again, and no word of it.
if $resume && [[ -z $run_dir ]]; then
  echo "run_pipeline: --resume continues a run: name its folder with --out (e.g. --out runs/20261205-010203 --resume)" >&2
  exit 2
fi
scripts/setup.sh
scripts/build.sh
if [[ -z $run_dir ]]; then
  run_dir="runs/$(date +%Y%m%d-%H%M%S)"
  set -- --out "$run_dir" "$@"
fi
examples=$(mktemp)
started=$(mktemp)  # files older than this are an earlier run's
trap 'rm -f "$examples" "$started"; echo "run_pipeline: wall time $(($(date +%s) - started_at)) s" >&2' EXIT
status=0
"$bin" pipeline "$@" || status=$?
# A run refused or interrupted is not shown as a result; after a failed stage, the stages that
# ran are still shown. Only this run's pipeline.json counts (with --out, one may be older).
this_run=false
[[ "$run_dir/pipeline.json" -nt "$started" ]] && this_run=true
if ((status != 0)); then
  where=""
  $this_run && where=" (see $run_dir/pipeline.json)"
  echo "run_pipeline: newscls pipeline exited $status$where" >&2
  ((status == 1)) && $this_run || exit "$status"
fi
printf '%s\n' "央行宣布下调金融机构存款准备金率" "湖人队加时险胜勇士 詹姆斯砍下40分" \
  "北京东三环新盘开盘 均价每平米六万" "新赛季电竞联赛今晚开幕" >"$examples"
# The stages this run finished, as pipeline.json lists them (a bundle left by an earlier run is not one).
done_stages=$(python3 -c 'import json, sys
for s in json.load(open(sys.argv[1]))["stages"]:
    if s.get("status") in ("done", "resumed"): print(s["stage"])' "$run_dir/pipeline.json")
for stage in $done_stages; do
  [[ -f "$run_dir/$stage/manifest.json" ]] || continue
  echo "== $stage"
  "$bin" predict --model-dir "$run_dir/$stage" --input "$examples" --format tsv --log-level warn || true
done
[[ "$run_dir/report.html" -nt "$started" ]] && echo "report: $run_dir/report.html"
exit "$status"
