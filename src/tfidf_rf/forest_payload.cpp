// forest.bin: writing version 3 (the node stream read as it lies), reading versions 1 to 3 with every
// index checked.
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "newscls/core/error.h"
#include "tfidf_rf/forest.h"
#include "tfidf_rf/forest_layout.h"
#include "tfidf_rf/payloads.h"

namespace newscls::tfidf_rf {

void RandomForest::save(PayloadWriter& w) const {
  w.u32(static_cast<std::uint32_t>(num_classes_));
  w.u64(num_features_);
  w.u64(tree_roots_.size());
  w.u64(words_.size());
  w.u64(distributions_.size());
  w.block(tree_roots_);
  w.block(words_);
  w.block(distributions_);
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
std::size_t tree_end(const std::vector<std::uint32_t>& roots, std::size_t t, std::size_t n, const PayloadReader& r) {
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
// next threshold; < 0: -1 - the leaf's distribution) as the node stream, checking every index
// on the way. No node is held in another form: a split's right child is filled in when the
// walk reaches it.
class NodeDecoder {
 public:
  NodeDecoder(const PayloadReader& r, const std::vector<std::int32_t>& codes, const std::vector<float>& thresholds,
              std::size_t n_dists, std::size_t n_features)
      : r_(r), codes_(codes), thresholds_(thresholds), n_dists_(n_dists), n_features_(n_features) {
    words_.reserve(codes.size() + 2 * thresholds.size());
  }

  // Appends tree t, the nodes [begin, end), to the stream; returns the word of its root.
  std::uint32_t decode_tree(std::size_t t, std::size_t begin, std::size_t end) {
    pending_.clear();
    const auto root = static_cast<std::uint32_t>(words_.size());
    bool after_split = false;
    std::size_t previous = 0;
    for (std::size_t i = begin; i < end; ++i) {
      if (i > begin) link(after_split, previous, i, t);
      previous = words_.size();
      after_split = decode(i, t);
    }
    if (!pending_.empty() || after_split) throw corrupt(r_, "tree " + std::to_string(t) + " is incomplete");
    return root;
  }

  // The stream, once every tree is decoded and every threshold used.
  std::vector<std::uint32_t> words() {
    if (split_ != thresholds_.size()) throw corrupt(r_, "more thresholds than splits");
    return std::move(words_);
  }

 private:
  ModelFormatError bad_node(std::size_t i, std::size_t t, const std::string& what) const {
    return corrupt(r_, "node " + std::to_string(i) + " of tree " + std::to_string(t) + " " + what);
  }

  // In preorder a node is the left child of the node before it if that is a split, or else
  // the right child of the latest split still waiting for one.
  void link(bool after_split, std::size_t previous, std::size_t i, std::size_t t) {
    if (after_split) {
      pending_.push_back(previous);
      return;
    }
    if (pending_.empty()) throw bad_node(i, t, "is past the end of its tree");
    words_[pending_.back() + 2] = static_cast<std::uint32_t>(words_.size());
    pending_.pop_back();
  }

  // Appends node i; true for a split.
  bool decode(std::size_t i, std::size_t t) {
    const std::int32_t code = codes_[i];
    if (code < 0) {
      const auto d = static_cast<std::size_t>(-1 - static_cast<std::int64_t>(code));
      if (d >= n_dists_) throw bad_node(i, t, "has no distribution");
      words_.push_back(static_cast<std::uint32_t>(code));
      return false;
    }
    if (static_cast<std::size_t>(code) >= n_features_) throw bad_node(i, t, "splits on an unknown feature");
    if (split_ >= thresholds_.size()) throw corrupt(r_, "fewer thresholds than splits");
    // The walk sends absent features left without reading the threshold.
    if (thresholds_[split_] < 0) throw bad_node(i, t, "has a negative threshold");
    std::uint32_t threshold_bits;
    std::memcpy(&threshold_bits, &thresholds_[split_++], 4);
    words_.insert(words_.end(), {static_cast<std::uint32_t>(code), threshold_bits, 0});
    return true;
  }

  const PayloadReader& r_;
  const std::vector<std::int32_t>& codes_;
  const std::vector<float>& thresholds_;
  std::size_t n_dists_, n_features_;
  std::size_t split_ = 0;
  std::vector<std::uint32_t> words_;
  std::vector<std::size_t> pending_;  // words of the splits whose left subtree is being read
};

// Leaf distributions are class frequencies: a value outside [0, 1] (or NaN) is a corrupt file.
// One branch-free pass the compiler vectorises.
void check_distributions(const PayloadReader& r, const PayloadArray<float>& values) {
  unsigned bad = 0;
  for (float v : values) bad |= static_cast<unsigned>(!(v >= 0.0f)) | static_cast<unsigned>(!(v <= 1.0f));
  if (bad != 0) throw corrupt(r, "a distribution value outside [0, 1]");
}

}  // namespace

RandomForest RandomForest::load(PayloadReader& r) {
  switch (r.version()) {
    case 1: return load_v1(r);
    case 2: return load_v2(r);
    case kPayloadVersion: return load_v3(r);
    default: throw corrupt(r, "unknown version " + std::to_string(r.version()));
  }
}

RandomForest RandomForest::load_v3(PayloadReader& r) {
  RandomForest f;
  read_header(r, f.num_classes_, f.num_features_);
  const std::uint64_t n_trees = r.u64(), n_words = r.u64(), n_values = r.u64();
  f.tree_roots_ = r.block<std::uint32_t>(n_trees);
  f.words_ = r.block<std::uint32_t>(n_words);
  f.distributions_ = r.block<float>(n_values);
  if (n_values % static_cast<std::size_t>(f.num_classes_) != 0) throw corrupt(r, "distribution table size");
  check_distributions(r, f.distributions_);
  f.num_nodes_ = check_node_stream(f.tree_roots_.data(), f.tree_roots_.size(), f.words_.data(), f.words_.size(),
                                   {f.num_features_, f.num_distributions()}, r.path());
  return f;
}

RandomForest RandomForest::load_v2(PayloadReader& r) {
  RandomForest f;
  read_header(r, f.num_classes_, f.num_features_);
  const std::vector<std::uint32_t> roots = r.u32_array();
  const std::vector<std::int32_t> codes = r.i32_array();
  const std::vector<float> split_thresholds = r.f32_array();
  std::vector<float> distributions = r.f32_array();
  const std::size_t n = codes.size();
  check_sizes(r, roots, n, distributions.size(), f.num_classes_);
  NodeDecoder decoder(r, codes, split_thresholds, distributions.size() / static_cast<std::size_t>(f.num_classes_),
                      f.num_features_);
  std::vector<std::uint32_t> word_roots(roots.size());
  for (std::size_t t = 0; t < roots.size(); ++t) {
    word_roots[t] = decoder.decode_tree(t, roots[t], tree_end(roots, t, n, r));
  }
  f.tree_roots_ = std::move(word_roots);
  f.words_ = decoder.words();
  f.distributions_ = std::move(distributions);
  f.num_nodes_ = n;
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
                          : static_cast<std::size_t>(feature) < f.num_features_ && child > 0 &&
                                static_cast<std::size_t>(child) > i && static_cast<std::size_t>(child) + 1 < end;
      if (!ok) throw corrupt(r, "node " + std::to_string(i) + " points outside its tree");
      if (feature >= 0 && thresholds[i] < 0)
        throw corrupt(r, "node " + std::to_string(i) + " has a negative threshold");
    }
    if (!to_preorder(grown.data() + begin, end - begin, begin, leaf_probs.data(), k, tree)) {
      throw corrupt(r, "tree " + std::to_string(t) + " reaches a node twice");
    }
    assembler.add(tree);
  }
  f.set_nodes(assembler.roots, assembler.nodes, std::move(assembler.table.values()));
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
