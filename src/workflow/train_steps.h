// The steps `train` and `adapt` share: a timed training, the calibration fitted on dev, and
// the bundle written with its test figures.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "newscls/core/classifier.h"
#include "newscls/workflow/train_workflow.h"
#include "workflow/calibration.h"
#include "workflow/splits.h"

namespace newscls {

// model.train(ctx) with train_seconds, threads and seed added to its facts; the model gets
// ctx.threads through set_threads first (the one place training hands out its thread count).
nlohmann::json timed_train(Classifier& model, const TrainContext& ctx);

// The model wrapped in a temperature fitted on dev, the fit recorded in facts, when the
// setting and the family call for one (the model as it was otherwise).
std::unique_ptr<Classifier> calibrated_on_dev(std::unique_ptr<Classifier> model, CalibrateSetting setting,
                                              const Splits& splits, std::uint64_t seed, nlohmann::json& facts);

// What the bundle records of a trained model beside its payloads.
struct TrainedModel {
  std::unique_ptr<Classifier> model;
  nlohmann::json facts;  // the manifest's training facts
  std::string family, out_dir, data_sha256;
  std::uint64_t seed = 1;
};

// Evaluates on test and commits the bundle (payloads, metrics.json and its figures, manifest).
TrainOutcome write_trained_bundle(TrainedModel trained, const Splits& splits);

}  // namespace newscls
