# Helpers for the Hugging Face import tests: the reference checkpoints and transformers' own
# outputs for them, in tests/fixtures/hf (its SOURCE.md says how they were made).
hf_dir() {
  echo "$NEWSCLS_SOURCE_DIR/tests/fixtures/hf"
}

# hf_titles GOLDEN OUT: the golden titles, one per line.
hf_titles() {
  python3 -c '
import json, sys
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in open(sys.argv[1], encoding="utf-8"):
        out.write(json.loads(line)["text"] + "\n")' "$1" "$2"
}

# hf_folder NAME OUT: a Hugging Face folder as save_pretrained + the tokenizer write it: the
# reference checkpoint NAME (config.json, model.safetensors) with bert-base-chinese's vocab.txt.
hf_folder() {
  local hf
  hf=$(hf_dir)
  mkdir -p "$2"
  ln -s "$hf/$1/config.json" "$2/config.json"
  ln -s "$hf/$1/model.safetensors" "$2/model.safetensors"
  ln -s "$hf/vocab.txt" "$2/vocab.txt"
}
