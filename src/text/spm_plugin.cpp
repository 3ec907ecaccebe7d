// libnewscls_spm.so: SpmBackend on top of Debian's libsentencepiece (see spm_backend.h).
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include "text/spm_backend.h"

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

class SentencePieceBackend final : public SpmBackend {
 public:
  std::string train(const std::vector<std::string>& sentences, const std::unordered_map<std::string, std::string>& args,
                    std::string* serialized) override {
    VectorSentenceIterator iterator(sentences);
    const auto status = sentencepiece::SentencePieceTrainer::Train(args, &iterator, serialized);
    return status.ok() ? "" : status.ToString();
  }
  std::string load(const std::string& serialized) override {
    const auto status = processor_.LoadFromSerializedProto(serialized);
    return status.ok() ? "" : status.ToString();
  }
  std::vector<std::string> encode_pieces(std::string_view text) const override {
    std::vector<std::string> pieces;
    processor_.Encode(text, &pieces).IgnoreError();
    return pieces;
  }
  std::vector<int> encode_ids(std::string_view text) const override {
    std::vector<int> ids;
    processor_.Encode(text, &ids).IgnoreError();
    return ids;
  }
  int piece_size() const override { return processor_.GetPieceSize(); }
  int piece_to_id(const std::string& piece) const override { return processor_.PieceToId(piece); }
  std::string id_to_piece(int id) const override { return processor_.IdToPiece(id); }

 private:
  sentencepiece::SentencePieceProcessor processor_;
};

}  // namespace
}  // namespace newscls

extern "C" __attribute__((visibility("default"))) newscls::SpmBackend* newscls_spm_create() {
  return new newscls::SentencePieceBackend();
}
