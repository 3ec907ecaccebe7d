// A sparse TF-IDF vectoriser over token lists (scikit-learn's TfidfVectorizer semantics).
//
// Fitting counts every document once (count), then finish_fit() keeps the terms with
// document frequency >= min_df, caps them at the max_features most frequent ones (total
// count, ties by term), orders the vocabulary by term bytes and computes the smoothed idf
//   idf(t) = ln((1 + n_docs) / (1 + df(t))) + 1.
// A document's weight for term t is tf'(t) * idf(t) with tf' = 1 + ln(tf) (sublinear) or
// tf, and each row is L2-normalised (unless l2_normalize is false). Unknown terms are ignored.
//
//   TfidfVectorizer v({2, 50000, true});
//   for (auto& doc : docs) v.count(doc);
//   v.finish_fit();
//   SparseRow row; v.transform(doc, row);          // sorted by feature index
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "newscls/core/binary_io.h"
#include "tfidf_rf/sparse.h"
#include "tfidf_rf/term_index.h"
#include "tfidf_rf/vocabulary.h"

namespace newscls::tfidf_rf {

struct TfidfOptions {
  int min_df = 1;
  int max_features = 0;  // 0 keeps every term
  bool sublinear_tf = true;
  // false: a term's weight no longer shrinks as the title grows, so length stops being a
  // feature the trees can split on.
  bool l2_normalize = true;
};

class TfidfVectorizer {
 public:
  explicit TfidfVectorizer(TfidfOptions options = {});
  // A fitted vectoriser from a saved vocabulary and idf (same length, vocab sorted).
  static TfidfVectorizer from_parts(Vocabulary vocabulary, PayloadArray<float> idf, bool sublinear_tf,
                                    bool l2_normalize = true);
  static TfidfVectorizer from_parts(const std::vector<std::string>& vocabulary, PayloadArray<float> idf,
                                    bool sublinear_tf, bool l2_normalize = true) {
    return from_parts(Vocabulary(vocabulary), std::move(idf), sublinear_tf, l2_normalize);
  }

  void count(const std::vector<std::string>& doc_tokens);
  void finish_fit();

  std::size_t num_features() const { return vocabulary_.size(); }
  std::size_t num_documents() const { return n_docs_; }
  const Vocabulary& vocabulary() const { return vocabulary_; }
  const PayloadArray<float>& idf() const { return idf_; }
  bool sublinear_tf() const { return options_.sublinear_tf; }
  // -1 when the term is not in the vocabulary.
  std::int32_t index_of(const std::string& term) const;

  // Thread-safe after fitting; ids is scratch space the caller may reuse.
  void transform(const std::vector<std::string>& doc_tokens, SparseRow& row, std::vector<std::int32_t>& ids) const;
  void transform(const std::vector<std::string>& doc_tokens, SparseRow& row) const;

 private:
  struct TermCount {
    std::uint32_t df = 0;
    std::uint32_t last_doc = 0;  // 1-based id of the last document that counted it
    std::uint64_t total = 0;
  };

  TfidfOptions options_;
  std::size_t n_docs_ = 0;
  TermIndex seen_;                 // while fitting: every term met
  std::vector<TermCount> counts_;  // by id in seen_
  Vocabulary vocabulary_;          // ids = feature indices
  PayloadArray<float> idf_;
};

}  // namespace newscls::tfidf_rf
