// A random forest of Gini trees for sparse, high-dimensional, non-negative input.
//
// Each tree draws a bootstrap sample and grows depth first. At a node, features_per_split
// candidate features are drawn without replacement and marked in a bitmap, so the walk over
// the node's sparse rows tests each non-zero with one bit. For each candidate the node's
// non-zeros are gathered and sorted; the samples without that feature are the implicit
// "zero" group, whose class counts are the node's counts minus the gathered ones. Large
// nodes gather from the candidates' columns instead, which is cheaper when a node holds many
// rows. When no candidate gives a valid split (most candidates are absent from a small
// node), the node's other features heavy enough to fill a leaf are tried in random order
// until one does (as scikit-learn keeps drawing past constant features); only the tried
// ones are gathered.
// Tree t is seeded from (seed, t) alone and stored at index t, so the forest is the same
// for a seed whatever the thread count or scheduling. Probabilities are the mean of the
// trees' leaf class distributions.
// For prediction each tree is stored in preorder (a left child is the next node) and leaves
// refer to a table of distinct class distributions: trees are ~100 levels deep on titles
// and a title lacks almost every tested feature, so a walk is mostly a run of "absent, go
// left" steps over consecutive nodes, and whole forests share a few thousand distributions.
// The nodes are one stream of 32-bit words, the payload's own layout (below): a loaded
// forest walks the bytes as read, and a leaf takes one word instead of a split's three.
//
//   ForestOptions o; o.features_per_split = 300; o.threads = 2;
//   RandomForest forest = RandomForest::fit(x, y, 10, o, {});
//   std::vector<float> probs(10);
//   forest.predict_proba(row, probs.data());
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "newscls/core/binary_io.h"
#include "tfidf_rf/sparse.h"

namespace newscls::tfidf_rf {

struct ForestOptions {
  int n_trees = 100;
  int max_depth = 0;           // 0: grow until pure
  int min_samples_leaf = 1;    // counted in bootstrap draws
  int features_per_split = 1;  // candidate features drawn per node
  bool bootstrap = true;
  std::uint64_t seed = 1;
  int threads = 1;
  // How a node gathers its candidates' values: 0 the cheaper of the two, 1 always from
  // the rows, 2 always from the columns. The tree is the same either way.
  int walk = 0;
};

struct ForestNode;  // a node as fitting assembles it (forest_layout.h)

class RandomForest {
 public:
  // Called once per finished tree, from worker threads (the caller synchronises).
  using TreeDone = std::function<void()>;

  // x has only positive stored values; y holds labels in [0, num_classes).
  // Throws std::invalid_argument on inconsistent input; InterruptedError on a signal.
  static RandomForest fit(const CsrMatrix& x, const std::vector<int>& y, int num_classes, const ForestOptions& options,
                          const TreeDone& tree_done);

  int num_classes() const { return num_classes_; }
  std::size_t num_features() const { return num_features_; }
  std::size_t num_trees() const { return tree_roots_.size(); }
  std::size_t num_nodes() const { return num_nodes_; }
  std::size_t num_distributions() const { return distributions_.size() / static_cast<std::size_t>(num_classes_); }

  // probs: num_classes() floats. Features beyond num_features() read as absent.
  void predict_proba(const SparseRow& row, float* probs) const;
  // The same for n_rows rows at once (faster); probs: n_rows * num_classes() floats.
  void predict_proba_batch(const SparseRow* rows, std::size_t n_rows, float* probs) const;

  // Sizes and depths for the training facts.
  nlohmann::json stats() const;

  // The payload version save() writes; load() also reads versions 1 and 2.
  static constexpr std::uint32_t kPayloadVersion = 3;

  // Layout after the payload's magic and version (3; PayloadWriter layout: header fields,
  // then blocks, each at a multiple of its element size after zero padding):
  //   u32 num_classes, u64 num_features, u64 tree_count, u64 word_count, u64 distribution_values
  //   block u32[tree_count]  word index of each tree's root: the first 0, increasing; trees
  //                          are contiguous, each ending where the next starts
  //   block u32[word_count]  the nodes, every tree in preorder (a left child is the next
  //                          node): a split is 3 words, its feature (>= 0, < num_features),
  //                          its threshold's f32 bits (never negative: absent features go
  //                          left without reading it) and the word index of its right child;
  //                          a leaf is 1 word, -1 - its distribution as an i32
  //   block f32[distribution_values]  distributions, num_classes values in [0, 1] each
  // Loading maps the file and walks each tree once to check it (every feature, threshold and
  // distribution in range, every right child where its left subtree ends, no node outside a
  // tree), then predicts from the words as read.
  // Version 2 had u32_array tree_roots (node indices), i32_array codes (every tree in
  // preorder; >= 0 a split on that feature, -1 - d a leaf with distribution d), f32_array
  // thresholds (one per split, in node order) and f32_array distributions: no child index,
  // the shapes following from the preorder. Version 1 had i32_array features, f32_array
  // thresholds and i32_array children for every node (a split's children at child and
  // child + 1, a leaf's child its leaf index) and f32_array leaf_probs (num_classes per
  // leaf). Both are converted on load, with every tree and index checked.
  void save(PayloadWriter& w) const;
  static RandomForest load(PayloadReader& r);

 private:
  static RandomForest load_v1(PayloadReader& r);
  static RandomForest load_v2(PayloadReader& r);
  static RandomForest load_v3(PayloadReader& r);
  // Adopts trees in ForestNode form (as fitted or converted from a version-1 payload).
  void set_nodes(const std::vector<std::uint32_t>& roots, const std::vector<ForestNode>& nodes,
                 std::vector<float> distributions);

  int num_classes_ = 0;
  std::size_t num_features_ = 0;
  std::size_t num_nodes_ = 0;
  PayloadArray<std::uint32_t> tree_roots_;  // word index of each tree's root
  PayloadArray<std::uint32_t> words_;       // the node stream laid out above
  PayloadArray<float> distributions_;       // num_classes_ per distinct leaf distribution
};

}  // namespace newscls::tfidf_rf
