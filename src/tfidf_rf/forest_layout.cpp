#include "tfidf_rf/forest_layout.h"

#include <utility>

namespace newscls::tfidf_rf {

// Rewrites a grown tree (nodes[0] is the root; child indices are offset by base) in
// preorder. False when a node is reached twice, which only a corrupt file can cause.
bool to_preorder(const GrownNode* nodes, std::size_t n, std::size_t base, const float* leaf_probs,
                 std::size_t k, CompactTree& out) {
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
