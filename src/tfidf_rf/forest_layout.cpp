#include "tfidf_rf/forest_layout.h"

#include <cstring>
#include <stdexcept>
#include <utility>

#include "newscls/core/error.h"

namespace newscls::tfidf_rf {

// Rewrites a grown tree (nodes[0] is the root; child indices are offset by base) in
// preorder. False when a node is reached twice, which only a corrupt file can cause.
bool to_preorder(const GrownNode* nodes, std::size_t n, std::size_t base, const float* leaf_probs, std::size_t k,
                 CompactTree& out) {
  DistributionTable table(k);
  out.nodes.clear();
  std::vector<std::uint8_t> seen(n, 0);
  // (grown index, index of the node whose right child it is, or -1)
  std::vector<std::pair<std::size_t, std::int32_t>> stack{{0, -1}};
  while (!stack.empty()) {
    const auto [at, parent] = stack.back();
    stack.pop_back();
    if (seen[at]) return false;
    seen[at] = 1;
    const auto index = static_cast<std::int32_t>(out.nodes.size());
    if (parent >= 0) out.nodes[static_cast<std::size_t>(parent)].next = index;
    const GrownNode& g = nodes[at];
    if (g.feature < 0) {
      out.nodes.push_back({-1, table.id_of(leaf_probs + static_cast<std::size_t>(g.child) * k), 0.0f});
      continue;
    }
    out.nodes.push_back({g.feature, 0, g.threshold});
    const std::size_t left = static_cast<std::size_t>(g.child) - base;
    stack.push_back({left + 1, index});
    stack.push_back({left, -1});
  }
  out.distributions = std::move(table.values());
  return true;
}

}  // namespace newscls::tfidf_rf

namespace newscls::tfidf_rf {

NodeStream to_node_stream(const std::vector<std::uint32_t>& roots, const std::vector<ForestNode>& nodes) {
  // Where each node starts: a split takes 3 words, a leaf 1.
  std::vector<std::uint32_t> start(nodes.size() + 1, 0);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::uint64_t next = std::uint64_t{start[i]} + (nodes[i].feature >= 0 ? 3 : 1);
    if (next > UINT32_MAX) throw std::length_error("random forest: over 2^32 words of nodes");
    start[i + 1] = static_cast<std::uint32_t>(next);
  }
  NodeStream out;
  out.words.reserve(start.back());
  for (const ForestNode& n : nodes) {
    if (n.feature < 0) {
      out.words.push_back(static_cast<std::uint32_t>(-1 - n.next));
      continue;
    }
    std::uint32_t threshold_bits;
    std::memcpy(&threshold_bits, &n.threshold, 4);
    out.words.insert(out.words.end(),
                     {static_cast<std::uint32_t>(n.feature), threshold_bits, start[static_cast<std::size_t>(n.next)]});
  }
  for (std::uint32_t root : roots) out.roots.push_back(start[root]);
  return out;
}

namespace {

// Walks one tree's words in order. In preorder the node after a split is its left child and
// the node after a leaf is the right child of the latest split still waiting for one, whose
// stored index must then be that node's: one pass with a stack, about 3 ns a node.
class StreamChecker {
 public:
  StreamChecker(const std::uint32_t* words, StreamBounds bounds, const std::string& path)
      : words_(words), bounds_(bounds), path_(path) {}

  // Checks tree t, the words [begin, end) (begin < end); returns its node count.
  std::size_t check_tree(std::size_t t, std::size_t begin, std::size_t end) {
    std::size_t top = 0, nodes = 0;  // pending_[0, top): splits whose right child is to come
    for (std::size_t w = begin;;) {
      ++nodes;
      if (static_cast<std::int32_t>(words_[w]) >= 0) {
        check_split(w, end, t);
        if (top == pending_.size()) pending_.resize(2 * top + 64);
        pending_[top++] = w;
        w += 3;
        continue;
      }
      if (static_cast<std::size_t>(~words_[w]) >= bounds_.distributions) throw bad_node(w, t, "has no distribution");
      if (++w == end) break;
      if (top == 0) throw bad_node(w, t, "is past the end of its tree");
      const std::size_t split = pending_[--top];
      if (words_[split + 2] != w) throw bad_node(split, t, "has its right child elsewhere");
    }
    if (top != 0) throw incomplete(t);
    return nodes;
  }

 private:
  void check_split(std::size_t w, std::size_t end, std::size_t t) const {
    if (end - w <= 3) throw incomplete(t);  // no room for its children
    if (words_[w] >= bounds_.features) throw bad_node(w, t, "splits on an unknown feature");
    float threshold;
    std::memcpy(&threshold, &words_[w + 1], 4);
    // The walk sends absent features left without reading the threshold.
    if (!(threshold >= 0)) throw bad_node(w, t, "has a negative threshold");
  }

  ModelFormatError corrupt(const std::string& what) const { return ModelFormatError(path_, "corrupt forest: " + what); }
  ModelFormatError incomplete(std::size_t t) const { return corrupt("tree " + std::to_string(t) + " is incomplete"); }
  ModelFormatError bad_node(std::size_t w, std::size_t t, const std::string& what) const {
    return corrupt("node at word " + std::to_string(w) + " of tree " + std::to_string(t) + " " + what);
  }

  const std::uint32_t* words_;
  StreamBounds bounds_;
  const std::string& path_;
  std::vector<std::size_t> pending_;  // the stack, kept from tree to tree
};

}  // namespace

std::size_t check_node_stream(const std::uint32_t* roots, std::size_t n_trees, const std::uint32_t* words,
                              std::size_t n_words, StreamBounds bounds, const std::string& path) {
  if (n_trees == 0 ? n_words != 0 : roots[0] != 0) {
    throw ModelFormatError(path, "corrupt forest: nodes outside every tree");
  }
  StreamChecker checker(words, bounds, path);
  std::size_t nodes = 0;
  for (std::size_t t = 0; t < n_trees; ++t) {
    const std::size_t end = t + 1 < n_trees ? roots[t + 1] : n_words;
    if (roots[t] >= end || end > n_words) {
      throw ModelFormatError(path,
                             "corrupt forest: tree " + std::to_string(t) + " is empty, out of order or past the nodes");
    }
    nodes += checker.check_tree(t, roots[t], end);
  }
  return nodes;
}

}  // namespace newscls::tfidf_rf
