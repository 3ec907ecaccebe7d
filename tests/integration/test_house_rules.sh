#!/usr/bin/env bash
# The architecture's rules, checked on the source tree (docs/ARCHITECTURE.md): core includes
# no family and no layer above it; no family is named outside its folder, the registry and
# the docs; commands that do not use bert start without LibTorch; each layer includes and links
# only layers below it, and no family another; bert's sub-folders include downward only, and
# predict and serve on a bert bundle never load its training library nor LibTorch.
source "$(dirname "$0")/lib.sh"
cd "$NEWSCLS_SOURCE_DIR"
dir=$(scratch)

families=$(sed -n 's/.*newscls_register_family(NAME \([^ ]*\) .*/\1/p' src/*/CMakeLists.txt)
[[ $(echo "$families" | wc -l) -ge 4 ]] || fail "found no family registrations: $families"
folders=$(grep -l newscls_register_family src/*/CMakeLists.txt | xargs -n1 dirname | xargs -n1 basename)

upper="workflow|pipeline|report|$(echo "$folders" | paste -sd'|')"
if grep -rnE "#include \"($upper)/" src/core include/newscls >"$dir/core_includes"; then
  cat "$dir/core_includes" >&2
  fail "src/core or include/newscls includes a family or a layer above core"
fi

for name in $families; do
  # A family's name as a string literal in the code every family shares: the layers, the
  # commands, the public headers (comments, tests and docs may name it; so may a line naming a
  # DataFormat:: enumerator, as fastText's file format is named like the family).
  if grep -rn --include=*.cpp --include=*.h "\"$name\"" src/core src/text src/report src/workflow \
    src/pipeline apps include | grep -vE '^[^:]+:[0-9]+: *//' | grep -v 'DataFormat::' >"$dir/names"; then
    cat "$dir/names" >&2
    fail "family '$name' named outside its folder"
  fi
done

# Start-up: a command that does not use bert never loads LibTorch.
ldd "$NEWSCLS_BIN" | grep -q libtorch && fail "newscls links LibTorch directly"
"$NEWSCLS_BIN" train --model fasttext --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --out "$dir/ft" \
  --set epochs=1 >/dev/null 2>&1 || fail "fasttext training on the tiny fixture"
echo "央行宣布下调存款准备金率" >"$dir/titles.txt"
LD_DEBUG=files "$NEWSCLS_BIN" predict --model-dir "$dir/ft" --input "$dir/titles.txt" >/dev/null 2>"$dir/loaded"
grep -q "libnewscls_core" "$dir/loaded" || fail "LD_DEBUG shows no libraries loaded (cannot check)"
if grep -q "libtorch" "$dir/loaded"; then fail "predict with a fasttext bundle loaded LibTorch"; fi

# ---- Layers (issue 43, house-layers): each layer includes and links only layers below it ----
# Ranks: core 0; text, report, hf 1; the families 2; workflow 3; pipeline and serve 4.
layer_rank() {
  case "$1" in
    core) echo 0 ;; text | report | hf | spm) echo 1 ;; workflow) echo 3 ;; pipeline | serve) echo 4 ;; *) echo 2 ;;
  esac
}
[[ -d include/newscls/core ]] || fail "no include/newscls/core: the public headers are grouped by layer"
# A public header or a source folder includes no public header of a layer above its own
# (src/core and include/newscls/core include nothing above core).
for holder in include/newscls/*/ src/*/; do
  own=$(layer_rank "$(basename "$holder")")
  { grep -rnoE '#include "newscls/[a-z_]+/' "$holder" || true; } | while IFS= read -r hit; do
    layer=${hit##*newscls/}; layer=${layer%/}
    (( $(layer_rank "$layer") <= own )) || echo "$hit"
  done
done >"$dir/upward_includes"
[[ ! -s "$dir/upward_includes" ]] || { cat "$dir/upward_includes" >&2; fail "a header of a layer above is included"; }
# No library links a library above it (the cascade linked newscls_workflow, which links every family).
for cmake in $(find src -name CMakeLists.txt); do
  own=$(layer_rank "$(echo "$cmake" | cut -d/ -f2)")
  for lib in $(tr '\n' ' ' <"$cmake" | grep -oE 'target_link_libraries\([^)]*\)' | grep -oE 'newscls_[a-z_]+' | sort -u); do
    name=${lib#newscls_}
    [[ $name == warnings ]] && continue
    (( $(layer_rank "$name") <= own )) || echo "$cmake links $lib"
  done
done >"$dir/upward_links"
[[ ! -s "$dir/upward_links" ]] || { cat "$dir/upward_links" >&2; fail "a library links a library above it"; }
# A family includes no other family's headers (the cascade reaches its members through core).
for folder in $folders; do
  others=$(echo "$folders" | grep -vx "$folder" | paste -sd'|')
  grep -rnE "#include \"($others)/" "src/$folder" || true
done >"$dir/family_includes"
[[ ! -s "$dir/family_includes" ]] || { cat "$dir/family_includes" >&2; fail "a family includes another family's headers"; }
# The commands use a family through Family and the registry, never its own headers.
if grep -rnE "#include \"($(echo "$folders" | paste -sd'|'))/" apps >"$dir/app_family_includes"; then
  cat "$dir/app_family_includes" >&2
  fail "apps/ includes a family's headers"
fi

# --- bert's sub-folders and its two libraries (src/bert/CMakeLists.txt) ---
# Includes go downward only: tokens/ and kernels/ include nothing else of bert, model/ only
# those two, runtime/ only those three, nothing of train/ or compress/ below them; and no include cycle anywhere in
# src/bert, a header and its .cpp counted as one unit.
python3 - src/bert <<'PY' || fail "bert's include rules (above)"
import os, re, sys
root = sys.argv[1]
below = {"tokens": {"tokens"}, "kernels": {"kernels"}, "model": {"model", "tokens", "kernels"},
         "runtime": {"runtime", "model", "tokens", "kernels"}}
edges, broken = {}, []
for folder, _, files in os.walk(root):
    for name in files:
        if not name.endswith((".h", ".cpp")):
            continue
        path = os.path.join(folder, name)
        unit = os.path.splitext(os.path.relpath(path, root))[0]
        for target in re.findall(r'^#include "bert/([^"]+)\.h"', open(path, encoding="utf-8").read(), re.M):
            if target != unit:
                edges.setdefault(unit, set()).add(target)
            top, to = unit.split("/")[0], target.split("/")[0]
            if top in below and (to not in below[top] or "/" not in target):
                broken.append(f"{path} includes bert/{target}.h")
def cycle_from(unit, trail):
    if unit in trail:
        return trail[trail.index(unit):] + [unit]
    for target in sorted(edges.get(unit, ())):
        found = cycle_from(target, trail + [unit])
        if found:
            return found
    return None
for unit in sorted(edges):
    found = cycle_from(unit, [])
    if found:
        broken.append("include cycle: " + " -> ".join(found))
        break
if not edges:
    broken.append("found no bert include at all (cannot check)")
print("\n".join(broken), file=sys.stderr)
sys.exit(1 if broken else 0)
PY

# predict and serve on a float and an int8 bert bundle load the runtime, never the training
# library nor LibTorch; train and compress do.
bert_tiny=(--threads 1 --set layers=1 --set hidden=32 --set heads=2 --set ff=64 --set max_len=32
           --set pretrain_epochs=0 --set epochs=1 --set max_steps=2 --set vocab_min_count=1)
LD_DEBUG=files "$NEWSCLS_BIN" train --model bert --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --out "$dir/bert" \
  "${bert_tiny[@]}" >/dev/null 2>"$dir/bert_train.loaded" || { tail "$dir/bert_train.loaded" >&2; fail "bert training on the tiny fixture"; }
grep -q "libnewscls_bert_train" "$dir/bert_train.loaded" || fail "train --model bert did not load libnewscls_bert_train"
grep -q "libtorch" "$dir/bert_train.loaded" || fail "train --model bert did not load LibTorch (cannot check)"
"$NEWSCLS_BIN" compress --model-dir "$dir/bert" --method quantize --out "$dir/bert-int8" \
  --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --threads 1 --speed-titles 4 >/dev/null 2>"$dir/quantize.err" ||
  { tail "$dir/quantize.err" >&2; fail "compress --method quantize on the tiny bert"; }
runtime_only() {  # LD_DEBUG-FILE WHAT
  grep -q "libnewscls_bert" "$1" || fail "LD_DEBUG shows no libnewscls_bert for $2 (cannot check)"
  if grep -q "libnewscls_bert_train" "$1"; then fail "$2 loaded the training library"; fi
  if grep -q "libtorch" "$1"; then fail "$2 loaded LibTorch"; fi
}
source "$(dirname "$0")/serve_lib.sh"
for bundle in bert bert-int8; do
  LD_DEBUG=files "$NEWSCLS_BIN" predict --model-dir "$dir/$bundle" --input "$dir/titles.txt" >/dev/null \
    2>"$dir/$bundle.predict.loaded"
  runtime_only "$dir/$bundle.predict.loaded" "predict on $bundle"
  export LD_DEBUG=files LD_DEBUG_OUTPUT="$dir/$bundle.serve.loaded"  # one file per process: PATH.PID
  start_server "$dir/$bundle.serve.log" --model-dir "$dir/$bundle" --threads 1
  unset LD_DEBUG LD_DEBUG_OUTPUT
  served_pid=$server_pid
  post_json 200 "$dir/$bundle.served.json" '{"titles": ["央行宣布下调存款准备金率"]}'
  stop_server TERM
  runtime_only "$dir/$bundle.serve.loaded.$served_pid" "serve on $bundle"
done
echo "test_house_rules: ok"
