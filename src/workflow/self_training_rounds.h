// The pieces of self-training that `train --unlabeled` and `adapt` both run.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "newscls/core/classifier.h"
#include "newscls/workflow/train_workflow.h"
#include "workflow/calibration.h"
#include "workflow/self_training.h"
#include "workflow/splits.h"
#include "workflow/train_steps.h"

namespace newscls {

// Trains the family afresh on the titles given (the labelled ones plus the kept feed titles),
// in context (the feed, an encoder to start from, seed, threads), calibrated on dev.
struct RoundTrainer {
  std::string family;
  nlohmann::json config;
  TrainContext context;
  CalibrateSetting calibrate = CalibrateSetting::kAuto;
  const Splits* splits = nullptr;
  TrainedModel operator()(const Dataset& train) const;
};

// Each round: the current model and the teacher bundles (their votes taken once, only when a
// round runs) label the feed, the kept titles train a new model, until stable or
// settings.rounds; current becomes the last model. Returns each round's figures.
nlohmann::json run_rounds(TrainedModel& current, const RoundTrainer& train_round, const std::vector<std::string>& feed,
                          const std::vector<std::string>& teacher_dirs, const SelfTraining& settings);

// Each model's predictions of the feed, batched.
std::vector<Prediction> predict_feed(Classifier& model, const std::vector<std::string>& feed);

// The predictions of each teacher bundle on the feed (calibrated as loaded); a teacher must
// have the model's classes.
std::vector<std::vector<Prediction>> teacher_votes(const std::vector<std::string>& teacher_dirs,
                                                   const std::vector<std::string>& labels,
                                                   const std::vector<std::string>& feed, int threads);

// The manifest's "adaptation" facts.
nlohmann::json adaptation_facts(const FeedTraining& feed, const SelfTraining& settings,
                                const std::vector<std::string>& teachers, const nlohmann::json& rounds);

}  // namespace newscls
