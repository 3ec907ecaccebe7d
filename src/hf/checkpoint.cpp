#include "hf/checkpoint.h"

#include <filesystem>
#include <regex>

#include <spdlog/spdlog.h>

#include "newscls/core/error.h"

namespace newscls::hf {
namespace {

// transformers loads such a checkpoint too, warning of the weights it does not use; a
// num_hidden_layers below the layers the file holds is nearly always a mistaken config.json.
void warn_of_unread_layers(const std::vector<std::string>& unused, std::int64_t layers, const std::string& path) {
  static const std::regex kLayer(R"(encoder\.layer\.(\d{1,9})\.)");
  long long highest = -1;
  std::smatch m;
  for (const std::string& name : unused) {
    if (std::regex_search(name, m, kLayer)) highest = std::max(highest, std::stoll(m[1].str()));
  }
  if (highest < layers) return;  // none, or stray tensors of layers that are read
  // transformers numbers layers from 0: say so, as "up to 1" beside "num_hidden_layers 1" reads as a contradiction.
  const std::string unread = highest == layers ? "layer " + std::to_string(layers)
                                               : "layers " + std::to_string(layers) + " to " + std::to_string(highest);
  spdlog::warn(
      "{} holds {} encoder layers (numbered 0 to {}), but config.json's num_hidden_layers is {}: {} {} not read", path,
      highest + 1, highest, layers, unread, highest == layers ? "is" : "are");
}

}  // namespace

BertCheckpoint load_bert_checkpoint(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path root(dir);
  const std::string weights_path = (root / "model.safetensors").string();
  if (!fs::exists(weights_path)) {
    std::string hint;
    if (fs::exists(root / "model.safetensors.index.json"))
      hint = " (sharded checkpoints are not read)";
    else if (fs::exists(root / "pytorch_model.bin"))
      hint = " (pytorch_model.bin is not read: save it with safe_serialization)";
    throw IoError(weights_path, "not found" + hint);
  }
  BertConfig config = read_bert_config((root / "config.json").string());
  BertTokenizer tokenizer = BertTokenizer::load_dir(dir);
  if (tokenizer.size() > config.vocab_size) {
    throw ModelFormatError(tokenizer.vocab_path(), "has " + std::to_string(tokenizer.size()) +
                                                       " lines, more than config.json's vocab_size " +
                                                       std::to_string(config.vocab_size));
  }
  if (tokenizer.size() < config.vocab_size) {  // transformers reads it too; usually a download cut short
    spdlog::warn(
        "{} has {} lines but config.json's vocab_size is {}: the characters past its end read as [UNK] "
        "(a truncated download?)",
        tokenizer.vocab_path(), tokenizer.size(), config.vocab_size);
  }
  const SafetensorsFile file = SafetensorsFile::open(weights_path);
  BertWeights weights = load_bert_weights(file, config);
  warn_of_unread_layers(weights.unused, config.num_hidden_layers, weights_path);
  return BertCheckpoint{dir, std::move(config), std::move(tokenizer), std::move(weights)};
}

}  // namespace newscls::hf
