#include "hf/checkpoint.h"

#include <filesystem>

#include "newscls/error.h"

namespace newscls::hf {

BertCheckpoint load_bert_checkpoint(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path root(dir);
  const std::string weights_path = (root / "model.safetensors").string();
  if (!fs::exists(weights_path)) {
    std::string hint;
    if (fs::exists(root / "model.safetensors.index.json")) hint = " (sharded checkpoints are not read)";
    else if (fs::exists(root / "pytorch_model.bin")) hint = " (pytorch_model.bin is not read: save it with safe_serialization)";
    throw IoError(weights_path, "not found" + hint);
  }
  BertConfig config = read_bert_config((root / "config.json").string());
  BertTokenizer tokenizer = BertTokenizer::load_dir(dir);
  if (tokenizer.size() > config.vocab_size) {
    throw ModelFormatError(tokenizer.vocab_path(), "has " + std::to_string(tokenizer.size()) +
                                                       " lines, more than config.json's vocab_size " +
                                                       std::to_string(config.vocab_size));
  }
  const SafetensorsFile file = SafetensorsFile::open(weights_path);
  BertWeights weights = load_bert_weights(file, config);
  return BertCheckpoint{dir, std::move(config), std::move(tokenizer), std::move(weights)};
}

}  // namespace newscls::hf
