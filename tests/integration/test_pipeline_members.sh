#!/usr/bin/env bash
# In a pipeline a cascade member named by a bare stage name is the run's own stage bundle, even
# when the pipeline runs in a folder that has a folder of that name.
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
data="$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny"
mkdir -p "$dir/elsewhere/tfidf-rf" "$dir/elsewhere/fasttext"  # decoys in the working folder

(cd "$dir/elsewhere" && "$NEWSCLS_BIN" pipeline --data "$data" --out "$dir/run" --stages tfidf-rf,fasttext,cascade \
  --set tfidf-rf.n_trees=5 --set cascade.members=tfidf-rf,fasttext >/dev/null 2>"$dir/err") ||
  { cat "$dir/err" >&2; fail "pipeline failed"; }
assert_eq "$dir/run/tfidf-rf $dir/run/fasttext" \
  "$(json_get "$dir/run/cascade/manifest.json" '" ".join(j["training"]["members"])')" "cascade members"
echo "test_pipeline_members: ok"
