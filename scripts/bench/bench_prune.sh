#!/usr/bin/env bash
# Head pruning (`newscls compress --method prune`, issue 14) of a trained bert bundle: head
# importance on dev (Michel et al. 2019), the chosen heads sliced away, recovery fine-tuning,
# then compress's own measurements (compression.json): parameters, bundle MB, dev and test
# accuracy and macro-F1 before and after, `newscls predict` titles/s of both bundles on the
# same titles in the same run.
#
# Settings are chosen on dev: with DEV_ONLY=1 the run reads a copy of the data folder whose
# test.txt is dev.txt, so a trial never sees test; the final configuration runs once without it.
#
# Usage: BUNDLE=/path/to/bert DATA=/path/to/thucnews scripts/bench/bench_prune.sh [--set key=value]...
#   env (required): BUNDLE (a trained bert bundle), DATA (the folder of the full THUCNews data: train/dev/test.txt, class.txt);
#   env (optional): NEWSCLS_BIN, OUT, THREADS, DEV_ONLY
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
NEWSCLS_BIN=${NEWSCLS_BIN:-$root/build/apps/newscls/newscls}
: "${BUNDLE:?set BUNDLE to a trained bert bundle (its folder)}"
: "${DATA:?set DATA to the folder of the full THUCNews data (train/dev/test.txt, class.txt)}"
OUT=${OUT:-/tmp/newscls-bench-prune}
THREADS=${THREADS:-1}
[[ -x $NEWSCLS_BIN ]] || { echo "no newscls binary at $NEWSCLS_BIN (set NEWSCLS_BIN)" >&2; exit 1; }

data=$DATA
if [[ ${DEV_ONLY:-0} == 1 ]]; then
  data=$OUT.devonly
  mkdir -p "$data"
  for f in train dev class; do ln -sf "$(realpath "$DATA/$f.txt")" "$data/$f.txt"; done
  ln -sf "$(realpath "$DATA/dev.txt")" "$data/test.txt"
  echo "DEV_ONLY: 'test' below is dev"
fi
sets=()
for a in "$@"; do sets+=("$a"); done
# compress replaces a bundle at OUT and refuses anything else (the source bundle too).
echo "$(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$SECONDS
"$NEWSCLS_BIN" --log-level warn compress --model-dir "$BUNDLE" --method prune --out "$OUT" --data "$data" \
  --threads "$THREADS" "${sets[@]}"
echo "wall seconds: $((SECONDS - start)); load after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
c = json.load(open(f"{out}/compression.json"))
m = json.load(open(f"{out}/manifest.json"))["training"]
print("settings:", json.dumps(c.get("settings", {}), sort_keys=True))
print("heads removed: %d of %d; heads per layer %s; removed (layer, head) %s" % (
    m["heads_removed"], m["heads_before"], m["heads_per_layer"], m["removed_heads"]))
print("head importance (per layer):", [[round(v, 3) for v in l] for l in m["head_importance"]])
print("dev accuracy by heads removed (masked):", [round(v, 4) for v in m["dev_accuracy_by_heads_removed"]])
print("dev accuracy pruned, before recovery: %.4f" % m["dev_accuracy_pruned"])
if "dev_accuracy_recovered" in m:
    print("dev accuracy after recovery: %.4f (%s)%s" % (m["dev_accuracy_recovered"], json.dumps(m["recovery"].get("history")),
          "" if m.get("recovery_kept", True) else "; not kept: it lowered dev accuracy"))
print(json.dumps({k: v for k, v in c.items() if k != "settings"}, indent=1, sort_keys=True))
PY
