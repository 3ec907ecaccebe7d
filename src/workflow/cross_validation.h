// Out-of-fold predictions (`newscls audit`): the training titles dealt into K folds, stratified
// by label and seeded; the family trained K times, each time without one fold, as `train`
// trains it (RoundTrainer), and that fold predicted by the model that never saw it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workflow/splits.h"

namespace newscls {

// Each title's fold, 0..folds-1: each class's titles shuffled with seed and dealt in turn, the
// deal running on from class to class, so that folds differ in size by one title at most.
std::vector<int> stratified_folds(const std::vector<int>& labels, int num_labels, int folds, std::uint64_t seed);

struct FoldTraining {
  std::string family;
  nlohmann::json config;         // the family's effective config, as build_config makes it
  const Splits* data = nullptr;  // labels; train: the titles predicted; dev: what each fold selects on
  // Without a dev set: each fold's dev is this share of its training titles (split_off_dev),
  // so that no model selects on the labels it is judging.
  double dev_fraction = 0.1;
  int folds = 5;
  std::uint64_t seed = 1;
  int threads = 1;
};

// Per title of training.data->train, its probabilities from the fold's model that never saw
// it; empty where the model gave none (an LLM's unreadable reply).
std::vector<std::vector<float>> out_of_fold_probs(const FoldTraining& training);

}  // namespace newscls
