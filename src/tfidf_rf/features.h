// Title -> tokens for the TF-IDF vectoriser: character n-grams of the normalised title
// (orders ngram_min..ngram_max) and, optionally, the title's SentencePiece pieces, which
// carry a "\x1f" prefix so a piece never collides with a character n-gram.
//
//   TitleTokenizer tok({1, 2}, nullptr);
//   std::vector<std::string> tokens; tok.tokens(raw_title, tokens);
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "newscls/text/tokenizer.h"

namespace newscls::tfidf_rf {

struct TokenOptions {
  int ngram_min = 1;
  int ngram_max = 2;
  bool fold_punctuation = false;  // normalize_title(title, true)
};

class TitleTokenizer {
 public:
  // subword may be null; it must outlive the tokenizer.
  TitleTokenizer(TokenOptions options, const SubwordTokenizer* subword) : options_(options), subword_(subword) {}
  void tokens(std::string_view raw_title, std::vector<std::string>& out) const;

 private:
  TokenOptions options_;
  const SubwordTokenizer* subword_;
};

}  // namespace newscls::tfidf_rf
