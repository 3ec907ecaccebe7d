#include "tfidf_rf/forest.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

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

// A node as the builder grows it: a split's children are adjacent (child, child + 1).
struct GrownNode {
  std::int32_t feature;  // < 0 for a leaf
  float threshold;       // value <= threshold goes to child, else to child + 1
  std::int32_t child;    // first child's node index, or the leaf index for a leaf
};

struct TreeResult {
  std::vector<GrownNode> nodes;
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

}  // namespace

RandomForest RandomForest::fit(const CsrMatrix& x, const std::vector<int>& y, int num_classes,
                               const ForestOptions& options, const TreeDone& tree_done) {
  check_input(x, y, num_classes, options);
  const auto n_trees = static_cast<std::size_t>(options.n_trees);
  const auto k = static_cast<std::size_t>(num_classes);
  const CscMatrix csc = to_csc(x);
  std::vector<CompactTree> trees(n_trees);
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
        const TreeResult grown = builder.build(tree_seed(options.seed, t));
        to_preorder(grown.nodes.data(), grown.nodes.size(), 0, grown.leaf_probs.data(), k, trees[t]);
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

  ForestAssembler assembler(k);
  for (CompactTree& tree : trees) {
    assembler.add(tree);
    tree = {};
  }
  RandomForest forest;
  forest.num_classes_ = num_classes;
  forest.num_features_ = x.cols;
  forest.tree_roots_ = std::move(assembler.roots);
  forest.nodes_ = std::move(assembler.nodes);
  forest.distributions_ = std::move(assembler.table.values());
  return forest;
}

void RandomForest::predict_proba(const SparseRow& row, float* probs) const {
  predict_proba_batch(&row, 1, probs);
}

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
  std::vector<std::int32_t> keys_;   // -1: empty
  std::vector<float> values_;
};

}  // namespace

void RandomForest::predict_proba_batch(const SparseRow* rows, std::size_t n_rows,
                                       float* probs) const {
  const auto k = static_cast<std::size_t>(num_classes_);
  std::fill(probs, probs + n_rows * k, 0.0f);
  const RowTables tables(rows, n_rows);
  const ForestNode* nodes = nodes_.data();
  // Tree by tree, so the part of a tree the rows reach stays in cache while every row
  // walks it. An absent feature (value 0) goes left: split thresholds are never negative.
  for (std::uint32_t root : tree_roots_) {
    for (std::size_t r = 0; r < n_rows; ++r) {
      const ForestNode* node = nodes + root;
      while (node->feature >= 0) {
        const bool right = tables.may_hold(r, node->feature) &&
                           tables.value(r, node->feature) > node->threshold;
        node = right ? nodes + node->next : node + 1;
      }
      const float* dist = distributions_.data() + static_cast<std::size_t>(node->next) * k;
      float* out = probs + r * k;
      for (std::size_t c = 0; c < k; ++c) out[c] += dist[c];
    }
  }
  const float scale = tree_roots_.empty() ? 0.0f : 1.0f / static_cast<float>(tree_roots_.size());
  for (std::size_t i = 0; i < n_rows * k; ++i) probs[i] *= scale;
}

nlohmann::json RandomForest::stats() const {
  // Children follow their parent in the node array, so one forward pass gives every depth.
  std::size_t leaves = 0, depth_sum = 0, max_depth = 0;
  std::vector<std::size_t> depth(nodes_.size(), 0);
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const ForestNode& n = nodes_[i];
    if (n.feature < 0) {
      ++leaves;
      depth_sum += depth[i];
      max_depth = std::max(max_depth, depth[i]);
      continue;
    }
    depth[i + 1] = depth[i] + 1;
    depth[static_cast<std::size_t>(n.next)] = depth[i] + 1;
  }
  return {{"trees", num_trees()},
          {"nodes", num_nodes()},
          {"leaves", leaves},
          {"distributions", num_distributions()},
          {"mean_leaf_depth", leaves == 0 ? 0.0 : static_cast<double>(depth_sum) / static_cast<double>(leaves)},
          {"max_depth", max_depth}};
}

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
  if (n > 0x7fffffffULL) throw corrupt(r, "node count");
  if (f.distributions_.size() % static_cast<std::size_t>(f.num_classes_) != 0) {
    throw corrupt(r, "distribution table size");
  }
  if (f.tree_roots_.empty() ? n != 0 : f.tree_roots_[0] != 0) throw corrupt(r, "nodes outside every tree");
  const std::size_t n_dists = f.num_distributions();
  f.nodes_.resize(n);
  std::size_t split = 0;
  std::vector<std::size_t> pending;  // splits whose left subtree is being read
  for (std::size_t t = 0; t < f.tree_roots_.size(); ++t) {
    const std::size_t begin = f.tree_roots_[t], end = tree_end(f.tree_roots_, t, n, r);
    auto bad_node = [&](std::size_t i, const std::string& what) {
      return corrupt(r, "node " + std::to_string(i) + " of tree " + std::to_string(t) + " " + what);
    };
    pending.clear();
    for (std::size_t i = begin; i < end; ++i) {
      // In preorder a node is the left child of the node before it if that is a split,
      // or else the right child of the latest split still waiting for one.
      if (i > begin && f.nodes_[i - 1].feature >= 0) {
        pending.push_back(i - 1);
      } else if (i > begin) {
        if (pending.empty()) throw bad_node(i, "is past the end of its tree");
        f.nodes_[pending.back()].next = static_cast<std::int32_t>(i);
        pending.pop_back();
      }
      const std::int32_t code = codes[i];
      if (code < 0) {
        const auto d = static_cast<std::size_t>(-1 - static_cast<std::int64_t>(code));
        if (d >= n_dists) throw bad_node(i, "has no distribution");
        f.nodes_[i] = {-1, static_cast<std::int32_t>(d), 0.0f};
        continue;
      }
      if (static_cast<std::size_t>(code) >= f.num_features_) throw bad_node(i, "splits on an unknown feature");
      if (split >= split_thresholds.size()) throw corrupt(r, "fewer thresholds than splits");
      // The walk sends absent features left without reading the threshold.
      if (split_thresholds[split] < 0) throw bad_node(i, "has a negative threshold");
      f.nodes_[i] = {code, 0, split_thresholds[split++]};
    }
    if (!pending.empty() || f.nodes_[end - 1].feature >= 0) {
      throw corrupt(r, "tree " + std::to_string(t) + " is incomplete");
    }
  }
  if (split != split_thresholds.size()) throw corrupt(r, "more thresholds than splits");
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
