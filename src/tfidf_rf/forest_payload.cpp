// forest.bin: writing version 2, reading versions 1 and 2 with every index checked.
#include <string>
#include <vector>

#include "newscls/core/error.h"
#include "tfidf_rf/forest.h"
#include "tfidf_rf/forest_layout.h"
#include "tfidf_rf/payloads.h"

namespace newscls::tfidf_rf {

void RandomForest::save(PayloadWriter& w) const {
  w.u32(static_cast<std::uint32_t>(num_classes_));
  w.u64(num_features_);
  w.u32_array(tree_roots_);
  std::vector<std::int32_t> codes;
  std::vector<float> split_thresholds;
  codes.reserve(nodes_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const ForestNode& n = nodes_[i];
    codes.push_back(n.feature < 0 ? -1 - n.next : n.feature);
    if (n.feature >= 0) split_thresholds.push_back(n.threshold);
  }
  w.i32_array(codes);
  w.f32_array(split_thresholds);
  w.f32_array(distributions_);
}

namespace {

ModelFormatError corrupt(const PayloadReader& r, const std::string& what) {
  return ModelFormatError(r.path(), "corrupt forest: " + what);
}

void read_header(PayloadReader& r, int& num_classes, std::size_t& num_features) {
  const std::uint32_t k = r.u32();
  if (k == 0 || k > 100000) throw corrupt(r, "class count " + std::to_string(k));
  num_classes = static_cast<int>(k);
  num_features = r.u64();
  if (num_features > 0x7fffffffULL) throw corrupt(r, "feature count");
}

// End of tree t's nodes, after checking that the tree is non-empty and in order.
std::size_t tree_end(const std::vector<std::uint32_t>& roots, std::size_t t, std::size_t n,
                     const PayloadReader& r) {
  const std::size_t end = t + 1 < roots.size() ? roots[t + 1] : n;
  if (roots[t] >= end || end > n) {
    throw corrupt(r, "tree " + std::to_string(t) + " is empty, out of order or past the nodes");
  }
  return end;
}

// The array sizes every index below relies on.
void check_sizes(const PayloadReader& r, const std::vector<std::uint32_t>& roots, std::size_t n_nodes,
                 std::size_t n_distribution_values, int num_classes) {
  if (n_nodes > 0x7fffffffULL) throw corrupt(r, "node count");
  if (n_distribution_values % static_cast<std::size_t>(num_classes) != 0) {
    throw corrupt(r, "distribution table size");
  }
  if (roots.empty() ? n_nodes != 0 : roots[0] != 0) throw corrupt(r, "nodes outside every tree");
}

// Rebuilds version 2's preorder trees from their codes (>= 0: the split's feature, taking the
// next threshold; < 0: -1 - the leaf's distribution), checking every index on the way.
class NodeDecoder {
 public:
  NodeDecoder(const PayloadReader& r, const std::vector<std::int32_t>& codes,
              const std::vector<float>& thresholds, std::size_t n_dists, std::size_t n_features)
      : r_(r), codes_(codes), thresholds_(thresholds), n_dists_(n_dists), n_features_(n_features) {}

  void decode_tree(std::size_t t, std::size_t begin, std::size_t end, std::vector<ForestNode>& nodes) {
    pending_.clear();
    for (std::size_t i = begin; i < end; ++i) {
      if (i > begin) link(i, t, nodes);
      nodes[i] = decode(i, t);
    }
    if (!pending_.empty() || nodes[end - 1].feature >= 0) {
      throw corrupt(r_, "tree " + std::to_string(t) + " is incomplete");
    }
  }

  void check_all_thresholds_used() const {
    if (split_ != thresholds_.size()) throw corrupt(r_, "more thresholds than splits");
  }

 private:
  ModelFormatError bad_node(std::size_t i, std::size_t t, const std::string& what) const {
    return corrupt(r_, "node " + std::to_string(i) + " of tree " + std::to_string(t) + " " + what);
  }

  // In preorder a node is the left child of the node before it if that is a split, or else
  // the right child of the latest split still waiting for one.
  void link(std::size_t i, std::size_t t, std::vector<ForestNode>& nodes) {
    if (nodes[i - 1].feature >= 0) {
      pending_.push_back(i - 1);
      return;
    }
    if (pending_.empty()) throw bad_node(i, t, "is past the end of its tree");
    nodes[pending_.back()].next = static_cast<std::int32_t>(i);
    pending_.pop_back();
  }

  ForestNode decode(std::size_t i, std::size_t t) {
    const std::int32_t code = codes_[i];
    if (code < 0) {
      const auto d = static_cast<std::size_t>(-1 - static_cast<std::int64_t>(code));
      if (d >= n_dists_) throw bad_node(i, t, "has no distribution");
      return {-1, static_cast<std::int32_t>(d), 0.0f};
    }
    if (static_cast<std::size_t>(code) >= n_features_) throw bad_node(i, t, "splits on an unknown feature");
    if (split_ >= thresholds_.size()) throw corrupt(r_, "fewer thresholds than splits");
    // The walk sends absent features left without reading the threshold.
    if (thresholds_[split_] < 0) throw bad_node(i, t, "has a negative threshold");
    return {code, 0, thresholds_[split_++]};
  }

  const PayloadReader& r_;
  const std::vector<std::int32_t>& codes_;
  const std::vector<float>& thresholds_;
  std::size_t n_dists_, n_features_;
  std::size_t split_ = 0;
  std::vector<std::size_t> pending_;  // splits whose left subtree is being read
};

}  // namespace

RandomForest RandomForest::load(PayloadReader& r) {
  if (r.version() == 1) return load_v1(r);
  if (r.version() != kPayloadVersion) throw corrupt(r, "unknown version " + std::to_string(r.version()));
  RandomForest f;
  read_header(r, f.num_classes_, f.num_features_);
  f.tree_roots_ = r.u32_array();
  const std::vector<std::int32_t> codes = r.i32_array();
  const std::vector<float> split_thresholds = r.f32_array();
  f.distributions_ = r.f32_array();
  const std::size_t n = codes.size();
  check_sizes(r, f.tree_roots_, n, f.distributions_.size(), f.num_classes_);
  NodeDecoder decoder(r, codes, split_thresholds, f.num_distributions(), f.num_features_);
  f.nodes_.resize(n);
  for (std::size_t t = 0; t < f.tree_roots_.size(); ++t) {
    decoder.decode_tree(t, f.tree_roots_[t], tree_end(f.tree_roots_, t, n, r), f.nodes_);
  }
  decoder.check_all_thresholds_used();
  return f;
}

RandomForest RandomForest::load_v1(PayloadReader& r) {
  RandomForest f;
  read_header(r, f.num_classes_, f.num_features_);
  const std::vector<std::uint32_t> roots = r.u32_array();
  const std::vector<std::int32_t> features = r.i32_array();
  const std::vector<float> thresholds = r.f32_array();
  const std::vector<std::int32_t> children = r.i32_array();
  const std::vector<float> leaf_probs = r.f32_array();
  const std::size_t n = features.size();
  const auto k = static_cast<std::size_t>(f.num_classes_);
  if (thresholds.size() != n || children.size() != n || n > 0x7fffffffULL) throw corrupt(r, "node array sizes differ");
  if (leaf_probs.size() % k != 0) throw corrupt(r, "leaf table size");
  const std::size_t leaves = leaf_probs.size() / k;
  std::vector<GrownNode> grown(n);
  for (std::size_t i = 0; i < n; ++i) grown[i] = {features[i], thresholds[i], children[i]};
  ForestAssembler assembler(k);
  CompactTree tree;
  for (std::size_t t = 0; t < roots.size(); ++t) {
    const std::size_t begin = roots[t], end = tree_end(roots, t, n, r);
    for (std::size_t i = begin; i < end; ++i) {
      const std::int32_t feature = features[i], child = children[i];
      const bool ok = feature < 0
          ? child >= 0 && static_cast<std::size_t>(child) < leaves
          : static_cast<std::size_t>(feature) < f.num_features_ && child > 0 && static_cast<std::size_t>(child) > i &&
                static_cast<std::size_t>(child) + 1 < end;
      if (!ok) throw corrupt(r, "node " + std::to_string(i) + " points outside its tree");
      if (feature >= 0 && thresholds[i] < 0) throw corrupt(r, "node " + std::to_string(i) + " has a negative threshold");
    }
    if (!to_preorder(grown.data() + begin, end - begin, begin, leaf_probs.data(), k, tree)) {
      throw corrupt(r, "tree " + std::to_string(t) + " reaches a node twice");
    }
    assembler.add(tree);
  }
  f.tree_roots_ = std::move(assembler.roots);
  f.nodes_ = std::move(assembler.nodes);
  f.distributions_ = std::move(assembler.table.values());
  return f;
}

}  // namespace newscls::tfidf_rf

namespace newscls::tfidf_rf {
namespace {

constexpr char kForestMagic[4] = {'N', 'C', 'R', 'F'};

}  // namespace

void save_forest(const std::string& path, const RandomForest& forest) {
  PayloadWriter w(path, kForestMagic, RandomForest::kPayloadVersion);
  forest.save(w);
  w.finish();
}

RandomForest load_forest(const std::string& path) {
  PayloadReader r(path, kForestMagic, RandomForest::kPayloadVersion);
  RandomForest forest = RandomForest::load(r);
  r.expect_end();
  if (forest.num_trees() == 0) throw ModelFormatError(path, "forest has no trees");
  return forest;
}

}  // namespace newscls::tfidf_rf
