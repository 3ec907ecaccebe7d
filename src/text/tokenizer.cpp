#include "newscls/tokenizer.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <unordered_map>

#include "newscls/error.h"

namespace newscls {
namespace {

// Feeds titles to the trainer from memory, so no temporary corpus file is needed.
class VectorSentenceIterator : public sentencepiece::SentenceIterator {
 public:
  explicit VectorSentenceIterator(const std::vector<std::string>& titles) : titles_(titles) {}
  bool done() const override { return index_ >= titles_.size(); }
  void Next() override { ++index_; }
  const std::string& value() const override { return titles_[index_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::vector<std::string>& titles_;
  std::size_t index_ = 0;
};

}  // namespace

SubwordTokenizer::SubwordTokenizer() : processor_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}
SubwordTokenizer::SubwordTokenizer(SubwordTokenizer&&) noexcept = default;
SubwordTokenizer& SubwordTokenizer::operator=(SubwordTokenizer&&) noexcept = default;
SubwordTokenizer::~SubwordTokenizer() = default;

SubwordTokenizer SubwordTokenizer::train(const std::vector<std::string>& titles, const SubwordOptions& options) {
  if (options.vocab_size < 16) throw ConfigError("vocab_size", "must be at least 16");
  const std::unordered_map<std::string, std::string> args = {
      {"model_type", options.model_type},
      {"vocab_size", std::to_string(options.vocab_size)},
      {"character_coverage", std::to_string(options.character_coverage)},
      {"random_seed", std::to_string(options.seed)},
      {"hard_vocab_limit", "false"},
      {"num_threads", "2"},
      {"minloglevel", "2"},
      {"add_dummy_prefix", "false"},
      {"normalization_rule_name", "identity"},
  };
  VectorSentenceIterator iterator(titles);
  SubwordTokenizer tokenizer;
  const auto status = sentencepiece::SentencePieceTrainer::Train(args, &iterator, &tokenizer.serialized_);
  if (!status.ok()) throw ConfigError("subword tokenizer", "SentencePiece training failed: " + status.ToString());
  if (!tokenizer.processor_->LoadFromSerializedProto(tokenizer.serialized_).ok()) {
    throw ModelFormatError("subword tokenizer", "SentencePiece could not load the model it just trained");
  }
  return tokenizer;
}

SubwordTokenizer SubwordTokenizer::from_serialized(const std::string& bytes, const std::string& what) {
  SubwordTokenizer tokenizer;
  tokenizer.serialized_ = bytes;
  const auto status = tokenizer.processor_->LoadFromSerializedProto(bytes);
  if (!status.ok()) throw ModelFormatError(what, "not a SentencePiece model: " + status.ToString());
  return tokenizer;
}

std::vector<std::string> SubwordTokenizer::encode_pieces(std::string_view text) const {
  std::vector<std::string> pieces;
  processor_->Encode(text, &pieces).IgnoreError();
  return pieces;
}

std::vector<int> SubwordTokenizer::encode_ids(std::string_view text) const {
  std::vector<int> ids;
  processor_->Encode(text, &ids).IgnoreError();
  return ids;
}

int SubwordTokenizer::vocab_size() const { return processor_->GetPieceSize(); }
int SubwordTokenizer::piece_to_id(const std::string& piece) const { return processor_->PieceToId(piece); }
std::string SubwordTokenizer::id_to_piece(int id) const { return processor_->IdToPiece(id); }

}  // namespace newscls
