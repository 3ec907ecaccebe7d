#!/usr/bin/env bash
# Hostile Hugging Face folders through the CLI: import-hf (and train --init hf:) exit 1 with
# a one-line error naming the file at fault, never a crash.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hf_lib.sh"
hf=$(hf_dir)
dir=$(scratch)
bin=$NEWSCLS_BIN

# variant NAME: a writable copy of bert-tiny-cls.
variant() {
  mkdir "$dir/$1"
  cp "$hf/bert-tiny-cls/"* "$hf/vocab.txt" "$dir/$1/"
  chmod -R u+w "$dir/$1"
  echo "$dir/$1"
}

# edit_header DIR PYTHON: rewrites model.safetensors' JSON header h (data unchanged).
edit_header() {
  python3 - "$1/model.safetensors" "$2" <<'PY'
import json, struct, sys
path, code = sys.argv[1], sys.argv[2]
b = open(path, "rb").read()
(n,) = struct.unpack_from("<Q", b, 0)
h = json.loads(b[8:8 + n])
exec(code)
head = json.dumps(h).encode()
open(path, "wb").write(struct.pack("<Q", len(head)) + head + b[8 + n:])
PY
}

# refused DIR FILE: import-hf exits 1 with one line naming FILE.
refused() {
  expect_exit 1 "$dir/err" "$bin" import-hf --hf-dir "$1" --out "$dir/out"
  [[ $(grep -c . "$dir/err") == 1 ]] || { cat "$dir/err" >&2; fail "$1: error is not one line"; }
  assert_contains "$dir/err" "$2"
  [[ ! -e "$dir/out" ]] || fail "$1: a bundle was written"
}

d=$(variant good)
"$bin" import-hf --hf-dir "$d" --out "$dir/good-bundle" >/dev/null 2>&1 || fail "the unmodified copy must import"

d=$(variant truncated)
head -c 100000 "$hf/bert-tiny-cls/model.safetensors" >"$d/model.safetensors"
refused "$d" "$d/model.safetensors"

d=$(variant lying-size)
edit_header "$d" 'h["classifier.weight"]["data_offsets"][1] += 4096'
refused "$d" "$d/model.safetensors"

d=$(variant missing)
edit_header "$d" 'del h["bert.encoder.layer.1.output.dense.weight"]'
refused "$d" "$d/model.safetensors"
assert_contains "$dir/err" "layer.1.output.dense.weight"

# Bytes appended after the last tensor (the safetensors library refuses such a file).
d=$(variant appended)
head -c 64 /dev/zero >>"$d/model.safetensors"
refused "$d" "$d/model.safetensors"
assert_contains "$dir/err" "64 bytes after the last tensor"

# One NaN weight: imported without a word, then eval crashed and predict wrote "score":-nan.
d=$(variant nan)
python3 - "$d/model.safetensors" <<'PY'
import json, struct, sys
path = sys.argv[1]
b = bytearray(open(path, "rb").read())
(n,) = struct.unpack_from("<Q", b, 0)
begin = json.loads(b[8:8 + n])["classifier.bias"]["data_offsets"][0]
struct.pack_into("<f", b, 8 + n + begin, float("nan"))
open(path, "wb").write(b)
PY
refused "$d" "tensor 'classifier.bias' holds a NaN or infinite value (element 0)"

# A vocab.txt cut short imports (as transformers reads it), with a warning.
d=$(variant short-vocab)
head -n 11000 "$hf/vocab.txt" >"$d/vocab.txt"
"$bin" import-hf --hf-dir "$d" --out "$dir/short-vocab-bundle" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "import with a short vocab"; }
assert_contains "$dir/err" "has 11000 lines but config.json's vocab_size is 21128"

d=$(variant shape)
edit_header "$d" 'h["bert.encoder.layer.0.intermediate.dense.weight"]["shape"] = [64, 128]'
refused "$d" "$d/model.safetensors"

d=$(variant bad-utf8)
printf 'bad\xff\xfeline\n' >>"$d/vocab.txt"
refused "$d" "$d/vocab.txt"

d=$(variant config-types)
python3 -c 'import json,sys; p=sys.argv[1]; c=json.load(open(p)); c["hidden_size"]="64"; json.dump(c, open(p,"w"))' "$d/config.json"
refused "$d" "$d/config.json"
assert_contains "$dir/err" "hidden_size"

d=$(variant activation)
python3 -c 'import json,sys; p=sys.argv[1]; c=json.load(open(p)); c["hidden_act"]="relu"; json.dump(c, open(p,"w"))' "$d/config.json"
refused "$d" "$d/config.json"

d=$(variant model-type)
python3 -c 'import json,sys; p=sys.argv[1]; c=json.load(open(p)); c["model_type"]="roberta"; json.dump(c, open(p,"w"))' "$d/config.json"
refused "$d" "$d/config.json"
assert_contains "$dir/err" "roberta"

# A config.json with fewer layers than the weights is read as transformers reads it, with a
# warning naming the layers left out.
d=$(variant fewer-layers)
python3 -c 'import json,sys; p=sys.argv[1]; c=json.load(open(p)); c["num_hidden_layers"]=1; json.dump(c, open(p,"w"))' "$d/config.json"
"$bin" import-hf --hf-dir "$d" --out "$dir/fewer" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; fail "import with fewer layers"; }
assert_contains "$dir/err" "holds 2 encoder layers (numbered 0 to 1), but config.json's num_hidden_layers is 1: layer 1 is not read"

# Fine-tuning reads the same files the same way.
expect_exit 1 "$dir/err" "$bin" train --model bert --init "hf:$dir/truncated" \
  --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --out "$dir/tuned"
assert_contains "$dir/err" "$dir/truncated/model.safetensors"
# A config key that contradicts the checkpoint is refused by name.
expect_exit 1 "$dir/err" "$bin" train --model bert --init "hf:$dir/good" --set layers=4 \
  --data "$NEWSCLS_SOURCE_DIR/tests/fixtures/tiny" --out "$dir/tuned"
assert_contains "$dir/err" "layers"
echo "test_hf_hostile: ok"
