// The fastText-style network: an embedding table (one row per feature id), the average of
// a title's rows as its hidden vector, and a linear layer to the class scores.
//
// update() is one SGD step on one example and is safe to call from several threads at
// once on the same Model (Hogwild: the races on shared rows are accepted, as in fastText).
//
//   Model m(rows, dim, num_labels, Loss::kSoftmax);  m.init(seed);
//   Model::Scratch s(m);  m.update(ids.data(), ids.size(), label, lr, s);
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace newscls::fasttext {

enum class Loss { kSoftmax, kOneVsAll };
// How the weighted sum of a title's rows is scaled: by the sum of the weights (an average,
// as fastText does) or by their L2 norm (like an L2-normalised TF-IDF vector).
enum class Pooling { kMean, kL2 };

// Turns raw class scores into probabilities in place: softmax, or for one-vs-all the
// sigmoids normalised to sum to 1.
void scores_to_probs(Loss loss, float* scores, int n);

// "softmax" | "ova"; throws ConfigError("loss", ...) otherwise.
Loss parse_loss(const std::string& name);
std::string loss_name(Loss loss);

class Model {
 public:
  // Per-thread buffers, so no step allocates.
  struct Scratch {
    explicit Scratch(const Model& m) : hidden(m.dim()), grad(m.dim()), scores(m.num_labels()) {}
    std::vector<float> hidden, grad, scores;
  };

  Model() = default;
  Model(std::int64_t rows, int dim, int num_labels, Loss loss);

  // Training targets become (1 - eps) one-hot + eps / num_labels: less extreme scores.
  void set_label_smoothing(float eps) { smoothing_ = eps; }

  // Embeddings uniform in [-1/dim, 1/dim], output layer zero (as fastText does).
  void init(std::uint64_t seed);
  // One SGD step; returns the example's loss. Empty `ids` is a no-op.
  float update(const std::int32_t* ids, std::size_t n, int label, float lr, Scratch& s);
  // Per-row weights of the pooled sum (IDF of each feature); empty means all 1.
  void set_row_weights(std::vector<float> weights, Pooling pooling);
  const std::vector<float>& row_weights() const { return row_weight_; }
  Pooling pooling() const { return pooling_; }

  std::int64_t rows() const { return rows_; }
  int dim() const { return dim_; }
  int num_labels() const { return num_labels_; }
  Loss loss() const { return loss_; }
  std::vector<float>& input() { return input_; }
  const std::vector<float>& input() const { return input_; }
  std::vector<float>& output() { return output_; }
  const std::vector<float>& output() const { return output_; }

 private:
  // Returns the scale 1/Z applied to the weighted sum.
  float pool(const std::int32_t* ids, std::size_t n, float* hidden) const;
  float* row(std::int32_t id) { return &input_[static_cast<std::size_t>(id) * dim_]; }
  const float* row(std::int32_t id) const { return &input_[static_cast<std::size_t>(id) * dim_]; }
  float weight(std::int32_t id) const { return row_weight_.empty() ? 1.0f : row_weight_[static_cast<std::size_t>(id)]; }
  void scores(const float* hidden, float* out) const;

  std::int64_t rows_ = 0;
  int dim_ = 0, num_labels_ = 0;
  Loss loss_ = Loss::kSoftmax;
  std::vector<float> input_;   // rows_ x dim_
  std::vector<float> output_;  // num_labels_ x dim_
  std::vector<float> row_weight_;
  Pooling pooling_ = Pooling::kMean;
  float smoothing_ = 0.0f;
};

}  // namespace newscls::fasttext
