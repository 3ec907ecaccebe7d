// The forest's prediction layout, shared by fitting and by loading payloads: trees rewritten
// in preorder (a left child is the next node) with leaves pointing into a table of distinct
// class distributions, then packed into the node stream that prediction walks and that
// version-3 payloads hold (laid out in forest.h). Internal to the tfidf-rf family.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tfidf_rf/forest.h"

namespace newscls::tfidf_rf {

// A node of an assembled preorder tree. A feature's value <= the threshold goes left (to
// the next node), else right.
struct ForestNode {
  std::int32_t feature;  // < 0 for a leaf
  std::int32_t next;     // a split's right child (node index); a leaf's distribution index
  float threshold;       // never negative; 0 for a leaf
};

// A node as the builder grows it: a split's children are adjacent (child, child + 1).
struct GrownNode {
  std::int32_t feature;  // < 0 for a leaf
  float threshold;       // value <= threshold goes to child, else to child + 1
  std::int32_t child;    // first child's node index, or the leaf index for a leaf
};

// Distinct class distributions, numbered in order of first use (so the numbering depends
// only on the order of the calls).
class DistributionTable {
 public:
  explicit DistributionTable(std::size_t k) : k_(k) {}

  std::int32_t id_of(const float* probs) {
    std::string key(reinterpret_cast<const char*>(probs), k_ * sizeof(float));
    const auto [it, added] = ids_.emplace(std::move(key), static_cast<std::int32_t>(ids_.size()));
    if (added) values_.insert(values_.end(), probs, probs + k_);
    return it->second;
  }
  std::vector<float>& values() { return values_; }

 private:
  std::size_t k_;
  std::unordered_map<std::string, std::int32_t> ids_;
  std::vector<float> values_;
};

// One tree in prediction layout, with its own distribution table.
struct CompactTree {
  std::vector<ForestNode> nodes;
  std::vector<float> distributions;
};

// Rewrites a grown tree (nodes[0] is the root; child indices are offset by base) in
// preorder. False when a node is reached twice, which only a corrupt file can cause.
bool to_preorder(const GrownNode* nodes, std::size_t n, std::size_t base, const float* leaf_probs, std::size_t k,
                 CompactTree& out);

// Concatenates compact trees in order, merging their distribution tables into one.
struct ForestAssembler {
  explicit ForestAssembler(std::size_t k) : k(k), table(k) {}

  void add(const CompactTree& tree) {
    const auto base = static_cast<std::int32_t>(nodes.size());
    roots.push_back(static_cast<std::uint32_t>(base));
    for (ForestNode node : tree.nodes) {
      node.next = node.feature < 0 ? table.id_of(tree.distributions.data() + static_cast<std::size_t>(node.next) * k)
                                   : node.next + base;
      nodes.push_back(node);
    }
  }

  std::size_t k;
  DistributionTable table;
  std::vector<std::uint32_t> roots;
  std::vector<ForestNode> nodes;
};

// Trees of ForestNodes (roots: node indices) as the node stream: roots become word indices.
struct NodeStream {
  std::vector<std::uint32_t> roots;
  std::vector<std::uint32_t> words;
};
NodeStream to_node_stream(const std::vector<std::uint32_t>& roots, const std::vector<ForestNode>& nodes);

// What a node stream's indices must stay below.
struct StreamBounds {
  std::size_t features;
  std::size_t distributions;
};

// Checks every tree of a node stream (see forest.h) as a version-3 payload holds it and
// returns the node count; throws ModelFormatError("corrupt forest: ...") naming path.
std::size_t check_node_stream(const std::uint32_t* roots, std::size_t n_trees, const std::uint32_t* words,
                              std::size_t n_words, StreamBounds bounds, const std::string& path);

}  // namespace newscls::tfidf_rf
