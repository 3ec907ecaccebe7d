// Temperature scaling of a family's probabilities, fitted once per bundle on dev and applied to
// every prediction by one wrapper, whatever the family:
//   q_k = exp(log(max(p_k, floor)) / T) / sum_j exp(log(max(p_j, floor)) / T)
// The floor lets families that give exact zeros (a forest's vote shares, the LLM's one answer)
// be scaled too; it is chosen with T, by NLL on dev, from a small grid.
//
// Stored in the manifest's training facts as "calibration": {"temperature": T, "floor": f, ...};
// a bundle without it predicts as before. load_classifier (registry.cpp) applies it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "newscls/core/bundle.h"
#include "newscls/core/classifier.h"

namespace newscls {

struct Temperature {
  double temperature = 1;
  double floor = 1e-12;
};

// Rescales probs in place (an empty vector, an answer that maps to no class, stays empty).
void apply_temperature(std::vector<float>& probs, const Temperature& t);

// The temperature (and floor) of least NLL on these labelled probabilities; rows with empty
// probabilities are left out. T lies in [0.02, 50].
Temperature fit_temperature(const std::vector<int>& truth, const std::vector<std::vector<float>>& probs);
double temperature_nll(const std::vector<int>& truth, const std::vector<std::vector<float>>& probs,
                       const Temperature& t);

constexpr double kMaxTemperature = 100;  // a stored temperature above this is refused
// The workflow-level --set key that turns fitting off (the facts key, kCalibrationFact, is in
// newscls/core/bundle.h).
constexpr const char* kCalibrateKey = "calibrate";
// The config train was asked for, in the training facts when the family stored another.
constexpr const char* kRequestedConfigKey = "requested_config";

// Whether a --set assignment names a workflow-level key (not a family's).
bool is_workflow_override(const std::string& assignment);
// The calibrate setting of the overrides: calibrate=true, calibrate=false, or absent (auto:
// fitted unless the model sends paid requests, see train_workflow.cpp); UsageError otherwise.
enum class CalibrateSetting { kAuto, kOn, kOff };
CalibrateSetting calibrate_setting(const std::vector<std::string>& overrides);
// The same with a config file (may be ""), whose "calibrate": true/false the overrides override.
CalibrateSetting calibrate_setting(const std::string& config_file, const std::vector<std::string>& overrides);
// A calibrate= setting (not auto) for a family calibrated by its members: ConfigError.
void refuse_calibrate_setting(const std::string& family, CalibrateSetting setting);
// Whether a bundle with these training facts predicts calibrated probabilities: a temperature
// of its own, or (a cascade: "calibrated") members that each have one.
bool calibrated_by_facts(const nlohmann::json& training);
// "auto", "true" or "false": as the manifest's training facts record it under kCalibrateKey
// (a bundle from before that record counts as "auto").
const char* to_string(CalibrateSetting setting);

// Wraps a classifier so that its predictions are temperature-scaled (label and score follow).
std::unique_ptr<Classifier> with_temperature(std::unique_ptr<Classifier> model, const Temperature& t);
// The calibration of a bundle's manifest, if any; ModelFormatError when it is malformed.
bool bundle_temperature(const Bundle& bundle, Temperature& out);

struct EvalOutcome;
// Fits T on an evaluation of dev (uncalibrated predictions) and returns the manifest's
// "calibration" facts (null when the predictions carry no probabilities). In train_workflow.cpp.
nlohmann::json fit_calibration_facts(const EvalOutcome& dev, Temperature& t);

// Loads a bundle's classifier without its calibration (eval --uncalibrated; defined in registry.cpp).
std::unique_ptr<Classifier> load_uncalibrated_classifier(const Bundle& bundle);

}  // namespace newscls
