// Titles to token ids for the bert family: the own character vocabulary (CharVocab, built
// from the training titles) or an imported WordPiece vocabulary (hf::BertTokenizer, exactly
// as transformers splits). The config key "tokenizer" says which a bundle carries.
//
// Payloads: char: vocab.bin. wordpiece: wordpiece_vocab.txt (vocab.txt as imported, line =
// id) and wordpiece_config.json (tokenizer_config.json's keys that matter).
//
//   TitleTokenizer tok = TitleTokenizer::load(bundle, "wordpiece");
//   std::vector<std::int64_t> ids = tok.encode("ＮＢＡ总决赛", 64);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bert/tokens/vocab.h"
#include "hf/wordpiece.h"
#include "newscls/core/bundle.h"

namespace newscls::bert {

class TitleTokenizer {
 public:
  explicit TitleTokenizer(CharVocab vocab) : chars_(std::move(vocab)) {}
  explicit TitleTokenizer(hf::BertTokenizer wordpiece) : wordpiece_(std::move(wordpiece)) {}
  static TitleTokenizer load(const Bundle& bundle, const std::string& kind);
  // rows: the embedding table's rows; a shorter vocab.txt is padded with empty lines (tokens
  // that never match), so that the reloaded vocabulary tells the table's size.
  void save(BundleWriter& bundle, std::int64_t rows) const;

  // [CLS] tokens [SEP], at most max_len ids.
  std::vector<std::int64_t> encode(const std::string& title, std::int64_t max_len) const;
  // Char vocabulary only (a WordPiece vocabulary splits as transformers does): config key
  // fold_punctuation.
  void set_fold_punctuation(bool fold) { fold_punctuation_ = fold; }
  std::vector<std::string> tokens_of(const std::vector<std::int64_t>& ids) const;
  std::int64_t size() const;
  bool is_wordpiece() const { return wordpiece_.has_value(); }

  // For continued pretraining on new text: this vocabulary with the characters of `texts` it
  // lacks, seen at least min_count times (a character vocabulary up to max_size tokens; a
  // WordPiece one appends them after its last line).
  TitleTokenizer grown(const std::vector<std::string>& texts, int min_count, int max_size) const;
  // A WordPiece vocabulary's own special ids (random replacements from the whole vocabulary,
  // as BERT draws them); ModelFormatError when it has no mask token.
  MaskIds mask_ids() const;

 private:
  std::optional<CharVocab> chars_;
  std::optional<hf::BertTokenizer> wordpiece_;
  bool fold_punctuation_ = false;
};

}  // namespace newscls::bert
