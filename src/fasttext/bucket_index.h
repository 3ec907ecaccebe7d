// From an n-gram bucket to its feature id, without a hash table: the kept buckets in
// increasing order, and a directory of where each run of 2^shift buckets starts among them
// (about two kept buckets a run), built in one sequential pass. A saved model's n-gram rows
// are in bucket order (engine.h), so its kept-buckets block, as it lies in the loaded file,
// is the sorted array and the id is the position; a model built in memory keeps its ids in
// first-appearance order and the index sorts (bucket, id) pairs. A hash table over 420,000
// buckets took 8 MB and about 0.05 s to build at each load; the directory takes under 1 MB.
//
//   BucketIndex index(kept, 1u << 21, vocab_size);   // std::invalid_argument: out of range, repeated
//   std::int32_t id = index.find(bucket);            // -1 when the bucket was not kept
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "newscls/core/binary_io.h"

namespace newscls::fasttext {

class BucketIndex {
 public:
  BucketIndex() { index_runs(1); }
  // kept[i] is the bucket of feature id first_id + i; every bucket below `buckets`.
  BucketIndex(const PayloadArray<std::uint32_t>& kept, std::uint32_t buckets, std::int32_t first_id)
      : first_id_(first_id) {
    if (increasing(kept, buckets)) {
      sorted_ = kept;
    } else {
      sort_pairs(kept);
    }
    index_runs(buckets);
  }

  std::int32_t find(std::uint32_t bucket) const {
    const std::size_t run = bucket >> shift_;
    if (run + 1 >= directory_.size()) return -1;
    for (std::uint32_t i = directory_[run], end = directory_[run + 1]; i < end; ++i) {
      if (sorted_[i] == bucket) return sorted_ids_.empty() ? first_id_ + static_cast<std::int32_t>(i) : sorted_ids_[i];
    }
    return -1;
  }

  // Ids of the kept buckets in increasing bucket order; empty when that is id order.
  const std::vector<std::int32_t>& ids_by_bucket() const { return sorted_ids_; }

 private:
  // True when kept is strictly increasing and in range: one branch-free pass the compiler
  // vectorises. Throws on a bucket out of range.
  static bool increasing(const PayloadArray<std::uint32_t>& kept, std::uint32_t buckets) {
    if (kept.empty()) return true;
    unsigned out_of_order = 0;
    for (std::size_t i = 1; i < kept.size(); ++i) out_of_order |= static_cast<unsigned>(kept[i - 1] >= kept[i]);
    if (out_of_order == 0 && kept[kept.size() - 1] < buckets) return true;
    for (std::uint32_t b : kept) {
      if (b >= buckets) throw std::invalid_argument("bucket " + std::to_string(b) + " out of range");
    }
    return false;
  }

  // Throws on a bucket repeated.
  void sort_pairs(const PayloadArray<std::uint32_t>& kept) {
    std::vector<std::pair<std::uint32_t, std::int32_t>> pairs(kept.size());
    for (std::size_t i = 0; i < kept.size(); ++i) pairs[i] = {kept[i], first_id_ + static_cast<std::int32_t>(i)};
    std::sort(pairs.begin(), pairs.end());
    std::vector<std::uint32_t> sorted(pairs.size());
    sorted_ids_.resize(pairs.size());
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      if (i > 0 && pairs[i].first == pairs[i - 1].first) {
        throw std::invalid_argument("bucket " + std::to_string(pairs[i].first) + " repeated");
      }
      sorted[i] = pairs[i].first;
      sorted_ids_[i] = pairs[i].second;
    }
    sorted_ = std::move(sorted);
  }

  // directory_[r]: the first position whose bucket is in run r or later.
  void index_runs(std::uint32_t buckets) {
    const std::size_t n = sorted_.size();
    shift_ = 0;
    while ((buckets >> shift_) > std::max<std::size_t>(1, n / 2)) ++shift_;
    const std::size_t runs = (static_cast<std::size_t>(buckets - 1) >> shift_) + 1;
    directory_.assign(runs + 1, 0);
    std::size_t i = 0;
    for (std::size_t r = 0; r <= runs; ++r) {
      while (i < n && (sorted_[i] >> shift_) < r) ++i;
      directory_[r] = static_cast<std::uint32_t>(i);
    }
  }

  PayloadArray<std::uint32_t> sorted_;
  std::vector<std::int32_t> sorted_ids_;  // empty: the id is first_id_ + position
  std::int32_t first_id_ = 0;
  std::vector<std::uint32_t> directory_;
  unsigned shift_ = 0;
};

}  // namespace newscls::fasttext
