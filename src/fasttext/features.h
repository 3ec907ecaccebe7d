// Turning a title into the feature ids a fastText-style model averages.
//
// Ids [0, vocab_size) are tokens: characters seen at least min_count times in the
// training titles. The ids after them are hashed character n-grams of orders
// 2..ngram_max: each character gets a 64-bit FNV-1a hash of its bytes, an n-gram combines
// the hashes of its characters with the order, and the result modulo `buckets` picks a
// bucket. Only buckets that training titles filled at least ngram_min_count times get an
// id (in order of first appearance; a saved model's in bucket order, see engine.h), so the
// embedding table holds no dead rows however many buckets there are. The hash uses only
// fixed-width integer arithmetic, so a model gives the same features on every platform.
// Unknown characters and empty buckets are skipped.
//
//   FeatureExtractor fx({.min_count = 1, .ngram_max = 3, .buckets = 1 << 21});
//   fx.build(normalized_titles);
//   std::vector<std::int32_t> ids;  fx.extract(normalize_title(title), ids);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fasttext/bucket_index.h"
#include "newscls/core/binary_io.h"

namespace newscls::fasttext {

struct FeatureOptions {
  int min_count = 1;
  int ngram_max = 3;  // 1 = characters only
  std::uint32_t buckets = 1u << 21;
  int ngram_min_count = 1;
  bool skip_bigrams = false;  // also hash pairs of characters one apart ("a_c")
};

// FNV-1a over the bytes of one character.
std::uint64_t char_hash(std::string_view ch);
// Bucket of the n-gram whose characters have hashes h[0..n).
std::uint32_t ngram_bucket(const std::uint64_t* h, int n, std::uint32_t buckets);
// Bucket of the pair of characters at positions i and i + 2.
std::uint32_t skip_bigram_bucket(std::uint64_t first, std::uint64_t third, std::uint32_t buckets);

class FeatureExtractor {
 public:
  FeatureExtractor() = default;
  explicit FeatureExtractor(const FeatureOptions& options) : options_(options) {}

  // Counts characters and n-gram buckets of already normalised titles. Characters are
  // ordered by descending count (ties by first appearance), so ids are deterministic.
  void build(const std::vector<std::string>& normalized_titles);
  // Adopts a saved vocabulary (token strings in id order) and kept buckets (in id order, a
  // vector or a block of a loaded payload); throws std::invalid_argument on a bucket out of
  // range or repeated.
  void set_tables(const std::vector<std::string>& tokens, PayloadArray<std::uint32_t> kept_buckets);

  // The same extractor restricted to the rows where keep[id] is true (ids renumbered in
  // order), for pruning a model down to its most useful rows.
  FeatureExtractor subset(const std::vector<bool>& keep) const;

  // Appends the feature ids of a normalised title to `out` (which is not cleared).
  void extract(std::string_view normalized, std::vector<std::int32_t>& out) const;

  const FeatureOptions& options() const { return options_; }
  const std::vector<std::string>& tokens() const { return tokens_; }
  const PayloadArray<std::uint32_t>& kept_buckets() const { return kept_buckets_; }
  // Ids of the kept buckets in increasing bucket order; empty when that is their id order.
  const std::vector<std::int32_t>& ids_by_bucket() const { return bucket_ids_.ids_by_bucket(); }
  std::int32_t vocab_size() const { return static_cast<std::int32_t>(tokens_.size()); }
  std::int64_t rows() const { return static_cast<std::int64_t>(tokens_.size() + kept_buckets_.size()); }

 private:
  std::vector<std::string> count_tokens(const std::vector<std::string>& normalized_titles) const;
  std::vector<std::uint32_t> count_buckets(const std::vector<std::string>& normalized_titles) const;
  // Calls fn(bucket) for every n-gram of a title whose characters have hashes h[0..n).
  template <typename Fn>
  void for_each_bucket(const std::uint64_t* h, std::size_t n, Fn fn) const;

  FeatureOptions options_;
  std::vector<std::string> tokens_;
  std::unordered_map<std::uint64_t, std::int32_t> token_ids_;  // char hash -> id
  PayloadArray<std::uint32_t> kept_buckets_;                   // id - vocab_size -> bucket
  BucketIndex bucket_ids_;                                     // bucket -> id
};

}  // namespace newscls::fasttext
