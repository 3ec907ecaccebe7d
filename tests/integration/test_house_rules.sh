#!/usr/bin/env bash
# The architecture's rules, checked on the source tree (docs/ARCHITECTURE.md): core includes
# no family and no layer above it; no family is named outside its folder, the registry and
# the docs; and commands that do not use bert start without LibTorch.
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
echo "test_house_rules: ok"
