// Grows one tree of the random forest (see forest.h for the method). Internal to the
// tfidf-rf family: forest.cpp runs one builder per worker thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "newscls/core/splitmix.h"
#include "tfidf_rf/forest.h"
#include "tfidf_rf/forest_layout.h"

namespace newscls::tfidf_rf {

// Small, fast and identical on every platform (std distributions are not).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() { return splitmix64(state_); }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }

 private:
  std::uint64_t state_;
};

// The training matrix by column, for large nodes where walking the candidate features'
// columns is cheaper than walking every row of the node.
struct CscMatrix {
  std::vector<std::size_t> col_ptr;
  std::vector<std::int32_t> rows;
  std::vector<float> values;
};

CscMatrix to_csc(const CsrMatrix& x);

struct TreeResult {
  std::vector<GrownNode> nodes;
  std::vector<float> leaf_probs;
};

// Grows one tree; one builder per worker thread, reused across that thread's trees.
class TreeBuilder {
 public:
  TreeBuilder(const CsrMatrix& x, const CscMatrix& csc, const std::vector<int>& y, int num_classes,
              const ForestOptions& o)
      : x_(x),
        csc_(csc),
        y_(y),
        k_(num_classes),
        options_(o),
        slot_of_(x.cols, -1),
        other_weight_(x.cols, 0),
        goes_right_(x.rows(), 0),
        stamp_(x.rows(), 0),
        weight_(x.rows(), 0) {
    all_candidates_ = static_cast<std::size_t>(o.features_per_split) >= x.cols;
    candidate_bits_.assign((x.cols + 63) / 64, 0);
    if (all_candidates_) {  // drawn once: every feature, for the column walk
      for (std::size_t f = 0; f < x.cols; ++f) candidates_.push_back(static_cast<std::int32_t>(f));
      candidates_nnz_ = x.nnz();
    }
    mean_row_nnz_ = static_cast<double>(x.nnz()) / static_cast<double>(x.rows());
  }

  TreeResult build(std::uint64_t seed);
  // Forces the row walk or the column walk everywhere (tests: both must grow the same tree).
  void force_walk(int walk) { forced_walk_ = walk; }

 private:
  struct Gathered {
    std::int32_t slot;
    std::int32_t sample;
    float value;
  };
  struct Entry {
    float value;
    std::int32_t sample;
  };
  struct Drawn {
    std::uint32_t key;
    std::int32_t feature;
  };
  struct Split {
    bool valid = false;
    double proxy = 0;
    std::int32_t feature = -1;
    std::int32_t slot = -1;
    float threshold = 0;
  };

  static bool better(const Split& a, const Split& b);
  bool is_candidate(std::int32_t f) const {
    const auto u = static_cast<std::uint32_t>(f);
    return all_candidates_ || ((candidate_bits_[u >> 6] >> (u & 63)) & 1) != 0;
  }
  void draw_candidates(Rng& rng);
  void clear_candidates();
  void draw_samples(Rng& rng);
  void class_counts(std::size_t begin, std::size_t end, std::vector<std::int64_t>& counts) const;
  void make_leaf(std::int32_t node, const std::vector<std::int64_t>& counts, std::int64_t total);
  void gather_rows(std::size_t begin, std::size_t end, bool weigh_others);
  void gather_columns(std::size_t begin, std::size_t end);
  void weigh_others(std::size_t begin, std::size_t end);
  void stamp_node(std::size_t begin, std::size_t end);
  void add_other(std::int32_t feature, std::uint32_t weight) {
    std::uint16_t& w = other_weight_[static_cast<std::size_t>(feature)];
    if (w == 0) others_.push_back(feature);
    w = static_cast<std::uint16_t>(std::min<std::uint32_t>(w + weight, 0xFFFF));
  }
  std::int32_t gather_feature(std::int32_t feature, std::size_t begin, std::size_t end);
  Split fallback_split(std::size_t begin, std::size_t end, const std::vector<std::int64_t>& counts, std::int64_t total,
                       Rng& rng);
  Split evaluate(std::int32_t slot, const std::vector<std::int64_t>& counts, std::int64_t total);
  Split find_split(std::size_t begin, std::size_t end, const std::vector<std::int64_t>& counts, std::int64_t total,
                   Rng& rng);
  std::size_t partition(std::size_t begin, std::size_t end, const Split& split);

  const CsrMatrix& x_;
  const CscMatrix& csc_;
  const std::vector<int>& y_;
  const int k_;
  const ForestOptions& options_;
  bool all_candidates_ = false;
  double mean_row_nnz_ = 0;
  // The node's candidates, drawn without replacement; a bit a feature, so the walks' tests
  // stay in L1 cache.
  std::vector<std::uint64_t> candidate_bits_;
  std::vector<std::int32_t> candidates_;  // ascending
  std::size_t candidates_nnz_ = 0;        // their columns' total length
  int forced_walk_ = 0;                   // 0 cheapest, 1 rows, 2 columns

  std::vector<std::int32_t> slot_of_;
  std::vector<std::int32_t> used_;  // feature of each slot
  std::vector<Gathered> gathered_;
  std::vector<std::size_t> slot_start_;  // grouped_[slot_start_[s] .. slot_start_[s+1])
  std::vector<std::size_t> cursor_;
  std::vector<Entry> grouped_;
  std::vector<Drawn> fallback_;
  // Per feature, the weight of the node's non-candidates, saturating: it is only compared with
  // min_samples_leaf, and 2 bytes a feature keep the walk's random accesses in cache.
  std::vector<std::uint16_t> other_weight_;
  std::vector<std::int32_t> others_;  // the features with other_weight_ > 0
  std::vector<std::uint8_t> goes_right_;
  std::vector<std::uint32_t> stamp_;  // == stamp_now_ for the samples of the current node
  std::uint32_t stamp_now_ = 0;
  std::vector<std::uint32_t> weight_;
  std::vector<std::int32_t> samples_;
  std::vector<std::int64_t> left_, right_;
  TreeResult tree_;
};

}  // namespace newscls::tfidf_rf
