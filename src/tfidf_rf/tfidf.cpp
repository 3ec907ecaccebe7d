#include "tfidf_rf/tfidf.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace newscls::tfidf_rf {

TfidfVectorizer::TfidfVectorizer(TfidfOptions options) : options_(options) {}

TfidfVectorizer TfidfVectorizer::from_parts(Vocabulary vocabulary, PayloadArray<float> idf, bool sublinear_tf,
                                            bool l2_normalize) {
  TfidfVectorizer v;
  v.options_.sublinear_tf = sublinear_tf;
  v.options_.l2_normalize = l2_normalize;
  v.vocabulary_ = std::move(vocabulary);
  v.idf_ = std::move(idf);
  return v;
}

void TfidfVectorizer::count(const std::vector<std::string>& doc_tokens) {
  const auto doc_id = static_cast<std::uint32_t>(++n_docs_);
  for (const std::string& token : doc_tokens) {
    const auto id = static_cast<std::size_t>(seen_.find_or_add(token));
    if (id == counts_.size()) counts_.emplace_back();
    TermCount& c = counts_[id];
    c.total += 1;
    if (c.last_doc != doc_id) {
      c.last_doc = doc_id;
      c.df += 1;
    }
  }
}

void TfidfVectorizer::finish_fit() {
  const std::vector<std::string>& terms = seen_.terms();
  std::vector<std::size_t> kept;
  for (std::size_t id = 0; id < counts_.size(); ++id) {
    if (counts_[id].df >= static_cast<std::uint32_t>(options_.min_df)) kept.push_back(id);
  }
  const auto cap = static_cast<std::size_t>(options_.max_features);
  if (cap > 0 && kept.size() > cap) {
    auto more_frequent = [&](std::size_t a, std::size_t b) {
      if (counts_[a].total != counts_[b].total) return counts_[a].total > counts_[b].total;
      return terms[a] < terms[b];
    };
    std::nth_element(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(cap), kept.end(), more_frequent);
    kept.resize(cap);
  }
  std::sort(kept.begin(), kept.end(), [&](std::size_t a, std::size_t b) { return terms[a] < terms[b]; });

  std::vector<std::string> vocabulary;
  std::vector<float> idf;
  const double n = static_cast<double>(n_docs_);
  for (std::size_t id : kept) {
    vocabulary.push_back(terms[id]);
    idf.push_back(static_cast<float>(std::log((1.0 + n) / (1.0 + counts_[id].df)) + 1.0));
  }
  vocabulary_ = Vocabulary(vocabulary);
  idf_ = std::move(idf);
  seen_ = TermIndex();
  counts_ = {};
}

std::int32_t TfidfVectorizer::index_of(const std::string& term) const { return vocabulary_.find(term); }

void TfidfVectorizer::transform(const std::vector<std::string>& doc_tokens, SparseRow& row,
                                std::vector<std::int32_t>& ids) const {
  ids.clear();
  for (const std::string& token : doc_tokens) {
    const std::int32_t id = vocabulary_.find(token);
    if (id >= 0) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  row.clear();
  double norm = 0;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j < ids.size() && ids[j] == ids[i]) ++j;
    const double tf = static_cast<double>(j - i);
    const double w = (options_.sublinear_tf ? 1.0 + std::log(tf) : tf) * idf_[ids[i]];
    row.emplace_back(ids[i], static_cast<float>(w));
    norm += w * w;
    i = j;
  }
  if (options_.l2_normalize && norm > 0) {
    const double scale = 1.0 / std::sqrt(norm);
    for (auto& entry : row) entry.second = static_cast<float>(entry.second * scale);
  }
}

void TfidfVectorizer::transform(const std::vector<std::string>& doc_tokens, SparseRow& row) const {
  std::vector<std::int32_t> ids;
  transform(doc_tokens, row, ids);
}

}  // namespace newscls::tfidf_rf
