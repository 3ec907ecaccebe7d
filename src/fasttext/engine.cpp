#include "fasttext/engine.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "newscls/core/error.h"

namespace newscls::fasttext {
namespace {

// Rows are scattered over the table: fetching a few ahead hides the memory latency.
constexpr std::size_t kPrefetchAhead = 8;

// Rows [0, first) as they are, then the rows of `ids` in that order; `width` values a row.
template <typename T>
std::vector<T> rows_in_order(const PayloadArray<T>& values, std::size_t width, std::size_t first,
                             const std::vector<std::int32_t>& ids) {
  std::vector<T> out(values.begin(), values.begin() + first * width);
  out.reserve(values.size());
  for (std::int32_t id : ids) {
    const T* row = values.data() + static_cast<std::size_t>(id) * width;
    out.insert(out.end(), row, row + width);
  }
  return out;
}

}  // namespace

Engine in_bucket_order(const Engine& e) {
  const std::vector<std::int32_t>& ids = e.features.ids_by_bucket();
  if (ids.empty()) return e;
  const auto vocab = static_cast<std::size_t>(e.features.vocab_size());
  const auto labels = static_cast<std::size_t>(e.num_labels);
  std::vector<std::uint32_t> buckets;
  buckets.reserve(ids.size());
  for (std::int32_t id : ids) buckets.push_back(e.features.kept_buckets()[static_cast<std::size_t>(id) - vocab]);
  Engine out = e;
  out.features = FeatureExtractor(e.features.options());
  out.features.set_tables(e.features.tokens(), std::move(buckets));
  if (!e.row_weights.empty()) out.row_weights = rows_in_order(e.row_weights, 1, vocab, ids);
  out.table = rows_in_order(e.table, labels, vocab, ids);
  if (e.quantized) {
    out.row_scales = rows_in_order(e.row_scales, 1, vocab, ids);
    out.codes = rows_in_order(e.codes, labels, vocab, ids);
  }
  return out;
}

void dequantize(Engine& e) {
  const auto labels = static_cast<std::size_t>(e.num_labels);
  std::vector<float> table(e.codes.size());
  for (std::size_t i = 0; i < e.codes.size(); ++i) {
    table[i] = static_cast<float>(e.codes[i]) * e.row_scales[i / labels];
  }
  e.table = std::move(table);
}

std::vector<float> fold_table(const Model& m) {
  const auto rows = static_cast<std::size_t>(m.rows());
  const auto labels = static_cast<std::size_t>(m.num_labels());
  const auto dim = static_cast<std::size_t>(m.dim());
  std::vector<float> table(rows * labels);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* x = &m.input()[r * dim];
    for (std::size_t c = 0; c < labels; ++c) {
      const float* w = &m.output()[c * dim];
      float s = 0;
      for (std::size_t k = 0; k < dim; ++k) s += x[k] * w[k];
      table[r * labels + c] = s;
    }
  }
  return table;
}

void prune_rows(Engine& e, const std::vector<bool>& keep) {
  const auto labels = static_cast<std::size_t>(e.num_labels);
  std::vector<float> table, weights;
  for (std::size_t r = 0; r < keep.size(); ++r) {
    if (!keep[r]) continue;
    table.insert(table.end(), e.table.begin() + static_cast<std::ptrdiff_t>(r * labels),
                 e.table.begin() + static_cast<std::ptrdiff_t>((r + 1) * labels));
    if (!e.row_weights.empty()) weights.push_back(e.row_weights[r]);
  }
  e.features = e.features.subset(keep);
  e.table = std::move(table);
  e.row_weights = std::move(weights);
}

void quantize_table(Engine& e) {
  const auto labels = static_cast<std::size_t>(e.num_labels);
  const auto rows = static_cast<std::size_t>(e.rows());
  std::vector<float> scales(rows, 0.0f);
  std::vector<std::int8_t> codes(rows * labels, 0);
  for (std::size_t r = 0; r < rows; ++r) {
    float max = 0;
    for (std::size_t c = 0; c < labels; ++c) max = std::max(max, std::fabs(e.table[r * labels + c]));
    scales[r] = max / 127.0f;
    const float inv = max > 0 ? 127.0f / max : 0.0f;
    for (std::size_t c = 0; c < labels; ++c) {
      const long q = std::lround(e.table[r * labels + c] * inv);
      codes[r * labels + c] = static_cast<std::int8_t>(std::clamp(q, -127l, 127l));
    }
  }
  e.row_scales = std::move(scales);
  e.codes = std::move(codes);
  e.quantized = true;
  dequantize(e);
}

Predictor::Predictor(const Engine& engine) : engine_(engine) {}

const std::vector<float>& Predictor::probs(std::string_view normalized) {
  const auto labels = static_cast<std::size_t>(engine_.num_labels);
  ids_.clear();
  engine_.features.extract(normalized, ids_);
  probs_.assign(labels, 0.0f);
  if (ids_.empty()) {
    std::fill(probs_.begin(), probs_.end(), 1.0f / static_cast<float>(labels));
    return probs_;
  }
  const float* table = engine_.table.data();
  const bool weighted = !engine_.row_weights.empty();
  float z = 0;
  for (std::size_t i = 0; i < ids_.size(); ++i) {
    if (i + kPrefetchAhead < ids_.size()) __builtin_prefetch(table + ids_[i + kPrefetchAhead] * labels);
    const auto id = static_cast<std::size_t>(ids_[i]);
    const float w = weighted ? engine_.row_weights[id] : 1.0f;
    const float* row = table + id * labels;
    for (std::size_t c = 0; c < labels; ++c) probs_[c] += w * row[c];
    z += engine_.pooling == Pooling::kMean ? w : w * w;
  }
  if (engine_.pooling == Pooling::kL2) z = std::sqrt(z);
  const float inv = z > 0 ? 1.0f / z : 0.0f;
  for (float& p : probs_) p *= inv;
  scores_to_probs(engine_.loss, probs_.data(), static_cast<int>(labels));
  return probs_;
}

}  // namespace newscls::fasttext
