#include "tfidf_rf/forest.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "newscls/error.h"
#include "newscls/splitmix.h"
#include "newscls/interrupt.h"

namespace newscls::tfidf_rf {
namespace {

// Small, fast and identical on every platform (std distributions are not).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() { return splitmix64(state_); }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }

 private:
  std::uint64_t state_;
};

std::uint64_t tree_seed(std::uint64_t seed, std::size_t tree) {
  std::uint64_t s = seed;
  std::uint64_t a = splitmix64(s);
  std::uint64_t t = a ^ (0xD1B54A32D192ED03ULL * (tree + 1));
  return splitmix64(t);
}

// Candidate test: one multiply-xor-multiply hash of (feature, node salt).
inline std::uint32_t feature_hash(std::int32_t feature, std::uint64_t salt) {
  std::uint64_t h = (static_cast<std::uint64_t>(feature) * 0x9E3779B97F4A7C15ULL) ^ salt;
  h *= 0xBF58476D1CE4E5B9ULL;
  return static_cast<std::uint32_t>(h >> 32);
}

struct Gathered {
  std::int32_t slot;
  std::int32_t sample;
  float value;
};

struct Entry {
  float value;
  std::int32_t sample;
};

struct Split {
  bool valid = false;
  double proxy = 0;
  std::int32_t feature = -1;
  std::int32_t slot = -1;
  float threshold = 0;
};

// A better split, or an equal one on a lower feature: the choice must not depend on the
// order in which candidates were gathered.
bool better(const Split& a, const Split& b) {
  if (!a.valid) return false;
  if (!b.valid) return true;
  return a.proxy > b.proxy || (a.proxy == b.proxy && a.feature < b.feature);
}

// The training matrix by column, for large nodes where walking the candidate features'
// columns is cheaper than walking every row of the node.
struct CscMatrix {
  std::vector<std::size_t> col_ptr;
  std::vector<std::int32_t> rows;
  std::vector<float> values;
};

CscMatrix to_csc(const CsrMatrix& x) {
  CscMatrix c;
  c.col_ptr.assign(x.cols + 1, 0);
  for (std::int32_t f : x.indices) c.col_ptr[static_cast<std::size_t>(f) + 1] += 1;
  for (std::size_t f = 1; f <= x.cols; ++f) c.col_ptr[f] += c.col_ptr[f - 1];
  c.rows.resize(x.nnz());
  c.values.resize(x.nnz());
  std::vector<std::size_t> cursor(c.col_ptr.begin(), c.col_ptr.end() - 1);
  for (std::size_t r = 0; r < x.rows(); ++r) {
    for (std::size_t k = x.row_begin(r); k < x.row_end(r); ++k) {
      const std::size_t at = cursor[static_cast<std::size_t>(x.indices[k])]++;
      c.rows[at] = static_cast<std::int32_t>(r);
      c.values[at] = x.values[k];
    }
  }
  return c;
}

struct TreeResult {
  std::vector<ForestNode> nodes;
  std::vector<float> leaf_probs;
};

constexpr std::size_t kSmallNode = 128;

struct Pending {
  std::int32_t node;
  std::size_t begin, end;
  int depth;
};

// Grows one tree; one builder per worker thread, reused across that thread's trees.
class TreeBuilder {
 public:
  TreeBuilder(const CsrMatrix& x, const CscMatrix& csc, const std::vector<int>& y, int num_classes,
              const ForestOptions& o)
      : x_(x), csc_(csc), y_(y), k_(num_classes), options_(o),
        slot_of_(x.cols, -1), goes_right_(x.rows(), 0), stamp_(x.rows(), 0), weight_(x.rows(), 0) {
    const double p = static_cast<double>(o.features_per_split) / static_cast<double>(x.cols);
    all_candidates_ = p >= 1.0;
    candidate_limit_ = static_cast<std::uint32_t>(std::min(p, 1.0) * 4294967295.0);
    // Walking columns costs one hash per feature plus the candidates' column lengths.
    column_cost_ = static_cast<double>(x.cols) + std::min(p, 1.0) * static_cast<double>(x.nnz());
    mean_row_nnz_ = static_cast<double>(x.nnz()) / static_cast<double>(x.rows());
  }

  TreeResult build(std::uint64_t seed);
  // Forces the row walk or the column walk everywhere (tests: both must grow the same tree).
  void force_walk(int walk) { forced_walk_ = walk; }

 private:
  bool is_candidate(std::int32_t f, std::uint64_t salt) const {
    return all_candidates_ || feature_hash(f, salt) < candidate_limit_;
  }
  void draw_samples(Rng& rng);
  void class_counts(std::size_t begin, std::size_t end, std::vector<std::int64_t>& counts) const;
  void make_leaf(std::int32_t node, const std::vector<std::int64_t>& counts, std::int64_t total);
  void gather_rows(std::size_t begin, std::size_t end, bool all, std::uint64_t salt);
  void gather_columns(std::size_t begin, std::size_t end, std::uint64_t salt);
  Split evaluate(std::int32_t slot, const std::vector<std::int64_t>& counts, std::int64_t total);
  Split find_split(std::size_t begin, std::size_t end, const std::vector<std::int64_t>& counts,
                   std::int64_t total, Rng& rng);
  std::size_t partition(std::size_t begin, std::size_t end, const Split& split);

  const CsrMatrix& x_;
  const CscMatrix& csc_;
  const std::vector<int>& y_;
  const int k_;
  const ForestOptions& options_;
  bool all_candidates_ = false;
  std::uint32_t candidate_limit_ = 0;
  double column_cost_ = 0, mean_row_nnz_ = 0;
  int forced_walk_ = 0;  // 0 cheapest, 1 rows, 2 columns

  std::vector<std::int32_t> slot_of_;
  std::vector<std::int32_t> used_;       // feature of each slot
  std::vector<Gathered> gathered_;
  std::vector<std::size_t> slot_start_;  // grouped_[slot_start_[s] .. slot_start_[s+1])
  std::vector<std::size_t> cursor_;
  std::vector<Entry> grouped_;
  std::vector<std::uint8_t> goes_right_;
  std::vector<std::uint32_t> stamp_;     // == stamp_now_ for the samples of the current node
  std::uint32_t stamp_now_ = 0;
  std::vector<std::uint32_t> weight_;
  std::vector<std::int32_t> samples_;
  std::vector<std::int64_t> left_, right_;
  TreeResult tree_;
};

void TreeBuilder::draw_samples(Rng& rng) {
  const std::size_t n = x_.rows();
  std::fill(weight_.begin(), weight_.end(), options_.bootstrap ? 0u : 1u);
  if (options_.bootstrap) {
    for (std::size_t i = 0; i < n; ++i) weight_[rng.below(n)] += 1;
  }
  samples_.clear();
  for (std::size_t i = 0; i < n; ++i) {
    if (weight_[i] > 0) samples_.push_back(static_cast<std::int32_t>(i));
  }
}

void TreeBuilder::class_counts(std::size_t begin, std::size_t end,
                               std::vector<std::int64_t>& counts) const {
  counts.assign(static_cast<std::size_t>(k_), 0);
  for (std::size_t i = begin; i < end; ++i) {
    const std::int32_t s = samples_[i];
    counts[static_cast<std::size_t>(y_[s])] += weight_[s];
  }
}

void TreeBuilder::make_leaf(std::int32_t node, const std::vector<std::int64_t>& counts,
                            std::int64_t total) {
  const auto leaf = static_cast<std::int32_t>(tree_.leaf_probs.size() / static_cast<std::size_t>(k_));
  for (std::int64_t c : counts) {
    tree_.leaf_probs.push_back(static_cast<float>(static_cast<double>(c) / static_cast<double>(total)));
  }
  tree_.nodes[static_cast<std::size_t>(node)] = {-1, 0.0f, leaf};
}

// Gathers the node's non-zeros of candidate features from its rows, grouped by feature.
void TreeBuilder::gather_rows(std::size_t begin, std::size_t end, bool all, std::uint64_t salt) {
  gathered_.clear();
  used_.clear();
  for (std::size_t i = begin; i < end; ++i) {
    const std::int32_t s = samples_[i];
    for (std::size_t k = x_.row_begin(s); k < x_.row_end(s); ++k) {
      const std::int32_t f = x_.indices[k];
      if (!all && !is_candidate(f, salt)) continue;
      std::int32_t slot = slot_of_[f];
      if (slot < 0) {
        slot = static_cast<std::int32_t>(used_.size());
        slot_of_[f] = slot;
        used_.push_back(f);
      }
      gathered_.push_back({slot, s, x_.values[k]});
    }
  }
  // Counting sort by slot, so each candidate's entries are contiguous.
  slot_start_.assign(used_.size() + 1, 0);
  for (const Gathered& g : gathered_) slot_start_[static_cast<std::size_t>(g.slot) + 1] += 1;
  for (std::size_t s = 1; s < slot_start_.size(); ++s) slot_start_[s] += slot_start_[s - 1];
  grouped_.resize(gathered_.size());
  cursor_.assign(slot_start_.begin(), slot_start_.end() - 1);
  for (const Gathered& g : gathered_) grouped_[cursor_[static_cast<std::size_t>(g.slot)]++] = {g.value, g.sample};
  for (std::int32_t f : used_) slot_of_[f] = -1;
}

// Same result as gather_rows, from the candidate features' columns.
void TreeBuilder::gather_columns(std::size_t begin, std::size_t end, std::uint64_t salt) {
  ++stamp_now_;
  if (stamp_now_ == 0) {
    std::fill(stamp_.begin(), stamp_.end(), 0u);
    stamp_now_ = 1;
  }
  for (std::size_t i = begin; i < end; ++i) stamp_[samples_[i]] = stamp_now_;
  grouped_.clear();
  used_.clear();
  slot_start_.assign(1, 0);
  const auto n_features = static_cast<std::int32_t>(x_.cols);
  for (std::int32_t f = 0; f < n_features; ++f) {
    if (!is_candidate(f, salt)) continue;
    const std::size_t before = grouped_.size();
    for (std::size_t k = csc_.col_ptr[f]; k < csc_.col_ptr[f + 1]; ++k) {
      const std::int32_t s = csc_.rows[k];
      if (stamp_[s] == stamp_now_) grouped_.push_back({csc_.values[k], s});
    }
    if (grouped_.size() == before) continue;
    used_.push_back(f);
    slot_start_.push_back(grouped_.size());
  }
}

Split TreeBuilder::evaluate(std::int32_t slot, const std::vector<std::int64_t>& counts,
                            std::int64_t total) {
  Entry* first = grouped_.data() + slot_start_[static_cast<std::size_t>(slot)];
  Entry* last = grouped_.data() + slot_start_[static_cast<std::size_t>(slot) + 1];
  std::sort(first, last, [](const Entry& a, const Entry& b) {
    return a.value < b.value || (a.value == b.value && a.sample < b.sample);
  });
  right_.assign(static_cast<std::size_t>(k_), 0);
  std::int64_t w_right = 0;
  for (const Entry* e = first; e != last; ++e) {
    const std::int64_t w = weight_[e->sample];
    right_[static_cast<std::size_t>(y_[e->sample])] += w;
    w_right += w;
  }
  left_.resize(static_cast<std::size_t>(k_));
  std::int64_t sq_left = 0, sq_right = 0;
  for (int c = 0; c < k_; ++c) {
    left_[c] = counts[c] - right_[c];
    sq_left += left_[c] * left_[c];
    sq_right += right_[c] * right_[c];
  }
  std::int64_t w_left = total - w_right;
  const std::int64_t min_leaf = options_.min_samples_leaf;

  Split best;
  auto consider = [&](float threshold) {
    if (w_left < min_leaf || w_right < min_leaf) return;
    const double proxy = static_cast<double>(sq_left) / static_cast<double>(w_left) +
                         static_cast<double>(sq_right) / static_cast<double>(w_right);
    if (!best.valid || proxy > best.proxy) best = {true, proxy, used_[slot], slot, threshold};
  };
  if (first != last) consider(first->value * 0.5f);
  for (const Entry* e = first; e != last; ++e) {
    const std::int64_t w = weight_[e->sample];
    const auto c = static_cast<std::size_t>(y_[e->sample]);
    sq_left += (2 * left_[c] + w) * w;
    sq_right -= (2 * right_[c] - w) * w;
    left_[c] += w;
    right_[c] -= w;
    w_left += w;
    w_right -= w;
    const Entry* next = e + 1;
    if (next == last || next->value == e->value) continue;
    float mid = e->value + (next->value - e->value) * 0.5f;
    if (mid >= next->value) mid = e->value;
    consider(mid);
  }
  return best;
}

Split TreeBuilder::find_split(std::size_t begin, std::size_t end,
                              const std::vector<std::int64_t>& counts, std::int64_t total, Rng& rng) {
  const std::uint64_t salt = rng.next();
  const double row_cost = static_cast<double>(end - begin) * mean_row_nnz_;
  const bool by_columns = forced_walk_ == 2 || (forced_walk_ == 0 && row_cost > column_cost_);
  // Small nodes often need the fallback below, so they gather every feature at once.
  const bool gather_all = !by_columns && end - begin <= kSmallNode;
  if (by_columns) {
    gather_columns(begin, end, salt);
  } else {
    gather_rows(begin, end, gather_all, salt);
  }
  Split best;
  for (std::size_t slot = 0; slot < used_.size(); ++slot) {
    if (gather_all && !is_candidate(used_[slot], salt)) continue;
    Split s = evaluate(static_cast<std::int32_t>(slot), counts, total);
    if (better(s, best)) best = s;
  }
  if (best.valid || all_candidates_) return best;

  // No candidate splits the node: try the node's other features in random order
  // (features sorted first, so the order does not depend on how they were gathered).
  if (!gather_all) gather_rows(begin, end, true, salt);
  std::vector<std::int32_t> order(used_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int32_t>(i);
  std::sort(order.begin(), order.end(), [this](std::int32_t a, std::int32_t b) { return used_[a] < used_[b]; });
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  for (std::int32_t slot : order) {
    Split s = evaluate(slot, counts, total);
    if (s.valid) return s;
  }
  return best;
}

std::size_t TreeBuilder::partition(std::size_t begin, std::size_t end, const Split& split) {
  const std::size_t a = slot_start_[static_cast<std::size_t>(split.slot)];
  const std::size_t b = slot_start_[static_cast<std::size_t>(split.slot) + 1];
  for (std::size_t i = a; i < b; ++i) {
    if (grouped_[i].value > split.threshold) goes_right_[grouped_[i].sample] = 1;
  }
  auto mid = std::stable_partition(samples_.begin() + static_cast<std::ptrdiff_t>(begin),
                                   samples_.begin() + static_cast<std::ptrdiff_t>(end),
                                   [this](std::int32_t s) { return goes_right_[s] == 0; });
  for (std::size_t i = a; i < b; ++i) goes_right_[grouped_[i].sample] = 0;
  return static_cast<std::size_t>(mid - samples_.begin());
}

TreeResult TreeBuilder::build(std::uint64_t seed) {
  Rng rng(seed);
  draw_samples(rng);
  tree_ = {};
  tree_.nodes.push_back({-1, 0.0f, 0});
  std::vector<Pending> stack{{0, 0, samples_.size(), 0}};
  std::vector<std::int64_t> counts;
  while (!stack.empty()) {
    const Pending p = stack.back();
    stack.pop_back();
    class_counts(p.begin, p.end, counts);
    std::int64_t total = 0;
    int classes_present = 0;
    for (std::int64_t c : counts) {
      total += c;
      classes_present += c > 0 ? 1 : 0;
    }
    const bool stop = classes_present <= 1 || total < 2 * options_.min_samples_leaf ||
                      (options_.max_depth > 0 && p.depth >= options_.max_depth);
    const Split split = stop ? Split{} : find_split(p.begin, p.end, counts, total, rng);
    if (!split.valid) {
      make_leaf(p.node, counts, total);
      continue;
    }
    const std::size_t mid = partition(p.begin, p.end, split);
    const auto child = static_cast<std::int32_t>(tree_.nodes.size());
    tree_.nodes[static_cast<std::size_t>(p.node)] = {split.feature, split.threshold, child};
    tree_.nodes.push_back({-1, 0.0f, 0});
    tree_.nodes.push_back({-1, 0.0f, 0});
    stack.push_back({child + 1, mid, p.end, p.depth + 1});
    stack.push_back({child, p.begin, mid, p.depth + 1});
  }
  return std::move(tree_);
}

void check_input(const CsrMatrix& x, const std::vector<int>& y, int num_classes,
                 const ForestOptions& o) {
  if (x.rows() == 0) throw std::invalid_argument("random forest: no training rows");
  if (y.size() != x.rows()) throw std::invalid_argument("random forest: label count != row count");
  if (num_classes < 1 || o.n_trees < 1 || o.min_samples_leaf < 1 || o.features_per_split < 1 ||
      o.max_depth < 0) {
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
  const CscMatrix csc = to_csc(x);
  std::vector<TreeResult> trees(n_trees);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;

  auto worker = [&]() {
    try {
      TreeBuilder builder(x, csc, y, num_classes, options);
      builder.force_walk(options.walk);
      for (std::size_t t = next++; t < n_trees && !failed; t = next++) {
        if (interrupted()) throw InterruptedError();
        trees[t] = builder.build(tree_seed(options.seed, t));
        if (tree_done) tree_done();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      failed = true;
    }
  };
  const std::size_t n_threads = std::min<std::size_t>(std::max(options.threads, 1), n_trees);
  std::vector<std::thread> pool;
  for (std::size_t i = 1; i < n_threads; ++i) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);

  RandomForest forest;
  forest.num_classes_ = num_classes;
  forest.num_features_ = x.cols;
  for (TreeResult& tree : trees) {
    const auto node_base = static_cast<std::int32_t>(forest.nodes_.size());
    const auto leaf_base = static_cast<std::int32_t>(forest.num_leaves());
    forest.tree_roots_.push_back(static_cast<std::uint32_t>(node_base));
    for (ForestNode node : tree.nodes) {
      node.child += node.feature < 0 ? leaf_base : node_base;
      forest.nodes_.push_back(node);
    }
    forest.leaf_probs_.insert(forest.leaf_probs_.end(), tree.leaf_probs.begin(), tree.leaf_probs.end());
    tree = {};
  }
  return forest;
}

void RandomForest::predict_proba(const SparseRow& row, float* probs) const {
  predict_proba_batch(&row, 1, probs);
}

namespace {

// A row's non-zeros in a small open-addressing table (power-of-two size, load <= 1/2),
// so a node's feature lookup is a probe or two in L1 and several rows can walk a tree
// side by side without a dense vector each.
struct RowTables {
  std::vector<std::size_t> offset;  // row r's slots: [offset[r], offset[r+1])
  std::vector<std::int32_t> keys;   // -1: empty
  std::vector<float> values;

  explicit RowTables(const SparseRow* rows, std::size_t n) : offset(n + 1, 0) {
    for (std::size_t r = 0; r < n; ++r) {
      std::size_t size = 4;
      while (size < 2 * rows[r].size()) size *= 2;
      offset[r + 1] = offset[r] + size;
    }
    keys.assign(offset[n], -1);
    values.assign(offset[n], 0.0f);
    for (std::size_t r = 0; r < n; ++r) {
      const std::size_t mask = offset[r + 1] - offset[r] - 1;
      for (const auto& [feature, value] : rows[r]) {
        std::size_t i = slot(feature, mask);
        while (keys[offset[r] + i] >= 0) i = (i + 1) & mask;
        keys[offset[r] + i] = feature;
        values[offset[r] + i] = value;
      }
    }
  }

  static std::size_t slot(std::int32_t feature, std::size_t mask) {
    return (static_cast<std::uint32_t>(feature) * 0x9E3779B1u >> 8) & mask;
  }

  float value(std::size_t r, std::int32_t feature) const {
    const std::size_t base = offset[r], mask = offset[r + 1] - base - 1;
    for (std::size_t i = slot(feature, mask);; i = (i + 1) & mask) {
      const std::int32_t key = keys[base + i];
      if (key == feature) return values[base + i];
      if (key < 0) return 0.0f;
    }
  }
};

}  // namespace

void RandomForest::predict_proba_batch(const SparseRow* rows, std::size_t n_rows,
                                       float* probs) const {
  const auto k = static_cast<std::size_t>(num_classes_);
  std::fill(probs, probs + n_rows * k, 0.0f);
  const RowTables tables(rows, n_rows);
  const ForestNode* nodes = nodes_.data();
  // Tree by tree, so one tree's nodes stay in cache while every row walks it; kLanes rows
  // walk side by side, because a single walk is a chain of dependent loads.
  constexpr std::size_t kLanes = 8;
  for (std::uint32_t root : tree_roots_) {
    for (std::size_t r0 = 0; r0 < n_rows; r0 += kLanes) {
      const std::size_t lanes = std::min(kLanes, n_rows - r0);
      const ForestNode* at[kLanes];
      for (std::size_t j = 0; j < lanes; ++j) at[j] = nodes + root;
      for (bool moved = true; moved;) {
        moved = false;
        for (std::size_t j = 0; j < lanes; ++j) {
          const ForestNode* node = at[j];
          if (node->feature < 0) continue;
          const float v = tables.value(r0 + j, node->feature);
          at[j] = nodes + node->child + (v > node->threshold ? 1 : 0);
          moved = true;
        }
      }
      for (std::size_t j = 0; j < lanes; ++j) {
        const float* leaf = leaf_probs_.data() + static_cast<std::size_t>(at[j]->child) * k;
        float* out = probs + (r0 + j) * k;
        for (std::size_t c = 0; c < k; ++c) out[c] += leaf[c];
      }
    }
  }
  const float scale = tree_roots_.empty() ? 0.0f : 1.0f / static_cast<float>(tree_roots_.size());
  for (std::size_t i = 0; i < n_rows * k; ++i) probs[i] *= scale;
}

nlohmann::json RandomForest::stats() const {
  // Leaf depths by walking each tree from its root.
  std::size_t leaves = 0, depth_sum = 0, max_depth = 0;
  std::vector<std::pair<std::int32_t, std::size_t>> stack;
  for (std::uint32_t root : tree_roots_) {
    stack.assign(1, {static_cast<std::int32_t>(root), 0});
    while (!stack.empty()) {
      auto [node, depth] = stack.back();
      stack.pop_back();
      const ForestNode& n = nodes_[static_cast<std::size_t>(node)];
      if (n.feature < 0) {
        ++leaves;
        depth_sum += depth;
        max_depth = std::max(max_depth, depth);
        continue;
      }
      stack.push_back({n.child, depth + 1});
      stack.push_back({n.child + 1, depth + 1});
    }
  }
  return {{"trees", num_trees()},
          {"nodes", num_nodes()},
          {"leaves", leaves},
          {"mean_leaf_depth", leaves == 0 ? 0.0 : static_cast<double>(depth_sum) / static_cast<double>(leaves)},
          {"max_depth", max_depth}};
}

void RandomForest::save(PayloadWriter& w) const {
  w.u32(static_cast<std::uint32_t>(num_classes_));
  w.u64(num_features_);
  w.u32_array(tree_roots_);
  std::vector<std::int32_t> features, children;
  std::vector<float> thresholds;
  features.reserve(nodes_.size());
  children.reserve(nodes_.size());
  thresholds.reserve(nodes_.size());
  for (const ForestNode& n : nodes_) {
    features.push_back(n.feature);
    thresholds.push_back(n.threshold);
    children.push_back(n.child);
  }
  w.i32_array(features);
  w.f32_array(thresholds);
  w.i32_array(children);
  w.f32_array(leaf_probs_);
}

RandomForest RandomForest::load(PayloadReader& r) {
  auto bad = [&r](const std::string& what) { return ModelFormatError(r.path(), "corrupt forest: " + what); };
  RandomForest f;
  const std::uint32_t num_classes = r.u32();
  if (num_classes == 0 || num_classes > 100000) throw bad("class count " + std::to_string(num_classes));
  f.num_classes_ = static_cast<int>(num_classes);
  f.num_features_ = r.u64();
  if (f.num_features_ > 0x7fffffffULL) throw bad("feature count");
  f.tree_roots_ = r.u32_array();
  std::vector<std::int32_t> features = r.i32_array();
  std::vector<float> thresholds = r.f32_array();
  std::vector<std::int32_t> children = r.i32_array();
  f.leaf_probs_ = r.f32_array();
  const std::size_t n = features.size();
  if (thresholds.size() != n || children.size() != n || n > 0x7fffffffULL) throw bad("node array sizes differ");
  if (f.leaf_probs_.size() % num_classes != 0) throw bad("leaf table size");
  const std::size_t leaves = f.num_leaves();
  for (std::size_t t = 0; t < f.tree_roots_.size(); ++t) {
    const std::size_t end = t + 1 < f.tree_roots_.size() ? f.tree_roots_[t + 1] : n;
    if (f.tree_roots_[t] >= end || end > n) throw bad("tree " + std::to_string(t) + " is empty, out of order or past the nodes");
    for (std::size_t i = f.tree_roots_[t]; i < end; ++i) {
      const std::int32_t feature = features[i], child = children[i];
      const bool ok = feature < 0
          ? child >= 0 && static_cast<std::size_t>(child) < leaves
          : static_cast<std::size_t>(feature) < f.num_features_ && child > 0 && static_cast<std::size_t>(child) > i &&
                static_cast<std::size_t>(child) + 1 < end;
      if (!ok) throw bad("node " + std::to_string(i) + " points outside its tree");
    }
  }
  f.nodes_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) f.nodes_.push_back({features[i], thresholds[i], children[i]});
  return f;
}

}  // namespace newscls::tfidf_rf
