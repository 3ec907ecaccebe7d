#include "tfidf_rf/tree_builder.h"

#include <algorithm>
#include <utility>

namespace newscls::tfidf_rf {
namespace {

// The fallback's order: one multiply-xor-multiply hash of (feature, node salt).
inline std::uint32_t feature_hash(std::int32_t feature, std::uint64_t salt) {
  std::uint64_t h = (static_cast<std::uint64_t>(feature) * 0x9E3779B97F4A7C15ULL) ^ salt;
  h *= 0xBF58476D1CE4E5B9ULL;
  return static_cast<std::uint32_t>(h >> 32);
}

// Heap order: the smallest (key, feature) is drawn first. A lambda, so the heap inlines it.
constexpr auto drawn_later = [](const auto& a, const auto& b) {
  return a.key > b.key || (a.key == b.key && a.feature > b.feature);
};

constexpr std::size_t kSmallNode = 128;

struct Pending {
  std::int32_t node;
  std::size_t begin, end;
  int depth;
};

}  // namespace

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

// A better split, or an equal one on a lower feature: the choice must not depend on the
// order in which candidates were gathered.
bool TreeBuilder::better(const Split& a, const Split& b) {
  if (!a.valid) return false;
  if (!b.valid) return true;
  return a.proxy > b.proxy || (a.proxy == b.proxy && a.feature < b.feature);
}

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

void TreeBuilder::class_counts(std::size_t begin, std::size_t end, std::vector<std::int64_t>& counts) const {
  counts.assign(static_cast<std::size_t>(k_), 0);
  for (std::size_t i = begin; i < end; ++i) {
    const std::int32_t s = samples_[i];
    counts[static_cast<std::size_t>(y_[s])] += weight_[s];
  }
}

void TreeBuilder::make_leaf(std::int32_t node, const std::vector<std::int64_t>& counts, std::int64_t total) {
  const auto leaf = static_cast<std::int32_t>(tree_.leaf_probs.size() / static_cast<std::size_t>(k_));
  for (std::int64_t c : counts) {
    tree_.leaf_probs.push_back(static_cast<float>(static_cast<double>(c) / static_cast<double>(total)));
  }
  tree_.nodes[static_cast<std::size_t>(node)] = {-1, 0.0f, leaf};
}

// Gathers the node's non-zeros of candidate features from its rows, grouped by feature; with
// `weigh_others`, the same walk sums the weight of every other feature (for the fallback).
void TreeBuilder::gather_rows(std::size_t begin, std::size_t end, bool weigh_others) {
  gathered_.clear();
  used_.clear();
  others_.clear();
  for (std::size_t i = begin; i < end; ++i) {
    const std::int32_t s = samples_[i];
    for (std::size_t k = x_.row_begin(s); k < x_.row_end(s); ++k) {
      const std::int32_t f = x_.indices[k];
      if (!is_candidate(f)) {
        if (!weigh_others) continue;
        add_other(f, weight_[s]);
        continue;
      }
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

void TreeBuilder::draw_candidates(Rng& rng) {
  if (all_candidates_) return;
  const auto wanted = static_cast<std::size_t>(options_.features_per_split);
  candidates_.clear();
  candidates_nnz_ = 0;
  while (candidates_.size() < wanted) {
    const std::size_t f = rng.below(x_.cols);
    std::uint64_t& word = candidate_bits_[f >> 6];
    const std::uint64_t bit = std::uint64_t{1} << (f & 63);
    if (word & bit) continue;
    word |= bit;
    candidates_.push_back(static_cast<std::int32_t>(f));
    candidates_nnz_ += csc_.col_ptr[f + 1] - csc_.col_ptr[f];
  }
  std::sort(candidates_.begin(), candidates_.end());
}

void TreeBuilder::clear_candidates() {
  for (std::int32_t f : candidates_) candidate_bits_[static_cast<std::uint32_t>(f) >> 6] = 0;
}

void TreeBuilder::stamp_node(std::size_t begin, std::size_t end) {
  ++stamp_now_;
  if (stamp_now_ == 0) {
    std::fill(stamp_.begin(), stamp_.end(), 0u);
    stamp_now_ = 1;
  }
  for (std::size_t i = begin; i < end; ++i) stamp_[samples_[i]] = stamp_now_;
}

// Same result as gather_rows, from the candidate features' columns.
void TreeBuilder::gather_columns(std::size_t begin, std::size_t end) {
  stamp_node(begin, end);
  grouped_.clear();
  used_.clear();
  others_.clear();
  slot_start_.assign(1, 0);
  for (std::int32_t f : candidates_) {
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

// The weights gather_rows(..., true) would have summed, for a node gathered without them.
void TreeBuilder::weigh_others(std::size_t begin, std::size_t end) {
  others_.clear();
  for (std::size_t i = begin; i < end; ++i) {
    const std::int32_t s = samples_[i];
    for (std::size_t k = x_.row_begin(s); k < x_.row_end(s); ++k) {
      const std::int32_t f = x_.indices[k];
      if (is_candidate(f)) continue;
      add_other(f, weight_[s]);
    }
  }
}

// Appends one feature's non-zeros in the node as a new slot, from its column or from the
// node's rows, whichever is shorter; returns the slot.
std::int32_t TreeBuilder::gather_feature(std::int32_t feature, std::size_t begin, std::size_t end) {
  const std::size_t column = csc_.col_ptr[feature + 1] - csc_.col_ptr[feature];
  if (static_cast<double>(column) < static_cast<double>(end - begin) * mean_row_nnz_) {
    for (std::size_t k = csc_.col_ptr[feature]; k < csc_.col_ptr[feature + 1]; ++k) {
      const std::int32_t s = csc_.rows[k];
      if (stamp_[s] == stamp_now_) grouped_.push_back({csc_.values[k], s});
    }
  } else {
    for (std::size_t i = begin; i < end; ++i) {
      const std::int32_t s = samples_[i];
      const auto row_first = x_.indices.begin() + static_cast<std::ptrdiff_t>(x_.row_begin(s));
      const auto row_last = x_.indices.begin() + static_cast<std::ptrdiff_t>(x_.row_end(s));
      const auto at = std::lower_bound(row_first, row_last, feature);
      if (at != row_last && *at == feature) {
        grouped_.push_back({x_.values[static_cast<std::size_t>(at - x_.indices.begin())], s});
      }
    }
  }
  used_.push_back(feature);
  slot_start_.push_back(grouped_.size());
  return static_cast<std::int32_t>(used_.size() - 1);
}

TreeBuilder::Split TreeBuilder::evaluate(std::int32_t slot, const std::vector<std::int64_t>& counts,
                                         std::int64_t total) {
  Entry* first = grouped_.data() + slot_start_[static_cast<std::size_t>(slot)];
  Entry* last = grouped_.data() + slot_start_[static_cast<std::size_t>(slot) + 1];
  right_.assign(static_cast<std::size_t>(k_), 0);
  std::int64_t w_right = 0;
  for (const Entry* e = first; e != last; ++e) {
    const std::int64_t w = weight_[e->sample];
    right_[static_cast<std::size_t>(y_[e->sample])] += w;
    w_right += w;
  }
  const std::int64_t min_leaf = options_.min_samples_leaf;
  // The right side only shrinks as the threshold rises: too light now, too light for good.
  if (w_right < min_leaf) return {};
  std::sort(first, last, [](const Entry& a, const Entry& b) {
    return a.value < b.value || (a.value == b.value && a.sample < b.sample);
  });
  left_.resize(static_cast<std::size_t>(k_));
  std::int64_t sq_left = 0, sq_right = 0;
  for (int c = 0; c < k_; ++c) {
    left_[c] = counts[c] - right_[c];
    sq_left += left_[c] * left_[c];
    sq_right += right_[c] * right_[c];
  }
  std::int64_t w_left = total - w_right;

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

TreeBuilder::Split TreeBuilder::find_split(std::size_t begin, std::size_t end, const std::vector<std::int64_t>& counts,
                                           std::int64_t total, Rng& rng) {
  draw_candidates(rng);
  const double row_cost = static_cast<double>(end - begin) * mean_row_nnz_;
  const bool by_columns = forced_walk_ == 2 || (forced_walk_ == 0 && row_cost > static_cast<double>(candidates_nnz_));
  // Small nodes often need the fallback below, so their walk weighs the other features too.
  const bool weighed = !by_columns && end - begin <= kSmallNode;
  if (by_columns) {
    gather_columns(begin, end);
  } else {
    gather_rows(begin, end, weighed);
  }
  Split best;
  for (std::size_t slot = 0; slot < used_.size(); ++slot) {
    Split s = evaluate(static_cast<std::int32_t>(slot), counts, total);
    if (better(s, best)) best = s;
  }
  const bool split = best.valid || all_candidates_;
  if (!split && !weighed) weigh_others(begin, end);
  clear_candidates();
  if (split) {
    for (std::int32_t f : others_) other_weight_[f] = 0;
    return best;
  }
  return fallback_split(begin, end, counts, total, rng);
}

// No candidate splits the node: try its other features in an order drawn from a fresh salt.
// A min-heap on (hash, feature) pops them one by one, so a node pays for the features it
// tries, not for sorting all of them, and the order does not depend on how they were gathered.
TreeBuilder::Split TreeBuilder::fallback_split(std::size_t begin, std::size_t end,
                                               const std::vector<std::int64_t>& counts, std::int64_t total, Rng& rng) {
  const std::uint64_t order_salt = rng.next();
  const auto light = static_cast<std::uint16_t>(std::min(options_.min_samples_leaf, 0xFFFF));
  fallback_.clear();
  for (std::int32_t f : others_) {
    if (other_weight_[f] >= light) {  // lighter ones cannot fill a leaf
      fallback_.push_back({feature_hash(f, order_salt), f});
    }
    other_weight_[f] = 0;
  }
  std::make_heap(fallback_.begin(), fallback_.end(), drawn_later);
  stamp_node(begin, end);
  while (!fallback_.empty()) {
    std::pop_heap(fallback_.begin(), fallback_.end(), drawn_later);
    const std::int32_t feature = fallback_.back().feature;
    fallback_.pop_back();
    Split s = evaluate(gather_feature(feature, begin, end), counts, total);
    if (s.valid) return s;
  }
  return {};
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

}  // namespace newscls::tfidf_rf
