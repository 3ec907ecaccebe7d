// Training a whole Engine from normalised titles: feature tables, example ids, IDF row
// weights, then `ensemble` differently seeded networks trained one after another.
//
//   FitResult fit = fit_engine(settings, titles, labels, 10, {seed, threads, true});
//   save_engine(fit.engine, path);   fit.facts -> the manifest's training facts
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fasttext/engine.h"
#include "fasttext/settings.h"

namespace newscls::fasttext {

struct FitOptions {
  std::uint64_t seed = 1;
  int threads = 1;
  bool show_progress = true;
  // Normalised titles without labels (a reader's feed): counted for the vocabulary, the n-gram
  // buckets kept and the IDF weights, never trained on.
  const std::vector<std::string>* unlabeled = nullptr;
};

struct FitResult {
  Engine engine;
  nlohmann::json facts;  // rows, vocabulary, seconds, last epoch loss
};

FitResult fit_engine(const Settings& settings, const std::vector<std::string>& normalized_titles,
                     const std::vector<int>& labels, int num_labels, const FitOptions& options);

// The same with feature tables built already.
FitResult fit_with_features(FeatureExtractor features, const Settings& settings,
                            const std::vector<std::string>& normalized_titles, const std::vector<int>& labels,
                            int num_labels, const FitOptions& options);

// Accuracy of the engine on normalised titles (autotune and dev reporting).
double engine_accuracy(const Engine& engine, const std::vector<std::string>& normalized_titles,
                       const std::vector<int>& labels, int threads);

}  // namespace newscls::fasttext
