// Prediction and statistics of a fitted or loaded forest.
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "tfidf_rf/forest.h"

namespace newscls::tfidf_rf {

void RandomForest::predict_proba(const SparseRow& row, float* probs) const { predict_proba_batch(&row, 1, probs); }

namespace {

// A row's non-zeros in a small open-addressing table (power-of-two size, load <= 1/2),
// behind an 8192-bit signature with one bit per feature (its index's low bits): most tested
// features are absent from a title, and one bit test says so; only signature hits (for a
// title's ~30 features, under 1% false ones) probe the table. Smaller signatures, and a
// hashed bit, measured slower.
class RowTables {
 public:
  RowTables(const SparseRow* rows, std::size_t n) : offset_(n + 1, 0), signature_(n * kWords, 0) {
    for (std::size_t r = 0; r < n; ++r) {
      std::size_t size = 4;
      while (size < 2 * rows[r].size()) size *= 2;
      offset_[r + 1] = offset_[r] + size;
    }
    keys_.assign(offset_[n], -1);
    values_.assign(offset_[n], 0.0f);
    for (std::size_t r = 0; r < n; ++r) {
      const std::size_t mask = offset_[r + 1] - offset_[r] - 1;
      for (const auto& [feature, value] : rows[r]) {
        if (feature < 0) continue;  // never tested by a node
        const std::uint32_t b = bit(feature);
        signature_[r * kWords + (b >> 6)] |= std::uint64_t{1} << (b & 63);
        std::size_t i = slot(feature, mask);
        while (keys_[offset_[r] + i] >= 0) i = (i + 1) & mask;
        keys_[offset_[r] + i] = feature;
        values_[offset_[r] + i] = value;
      }
    }
  }

  bool may_hold(std::size_t r, std::int32_t feature) const {
    const std::uint32_t b = bit(feature);
    return (signature_[r * kWords + (b >> 6)] >> (b & 63)) & 1;
  }

  float value(std::size_t r, std::int32_t feature) const {
    const std::size_t base = offset_[r], mask = offset_[r + 1] - base - 1;
    for (std::size_t i = slot(feature, mask);; i = (i + 1) & mask) {
      const std::int32_t key = keys_[base + i];
      if (key == feature) return values_[base + i];
      if (key < 0) return 0.0f;
    }
  }

 private:
  static constexpr std::size_t kWords = 128;
  static std::uint32_t bit(std::int32_t feature) { return static_cast<std::uint32_t>(feature) & (kWords * 64 - 1); }
  static std::size_t slot(std::int32_t feature, std::size_t mask) {
    return (static_cast<std::uint32_t>(feature) * 0x9E3779B1u >> 8) & mask;
  }

  std::vector<std::size_t> offset_;  // row r's slots: [offset_[r], offset_[r+1])
  std::vector<std::uint64_t> signature_;
  std::vector<std::int32_t> keys_;  // -1: empty
  std::vector<float> values_;
};

float threshold_of(const std::uint32_t* split) {
  float t;
  std::memcpy(&t, split + 1, 4);
  return t;
}

std::size_t distribution_of(const std::uint32_t* leaf) {
  return static_cast<std::size_t>(-1 - static_cast<std::int64_t>(static_cast<std::int32_t>(leaf[0])));
}

bool is_split(const std::uint32_t* node) { return static_cast<std::int32_t>(node[0]) >= 0; }

}  // namespace

void RandomForest::predict_proba_batch(const SparseRow* rows, std::size_t n_rows, float* probs) const {
  const auto k = static_cast<std::size_t>(num_classes_);
  std::fill(probs, probs + n_rows * k, 0.0f);
  const RowTables tables(rows, n_rows);
  const std::uint32_t* words = words_.data();
  // Tree by tree, so the part of a tree the rows reach stays in cache while every row
  // walks it. An absent feature (value 0) goes left: split thresholds are never negative.
  for (std::uint32_t root : tree_roots_) {
    for (std::size_t r = 0; r < n_rows; ++r) {
      const std::uint32_t* node = words + root;
      while (is_split(node)) {
        const auto feature = static_cast<std::int32_t>(node[0]);
        const bool right = tables.may_hold(r, feature) && tables.value(r, feature) > threshold_of(node);
        node = right ? words + node[2] : node + 3;
      }
      const float* dist = distributions_.data() + distribution_of(node) * k;
      float* out = probs + r * k;
      for (std::size_t c = 0; c < k; ++c) out[c] += dist[c];
    }
  }
  const float scale = tree_roots_.empty() ? 0.0f : 1.0f / static_cast<float>(tree_roots_.size());
  for (std::size_t i = 0; i < n_rows * k; ++i) probs[i] *= scale;
}

nlohmann::json RandomForest::stats() const {
  std::size_t leaves = 0, depth_sum = 0, max_depth = 0;
  std::vector<std::pair<std::uint32_t, std::size_t>> stack;  // (word index, depth)
  for (std::uint32_t root : tree_roots_) {
    stack.assign(1, {root, 0});
    while (!stack.empty()) {
      const auto [at, depth] = stack.back();
      stack.pop_back();
      const std::uint32_t* node = words_.data() + at;
      if (is_split(node)) {
        stack.push_back({node[2], depth + 1});
        stack.push_back({at + 3, depth + 1});
        continue;
      }
      ++leaves;
      depth_sum += depth;
      max_depth = std::max(max_depth, depth);
    }
  }
  return {{"trees", num_trees()},
          {"nodes", num_nodes()},
          {"leaves", leaves},
          {"distributions", num_distributions()},
          {"mean_leaf_depth", leaves == 0 ? 0.0 : static_cast<double>(depth_sum) / static_cast<double>(leaves)},
          {"max_depth", max_depth}};
}

}  // namespace newscls::tfidf_rf
