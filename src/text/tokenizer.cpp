#include "newscls/text/tokenizer.h"

#include <unordered_map>

#include "newscls/core/error.h"
#include "text/spm_backend.h"

namespace newscls {

SubwordTokenizer::SubwordTokenizer() : processor_(make_spm_backend()) {}
SubwordTokenizer::SubwordTokenizer(SubwordTokenizer&&) noexcept = default;
SubwordTokenizer& SubwordTokenizer::operator=(SubwordTokenizer&&) noexcept = default;
SubwordTokenizer::~SubwordTokenizer() = default;

SubwordTokenizer SubwordTokenizer::train(const std::vector<std::string>& titles, const SubwordOptions& options) {
  if (options.vocab_size < 16) throw ConfigError(options.vocab_size_key, "must be at least 16");
  const std::unordered_map<std::string, std::string> args = {
      {"model_type", options.model_type},
      {"vocab_size", std::to_string(options.vocab_size)},
      {"character_coverage", std::to_string(options.character_coverage)},
      {"hard_vocab_limit", "false"},
      {"num_threads", "2"},
      {"minloglevel", "2"},
      {"add_dummy_prefix", "false"},
      {"normalization_rule_name", "identity"},
  };
  SubwordTokenizer tokenizer;
  const std::string error = tokenizer.processor_->train(titles, args, &tokenizer.serialized_);
  if (!error.empty()) throw ConfigError(options.vocab_size_key, "SentencePiece training failed: " + error);
  if (!tokenizer.processor_->load(tokenizer.serialized_).empty()) {
    throw ModelFormatError("subword tokenizer", "SentencePiece could not load the model it just trained");
  }
  return tokenizer;
}

SubwordTokenizer SubwordTokenizer::from_serialized(const std::string& bytes, const std::string& what) {
  SubwordTokenizer tokenizer;
  tokenizer.serialized_ = bytes;
  const std::string error = tokenizer.processor_->load(bytes);
  if (!error.empty()) throw ModelFormatError(what, "not a SentencePiece model: " + error);
  return tokenizer;
}

std::vector<std::string> SubwordTokenizer::encode_pieces(std::string_view text) const {
  return processor_->encode_pieces(text);
}

std::vector<int> SubwordTokenizer::encode_ids(std::string_view text) const { return processor_->encode_ids(text); }

int SubwordTokenizer::vocab_size() const { return processor_->piece_size(); }
int SubwordTokenizer::piece_to_id(const std::string& piece) const { return processor_->piece_to_id(piece); }
std::string SubwordTokenizer::id_to_piece(int id) const { return processor_->id_to_piece(id); }

}  // namespace newscls
