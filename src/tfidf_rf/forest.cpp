#include "tfidf_rf/forest.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "newscls/core/error.h"
#include "newscls/core/interrupt.h"
#include "newscls/core/parallel.h"
#include "newscls/core/splitmix.h"
#include "tfidf_rf/forest_layout.h"
#include "tfidf_rf/tree_builder.h"

namespace newscls::tfidf_rf {
namespace {

std::uint64_t tree_seed(std::uint64_t seed, std::size_t tree) {
  std::uint64_t s = seed;
  std::uint64_t a = splitmix64(s);
  std::uint64_t t = a ^ (0xD1B54A32D192ED03ULL * (tree + 1));
  return splitmix64(t);
}

void check_input(const CsrMatrix& x, const std::vector<int>& y, int num_classes, const ForestOptions& o) {
  if (x.rows() == 0) throw std::invalid_argument("random forest: no training rows");
  if (y.size() != x.rows()) throw std::invalid_argument("random forest: label count != row count");
  if (num_classes < 1 || o.n_trees < 1 || o.min_samples_leaf < 1 || o.features_per_split < 1 || o.max_depth < 0) {
    throw std::invalid_argument("random forest: invalid options");
  }
  for (int label : y) {
    if (label < 0 || label >= num_classes) throw std::invalid_argument("random forest: label out of range");
  }
  for (std::size_t k = 0; k < x.nnz(); ++k) {
    if (x.indices[k] < 0 || static_cast<std::size_t>(x.indices[k]) >= x.cols || !(x.values[k] > 0)) {
      throw std::invalid_argument("random forest: stored values must be positive and indices in range");
    }
  }
}

}  // namespace

RandomForest RandomForest::fit(const CsrMatrix& x, const std::vector<int>& y, int num_classes,
                               const ForestOptions& options, const TreeDone& tree_done) {
  check_input(x, y, num_classes, options);
  const auto n_trees = static_cast<std::size_t>(options.n_trees);
  const auto k = static_cast<std::size_t>(num_classes);
  const CscMatrix csc = to_csc(x);
  std::vector<CompactTree> trees(n_trees);
  // One builder per worker: its scratch buffers are reused from tree to tree.
  std::vector<std::optional<TreeBuilder>> builders(static_cast<std::size_t>(std::max(options.threads, 1)));
  parallel_tasks(n_trees, options.threads, [&](std::size_t t, int worker) {
    std::optional<TreeBuilder>& builder = builders[static_cast<std::size_t>(worker)];
    if (!builder) {
      builder.emplace(x, csc, y, num_classes, options);
      builder->force_walk(options.walk);
    }
    if (interrupted()) throw InterruptedError();
    const TreeResult grown = builder->build(tree_seed(options.seed, t));
    to_preorder(grown.nodes.data(), grown.nodes.size(), 0, grown.leaf_probs.data(), k, trees[t]);
    if (tree_done) tree_done();
  });

  ForestAssembler assembler(k);
  for (CompactTree& tree : trees) {
    assembler.add(tree);
    tree = {};
  }
  RandomForest forest;
  forest.num_classes_ = num_classes;
  forest.num_features_ = x.cols;
  forest.set_nodes(assembler.roots, assembler.nodes, std::move(assembler.table.values()));
  return forest;
}

void RandomForest::set_nodes(const std::vector<std::uint32_t>& roots, const std::vector<ForestNode>& nodes,
                             std::vector<float> distributions) {
  NodeStream stream = to_node_stream(roots, nodes);
  num_nodes_ = nodes.size();
  tree_roots_ = std::move(stream.roots);
  words_ = std::move(stream.words);
  distributions_ = std::move(distributions);
}

}  // namespace newscls::tfidf_rf
