#!/usr/bin/env bash
# newscls audit's bars on THUCNews (docs/CLI.md "audit"): a copy of train.txt with NOISE of its
# labels changed at random to another class (seeded), then
#   speed:     `audit --model fasttext --threads 2` on it (the bar: at most 3 minutes);
#   quality:   `audit --threads 1` (repeatable: fasttext on several threads trains Hogwild,
#              without locks, so its answers differ a little from run to run): of the first k
#              rows of audit.csv (k = the titles changed), the share that were changed
#              (precision at k, bar 0.72), and of the titles changed, the share flagged at all
#              (recall, bar 0.85);
#   training:  fasttext's test accuracy trained on clean train, on the noisy copy, and on the
#              noisy copy with --exclude audit.csv (and --relabel), --threads 1 --seed SEED:
#              the share of the accuracy the noise cost that --exclude regains (bar 0.5).
# Nothing here is tuned on test.txt: the audit's defaults were chosen on the noisy copy (docs).
#
# Usage: NEWSCLS_DATA=/path/to/thucnews scripts/bench/bench_audit.sh
#   env: NEWSCLS_DATA (required: train/dev/test.txt and class.txt), NEWSCLS_BIN, WORK, NOISE (0.05),
#        NOISE_SEED (1), SEED (1), AUDIT_ARGS (extra audit options, e.g. "--folds 10")
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
NEWSCLS_BIN=${NEWSCLS_BIN:-$root/build/apps/newscls/newscls}
: "${NEWSCLS_DATA:?set NEWSCLS_DATA to the folder of the full THUCNews data (train/dev/test.txt, class.txt)}"
WORK=${WORK:-/tmp/newscls-bench-audit}
NOISE=${NOISE:-0.05}
NOISE_SEED=${NOISE_SEED:-1}
SEED=${SEED:-1}
read -r -a audit_args <<<"${AUDIT_ARGS:-}"
[[ -x $NEWSCLS_BIN ]] || { echo "no newscls binary at $NEWSCLS_BIN (set NEWSCLS_BIN)" >&2; exit 1; }
source "$root/scripts/bench/fresh_dir.sh"
fresh_dir "$WORK"

# The noisy copy: dev, test and classes as they are; $WORK/changed.txt lists the changed lines.
mkdir -p "$WORK/noisy"
cp "$NEWSCLS_DATA/dev.txt" "$NEWSCLS_DATA/test.txt" "$NEWSCLS_DATA/class.txt" "$WORK/noisy/"
python3 - "$NEWSCLS_DATA/train.txt" "$WORK/noisy/train.txt" "$WORK/changed.txt" "$NOISE" "$NOISE_SEED" <<'PY'
import random, sys
src, out, changed, noise, seed = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
lines = open(src, encoding="utf-8").read().splitlines()
labelled = [i for i, l in enumerate(lines) if "\t" in l]
classes = sorted({l.rsplit("\t", 1)[1] for l in lines if "\t" in l})
rng = random.Random(seed)
picked = sorted(rng.sample(labelled, round(noise * len(labelled))))
for i in picked:
    title, label = lines[i].rsplit("\t", 1)
    lines[i] = title + "\t" + rng.choice([c for c in classes if c != label])
open(out, "w", encoding="utf-8").write("\n".join(lines) + "\n")
open(changed, "w").write("".join(f"{i + 1}\n" for i in picked))
print(f"noisy copy: {len(picked)} of {len(labelled)} labels changed (seed {seed})")
PY

# timed NAME cmd...: wall seconds into SECONDS_NAME, stderr kept in $WORK/NAME.err.
timed() {
  local name=$1 start end
  shift
  start=$(date +%s.%N)
  "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || { tail -5 "$WORK/$name.err" >&2; exit 1; }
  end=$(date +%s.%N)
  printf -v "SECONDS_$name" '%s' "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')"
}

audit=(audit --model fasttext --data "$WORK/noisy" --seed "$SEED" "${audit_args[@]}")
timed audit2 "$NEWSCLS_BIN" "${audit[@]}" --threads 2 --out "$WORK/audit2.csv"
timed audit1 "$NEWSCLS_BIN" "${audit[@]}" --threads 1 --out "$WORK/audit.csv"
train=(train --model fasttext --threads 1 --seed "$SEED")
timed clean "$NEWSCLS_BIN" "${train[@]}" --data "$NEWSCLS_DATA" --out "$WORK/clean"
timed noisy "$NEWSCLS_BIN" "${train[@]}" --data "$WORK/noisy" --out "$WORK/noisy-model"
timed exclude "$NEWSCLS_BIN" "${train[@]}" --data "$WORK/noisy" --out "$WORK/exclude" --exclude "$WORK/audit.csv"
timed relabel "$NEWSCLS_BIN" "${train[@]}" --data "$WORK/noisy" --out "$WORK/relabel" --relabel "$WORK/audit.csv"

echo "commands: newscls ${audit[*]} --threads 2|1 --out audit.csv; newscls ${train[*]} --data DIR [--exclude|--relabel audit.csv]"
echo "audit --threads 2: ${SECONDS_audit2} s (bar 180 s); --threads 1: ${SECONDS_audit1} s"
python3 - "$WORK" <<'PY'
import csv, json, sys
work = sys.argv[1]
changed = {int(l) for l in open(f"{work}/changed.txt")}
def flagged(path):
    return [int(r["line"]) for r in csv.DictReader(open(path, encoding="utf-8", newline=""))]
for name, path in (("--threads 1", "audit.csv"), ("--threads 2", "audit2.csv")):
    rows = flagged(f"{work}/{path}")
    k = len(changed)
    hits = sum(line in changed for line in rows[:k])
    recall = sum(line in changed for line in rows) / k
    print(f"audit {name}: {len(rows)} flagged; precision at k={k}: {hits / k:.4f} (bar 0.72); "
          f"recall: {recall:.4f} (bar 0.85); precision of all flagged: {sum(l in changed for l in rows) / max(1, len(rows)):.4f}")
training = {n: json.load(open(f"{work}/{d}/manifest.json"))["training"]
            for n, d in (("clean", "clean"), ("noisy", "noisy-model"), ("exclude", "exclude"), ("relabel", "relabel"))}
acc = {n: t["test_accuracy"] for n, t in training.items()}
for n, t in training.items():
    audit = t.get("audit", {})
    edited = "".join(f"; {audit[k]} titles {k}" for k in ("excluded", "relabelled") if k in audit)
    print(f"fasttext trained on {n:>7}: test accuracy {t['test_accuracy']:.4f}, dev {t['calibration']['dev_accuracy']:.4f}{edited}")
lost = acc["clean"] - acc["noisy"]
for n in ("exclude", "relabel"):
    share = (acc[n] - acc["noisy"]) / lost if lost > 0 else float("nan")
    print(f"{n}: regains {share:.2f} of the {lost * 100:.2f} points the noise cost" + (" (bar 0.5)" if n == "exclude" else ""))
PY
