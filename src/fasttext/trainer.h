// Hogwild SGD over precomputed examples: every thread walks its own shuffled share of
// the examples each epoch and updates the shared Model without locks; the learning rate
// decays linearly from lr to 0 over all epochs, driven by the global step count.
//
//   Examples ex = ...;                    // feature ids per title, flat
//   TrainStats st = train_model(model, ex, {epochs, lr, threads, seed});
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fasttext/model.h"

namespace newscls::fasttext {

// Titles as flat feature ids: example i is ids[offsets[i] .. offsets[i + 1]).
struct Examples {
  std::vector<std::int32_t> ids;
  std::vector<std::size_t> offsets{0};
  std::vector<int> labels;

  std::size_t size() const { return labels.size(); }
  void add(const std::vector<std::int32_t>& features, int label) {
    ids.insert(ids.end(), features.begin(), features.end());
    offsets.push_back(ids.size());
    labels.push_back(label);
  }
};

struct TrainOptions {
  int epochs = 5;
  float lr = 0.5f;
  int threads = 1;
  std::uint64_t seed = 1;
  float dropout = 0.0f;  // probability of leaving out each feature of a training title
  bool show_progress = true;
};

struct TrainStats {
  double seconds = 0;
  double last_epoch_loss = 0;  // mean loss over the examples of the last epoch
  std::size_t steps = 0;
};

// Throws InterruptedError (after the threads stop) when a signal arrives.
TrainStats train_model(Model& model, const Examples& examples, const TrainOptions& options);

// Smoothed inverse document frequency of every row, as scikit-learn computes it:
// log((1 + N) / (1 + df)) + 1; rows no example uses get 1.
std::vector<float> idf_weights(const Examples& examples, std::int64_t rows);

}  // namespace newscls::fasttext
