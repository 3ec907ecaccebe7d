// `newscls eval` and the evaluation train and the pipeline run: evaluate_model predicts a
// labelled set in batches with a progress bar and running accuracy, and computes metrics (a
// seeded class-stratified sample when asked); run_eval evaluates a bundle on a split or file
// and writes its files and attention dumps. Abstention: a title whose calibrated top score is
// below min_score is not answered.
//
//   EvalRequest req; req.model_dir = "runs/bert";
//   EvalRun run = run_eval(req);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "newscls/core/classifier.h"
#include "newscls/core/data.h"
#include "newscls/core/metrics.h"
#include "newscls/core/record_reader.h"

namespace newscls {

struct EvalOptions {
  std::uint64_t seed = 1;
  std::size_t limit = 0;  // 0 = every title; else a stratified sample
  std::string progress_label = "eval";
};

struct EvalOutcome {
  Metrics metrics;
  std::vector<std::size_t> indices;  // positions in the dataset that were evaluated
  std::vector<int> truth;            // their true labels
  std::vector<Prediction> predictions;
  std::size_t sampled_from = 0;  // the dataset's size when a limit sampled it; else 0
};

EvalOutcome evaluate_model(Classifier& model, const Dataset& data, const LabelSet& labels, const EvalOptions& options);

// metrics.json content of an evaluation (with ECE/NLL/Brier, the risk-coverage curve and, for a
// cascade, the share each stage answered), and its files next to it: confusion.svg,
// reliability.svg, risk_coverage.svg and predictions.tsv (the title's line in the labelled
// file, true label, predicted label, score, title), all written atomically.
nlohmann::json eval_report_json(const EvalOutcome& outcome, const Classifier& model, const std::string& data_path);
void write_eval_files(const std::string& metrics_path, const EvalOutcome& outcome, const nlohmann::json& metrics_json,
                      const Dataset& data, const LabelSet& labels, const std::string& title);
// The figures' caption, as train and eval write it: "bert (bert-quantize) on test.txt" (the
// bundle's folder name where it says more than the family: a compressed copy's figures are
// not its source's).
std::string figure_caption(const std::string& bundle_dir, const std::string& family, const std::string& data_path);

struct EvalRequest {
  std::string model_dir, data_dir, split = "test", input, out;  // out "" = <model_dir>/metrics.json
  FormatOptions format;                                         // how input is read (newscls/core/record_reader.h)
  std::uint64_t seed = 1;
  int threads = 1;  // resolved (>= 1): the app turns --threads 0 into the core count
  bool skip_bad_lines = false;
  std::size_t dump_attention = 0;  // attention dumps of the first N titles, into attention/
  double min_score = -1;           // >= 0: report coverage and accuracy of the titles answered
  bool uncalibrated = false;       // ignore the bundle's calibration (to compare before/after)
  // Fit the calibration on this split (dev only) and store it in the bundle's manifest: for
  // bundles trained before calibration existed.
  bool fit_calibration = false;
};

struct EvalRun {
  std::string family, data_path;
  Metrics metrics;
  nlohmann::json report;  // what metrics.json holds
};

// Adds the member names of a cascade's training facts ("stages") to metrics.json's stages.
void name_stages(nlohmann::json& metrics, const nlohmann::json& training);

// The selective-prediction figures of an evaluation at a score threshold.
SelectiveMetrics selective_of(const EvalOutcome& outcome, double min_score);

EvalRun run_eval(const EvalRequest& request);

// A seeded class-stratified sample of n positions (all when n == 0 or n >= size).
std::vector<std::size_t> stratified_sample(const std::vector<int>& labels, std::size_t n, std::uint64_t seed);

}  // namespace newscls
