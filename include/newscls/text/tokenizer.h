// SentencePiece subword tokenizer trained on the normalised training titles.
//
// The model is trained in-process and its serialized proto is kept in memory, so a
// classifier stores it as one bundle payload and loads it back byte for byte.
//
//   SubwordTokenizer sp = SubwordTokenizer::train(train_titles, {8000, 0.9995});  // deterministic
//   std::vector<std::string> pieces = sp.encode_pieces(normalize_title(title));
//   std::vector<int> ids = sp.encode_ids(normalize_title(title));
//   write_file_atomic(path, sp.serialized());   SubwordTokenizer::from_serialized(bytes)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace newscls {

class SpmBackend;  // SentencePiece behind a privately loaded plugin (src/text/spm_backend.h)

struct SubwordOptions {
  int vocab_size = 8000;
  double character_coverage = 0.9995;
  std::string model_type = "unigram";         // unigram | bpe | char
  std::string vocab_size_key = "vocab_size";  // the config key an error names (SentencePiece's fail on the size)
};

class SubwordTokenizer {
 public:
  // Titles are normalised by the caller. Throws ConfigError on bad options.
  static SubwordTokenizer train(const std::vector<std::string>& titles, const SubwordOptions& options);
  // Throws ModelFormatError("<what>", ...) when the bytes are no SentencePiece model.
  static SubwordTokenizer from_serialized(const std::string& bytes, const std::string& what);

  SubwordTokenizer(SubwordTokenizer&&) noexcept;
  SubwordTokenizer& operator=(SubwordTokenizer&&) noexcept;
  ~SubwordTokenizer();

  std::vector<std::string> encode_pieces(std::string_view text) const;
  std::vector<int> encode_ids(std::string_view text) const;
  int vocab_size() const;
  int piece_to_id(const std::string& piece) const;
  std::string id_to_piece(int id) const;
  const std::string& serialized() const { return serialized_; }

 private:
  SubwordTokenizer();
  std::unique_ptr<SpmBackend> processor_;
  std::string serialized_;
};

}  // namespace newscls
