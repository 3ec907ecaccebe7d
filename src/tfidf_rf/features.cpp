#include "tfidf_rf/features.h"

#include "newscls/core/utf8.h"
#include "newscls/text/normalize.h"

namespace newscls::tfidf_rf {

void TitleTokenizer::tokens(std::string_view raw_title, std::vector<std::string>& out) const {
  const std::string title = normalize_title(raw_title, options_.fold_punctuation);
  out = char_ngrams(split_utf8_chars(title), options_.ngram_min, options_.ngram_max);
  if (subword_ == nullptr) return;
  for (std::string& piece : subword_->encode_pieces(title)) {
    out.push_back("\x1f" + piece);
  }
}

}  // namespace newscls::tfidf_rf
