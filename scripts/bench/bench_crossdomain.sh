#!/usr/bin/env bash
# Headlines from another outlet (the cross-domain sample) against THUCNews bundles.
#  diagnose: one bundle per family (BEFORE/<family>) on transformed titles: the sample as is,
#    without punctuation, cut to 19 characters (THUCNews's median length); random strings of
#    THUCNews characters, 20 and 40 long; dev titles with "？"/"！" appended, spaces written
#    as "，", and two dev titles of one class joined (about 40 characters). Prints accuracy,
#    ECE and the share predicted "sports" (random strings: only the share means anything).
#  compare: accuracy and ECE on the sample of BEFORE/<family> and AFTER/<family> as stored
#    (--uncalibrated too), and AFTER's test accuracy (measured once, for the finished default).
# Nothing is chosen here: the sample is measured, never tuned on (see its SOURCE.md).
#
# Usage: scripts/bench/bench_crossdomain.sh
#   env (required): DATA (the folder of the full THUCNews data: train/dev/test.txt, class.txt),
#        CROSS (the cross-domain sample: labelled headlines of another outlet,
#        toutiao_sample.txt, in the format of test.txt),
#        BEFORE (trained bundles, one folder per family);
#   env (optional): NEWSCLS_BIN, AFTER, WORK, THREADS,
#        FAMILIES (default "tfidf-rf fasttext bert"), PARTS (default "diagnose compare")
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
NEWSCLS_BIN=${NEWSCLS_BIN:-$root/build/apps/newscls/newscls}
: "${DATA:?set DATA to the folder of the full THUCNews data (train/dev/test.txt, class.txt)}"
: "${CROSS:?set CROSS to the cross-domain sample, labelled headlines of another outlet, in the format of test.txt (toutiao_sample.txt)}"
: "${BEFORE:?set BEFORE to a folder holding a trained bundle per family (tfidf-rf/, fasttext/, bert/)}"
AFTER=${AFTER:-}
WORK=${WORK:-/tmp/newscls-bench-crossdomain}
THREADS=${THREADS:-1}
FAMILIES=${FAMILIES:-tfidf-rf fasttext bert}
PARTS=${PARTS:-diagnose compare}
part() { [[ " $PARTS " == *" $1 "* ]]; }
[[ -x $NEWSCLS_BIN ]] || { echo "no newscls binary at $NEWSCLS_BIN (set NEWSCLS_BIN)" >&2; exit 1; }
source "$root/scripts/bench/fresh_dir.sh"
fresh_dir "$WORK"
mkdir -p "$WORK/titles"

# eval BUNDLE INPUT NAME [args]: prints "accuracy ece sports-share"
ev() {
  local bundle=$1 input=$2 name=$3
  shift 3
  "$NEWSCLS_BIN" --log-level warn eval --model-dir "$bundle" --data "$DATA" --input "$input" \
    --threads "$THREADS" --out "$WORK/eval/$name/metrics.json" "$@" >/dev/null
  python3 - "$WORK/eval/$name" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1] + '/metrics.json'))
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1] + '/predictions.tsv', encoding='utf-8')][1:]
print('%.4f %.4f %.3f' % (m['accuracy'], m['ece'], sum(r[2] == 'sports' for r in rows) / max(1, len(rows))))
EOF
}

python3 - "$DATA" "$CROSS" "$WORK/titles" <<'EOF'
import random, re, sys, unicodedata
data, cross, out = sys.argv[1:]
read = lambda f: [l.rstrip('\n').split('\t') for l in open(f, encoding='utf-8')]
def write(name, rows):
    with open('%s/%s.txt' % (out, name), 'w', encoding='utf-8') as f:
        f.writelines('%s\t%s\n' % tuple(r) for r in rows)
nopunct = lambda t: re.sub(' +', ' ', ''.join(' ' if unicodedata.category(c)[0] == 'P' else c for c in t)).strip()
x, dev, train = read(cross), read(data + '/dev.txt')[:2000], read(data + '/train.txt')
rng = random.Random(7)
chars = [c for t, _ in train[:20000] for c in t if not c.isspace()]
by_class = {}
for t, y in dev: by_class.setdefault(y, []).append(t)
write('cross', x)
write('cross_no_punct', [(nopunct(t), y) for t, y in x])
write('cross_cut19', [(t[:19], y) for t, y in x])
write('random20', [(''.join(rng.choice(chars) for _ in range(20)), '0') for _ in range(1000)])
write('random40', [(''.join(rng.choice(chars) for _ in range(40)), '0') for _ in range(1000)])
write('dev', dev)
write('dev_question', [(t + '？', y) for t, y in dev])
write('dev_exclaim', [(t + '！', y) for t, y in dev])
write('dev_commas', [(t.replace(' ', '，'), y) for t, y in dev])
write('dev_joined', [(t + '，' + rng.choice(by_class[y]), y) for t, y in dev])
EOF

if part diagnose; then
  echo "## diagnose (accuracy ECE sports-share, uncalibrated; bundles in $BEFORE)"
  for family in $FAMILIES; do
    [[ -f $BEFORE/$family/manifest.json ]] || { echo "# $family: no bundle in $BEFORE"; continue; }
    for set in cross cross_no_punct cross_cut19 random20 random40 dev dev_question dev_exclaim dev_commas dev_joined; do
      echo "$family $set $(ev "$BEFORE/$family" "$WORK/titles/$set.txt" "diag-$family-$set" --uncalibrated)"
    done
  done
fi

if part compare; then
  [[ -n $AFTER ]] || { echo "compare needs AFTER=<runs dir>" >&2; exit 1; }
  echo "## compare on $CROSS (accuracy ECE sports-share); test accuracy of AFTER"
  for family in $FAMILIES; do
    for side in BEFORE AFTER; do
      dir=${!side}/$family
      [[ -f $dir/manifest.json ]] || { echo "# $family: no bundle in ${!side}"; continue; }
      raw=$(ev "$dir" "$CROSS" "$side-$family-raw" --uncalibrated)
      stored=$(ev "$dir" "$CROSS" "$side-$family")
      echo "$family $side uncalibrated $raw | as stored $stored"
    done
    if [[ -f $AFTER/$family/manifest.json ]]; then
      "$NEWSCLS_BIN" --log-level warn eval --model-dir "$AFTER/$family" --data "$DATA" --split test \
        --threads "$THREADS" --out "$WORK/eval/AFTER-$family-test/metrics.json" >/dev/null
      echo "$family AFTER test $(python3 -c "import json,sys; print('%.4f' % json.load(open(sys.argv[1]))['accuracy'])" \
        "$WORK/eval/AFTER-$family-test/metrics.json")"
    fi
  done
fi
