#include "fasttext/model.h"

#include <algorithm>
#include <cmath>

#include "newscls/core/error.h"
#include "newscls/core/splitmix.h"

namespace newscls::fasttext {
namespace {

float sigmoid(float x) {
  if (x < -30) return 0.0f;
  if (x > 30) return 1.0f;
  return 1.0f / (1.0f + std::exp(-x));
}

void softmax(float* v, int n) {
  float max = v[0];
  for (int i = 1; i < n; ++i) max = std::max(max, v[i]);
  float sum = 0;
  for (int i = 0; i < n; ++i) {
    v[i] = std::exp(v[i] - max);
    sum += v[i];
  }
  for (int i = 0; i < n; ++i) v[i] /= sum;
}

// y += a * x over dim floats; the hot loop of training.
inline void axpy(float a, const float* x, float* y, int dim) {
  for (int k = 0; k < dim; ++k) y[k] += a * x[k];
}

// Rows are scattered over a large table: asking for the next rows early hides most of
// the memory latency, which dominates both training and prediction.
constexpr std::size_t kPrefetchAhead = 4;

inline void prefetch_row(const float* row, int dim) {
  for (int k = 0; k < dim; k += 16) __builtin_prefetch(row + k);
}

inline float dot(const float* x, const float* y, int dim) {
  float s = 0;
  for (int k = 0; k < dim; ++k) s += x[k] * y[k];
  return s;
}

}  // namespace

void scores_to_probs(Loss loss, float* scores, int n) {
  if (loss == Loss::kSoftmax) {
    softmax(scores, n);
    return;
  }
  float sum = 0;
  for (int i = 0; i < n; ++i) sum += (scores[i] = sigmoid(scores[i]));
  if (sum > 0) {
    for (int i = 0; i < n; ++i) scores[i] /= sum;
  }
}

Loss parse_loss(const std::string& name) {
  if (name == "softmax") return Loss::kSoftmax;
  if (name == "ova") return Loss::kOneVsAll;
  throw ConfigError("loss", "must be \"softmax\" or \"ova\", got \"" + name + "\"");
}

std::string loss_name(Loss loss) { return loss == Loss::kSoftmax ? "softmax" : "ova"; }

Model::Model(std::int64_t rows, int dim, int num_labels, Loss loss)
    : rows_(rows),
      dim_(dim),
      num_labels_(num_labels),
      loss_(loss),
      input_(static_cast<std::size_t>(rows) * dim),
      output_(static_cast<std::size_t>(num_labels) * dim) {}

void Model::init(std::uint64_t seed) {
  std::uint64_t state = seed ^ 0x5bd1e9955bd1e995ull;
  const float scale = 2.0f / static_cast<float>(dim_);
  for (float& w : input_) {
    // 24 random bits give a uniform float in [0, 1).
    const float u = static_cast<float>(splitmix64(state) >> 40) * (1.0f / 16777216.0f);
    w = (u - 0.5f) * scale;
  }
  std::fill(output_.begin(), output_.end(), 0.0f);
}

void Model::set_row_weights(std::vector<float> weights, Pooling pooling) {
  row_weight_ = std::move(weights);
  pooling_ = pooling;
}

float Model::pool(const std::int32_t* ids, std::size_t n, float* hidden) const {
  std::fill(hidden, hidden + dim_, 0.0f);
  float z = 0;
  for (std::size_t i = 0; i < std::min(n, kPrefetchAhead); ++i) prefetch_row(row(ids[i]), dim_);
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kPrefetchAhead < n) prefetch_row(row(ids[i + kPrefetchAhead]), dim_);
    const float w = weight(ids[i]);
    axpy(w, row(ids[i]), hidden, dim_);
    z += pooling_ == Pooling::kMean ? w : w * w;
  }
  if (pooling_ == Pooling::kL2) z = std::sqrt(z);
  const float inv = z > 0 ? 1.0f / z : 0.0f;
  for (int k = 0; k < dim_; ++k) hidden[k] *= inv;
  return inv;
}

void Model::scores(const float* hidden, float* out) const {
  for (int c = 0; c < num_labels_; ++c) out[c] = dot(&output_[static_cast<std::size_t>(c) * dim_], hidden, dim_);
}

float Model::update(const std::int32_t* ids, std::size_t n, int label, float lr, Scratch& s) {
  if (n == 0) return 0.0f;
  float* hidden = s.hidden.data();
  float* grad = s.grad.data();
  float* out = s.scores.data();
  const float inv = pool(ids, n, hidden);
  scores(hidden, out);
  std::fill(grad, grad + dim_, 0.0f);
  float loss = 0;
  if (loss_ == Loss::kSoftmax) {
    softmax(out, num_labels_);
    loss = -std::log(std::max(out[label], 1e-8f));
  }
  for (int c = 0; c < num_labels_; ++c) {
    const float target = (c == label ? 1.0f - smoothing_ : 0.0f) + smoothing_ / static_cast<float>(num_labels_);
    float p = out[c];
    if (loss_ == Loss::kOneVsAll) {
      p = sigmoid(out[c]);
      loss -= std::log(std::max(c == label ? p : 1.0f - p, 1e-8f));
    }
    const float alpha = lr * (target - p);
    float* w = &output_[static_cast<std::size_t>(c) * dim_];
    axpy(alpha, w, grad, dim_);
    axpy(alpha, hidden, w, dim_);
  }
  for (std::size_t i = 0; i < n; ++i) {
    axpy(inv * weight(ids[i]), grad, row(ids[i]), dim_);
  }
  return loss;
}

}  // namespace newscls::fasttext
