#include "workflow/cross_validation.h"

#include <algorithm>
#include <random>

#include <spdlog/spdlog.h>

#include "newscls/core/interrupt.h"
#include "newscls/core/stopwatch.h"
#include "workflow/dev_split.h"
#include "workflow/self_training_rounds.h"

namespace newscls {
namespace {

void add_title(const Dataset& from, std::size_t r, Dataset& to) {
  to.titles.push_back(from.titles[r]);
  to.labels.push_back(from.labels[r]);
  if (!from.line_numbers.empty()) to.line_numbers.push_back(from.line_numbers[r]);
}

struct Fold {
  Dataset train;                  // the other folds' titles
  std::vector<std::size_t> held;  // this fold's rows
  std::vector<std::string> held_titles;
};

Fold fold_of(const Dataset& all, const std::vector<int>& folds, int fold) {
  Fold f;
  f.train.path = all.path;
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (folds[r] != fold) {
      add_title(all, r, f.train);
    } else {
      f.held.push_back(r);
      f.held_titles.push_back(all.titles[r]);
    }
  }
  return f;
}

// Trains on the fold's training titles (on its own dev, drawn from them, when the data has
// none) and predicts its held-out titles into probs.
void predict_fold(const FoldTraining& t, const std::vector<int>& folds, int fold,
                  std::vector<std::vector<float>>& probs) {
  check_interrupted();
  const Stopwatch watch;
  Fold f = fold_of(t.data->train, folds, fold);
  const bool own_dev = t.data->dev.size() == 0;
  const Dataset dev = own_dev ? split_off_dev(f.train, t.data->labels.size(), t.dev_fraction, t.seed) : Dataset{};
  TrainContext ctx;
  ctx.dev = own_dev ? &dev : &t.data->dev;
  ctx.labels = &t.data->labels;
  ctx.seed = t.seed;
  ctx.threads = t.threads;
  const RoundTrainer train_fold{t.family, t.config, ctx, CalibrateSetting::kOff, t.data};
  TrainedModel trained = train_fold(f.train);
  const std::vector<Prediction> answers = predict_feed(*trained.model, f.held_titles);
  std::size_t agreed = 0;
  for (std::size_t k = 0; k < f.held.size(); ++k) {
    probs[f.held[k]] = answers[k].probs;
    agreed += answers[k].label == t.data->train.labels[f.held[k]];
  }
  spdlog::info("fold {}/{}: trained on {} titles, {} held out, accuracy on their given labels {:.4f} ({:.1f} s)",
               fold + 1, t.folds, f.train.size(), f.held.size(),
               static_cast<double>(agreed) / static_cast<double>(std::max<std::size_t>(1, f.held.size())),
               watch.seconds());
}

}  // namespace

std::vector<int> stratified_folds(const std::vector<int>& labels, int num_labels, int folds, std::uint64_t seed) {
  std::vector<std::vector<std::size_t>> by_class(static_cast<std::size_t>(num_labels));
  for (std::size_t r = 0; r < labels.size(); ++r) by_class[static_cast<std::size_t>(labels[r])].push_back(r);
  std::mt19937_64 rng(seed);
  std::vector<int> fold(labels.size(), 0);
  int next = 0;
  for (auto& rows : by_class) {
    std::shuffle(rows.begin(), rows.end(), rng);
    for (std::size_t r : rows) {
      fold[r] = next;
      next = (next + 1) % folds;
    }
  }
  return fold;
}

std::vector<std::vector<float>> out_of_fold_probs(const FoldTraining& t) {
  const std::vector<int> folds = stratified_folds(t.data->train.labels, t.data->labels.size(), t.folds, t.seed);
  std::vector<std::vector<float>> probs(t.data->train.size());
  for (int fold = 0; fold < t.folds; ++fold) predict_fold(t, folds, fold, probs);
  return probs;
}

}  // namespace newscls
