#!/usr/bin/env bash
# `predict` streams: its peak memory (max RSS, /usr/bin/time -v) on 1,000,000 titles stays
# within a small margin of its peak on 10,000 titles, and every title gets one answer.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"
[[ -x /usr/bin/time ]] || fail "/usr/bin/time missing: scripts/setup.sh installs it (Debian package time)"
dir=$(scratch)
bundle="$dir/bundle"
train_tiny tfidf-rf "$bundle" --set n_trees=3 --set min_df=1
src=$(demo_data_dir)/train.txt
python3 - "$src" "$dir" <<'PY'
import sys
titles = [l.split("\t")[0] for l in open(sys.argv[1], encoding="utf-8")]
for n in (10000, 1000000):
    with open(f"{sys.argv[2]}/titles_{n}.txt", "w", encoding="utf-8") as out:
        for i in range(n):
            out.write(titles[i % len(titles)] + "\n")
PY

max_rss_kb() {  # N: peak RSS in KiB of predicting N titles
  /usr/bin/time -v "$NEWSCLS_BIN" --log-level warn predict --model-dir "$bundle" --input "$dir/titles_$1.txt" \
    --output "$dir/out_$1.jsonl" --threads 2 2>"$dir/time_$1.txt"
  assert_eq "$1" "$(wc -l <"$dir/out_$1.jsonl")" "predictions for $1 titles"
  grep 'Maximum resident set size' "$dir/time_$1.txt" | awk '{print $NF}'
}
small=$(max_rss_kb 10000)
large=$(max_rss_kb 1000000)
seconds=$(grep 'Elapsed (wall clock)' "$dir/time_1000000.txt" | awk '{print $NF}')
echo "predict max RSS: 10,000 titles ${small} KiB; 1,000,000 titles ${large} KiB (wall ${seconds})"
# Flat: 100x the input may add at most 20% or 32 MiB, whichever is larger.
limit=$((small + (small / 5 > 32768 ? small / 5 : 32768)))
((large <= limit)) || fail "memory grows with input: ${large} KiB > ${limit} KiB"
echo "test_hostile_predict_memory_slow: ok"
